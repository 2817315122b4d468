"""Paired comparisons (`report --table compare`) and why loops stopped (`--table stops`), on real store files.

The statistics are checked against direct computation (a planted 2x2 table, Holm on known p-values, a bootstrap
interval around the difference it resamples) and against a second implementation (scipy's `binomtest`; a bootstrap
that draws instances one by one)."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest

from critiquebench.reports.metrics import table2
from critiquebench.reports.paired import compare_rows, parse_pairs
from critiquebench.reports.stats import RESAMPLES, SEED, holm, mcnemar_exact, paired_bootstrap
from critiquebench.reports.stops import CLASSES, stop_rows
from critiquebench.reports.tables import render
from critiquebench.studies.define import ReportError
from tests.conftest import GPT4_COLOURING, copied_store
from tests.test_replay_planbench import cli as run_cli  # the command in this process, its outcome as a process's
from tests.test_reports import add_run, new_store

COMPARE_KEYS = {"domain", "scheme_a", "scheme_b", "n", "a_correct", "b_correct", "a_only", "b_only", "difference",
                "ci_low", "ci_high", "mcnemar_p", "holm_p"}  # fmt: skip


# --- the statistics -------------------------------------------------------------------------------------------


def test_mcnemar_exact_on_a_planted_two_by_two() -> None:
    # 8 units only A got right, 2 only B: P(X <= 2) for X ~ Bin(10, 1/2) = (1 + 10 + 45) / 1024, doubled
    assert mcnemar_exact(8, 2) == pytest.approx(112 / 1024, abs=1e-15)
    assert mcnemar_exact(2, 8) == mcnemar_exact(8, 2)
    assert mcnemar_exact(5, 5) == 1.0 and mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(41, 0) == pytest.approx(2 * 0.5**41)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


@pytest.mark.parametrize("b,c", [(0, 1), (1, 0), (3, 9), (9, 3), (17, 17), (20, 31), (0, 60), (250, 180), (7, 400)])
def test_mcnemar_exact_agrees_with_scipy_binomtest(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9, abs=1e-300)


def test_holm_on_known_p_values() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4 x 0.005, 3 x 0.01, 2 x 0.03, max(0.06, 1 x 0.04): in the order given
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([0.02]) == [0.02] and holm([]) == []


def units_of(a: list[int], b: list[int], trials: int = 1) -> list[tuple[str, int, int]]:
    return [(str(i // trials), x, y) for i, (x, y) in enumerate(zip(a, b, strict=True))]


def test_bootstrap_interval_holds_the_difference_and_is_seeded() -> None:
    rng = np.random.default_rng(7)
    a, b = list(rng.integers(0, 2, 80)), list((rng.random(80) < 0.3).astype(int))
    units = units_of(a, b)
    diff = (sum(a) - sum(b)) / len(a)
    low, high = paired_bootstrap(units)  # type: ignore[misc]
    assert low < diff < high and -1 <= low and high <= 1
    assert paired_bootstrap(units) == (low, high)  # seeded: the same data give the same interval
    # the seed drives the draws (with few resamples, other seeds give other intervals)
    assert len({paired_bootstrap(units, resamples=40, seed=s) for s in range(6)}) > 1
    assert paired_bootstrap(units_of([1, 0, 1], [1, 0, 1])) == (0.0, 0.0)  # no discordant unit: nothing varies
    assert paired_bootstrap([]) is None


def direct_bootstrap(units: list[tuple[str, int, int]], resamples: int, seed: int) -> tuple[float, float]:
    """A second implementation: draw instances one by one (with their trials) and recompute the difference."""
    instances = sorted({u[0] for u in units})
    per = {i: [(a, b) for j, a, b in units if j == i] for i in instances}
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(resamples):
        drawn = [per[instances[k]] for k in rng.integers(0, len(instances), len(instances))]
        pairs = [p for group in drawn for p in group]
        diffs.append(sum(a - b for a, b in pairs) / len(pairs))
    low, high = np.quantile(diffs, [0.025, 0.975])
    return float(low), float(high)


@pytest.mark.parametrize("trials", [1, 3])
def test_bootstrap_matches_drawing_instances_one_by_one(trials: int) -> None:
    rng = np.random.default_rng(11)
    a, b = list(rng.integers(0, 2, 60 * trials)), list((rng.random(60 * trials) < 0.35).astype(int))
    units = units_of(a, b, trials)
    ours = paired_bootstrap(units, resamples=RESAMPLES)
    theirs = direct_bootstrap(units, 4000, 3)
    assert ours == pytest.approx(theirs, abs=0.025)  # two Monte Carlo estimates of the same quantiles


# --- the compare table --------------------------------------------------------------------------------------------

SCHEMES = ["standard", "sound-first:rounds=3", "llm-llm:rounds=3"]


def rounds_of(pattern: list[tuple[int, int | None]]) -> list[dict[str, Any]]:
    """(sound_valid, llm_verdict) per round; the last round is the one the run stopped on."""
    return [{"sound_valid": s, "llm_verdict": v, "stopped": int(i == len(pattern) - 1)}
            for i, (s, v) in enumerate(pattern)]  # fmt: skip


# llm-llm:rounds=3 outcomes, each planted `count` times: the stops class each must land in
LLM_PATTERNS = [
    ("accepted_wrong", 6, [(0, 1)]),  # a false-positive stop
    ("accepted_wrong", 3, [(1, 0), (0, 1)]),  # a correct answer rejected, then a wrong one accepted: lost at 1
    ("accepted_correct", 2, [(1, 1)]),
    ("exhausted_wrong", 5, [(0, 0), (0, 0), (0, 0)]),
    ("exhausted_correct", 2, [(0, 0), (0, 0), (1, 0)]),  # right at the end, though the LLM said not
    # a last round no LLM judged (gpt-and-i's 2023 colouring loop: a 16th answer after the 15th critique): out of
    # rounds, though the sound verifier accepts it
    ("exhausted_correct", 1, [(0, 0), (0, 0), (1, None)]),
]
N = sum(count for _, count, _ in LLM_PATTERNS)  # 19 instances


@pytest.fixture
def loop_db(tmp_path: Path) -> Any:
    """Study "loop": game24, N instances; standard right on the first 4, sound-first right on all but 2,
    llm-llm as LLM_PATTERNS."""
    db = new_store(tmp_path / "store.sqlite", "loop", ["game24"], SCHEMES)
    i = 0
    for _, count, pattern in LLM_PATTERNS:
        for _ in range(count):
            add_run(db, "loop", "game24", "llm-llm:rounds=3", str(i), rounds_of(pattern))
            add_run(db, "loop", "game24", "standard", str(i), rounds_of([(int(i < 4), None)]))
            sound = [(1, None)] if i >= 2 else [(0, None)] * 3
            add_run(db, "loop", "game24", "sound-first:rounds=3", str(i), rounds_of(sound))
            i += 1
    return db


def test_compare_counts_every_pair_on_the_shared_units(loop_db: Any) -> None:
    rows = {(r.scheme_a, r.scheme_b): r for r in compare_rows(loop_db, "loop")}
    assert list(rows) == [("standard", "sound-first:rounds=3"), ("standard", "llm-llm:rounds=3"),
                          ("sound-first:rounds=3", "llm-llm:rounds=3")]  # fmt: skip
    sf = rows[("sound-first:rounds=3", "llm-llm:rounds=3")]
    # llm-llm ends right on its 2 accepted-correct and 3 exhausted-correct instances
    llm_right = {9, 10, 16, 17, 18}
    sf_right = set(range(2, N))
    assert (sf.n, sf.a_correct, sf.b_correct) == (N, len(sf_right), len(llm_right))
    assert (sf.a_only, sf.b_only, sf.ties) == (12, 0, 7)  # ties: 5 both right, instances 0 and 1 both wrong
    assert sf.difference == pytest.approx((len(sf_right) - len(llm_right)) / N)
    assert sf.ci_low < sf.difference < sf.ci_high
    assert sf.mcnemar_p == pytest.approx(binomtest(sf.b_only, sf.a_only + sf.b_only, 0.5).pvalue)
    ps = [r.mcnemar_p for r in rows.values()]
    assert [r.holm_p for r in rows.values()] == pytest.approx(holm(ps))
    assert sf.significant is True and sf.holm_p < 0.05
    assert rows[("standard", "llm-llm:rounds=3")].significant is False  # 4 vs 5 right, on different instances
    # seeded: the same table twice
    assert compare_rows(loop_db, "loop") == list(rows.values())


def test_compare_in_every_format(loop_db: Any) -> None:
    rows = compare_rows(loop_db, "loop")
    data = json.loads(render(rows, "json"))
    assert all(COMPARE_KEYS <= set(r) and r["table"] == "compare" for r in data)
    assert data[2]["seed"] == SEED and data[2]["resamples"] == RESAMPLES
    csv = render(rows, "csv").splitlines()
    assert COMPARE_KEYS <= set(csv[0].split(",")) and len(csv) == 4
    for fmt in ("table", "md"):
        text = render(rows, fmt)
        assert "89.5% (17/19)" in text and f"B = {RESAMPLES:,}, seed {SEED}" in text and "McNemar" in text
    assert "| game24 | sound-first:rounds=3 | llm-llm:rounds=3 | 19 |" in render(rows, "md")


def test_pairs_name_schemes_by_spec_or_by_name(loop_db: Any) -> None:
    specs = SCHEMES
    assert parse_pairs("sound-first:llm-llm", specs, specs) == [("sound-first:rounds=3", "llm-llm:rounds=3")]
    full = "sound-first:rounds=3:llm-llm:rounds=3,standard:llm-llm"
    assert parse_pairs(full, specs, specs) == [("sound-first:rounds=3", "llm-llm:rounds=3"),
                                               ("standard", "llm-llm:rounds=3")]  # fmt: skip
    with pytest.raises(ReportError, match="--pairs"):
        parse_pairs("sampling:standard", specs, specs)
    rows = compare_rows(loop_db, "loop", pairs="sound-first:llm-llm")
    assert [(r.scheme_a, r.scheme_b) for r in rows] == [("sound-first:rounds=3", "llm-llm:rounds=3")]
    assert rows[0].holm_p == rows[0].mcnemar_p  # one pair: nothing to adjust for


def test_an_unfinished_cell_says_so_instead_of_comparing(tmp_path: Path) -> None:
    db = new_store(tmp_path / "s.sqlite", "u", ["game24"], ["standard", "sound-first:rounds=3"])
    for i in range(4):
        add_run(db, "u", "game24", "standard", str(i), rounds_of([(1, None)]))
        status = "running" if i == 3 else "done"
        add_run(db, "u", "game24", "sound-first:rounds=3", str(i), rounds_of([(0, None)]), status=status)
    [row] = compare_rows(db, "u")
    assert row.n is None and row.mcnemar_p is None and row.difference is None
    assert row.unfinished == "unfinished (sound-first:rounds=3: 3 of 4 planned runs finished)"
    assert "unfinished (sound-first:rounds=3: 3 of 4" in render([row], "md")


# --- the stops table ------------------------------------------------------------------------------------------


def test_stops_put_every_finished_run_in_one_class(loop_db: Any) -> None:
    rows = {r.scheme: r for r in stop_rows(loop_db, "loop")}
    assert set(rows) == {"sound-first:rounds=3", "llm-llm:rounds=3"}  # standard makes one round: no loop
    llm = rows["llm-llm:rounds=3"]
    for name in CLASSES:
        assert getattr(llm, name) == sum(c for kind, c, _ in LLM_PATTERNS if kind == name), name
    assert sum(getattr(llm, c) for c in CLASSES) == llm.runs == N
    assert (llm.ever_correct, llm.lost, llm.lost_at) == (3 + 2 + 3, 3, {"1": 3})
    assert llm.decided_by == "llm" and llm.ended_early == 0
    sound = rows["sound-first:rounds=3"]
    assert (sound.accepted_correct, sound.exhausted_wrong, sound.accepted_wrong, sound.lost) == (N - 2, 2, 0, 0)
    assert sound.decided_by == "sound" and sound.rejected_correct is None


def test_stops_of_llm_llm_reconcile_with_table2(loop_db: Any) -> None:
    """llm-llm stops on its verifier's first "valid": its accepted runs are Table 2's positives, each a true or
    a false one, and every rejected correct answer is one of Table 2's false negatives."""
    [t2] = [r for r in table2(loop_db, "loop")]
    [llm] = [r for r in stop_rows(loop_db, "loop") if r.scheme.startswith("llm-llm")]
    assert llm.accepted_wrong == t2.false_pos
    assert llm.accepted_correct == t2.sound_valid - t2.false_neg  # true positives
    assert llm.rejected_correct == t2.false_neg


