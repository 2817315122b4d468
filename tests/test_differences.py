"""The paper pages' "what is exact and what differs" tables (`docs/generate.py` block `differences:PAPER`) come
from `critiquebench/reports/differences.py` and from `report --published`'s own rows: every finding names the
tests that show it, and a published number the recorded data reproduces is never listed as differing."""

from __future__ import annotations

from pathlib import Path

import pytest

from critiquebench.reports.differences import FINDINGS, findings, mismatches, missing_tests, named_tests
from critiquebench.reports.published import PublishedRow

ROOT = Path(__file__).resolve().parents[1]


def test_every_finding_names_tests_that_exist() -> None:
    assert all(named_tests(row) for row in FINDINGS), [r.finding for r in FINDINGS if not named_tests(r)]
    assert missing_tests(ROOT) == []
    assert {r.paper for r in FINDINGS} == {"000", "002"} and findings("002")


def test_a_published_number_listed_as_differing_leaves_the_table_once_it_agrees() -> None:
    differs = PublishedRow("000", "Table 1, X (000:1)", "40%", "39.0% (39/100)", False, "why")
    assert [d.verdict for d in mismatches([differs], "000")] == ["differs: 39.0% (39/100)"]
    fixed = PublishedRow("000", "Table 1, X (000:1)", "40%", "40.0% (40/100)", True, "why")
    assert mismatches([fixed], "000") == [] and mismatches([differs], "002") == []


def test_the_pages_show_the_generated_tables() -> None:
    for paper, page in (("000", "self-verification.md"), ("002", "plan-self-critique.md")):
        text = (ROOT / "docs" / "papers" / page).read_text(encoding="utf-8")
        block = text.split(f"<!-- generated: differences:{paper} -->")[1].split("<!-- end generated -->")[0]
        assert all(" ".join(row.finding.split()) in block for row in findings(paper))


def test_the_prompt_pieces_re_count_walks_all_36_each_with_its_test() -> None:
    from critiquebench.reports.prompt_pieces import PIECES, tally

    assert sum(p.count for p in PIECES) == 36
    assert all((ROOT / p.test).is_file() for p in PIECES), [p.test for p in PIECES if not (ROOT / p.test).is_file()]
    # every piece not word for word says why (no study publishes the text, or which steps count)
    assert tally() == {"exact": 34, "ours": 2}
    assert all(p.verdict == "exact" or p.verdict.startswith("ours, because ") for p in PIECES)


def test_published_lists_every_pair_with_its_explanation_in_every_format(monkeypatch: pytest.MonkeyPatch) -> None:
    """`report --published`: each recorded-vs-published pair, with why it agrees or not, in json, csv, md and the
    terminal table (whose wrapped cells are read back column by column)."""
    monkeypatch.setenv("CRITIQUEBENCH_COLUMNS", "160")  # one table (at 80 it is drawn in parts: test_narrow_output)
    import csv
    import functools
    import io
    import json

    from critiquebench.reports import published
    from tests.test_study_cli import DATASETS, invoke

    # The rows are computed once, by the first command (json), as any run computes them; the other three commands
    # render those same rows, which is what this test is about (each computation cost ~3 s of CPU)
    monkeypatch.setattr(published, "published_rows", functools.cache(published.published_rows))

    def out(fmt: str) -> str:
        return invoke("report", "--published", "--dataset", str(DATASETS), "--format", fmt).stdout

    rows = json.loads(out("json"))
    assert len(rows) > 60 and all(r["reason"] and r["published"] and r["ours"] for r in rows)
    pairs = [(r["where"], r["published"], r["ours"], r["reason"]) for r in rows]

    def cell(value: str) -> str:  # a CSV cell opening like a formula is written with a "'" before it
        return value[1:] if value[:1] == "'" and value[1:2] in ("=", "+", "-", "@") else value

    assert [(cell(r["where"]), cell(r["published"]), cell(r["ours"]), cell(r["reason"]))
            for r in csv.DictReader(io.StringIO(out("csv")))] == pairs  # fmt: skip
    md = [[c.strip() for c in line.strip("|").split(" | ")] for line in out("md").splitlines()
          if line.startswith("| 00")]  # fmt: skip
    assert [(m[1], m[2], m[3], m[5]) for m in md] == [tuple(p.replace("|", "\\|") for p in pair) for pair in pairs]
    # the terminal table: a row starts where the paper column is filled; its cells continue on the lines below
    cells: list[list[str]] = []
    for line in out("table").splitlines():
        parts = line.split("\u2502")[1:-1]
        if len(parts) != 6:
            continue
        if parts[0].strip():
            cells.append(["" for _ in parts])
        cells[-1] = [f"{old} {new.strip()}".strip() for old, new in zip(cells[-1], parts, strict=True)]
    # a long word (a path) wraps inside itself, so the cells are compared without their white space
    assert [tuple("".join(c[i].split()) for i in (1, 2, 3, 5)) for c in cells] == [
        tuple("".join(p.split()) for p in pair) for pair in pairs]  # fmt: skip
