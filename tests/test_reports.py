"""Reports computed from real store files filled through store.results (no LLM needed)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from critiquebench.reports.figures import budget_figure
from critiquebench.reports.metrics import budget_curve, compare, table1, table2, wilson
from critiquebench.reports.tables import render
from critiquebench.store.db import connect
from critiquebench.store.results import ensure_schema, save_study, upsert_attempt, upsert_run
from critiquebench.studies.define import ReportError
from tests import forked_cli

TABLE1_KEYS = {"domain", "scheme", "correct", "total", "accuracy", "ci_low", "ci_high", "mean_rounds",
               "prompt_tokens", "completion_tokens", "llm_calls", "cache_hits"}  # fmt: skip


def add_run(db: Any, study: str, domain: str, spec: str, instance: str, rounds: list[dict[str, Any]],
            status: str = "done", trial: int = 0) -> None:  # fmt: skip
    """A run as execute_run records it: one attempts row per round, totals summed on the runs row."""
    tid = f"{study}/{domain}/{spec}/{instance}/{trial}"
    for i, fields in enumerate(rounds, start=1):
        upsert_attempt(db, tid, i, answer=f"answer {i}", prompt_tokens=10, completion_tokens=5, llm_calls=1,
                       cache_hits=i % 2, **fields)  # fmt: skip
    final = next((r for r in rounds if r.get("stopped")), rounds[-1] if rounds else {})
    upsert_run(
        db, tid, study=study, domain=domain, scheme=spec, instance_id=instance, trial=trial, status=status,
        rounds=len(rounds), correct=final.get("sound_valid") if status == "done" else None,
        prompt_tokens=10 * len(rounds), completion_tokens=5 * len(rounds), llm_calls=len(rounds),
        cache_hits=sum(i % 2 for i in range(1, len(rounds) + 1)),
    )  # fmt: skip


def new_store(path: Path, study: str, domains: list[str], schemes: list[str]) -> Any:
    db = connect(path)
    ensure_schema(db)
    save_study(db, study, {"name": study, "domains": domains, "schemes": schemes, "kind": "loop"})
    return db


def one(valid: int, stopped: int = 1, **extra: Any) -> list[dict[str, Any]]:
    return [{"sound_valid": valid, "stopped": stopped, **extra}]


@pytest.fixture
def study_db(tmp_path: Path) -> Any:
    """Study "s": game24 and coloring x standard and sampling:k=3, with known outcomes."""
    db = new_store(tmp_path / "store.sqlite", "s", ["game24", "coloring"], ["standard", "sampling:k=3"])
    for i, ok in enumerate([1, 1, 0, 0]):
        add_run(db, "s", "game24", "standard", str(i), one(ok))
    for i in range(3):  # correct at rounds 1, 2 and never
        valid = [[1], [0, 1], [0, 0, 0]][i]
        rounds = [{"sound_valid": v, "stopped": int(j == len(valid) - 1)} for j, v in enumerate(valid)]
        add_run(db, "s", "game24", "sampling:k=3", str(i), rounds)
    add_run(db, "s", "game24", "sampling:k=3", "3", [], status="failed")
    add_run(db, "s", "game24", "sampling:k=3", "4", one(0, 0), status="running")
    add_run(db, "s", "coloring", "standard", "1", one(0))
    return db


def test_wilson_matches_known_intervals() -> None:
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(23, 100) == pytest.approx((0.1584, 0.3216), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert all(math.isnan(x) for x in wilson(0, 0))


def test_table1_counts_finished_runs_in_study_order(study_db: Any) -> None:
    rows = {(r.domain, r.scheme): r for r in table1(study_db, "s")}
    assert [(r.domain, r.scheme) for r in table1(study_db, "s")] == [
        ("game24", "standard"), ("game24", "sampling:k=3"), ("coloring", "standard"),
    ]  # fmt: skip
    std = rows[("game24", "standard")]
    assert (std.correct, std.total, std.accuracy, std.mean_rounds) == (2, 4, 0.5, 1.0)
    assert (std.ci_low, std.ci_high) == pytest.approx(wilson(2, 4))
    samp = rows[("game24", "sampling:k=3")]
    assert (samp.correct, samp.total, samp.failed, samp.unfinished) == (2, 3, 1, 1)
    assert samp.mean_rounds == pytest.approx(2.0)
    assert samp.mean_tokens == pytest.approx(30.0)  # 15 tokens per round
    assert (samp.prompt_tokens, samp.completion_tokens, samp.llm_calls) == (60, 30, 6)


def test_table1_renders_paper_cells_in_every_format(study_db: Any) -> None:
    rows = table1(study_db, "s")
    for fmt in ("table", "md"):
        text = render(rows, fmt)
        assert "50.0% (2/4)" in text and "66.7% (2/3)" in text and "0.0% (0/1)" in text
    md = render(rows, "md")
    assert "| scheme | game24 | coloring |" in md
    assert "| standard | 50.0% (2/4) * | 0.0% (0/1) * |" in md  # * fewer than SMALL_N finished runs (guards)
    csv_lines = render(rows, "csv").splitlines()
    assert set(csv_lines[0].split(",")) >= TABLE1_KEYS and len(csv_lines) == 4


def test_json_rows_have_the_documented_keys(study_db: Any) -> None:
    data = json.loads(render(table1(study_db, "s"), "json"))
    assert isinstance(data, list) and len(data) == 3
    for row in data:
        assert TABLE1_KEYS <= set(row) and row["table"] == "1" and row["study"] == "s"
    assert data[0]["accuracy"] == 0.5 and data[0]["correct"] == 2 and data[0]["total"] == 4


def test_a_group_without_finished_runs_has_no_accuracy(tmp_path: Path) -> None:
    db = new_store(tmp_path / "s.sqlite", "s", ["game24"], ["standard"])
    add_run(db, "s", "game24", "standard", "1", [], status="failed")
    [row] = json.loads(render(table1(db, "s"), "json"))
    assert row["total"] == 0 and row["accuracy"] is None and row["ci_low"] is None and row["failed"] == 1
    assert "-" in render(table1(db, "s"), "md")


def test_table2_rates_against_the_sound_verdict(tmp_path: Path) -> None:
    db = new_store(tmp_path / "s.sqlite", "s", ["game24"], ["llm-llm"])
    # (llm said valid, sound valid): 3 true pos, 1 false pos, 2 false neg, 4 true neg; plus an unjudged round.
    pairs = [(1, 1)] * 3 + [(1, 0)] + [(0, 1)] * 2 + [(0, 0)] * 4
    for i, (said, valid) in enumerate(pairs):
        add_run(
            db,
            "s",
            "game24",
            "llm-llm",
            str(i),
            [{"sound_valid": 0, "stopped": 0}, {"sound_valid": valid, "llm_verdict": said, "stopped": 1}],
        )
    [row] = table2(db, "s")
    counts = (row.n, row.agree, row.false_pos, row.sound_invalid, row.false_neg, row.sound_valid)
    assert row.scheme == "all" and counts == (10, 7, 1, 5, 2, 5)
    assert (row.accuracy, row.fpr, row.fnr) == (0.7, 0.2, 0.4)
    text = render([row], "table")
    assert "70.0% (7/10)" in text and "20.0% (1/5)" in text and "40.0% (2/5)" in text
    assert "FPR: LLM said valid among sound-invalid" in text


def test_table2_splits_schemes_when_several_judged(tmp_path: Path) -> None:
    db = new_store(tmp_path / "s.sqlite", "s", ["coloring"], ["llm-llm", "intrinsic"])
    add_run(db, "s", "coloring", "llm-llm", "1", one(1, llm_verdict=1))
    add_run(db, "s", "coloring", "intrinsic", "1", one(1, llm_verdict=0))
    rows = table2(db, "s")
    assert [(r.scheme, r.n, r.agree) for r in rows] == [("llm-llm", 1, 1), ("intrinsic", 1, 0), ("all", 2, 1)]


def test_budget_curve_evaluates_each_budget_as_a_timeout(tmp_path: Path) -> None:
    db = new_store(tmp_path / "s.sqlite", "s", ["game24"], ["standard", "llm-llm"])
    add_run(db, "s", "game24", "standard", "1", one(1))  # not iterative: not in the figure
    r = lambda valid, said, stopped: {"sound_valid": valid, "llm_verdict": said, "stopped": stopped}  # noqa: E731
    # A: the LLM accepts a wrong first answer. B: right at round 3. C: right at round 2, but the LLM
    # rejects it and the run times out at round 3 with a wrong answer.
    add_run(db, "s", "game24", "llm-llm", "A", [r(0, 1, 1)])
    add_run(db, "s", "game24", "llm-llm", "B", [r(0, 0, 0), r(0, 0, 0), r(1, 1, 1)])
    add_run(db, "s", "game24", "llm-llm", "C", [r(0, 0, 0), r(1, 0, 0), r(0, 0, 1)])
    points = budget_curve(db, "s")
    assert [(p.scheme, p.budget, p.correct, p.total) for p in points] == [
        ("llm-llm", 1, 0, 3), ("llm-llm", 2, 1, 3), ("llm-llm", 3, 1, 3),
    ]  # fmt: skip
    # The last budget equals Table 1's accuracy for the scheme.
    assert {(t.scheme, t.correct) for t in table1(db, "s")} >= {("llm-llm", 1)}
    png = budget_figure(points, tmp_path / "fig" / "figure2.png", "s")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_puts_two_studies_side_by_side(study_db: Any) -> None:
    save_study(study_db, "t", {"name": "t", "domains": ["game24"], "schemes": ["standard"], "kind": "loop"})
    for i, ok in enumerate([1, 1, 1, 0]):
        add_run(study_db, "t", "game24", "standard", str(i), one(ok))
    rows = {(r.domain, r.scheme): r for r in compare(study_db, "s", "t")}
    std = rows[("game24", "standard")]
    assert (std.accuracy, std.other_accuracy, std.delta) == (0.5, 0.75, -0.25)
    assert rows[("coloring", "standard")].other_total is None and rows[("coloring", "standard")].delta is None
    text = render(list(rows.values()), "md")
    assert "| game24 | standard | 50.0% (2/4) | 75.0% (3/4) | -25.0 |" in text


def test_unknown_study_is_a_clear_error(study_db: Any) -> None:
    with pytest.raises(ReportError, match="no study named 'nope'.*known studies: s"):
        table1(study_db, "nope")


def test_report_cli_reads_only_the_store_and_a_copy_reports_identically(
    study_db: Any, tmp_path: Path, forked_light_env: dict[str, str]
) -> None:
    def _cli(*args: str) -> subprocess.CompletedProcess[str]:  # forked from one that imported the CLI
        return forked_cli.run(["critiquebench", *args], forked_light_env, timeout=120)

    source = Path(study_db.conn.execute("PRAGMA database_list").fetchone()[2])
    study_db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    copy = tmp_path / "elsewhere" / "copied.sqlite"
    copy.parent.mkdir()
    shutil.copy(source, copy)
    outputs = []
    for store in (source, copy):
        outputs.append([_cli("report", "s", "--store", str(store), "--format", fmt, "--table", table).stdout
                        for fmt, table in (("json", "1"), ("md", "2"), ("csv", "figure"))])  # fmt: skip
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0][0])[0]["accuracy"] == 0.5
    missing = _cli("report", "nope", "--store", str(copy))
    assert missing.returncode == 2 and "no study named 'nope'" in missing.stderr
    assert "Traceback" not in missing.stderr
    exported = _cli("export", "s", "--store", str(copy)).stdout.splitlines()
    rounds = copy_db_rounds(copy)
    assert len(exported) == rounds
    first = json.loads(exported[0])
    assert {"study", "domain", "scheme", "instance", "trial", "round", "prompt_tokens", "completion_tokens",
            "answer", "canonical", "sound_valid", "llm_verdict", "feedback"} <= set(first)  # fmt: skip


def copy_db_rounds(path: Path) -> int:
    db = connect(path)
    return db.execute(
        "SELECT COUNT(*) FROM attempts a JOIN runs r USING (thread_id) WHERE r.study = 's'"
    ).fetchone()[0]