def test_stops_in_every_format(loop_db: Any) -> None:
    rows = stop_rows(loop_db, "loop")
    data = json.loads(render(rows, "json"))
    assert {*CLASSES, "ever_correct", "lost", "lost_at"} <= set(data[0]) and data[0]["table"] == "stops"
    csv = render(rows, "csv").splitlines()
    assert '"{""1"": 3}"' in csv[2]  # lost_at as JSON text
    md = render(rows, "md")
    assert "| game24 | llm-llm:rounds=3 | 19 | 10.5% (2/19) | 47.4% (9/19) |" in md and "1: 3" in md


def test_cli_compare_and_stops(loop_db: Any, tmp_path: Path) -> None:
    store = str(loop_db.conn.execute("PRAGMA database_list").fetchone()[2])
    loop_db.conn.commit()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli("report", "loop", "--store", store, *args, check=False)

    done = cli("--table", "compare", "--pairs", "sound-first:llm-llm", "--format", "json")
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert row["significant"] is True and math.isclose(row["holm_p"], row["mcnemar_p"])
    bad = cli("--table", "compare", "--pairs", "nothing:standard")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--pairs" in bad.stderr
    misplaced = cli("--pairs", "standard:llm-llm")
    assert misplaced.returncode == 2 and "--table compare" in misplaced.stderr
    stops = cli("--table", "stops", "--format", "md")
    assert stops.returncode == 0 and "Why each loop stopped" in stops.stdout


