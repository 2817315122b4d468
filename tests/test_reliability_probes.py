"""docs/reliability_probes.json, the re-run of the reliability audit's 59 probes (issue 45): every probe is there
once, with its figures and a verdict, every failure is gone or is a note with its reason, and every test a probe
names exists, so the table docs/generate.py renders from it points at real tests."""

from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBES = json.loads((ROOT / "docs" / "reliability_probes.json").read_text(encoding="utf-8"))["probes"]


def test_each_of_the_59_probes_is_there_once_with_its_figures_and_a_verdict() -> None:
    ids = [(p["section"], p["id"]) for p in PROBES]
    assert len(ids) == len(set(ids)) == 59
    assert [sum(p["section"] == s for p in PROBES) for s in "ABC"] == [24, 7, 28]  # as the audit's summary
    for probe in PROBES:
        assert probe["verdict"] in ("pass", "note"), probe  # no failure left, none skipped
        assert probe["ran"] and probe["note"] and probe["test"], probe
        assert probe["tracebacks"] in (0, None), probe


def test_every_test_a_probe_names_exists() -> None:
    names: dict[str, set[str]] = {}
    for probe in PROBES:
        module = ""
        for ref in (t.strip() for t in probe["test"].split(", ") if t.strip()):
            path, _, func = ref.partition("::")
            module = path if path else module  # "::name" continues the file named before it
            if module not in names:
                tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
                names[module] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
            assert not func or func in names[module], (probe["id"], ref)
