"""The main job's summary: recorded runs (GPT-4) beside the live study, on the papers' three views.

- Findings: one row per recorded cell (domain x scheme), its accuracy and how many LLM calls were new (0 for a
  replay) or cache hits, beside the live study's cell of the same domain and scheme family (`sound-first` and
  `sound-first:rounds=3` are one family: the scheme without its parameters).
- Table 2: the LLM as verifier, the recorded studies' rows first (GPT-4 as plan verifier when one was
  replayed), then the live study's.
- Figure 2: accuracy by round budget, every iterative curve of every study, as a few budget columns in text and
  all budgets in the PNG.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import sqlite_utils

from critiquebench.reports.guards import ONE_CLASS_NOTE, SMALL_N
from critiquebench.reports.metrics import BudgetPoint, Table1Row, budget_curve, table1, table2
from critiquebench.reports.tables import Grid, flagged, pct
from critiquebench.studies.define import study_config


def _family(spec: str) -> str:
    return spec.partition(":")[0]


def _cell(row: Table1Row) -> str:
    failed = f", {row.failed} failed" if row.failed else ""
    return f"{pct(row.correct, row.total)}{failed}"


def _model(db: sqlite_utils.Database, study: str) -> str:
    return str(study_config(db, study).get("model") or "?")


def findings_grid(db: sqlite_utils.Database, recorded: Sequence[str], live: str | None) -> Grid:
    """Recorded studies' Table 1 cells beside the live study's cells of the same domain and scheme family."""
    live_rows: dict[tuple[str, str], Table1Row] = {}
    if live:
        for row in table1(db, live):
            live_rows.setdefault((row.domain, _family(row.scheme)), row)
    live_model = _model(db, live) if live else "live"
    smoke = any(row.small_n for row in live_rows.values())
    body = []
    for study in recorded:
        model = _model(db, study)
        for row in table1(db, study):
            mine = live_rows.get((row.domain, _family(row.scheme)))
            body.append(
                [
                    study,
                    row.domain,
                    row.scheme,
                    f"{model}: {_cell(row)}",
                    f"{row.llm_calls - row.cache_hits} new, {row.cache_hits} cached",
                    "-" if mine is None else f"{_cell(mine)} ({mine.scheme})",
                ]
            )
    live_header = f"{live_model} (live smoke test)" if smoke else f"{live_model} (live)"
    note = (
        "Every recorded call is answered from the cache: 'new' counts calls that reached an endpoint. "
        "The live column is the same domain and scheme (any parameters) in the live study; '-' = not run there."
    )
    if smoke:
        note += (f" The live cells have fewer than {SMALL_N} runs each: a smoke test that the pipeline runs end "
                 "to end on this model, not a measure of how well it solves these problems.")  # fmt: skip
    return Grid(
        "Findings: recorded runs replayed offline, beside the live study",
        ["recorded study", "domain", "scheme", "accuracy", "LLM calls", live_header],
        body,
        note + "".join(" " + line for line in selection_notes(db, recorded)),
    )


def selection_notes(db: sqlite_utils.Database, recorded: Sequence[str]) -> list[str]:
    """What instances a recorded study ran on, when they are the first ones another recorded study of the same
    domain got wrong (PlanBench ran its backprompting on GPT-4's first 50 one-shot failures): its accuracy is
    then over those, not over the papers' instance sets."""
    from critiquebench.store.results import run_outcomes

    runs = {s: run_outcomes(db, s) for s in recorded}
    notes = []
    for study, mine in runs.items():
        ids = sorted({int(i) for _, i, _ in mine if str(i).isdigit()})
        for other, theirs in runs.items():
            if other == study or not ids or {d for d, _, _ in theirs} != {d for d, _, _ in mine}:
                continue
            failed = sorted(int(i) for _, i, ok in theirs if str(i).isdigit() and not ok)[: len(ids)]
            if failed == ids:
                notes.append(f"{study}'s {len(ids)} instances are the first {len(ids)} that {other} got wrong "
                             f"(ids {ids[0]}-{ids[-1]}), so its accuracy is over those, not comparable with the "
                             "papers' 100 instances (000 F.E.F. 87%, 002 LLM+VAL 88/100): `critiquebench report "
                             "--published`.")
    return notes


def verifier_grid(db: sqlite_utils.Database, studies: Sequence[str]) -> Grid | None:
    """Table 2 rows of every study that has an LLM verifier, tagged with the study and its model."""
    from critiquebench.reports.planbench import is_task_study, task_rows

    body = []
    for study in studies:
        config = study_config(db, study)
        if config.get("kind") == "verify":
            continue  # verification-only studies have their own report (`critiquebench report NAME`)
        if is_task_study(config):  # PlanBench's plan verification (t3): the LLM judged given plans
            body += [[study, str(config.get("model")), t.domain, f"plan verification ({t.level})",
                      pct(t.correct, t.total), pct(t.false_pos, t.truth_invalid), pct(t.false_neg, t.truth_valid)]
                     for t in task_rows(db, study) if t.level]  # fmt: skip
        for r in table2(db, study):
            body.append([study, str(config.get("model")), r.domain, r.scheme,
                         flagged(pct(r.agree, r.n), r.one_class, "†"), pct(r.false_pos, r.sound_invalid),
                         pct(r.false_neg, r.sound_valid)])  # fmt: skip
    if not body:
        return None
    return Grid(
        "Table 2: the LLM as verifier vs the sound verifier",
        ["study", "model", "domain", "scheme", "accuracy", "FPR", "FNR"],
        body,
        "Accuracy: the LLM agrees with the sound verdict. FPR: LLM said valid among sound-invalid answers. "
        "FNR: LLM said invalid among sound-valid answers. Plan verification: PlanBench's t3, the LLM judges a "
        "given plan; binary = valid/invalid right, type / explanation also name the failure."
        + (f"\n{ONE_CLASS_NOTE}" if any("†" in row[4] for row in body) else ""),
    )


def combined_curve(db: sqlite_utils.Database, studies: Sequence[str]) -> list[BudgetPoint]:
    """Figure 2 points of all studies, each curve's scheme prefixed with its model so the legend tells them apart."""
    points = []
    for study in studies:
        model = _model(db, study)
        points += [replace(p, scheme=f"{model} {p.scheme}") for p in budget_curve(db, study)]
    return points


def curve_grid(points: Sequence[BudgetPoint], budgets: Sequence[int] = (1, 2, 3, 4, 5, 10, 15)) -> Grid:
    """Figure 2 as text: one row per curve, accuracy at a few round budgets (blank past a curve's round limit)."""
    curves: dict[tuple[str, str], dict[int, BudgetPoint]] = {}
    for p in points:
        curves.setdefault((p.domain, p.scheme), {})[p.budget] = p
    top = max((p.budget for p in points), default=1)
    shown = [b for b in budgets if b <= top] or [1]
    body = []
    for (domain, scheme), by_budget in curves.items():
        cells = [by_budget.get(b) for b in shown]
        body.append([domain, scheme, *("" if c is None else pct(c.correct, c.total) for c in cells)])
    return Grid(
        "Figure 2: accuracy by round budget n",
        ["domain", "curve", *(f"n={b}" for b in shown)],
        body,
        "A run's answer at budget n is the one it stopped at if that round is <= n, else round n's answer.",
    )


def summary_grids(db: sqlite_utils.Database, recorded: Sequence[str], live: str | None) -> list[Grid]:
    """The main job's summary, in print order."""
    studies = [*recorded, *([live] if live else [])]
    grids = [findings_grid(db, recorded, live)]
    if (verifier := verifier_grid(db, studies)) is not None:
        grids.append(verifier)
    grids.append(curve_grid(combined_curve(db, studies)))
    return grids