# --- intervals: Figure 2's band, the spread across trials ------------------------------------------------------


def test_figure_points_carry_a_wilson_band_and_the_spread_across_trials(tmp_path: Path) -> None:
    from critiquebench.reports.figures import budget_figure
    from critiquebench.reports.metrics import budget_curve, table1, wilson

    db = new_store(tmp_path / "t.sqlite", "t", ["game24"], ["sound-first:rounds=2"])
    # trial 0: 3 of 4 right by round 2 (1 at round 1); trial 1: 1 of 4 (at round 2)
    outcomes = {0: [[1], [0, 1], [0, 1], [0, 0]], 1: [[0, 1], [0, 0], [0, 0], [0, 0]]}
    for trial, runs in outcomes.items():
        for i, valid in enumerate(runs):
            add_run(db, "t", "game24", "sound-first:rounds=2", str(i), rounds_of([(v, None) for v in valid]),
                    trial=trial)  # fmt: skip
    points = {p.budget: p for p in budget_curve(db, "t")}
    two = points[2]
    assert (two.correct, two.total) == (4, 8) and (two.ci_low, two.ci_high) == pytest.approx(wilson(4, 8))
    assert (two.trials, two.trial_mean, two.trial_sd) == (2, pytest.approx(0.5), pytest.approx(math.sqrt(0.125)))
    one = points[1]  # trial 0: 1/4, trial 1: 0/4
    assert (one.trial_mean, one.trial_sd) == (pytest.approx(0.125), pytest.approx(math.sqrt(2 * 0.125**2)))
    text = render(list(points.values()), "md")
    assert "| game24 | sound-first:rounds=2 | 2 | 50.0% (4/8) | [21.5, 78.5] | 50.0% ± 35.4 (2 trials) |" in text
    [row] = table1(db, "t")
    assert (row.trials, row.trial_mean, row.trial_sd) == (2, pytest.approx(0.5), pytest.approx(math.sqrt(0.125)))
    assert "50.0% ± 35.4 (2 trials)" in render([row], "md")
    assert budget_figure(list(points.values()), tmp_path / "f.png").stat().st_size > 0


