"""The public plug-in API (`critiquebench.plugins`): the shipped example plug-ins import nothing else of
critiquebench, every name they use is in its `__all__`, and every stable name is listed on docs/schemes.md.

Audit (issue 43): a scheme plug-in had to import undocumented internals (`graphs.loops`, `graphs.params`,
`graphs.cost`), and nothing said which names were stable."""

from __future__ import annotations

import ast
from pathlib import Path

import critiquebench.plugins as plugins

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "tests" / "plugin_example").glob("*.py"))


def critiquebench_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import of critiquebench in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "critiquebench":
            found.append((node.module or "", [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.split(".")[0] == "critiquebench"]
    return found


def test_the_example_plugins_import_only_the_public_api() -> None:
    assert len(EXAMPLES) == 3  # a scheme, a critic and a domain
    for path in EXAMPLES:
        imports = critiquebench_imports(path)
        assert imports, path
        for module, names in imports:
            assert module == "critiquebench.plugins", (path.name, module)
            assert names and set(names) <= set(plugins.__all__), (path.name, names)


def test_every_stable_name_resolves_and_is_listed_in_the_docs() -> None:
    page = (ROOT / "docs" / "schemes.md").read_text(encoding="utf-8")
    assert len(set(plugins.__all__)) == len(plugins.__all__)
    for name in plugins.__all__:
        assert getattr(plugins, name) is not None
        assert f"| `{name}` |" in page, name
    assert set(plugins.ENTRY_POINTS.values()) == {"critiquebench.schemes", "critiquebench.critics",
                                                  "critiquebench.domains"}  # fmt: skip
