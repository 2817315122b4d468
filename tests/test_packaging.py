"""Packaging: the wheel is complete (installed into a fresh venv it runs `--help` and a study on the scripted
server), building it is quiet, and dependency floors cover what the code uses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts import dependency_wheels
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import game24_reply

ROOT = Path(__file__).resolve().parents[1]
# What the code needs, and from which version: runtime context + DeltaChannel fixes (langgraph), delta replay
# (the SQLite saver), retries (tenacity), default_query (langchain-openai), SPDX licence strings (setuptools).
NEEDED = {"langgraph": (1, 2, 15), "langgraph-checkpoint-sqlite": (3, 1, 2), "tenacity": (8, 2),
          "langchain-openai": (0, 3), "openai": (1, 40)}  # fmt: skip


def floors() -> dict[str, tuple[int, ...]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = {}
    for requirement in project["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([0-9.]+)(?:,<[0-9.]+)?", requirement.replace(" ", ""))
        if match:
            found[match[1].lower()] = tuple(int(p) for p in match[2].split("."))
    return found


def test_dependency_floors_cover_what_the_code_uses() -> None:
    declared = floors()
    for name, needed in NEEDED.items():
        assert name in declared and declared[name] >= needed, (name, declared.get(name), needed)


def build_wheel(into: Path) -> tuple[Path, str]:
    """The project's wheel built into `into`, and what the build printed."""
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(into), "."],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = into.glob("*.whl")
    return wheel, build.stdout + build.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return build_wheel(tmp_path_factory.mktemp("dist"))


def test_building_the_package_is_quiet_and_ships_its_data(wheel: tuple[Path, str]) -> None:
    path, output = wheel
    noise = [line for line in output.splitlines() if "Warning" in line]
    assert noise == []
    names = zipfile.ZipFile(path).namelist()
    assert "critiquebench/domains/data/blocksworld/domain.pddl" in names
    assert "critiquebench/domains/data/game24_unsolvable.txt" in names  # what game24.generate skips
    assert "critiquebench/viewer/static/index.html" in names
    assert "critiquebench/py.typed" in names  # PEP 561: type checkers read the installed package's annotations


def test_the_wheel_holds_every_module_of_the_source_tree(wheel: tuple[Path, str]) -> None:
    """No hand-kept package list can fall behind: every .py file of the mapped folders is in the wheel."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    names = set(zipfile.ZipFile(wheel[0]).namelist())
    for package, folder in mapping.items():
        for source in (ROOT / folder).rglob("*.py"):
            if "__pycache__" not in source.parts:
                installed = package.replace(".", "/") + "/" + source.relative_to(ROOT / folder).as_posix()
                assert installed in names, installed


def pip_install(venv: Path, requirement: str) -> None:
    """`pip install REQUIREMENT` into `venv`, resolving the wheel's declared dependencies offline from the folder
    of their wheels that scripts/setup.sh filled (scripts/dependency_wheels.py); no byte-compiling, and this
    venv's pip drives the install, so it takes seconds of CPU."""
    stamp = dependency_wheels.stamp()
    assert stamp.exists(), f"no dependency wheels for this pyproject.toml in {stamp.parent}: run scripts/setup.sh"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-compile",
         "--no-index", "--find-links", str(stamp.parent), requirement],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]