def test_python_api_compare_and_stops(loop_db: Any) -> None:
    import critiquebench as cb

    store = str(loop_db.conn.execute("PRAGMA database_list").fetchone()[2])
    frame = cb.compare("loop", store=store, pairs="sound-first:llm-llm")
    assert frame.loc[0, ["a_only", "b_only", "n"]].tolist() == [12, 0, N] and bool(frame.loc[0, "significant"])
    stops = cb.stops("loop", store=store).set_index("scheme")
    assert stops.loc["llm-llm:rounds=3", "accepted_wrong"] == 9
    per_run = cb.stops("loop", store=store, runs=True)
    counted = per_run[per_run.scheme == "llm-llm:rounds=3"]["stop"].value_counts().to_dict()
    assert counted == {kind: sum(c for k, c, _ in LLM_PATTERNS if k == kind) for kind in CLASSES}
    with pytest.raises(cb.StudyError, match="no study named"):
        cb.stops("nope", store=store)


def test_documented_fields_are_the_rows_fields() -> None:
    from dataclasses import fields

    from critiquebench.reports import paired, stops

    assert [c.name for c in paired.COLUMNS] == [f.name for f in fields(paired.PairRow)]
    assert [c.name for c in stops.COLUMNS] == [f.name for f in fields(stops.StopRow)]


