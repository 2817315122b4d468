"""The benchmark page is rendered from the results files the benchmarks write, never from hand-typed figures."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.render import render_markdown
from benchmarks.results import RESULTS, record, row, validate

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("bench_*.py"))
COMMITTED = sorted(RESULTS.glob("*.json"))


@pytest.mark.parametrize("path", COMMITTED, ids=[p.name for p in COMMITTED])
def test_every_committed_results_file_is_valid_and_names_a_script(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert validate(doc) == []
    assert doc["benchmark"] == path.stem
    assert doc["script"] in SCRIPTS


def test_the_page_renders_every_committed_file_and_says_which_scripts_are_not_measured() -> None:
    page = render_markdown()
    measured = set()
    for path in COMMITTED:
        doc = json.loads(path.read_text(encoding="utf-8"))
        measured.add(doc["script"])
        for r in doc["rows"]:
            assert r["measure"] in page
        assert doc["commit"][:10] in page
    for script in SCRIPTS:
        section = page.split(f"### {script}\n", 1)[1].split("\n### ", 1)[0]
        assert ("not measured" in section) == (script not in measured), script


def test_a_quick_benchmark_run_writes_a_valid_file_that_renders(tmp_path: Path) -> None:
    out = tmp_path / "results" / "bench_game24.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_game24.py"), "--puzzles", "3",
                           "--json", str(out)], capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "speed-up:" in done.stdout  # it still prints its figures
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert validate(doc) == []
    speed, agree = doc["rows"]
    assert speed["ratio"] == pytest.approx(speed["baseline"]["value"] / speed["value"], rel=1e-3)
    assert speed["met"] == (speed["ratio"] >= 10)
    assert (agree["value"], agree["unit"]) == (12, "of 12")
    assert doc["command"][1:] == ["--puzzles", "3", "--json", str(out)]
    assert len(doc["load"]["before"]) == 3 and doc["machine"]["cores"] >= 1
    assert list(out.parent.iterdir()) == [out]  # written atomically: no temporary file left beside it

    page = render_markdown(out.parent)
    game24 = page.split("### bench_game24.py\n", 1)[1].split("\n### ", 1)[0]
    assert "not measured" not in game24 and "| all agree | met |" in game24
    assert "`python benchmarks/bench_game24.py --puzzles 3`" in game24  # the temporary path is not shown
    assert page.count("not measured: no results file yet") == len(SCRIPTS) - 1


def test_a_bad_results_file_is_named_on_the_page_not_rendered(tmp_path: Path) -> None:
    (tmp_path / "bench_reuse.json").write_text('{"benchmark": "bench_reuse", "rows": []}')
    (tmp_path / "bench_graph.json").write_text("{not json")
    page = render_markdown(tmp_path)
    assert "`bench_reuse.json`: not rendered, invalid results file: script: missing" in page
    assert "`bench_graph.json`: not rendered, invalid results file: unreadable" in page


def test_record_refuses_figures_that_are_not_numbers(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="not a finite number"):
        row("time", math.nan, "s")
    bad = {**row("time", 1.0, "s"), "met": "yes"}
    with pytest.raises(ValueError, match=r"rows\[0\]: met"):
        record("bench_x", [bad], path=tmp_path / "x.json")
    assert not list(tmp_path.iterdir())
