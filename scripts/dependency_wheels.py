"""The wheels of critiquebench's declared dependencies and of its `analysis` extra, downloaded once per machine
and user (scripts/setup.sh runs this) into a folder the packaging tests install from offline
(`pip install --no-index --find-links FOLDER`): a test's fresh venv downloads nothing, and pip resolves from a
folder instead of an index (6 s of CPU instead of 18 s).

    python scripts/dependency_wheels.py   # downloads what the folder lacks for this pyproject.toml; prints it

A stamp named after the requirements (and this Python and platform) says the folder holds them; a changed
dependency list downloads again into the same folder, and the tests ask for set-up when its stamp is missing.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("analysis",)  # the extras a packaging test adds to its fresh venv


def folder() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "critiquebench" / "wheels" / "dependencies"


def requirements(root: Path = ROOT) -> list[str]:
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = [r for extra in EXTRAS for r in project["optional-dependencies"][extra]]
    return sorted({*project["dependencies"], *extras})


def stamp(root: Path = ROOT) -> Path:
    key = "\n".join([*requirements(root), sys.implementation.cache_tag, sysconfig.get_platform()])
    return folder() / f".stamp-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def main() -> None:
    done = stamp()
    if not done.exists():
        done.parent.mkdir(parents=True, exist_ok=True)
        # a set-up running beside this one may fill the folder too: each downloads apart, then moves its files in
        with tempfile.TemporaryDirectory(dir=done.parent.parent) as into:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", into, *requirements()],
                           check=True)  # fmt: skip
            for wheel in Path(into).iterdir():
                os.replace(wheel, done.parent / wheel.name)
        done.touch()
    print(done.parent)


if __name__ == "__main__":
    main()