# --- GPT-4's recorded colouring runs (gpt-and-i@ada66fc6), replayed --------------------------------------------


@pytest.mark.xdist_group(GPT4_COLOURING)  # its store is tests/test_self_verification_import.py's too
def test_gpt4s_recorded_colouring_sound_first_beats_llm_llm_significantly(
    tmp_path: Path, gpt4_colouring_loops: tuple[Path, Any]
) -> None:
    """The paper's point on its own data: GPT-4's recorded colouring loops with first-error feedback from the sound
    verifier (000 F.E.F.) against LLM+LLM, both on graphs 1-100, imported and replayed (0 calls). `--table
    compare --compare` pairs the two studies graph by graph: 38 vs 1, all 37 discordant graphs for sound-first,
    so McNemar's exact p = 2 * 0.5^37. `--table stops` on LLM+LLM: GPT-4 as verifier accepted 10 wrong colourings
    and none right; 40 graphs had a right colouring at some round and 39 lost it. Each figure is counted again
    here from the runs and rounds the API returns."""
    import critiquebench as cb

    # `critiquebench import self-verification LOOPS --study gpt4 --replay` (the session's fixture): its six files
    # are six studies, backprompting-first's gpt4-first and backprompting-llm's gpt4-llm among them
    store_path, imported = gpt4_colouring_loops
    assert imported.exit_code == 0, imported.stderr[-2000:]
    assert "LLM calls: 0 new" in imported.stderr
    store = str(copied_store(store_path, tmp_path))
    runs = {name: cb.runs(name, store=store).set_index("instance")["correct"] for name in ("gpt4-first", "gpt4-llm")}
    first, llm = runs["gpt4-first"], runs["gpt4-llm"]
    assert len(first) == len(llm) == 100 and set(first.index) == set(llm.index)
    a_only, b_only = int((first & ~llm[first.index]).sum()), int((llm[first.index] & ~first).sum())

    report = run_cli("report", "gpt4-first", "--table", "compare", "--compare", "gpt4-llm", "--store", store,
                     "--format", "json")  # fmt: skip
    (row,) = json.loads(report.stdout)
    assert (row["a_correct"], row["b_correct"], row["n"]) == (int(first.sum()), int(llm.sum()), 100) == (38, 1, 100)
    assert (row["a_only"], row["b_only"], row["ties"]) == (a_only, b_only, 100 - a_only - b_only) == (37, 0, 63)
    assert row["mcnemar_p"] == pytest.approx(2 * 0.5**37, rel=1e-12) == pytest.approx(1.455e-11, rel=1e-3)
    assert row["mcnemar_p"] == pytest.approx(binomtest(b_only, a_only + b_only, 0.5).pvalue, rel=1e-12)
    assert row["significant"] is True and row["ci_low"] <= 0.37 <= row["ci_high"] and row["ci_low"] > 0

    stops = run_cli("report", "gpt4-llm", "--table", "stops", "--store", store, "--format", "json")
    (cell,) = json.loads(stops.stdout)
    rounds = cb.rounds("gpt4-llm", store=store)
    final = rounds[rounds["stopped"].fillna(False).astype(bool)].set_index("instance")
    accepted = final["llm_verdict"].fillna(False).astype(bool)
    right = final["sound_valid"].astype(bool)
    direct = (int((accepted & right).sum()), int((accepted & ~right).sum()), int((~accepted & right).sum()),
              int((~accepted & ~right).sum()))  # fmt: skip
    assert tuple(cell[c] for c in CLASSES) == direct == (0, 10, 1, 89)
    ever = rounds.groupby("instance")["sound_valid"].any()
    assert (cell["ever_correct"], cell["lost"]) == (int(ever.sum()), int((ever & ~right[ever.index]).sum())) == (40, 39)
    assert cell["decided_by"] == "llm"
