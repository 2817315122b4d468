"""Packaging: the install is quiet (data folders declared), and dependency floors cover what the code uses."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the code needs, and from which version: runtime context + DeltaChannel fixes (langgraph), delta replay
# (the SQLite saver), retries (tenacity), default_query (langchain-openai), SPDX licence strings (setuptools).
NEEDED = {"langgraph": (1, 2, 15), "langgraph-checkpoint-sqlite": (3, 1, 2), "tenacity": (8, 2),
          "langchain-openai": (0, 3), "openai": (1, 40)}  # fmt: skip


def floors() -> dict[str, tuple[int, ...]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = {}
    for requirement in project["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([0-9.]+)", requirement.replace(" ", ""))
        if match:
            found[match[1].lower()] = tuple(int(p) for p in match[2].split("."))
    return found


def test_dependency_floors_cover_what_the_code_uses() -> None:
    declared = floors()
    for name, needed in NEEDED.items():
        assert name in declared and declared[name] >= needed, (name, declared.get(name), needed)


def test_building_the_package_is_quiet_and_ships_its_data(tmp_path: Path) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), "."],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    noise = [line for line in (build.stdout + build.stderr).splitlines() if "Warning" in line]
    assert noise == []
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "critiquebench/domains/data/blocksworld/domain.pddl" in names
