"""The code's shape, checked from the source: no import cycles among critiquebench's modules, no SQL outside
`store/`, and a CLI that only parses, calls and prints (no study logic: it reaches the store and LangGraph only
through the studies layer).

Every `import` (module level or inside a function) is read with `ast`; nothing is imported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# where each part of the critiquebench package lives (pyproject's package-dir)
FOLDERS = {"critiquebench": ROOT / "critiquebench", "critiquebench.domains": ROOT / "domains",
           "critiquebench.nodes": ROOT / "nodes", "critiquebench.graphs": ROOT / "graphs",
           "critiquebench.store": ROOT / "store"}  # fmt: skip
# SQL as the store writes it: a statement's keywords in capitals (prose says "select", never "SELECT ... FROM")
SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bCREATE\s+(TEMP\s+)?(TABLE|INDEX)\b|\bALTER\s+TABLE\b|\bDROP\s+TABLE\b|^\s*PRAGMA\b|^\s*BEGIN\s+IMMEDIATE\b"
)


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for prefix, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join((prefix, *parts))
            if prefix == "critiquebench" and name.split(".")[1:2] and name.split(".")[1] in (
                    "domains", "nodes", "graphs", "store"):  # fmt: skip
                continue
            found[name] = path
    return found


def imports(path: Path, name: str, known: dict[str, Path]) -> Iterator[tuple[int, str]]:
    """(line, module) of every critiquebench module `path` imports: `from X import Y` names X.Y when that is a
    module, else X."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _type_checking(block.test)
                   for stmt in block.body for n in ast.walk(stmt)}  # fmt: skip
    for node in ast.walk(tree):
        if id(node) in typing_only:  # `if TYPE_CHECKING:` imports never run
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield node.lineno, full if full in known else base


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")  # fmt: skip


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: {target for _, target in imports(path, name, known) if target in known and target != name}
            for name, path in known.items()}  # fmt: skip


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def sql_outside_store() -> list[str]:
    """file:line of every string literal outside store/ that holds a SQL statement."""
    bad = []
    for name, path in sorted(modules().items()):
        if name.startswith("critiquebench.store"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.strip()[:60]!r}")
    return bad


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_no_sql_outside_the_store() -> None:
    assert sql_outside_store() == []


def test_the_cli_holds_no_study_logic() -> None:
    """cli/ parses flags, calls the studies and reports API and prints; it neither queries the store's tables
    nor runs graphs itself."""
    known = modules()
    bad = []
    for name, path in known.items():
        if not name.startswith("critiquebench.cli"):
            continue
        for line, target in imports(path, name, known):
            if target.startswith("langgraph") or (target.startswith("critiquebench.store") and target not in CLI_STORE):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert bad == []


# What the CLI may take from store/: where a store is, how to open it and its errors; the call cache and store
# copy, which `cache` and `store copy` expose as they are. Tables' queries stay behind studies/ and reports/.
CLI_STORE = {"critiquebench.store.db", "critiquebench.store.postgres", "critiquebench.store.cache",
             "critiquebench.store.copy"}  # fmt: skip


def test_the_checks_catch_what_they_look_for(tmp_path: Path) -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    bad = tmp_path / "x.py"
    bad.write_text('def f(db):\n    """select the rows"""\n    return db.execute("SELECT 1 FROM runs")\n')
    hits = [n.lineno for n in ast.walk(ast.parse(bad.read_text())) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and SQL.search(n.value)]  # fmt: skip
    assert hits == [3]
    assert "critiquebench.studies.execute" in import_graph()["critiquebench.studies.runner"]
