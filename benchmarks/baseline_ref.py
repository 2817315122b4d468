"""Another commit's code as the baseline of a benchmark, measured in the same run (the project's rule).

    with ref_tree("045ed38") as tree:
        subprocess.run(ref_command(tree, "resume", "s", "--store", STORE, "--replay"))

`ref_tree` checks the commit out into a temporary `git worktree` (removed after); `ref_command` runs the
`critiquebench` command of that tree with this venv's interpreter and libraries: the tree's own packages
(pyproject's `package-dir`: `critiquebench`, and `domains/` as `critiquebench.domains`, ...) are found before
the editable install of this one. Run as a script, this file is that command: `python baseline_ref.py TREE ARGS`.
"""

from __future__ import annotations

import importlib.util
import runpy
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def ref_tree(ref: str) -> Iterator[Path]:
    """A temporary checkout of commit `ref` of this repository."""
    folder = Path(tempfile.mkdtemp(prefix="cb-baseline-"))
    tree = folder / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), ref], check=True)
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def ref_command(tree: Path, *args: str) -> list[str]:
    """The command line of `critiquebench ARGS` as the code of `tree` runs it."""
    return [sys.executable, str(Path(__file__).resolve()), str(tree), *args]


class _TreeFinder:
    """Finds the packages pyproject's `package-dir` maps in a tree (the others as usual)."""

    def __init__(self, tree: Path) -> None:
        pyproject = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))
        self.folders = {name: tree / folder for name, folder in pyproject["tool"]["setuptools"]["package-dir"].items()}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        folder = self.folders.get(name)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(
            name, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


def main() -> None:
    tree = Path(sys.argv[1])
    sys.meta_path.insert(0, _TreeFinder(tree))
    sys.argv = ["critiquebench", *sys.argv[2:]]
    runpy.run_module("critiquebench.cli", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
