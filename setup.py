"""Package discovery for setuptools (everything else is in pyproject.toml).

Every folder under each entry of pyproject's `[tool.setuptools.package-dir]` is a package of the wheel: the app
layer `critiquebench/`, and `domains/`, `nodes/`, `graphs/`, `store/` installed as `critiquebench.domains` etc.
Data folders (PDDL files, the viewer's static files) are found as namespace packages, so their files install
with no setuptools warning, and a new module or data folder needs no entry anywhere.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent


def packages() -> list[str]:
    """Every package name of the wheel, from the folders `package-dir` maps."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    found = []
    for name, folder in mapping.items():
        subs = find_namespace_packages(str(ROOT / folder), exclude=["__pycache__", "*.__pycache__"])
        found += [name, *(f"{name}.{sub}" for sub in subs if f"{name}.{sub}" not in mapping)]
    return sorted(set(found))


setup(packages=packages())