@pytest.fixture(scope="module")
def fresh_venv(wheel: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A new venv with nothing but the wheel and the dependencies it declares."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    pip_install(venv, str(wheel[0]))
    yield venv


def in_venv(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A command of the fresh venv, run outside the source tree so nothing can be imported from it. Its modules'
    bytecode is written (into the throw-away venv, which pip filled `--no-compile`): with PYTHONDONTWRITEBYTECODE
    set, as on some machines, each of the eight commands compiled langchain, pandas & co. again (~9 s of CPU)."""
    drop = ("PYTHONPATH", "OPENAI_BASE_URL", "OPENAI_API_KEY", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_wheel_installed_in_a_fresh_venv_runs_help_and_a_study(fresh_venv: Path, tmp_path: Path) -> None:
    assert not plain_has_pyarrow(fresh_venv)  # only what `pip install .` installs
    where = in_venv(fresh_venv, str(fresh_venv / "bin" / "python"), "-c",
                    "import critiquebench.domains.planning.tasks, critiquebench; print(critiquebench.__file__)",
                    cwd=tmp_path)  # fmt: skip
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(fresh_venv), where.stdout
    cli = str(fresh_venv / "bin" / "critiquebench")
    helped = in_venv(fresh_venv, cli, "--help", cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert "run" in helped.stdout and "export" in helped.stdout
    store = tmp_path / "study.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        ran = in_venv(fresh_venv, cli, "run", "wheel", "--domains", "game24", "--instances", "gen:3:1",
                      "--schemes", "standard,sound-first:rounds=3", "--model", "scripted", "--base-url",
                      server.base_url, "--store", str(store), "--no-progress", cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "Table 1" in ran.stdout
    listed = in_venv(fresh_venv, cli, "studies", "--json", "--store", str(store), cwd=tmp_path)
    (study,) = json.loads(listed.stdout)
    assert (study["name"], study["done"], study["total"]) == ("wheel", 6, 6)


def plain_has_pyarrow(venv: Path) -> bool:
    """Whether the analysis extra's pyarrow is in `venv` (the analysis test adds it to the fresh venv last)."""
    return any((venv / "lib").glob("python*/site-packages/pyarrow"))


def readme_python() -> str:
    """The README's "From Python" block, pointed at `MODEL` / `http://localhost:8000/v1` as printed."""
    from tests.test_docs import blocks

    (block,) = [b for b in blocks(ROOT / "README.md") if b.language == "python"]
    return block.text


def run_readme_python(
    venv: Path, server: ScriptedServer, work: Path, then: str = ""
) -> subprocess.CompletedProcess[str]:
    """The README's Python block run by `python -c` in `venv`, followed in the same process by `then` if given."""
    source = re.sub(r"\bMODEL\b", "scripted", readme_python()).replace("http://localhost:8000/v1", server.base_url)
    return in_venv(venv, str(venv / "bin" / "python"), "-c", f"{source}\n{then}", cwd=work)


def test_the_readme_python_block_runs_after_the_readmes_pip_install(fresh_venv: Path, tmp_path: Path) -> None:
    """The audit's trap: `pip install .` then the README's Python block ended in ModuleNotFoundError: pandas after
    cb.run had stored the study. pandas is core now; the block exits 0 and prints its DataFrame's means."""
    assert not plain_has_pyarrow(fresh_venv)  # only what `pip install .` installs
    with ScriptedServer(reply=game24_reply) as server:
        done = run_readme_python(fresh_venv, server, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sound-first:rounds=3" in done.stdout and "Name: correct" in done.stdout  # the groupby's Series
    assert "| standard" in done.stdout  # cb.report's Markdown table


@pytest.fixture(scope="module")
def analysis_venv(fresh_venv: Path, wheel: tuple[Path, str]) -> Iterator[Path]:
    """The fresh venv once its tests are done, with the wheel's `analysis` extra added as a user adds it after
    `pip install .` (`pip install '.[analysis]'`): pip resolves every declared dependency again and installs only
    what the extra adds, instead of a second venv installing all of them (~40 s of CPU). The plain-install tests
    above check that pyarrow is absent, so were this run before them they would fail, not pass unknowingly."""
    pip_install(fresh_venv, f"{wheel[0]}[analysis]")
    yield fresh_venv


def test_the_readme_python_block_with_the_analysis_extra_gives_dataframes_and_parquet(
    analysis_venv: Path, tmp_path: Path
) -> None:
    # then, in the same interpreter (one start-up and import of pandas and pyarrow less), its runs to Parquet and back
    check = ("import critiquebench as cb, pandas as pd; r = cb.runs('demo', store='demo.sqlite'); "
             "r.to_parquet('r.parquet'); back = pd.read_parquet('r.parquet'); "
             "print(type(r).__name__, len(r), len(back), str(back['correct'].dtype))")  # fmt: skip
    with ScriptedServer(reply=game24_reply) as server:
        done = run_readme_python(analysis_venv, server, tmp_path, then=check)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sound-first:rounds=3" in done.stdout and "| standard" in done.stdout  # the block's own output
    assert done.stdout.splitlines()[-1].split() == ["DataFrame", "10", "10", "boolean"]  # gen:5:1 x two schemes
    exported = in_venv(analysis_venv, str(analysis_venv / "bin" / "critiquebench"), "export", "demo", "--store",
                       "demo.sqlite", "--output", "runs.parquet", cwd=tmp_path)  # fmt: skip
    assert exported.returncode == 0, exported.stderr


def test_the_package_names_no_address_it_does_not_have_and_has_a_release_version(wheel: tuple[Path, str]) -> None:
    """The project publishes no repository, documentation site or changelog at an address yet, so none is
    invented: the metadata has no Project-URL or Home-page (give `[project.urls]` only real addresses), and no
    command in the README or docs clones from a placeholder (the last one, `git clone REPOSITORY critiquebench`,
    failed as typed). The README installs from the user's copy of the source with the `pip install .` the fresh
    venvs above test, and the wheel's version is a release with its CHANGELOG section."""
    with zipfile.ZipFile(wheel[0]) as archive:
        (meta,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(meta).decode()
    assert re.findall(r"^(?:Project-URL|Home-page|Download-URL): .*$", metadata, re.M) == []
    assert "urls" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    from tests.test_docs import blocks

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    commands = [line for page in pages for b in blocks(page) if b.language in ("bash", "sh", "console")
                for line in b.text.splitlines()]  # fmt: skip
    assert [c for c in commands if "git clone" in c] == []
    assert [p.name for p in pages if "REPOSITORY" in p.read_text(encoding="utf-8")] == []
    (install,) = [b for b in blocks(ROOT / "README.md") if "pip install ." in b.text]
    assert [line.split("#")[0].strip() for line in install.text.splitlines()] == ["cd critiquebench", "pip install ."]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "on neither PyPI nor a public repository yet" in readme  # so the user knows the source is their copy
    version = re.search(r"^Version: (\S+)$", metadata, re.M)[1]
    assert tuple(int(p) for p in version.split(".")) > (0, 1, 0)
    assert f"## [{version}]" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_every_install_hint_names_an_extra_that_resolves() -> None:
    """critiquebench is not on PyPI, so `pip install 'critiquebench[scale]'` cannot resolve (audit, docs/store.md):
    every hint in the code and docs installs from the checkout (`'.[EXTRA]'`), and EXTRA exists."""
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    files = [*ROOT.glob("critiquebench/**/*.py"), *ROOT.glob("docs/**/*.md"), ROOT / "README.md"]
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "install 'critiquebench[" not in text, path
        for extra in re.findall(r"pip install '\.\[(\w+)\]'", text):
            assert extra in extras, (path, extra)
