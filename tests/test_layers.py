"""The layers import one way only: domains <- nodes <- graphs <- app, and the store is used by the app only.

Every `import` in the core folders (module level or inside a function) is read from the source, so a wrong-way
import fails here before it tangles the layers.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "critiquebench."
# folder -> the layers of critiquebench it may import (besides itself); everything else of critiquebench is
# the app layer (cli, llm, studies, reports, importers, ...), which may import any layer.
ALLOWED: dict[str, set[str]] = {
    "domains": set(),
    "nodes": {"domains"},
    "graphs": {"domains", "nodes"},
    "store": set(),
}


def layer_of(module: str) -> str:
    """ "critiquebench.nodes.context" -> "nodes"; app-layer modules -> "app"."""
    first = module[len(PREFIX) :].split(".")[0] if module.startswith(PREFIX) else ""
    return first if first in ALLOWED else "app"


def imports_of(path: Path, package: str) -> list[tuple[int, str]]:
    return imports_in(ast.parse(path.read_text(encoding="utf-8"), str(path)), package)


def imports_in(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """`imports_of` on a module already parsed (docs/generate.py parses each module once for several tables)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                found.append((node.lineno, f"{base}.{node.module}" if node.module else base))
            elif node.module:
                found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name == "critiquebench" or name.startswith(PREFIX)]


def wrong_way(folder: str) -> list[str]:
    bad = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        package = PREFIX + ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
        for line, name in imports_of(path, package):
            target = "app" if name == "critiquebench" else layer_of(name)
            if target != folder and target not in ALLOWED[folder]:
                bad.append(
                    f"{path.relative_to(ROOT)}:{line} imports {name} ({folder} may use {ALLOWED[folder] or 'none'})"
                )
    return bad


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_layers_import_one_way(folder: str) -> None:
    assert wrong_way(folder) == []


# Rooms of the app layer that import one way too: reports read what studies ran (a study's definition, its spec
# read back from a thread id), so studies/ never imports reports/ and the two cannot tie into a cycle.
ONE_WAY_ROOMS = [("studies", "reports")]


def room_imports(room: str, other: str) -> list[str]:
    """Every import of critiquebench.<other> in critiquebench/<room>/ (module level or inside a function)."""
    bad = []
    for path in sorted((ROOT / "critiquebench" / room).rglob("*.py")):
        package = PREFIX + ".".join(path.relative_to(ROOT).with_suffix("").parts[1:-1])
        for line, name in imports_of(path, package):
            if name == f"{PREFIX}{other}" or name.startswith(f"{PREFIX}{other}."):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    return bad


@pytest.mark.parametrize(("room", "other"), ONE_WAY_ROOMS)
def test_studies_never_import_reports(room: str, other: str) -> None:
    assert room_imports(room, other) == []


def test_the_check_catches_a_wrong_way_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from critiquebench.store.results import upsert_attempt\n")
    assert imports_of(bad, "critiquebench.nodes") == [(2, "critiquebench.store.results")]
    assert layer_of("critiquebench.store.results") == "store" and layer_of("critiquebench.llm.client") == "app"
    assert room_imports("reports", "studies")  # the other way is allowed, and found


# The architecture page (docs/architecture.md) is generated from the source (docs/generate.py `architecture:*`
# blocks, which print ALLOWED and ONE_WAY_ROOMS above); its module table takes each module's docstring, and its
# prose names files and folders, which must exist.
CORE = ("domains", "nodes", "graphs", "store", "critiquebench")


def test_every_module_says_what_it_is() -> None:
    silent = [str(path.relative_to(ROOT)) for folder in CORE for path in sorted((ROOT / folder).rglob("*.py"))
              if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))]  # fmt: skip
    assert silent == []


def test_the_architecture_page_names_real_paths() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    prose = re.sub(r"<!-- generated: .*?<!-- end generated -->", "", page, flags=re.S)
    named = set(re.findall(r"`([\w./]+(?:\.py|/))`", prose))
    assert len(named) > 5
    # a path is from the checkout's root, or inside the app package (`importers/recording.py`)
    missing = sorted(p for p in named if not (ROOT / p).exists() and not (ROOT / "critiquebench" / p).exists())
    assert missing == []
    listed = set(re.findall(r"^\| `([\w./]+\.py)` \|", page, flags=re.M))
    every = {str(path.relative_to(ROOT)) for folder in CORE for path in (ROOT / folder).rglob("*.py")}
    assert every <= listed, sorted(every - listed)  # the rooms table lists api.py etc. too
