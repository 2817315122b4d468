"""`report NAME --table stops`: why each loop ended, and what it had found before it did.

Per domain x iterative scheme (the schemes Figure 2 shows: `metrics.iterative`), every finished run (status done)
is in exactly one of four classes, by why it ended and whether its final answer is right (the sound verdict):
- `accepted_correct` / `accepted_wrong`: the verifier that decides the loop accepted the round it stopped on (the
  LLM verifier where one judged the run's rounds, else the sound verifier); `accepted_wrong` is a false-positive
  stop;
- `exhausted_correct` / `exhausted_wrong`: it ended without that acceptance: out of rounds, or ended early (a
  recorded conversation that stopped, a context window, a verdict that ends the loop: counted in `ended_early`).
Beside them: `ever_correct`, runs that generated a sound-valid answer at some round (the ceiling a perfect
verifier would reach with these generations), and `lost`, runs ever correct whose final answer is wrong, with the
round each was lost at (`lost_at`: the last round whose answer was correct; every later answer was wrong).
`study_failed` counts the finished runs that ended where the study's own code failed on a reply (its loop marked
the instance failed, or crashed: `nodes.llm_verifier`): each is also in its class, scored by its last answer as the
study's evaluation scored it, and counted apart as the study listed its failed instances
(gpt-and-i `response_generation.py` @b583c3c9 l.94, l.116).
`rejected_correct` counts the rounds an LLM verifier called a sound-valid answer invalid (Table 2's false
negatives): for `llm-llm`, which stops on its verifier's first "valid", `accepted_wrong` and `accepted_correct`
are Table 2's false and true positives of the cell, and `rejected_correct` its false negatives.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from critiquebench.reports.records import row_columns
from critiquebench.reports.tables import GRIDS, Grid, pct

CLASSES = ("accepted_correct", "accepted_wrong", "exhausted_correct", "exhausted_wrong")


@dataclass(frozen=True)
class StopRow:
    study: str
    domain: str
    scheme: str
    runs: int  # finished runs: the four classes sum to it
    accepted_correct: int
    accepted_wrong: int  # false-positive stops
    exhausted_correct: int
    exhausted_wrong: int
    ever_correct: int
    lost: int  # ever correct, final answer wrong
    lost_at: dict[str, int] = field(default_factory=dict)  # round (as text, for JSON) -> lost runs
    ended_early: int = 0  # exhausted runs that took fewer rounds than the scheme's budget
    rejected_correct: int | None = None  # rounds an LLM verifier called a sound-valid answer invalid; None: none judged
    decided_by: str = "sound"  # "llm" when an LLM verifier judged the rounds the cell's runs stopped on
    failed: int = 0
    unfinished: int = 0
    study_failed: int = 0  # finished runs that ended where the study's own code failed on a reply (also classed)
    table: str = "stops"


@dataclass(frozen=True)
class RunStop:
    """One finished run's class, for the viewer's run list and the Python API."""

    thread_id: str
    domain: str
    scheme: str
    instance: str
    trial: int
    stop: str  # one of CLASSES
    ever_correct: bool
    lost_at: int | None  # the round its last correct answer was generated at, when it was lost


def _budget(spec: str, params: str | None) -> int | None:
    """The most rounds a run of `spec` may take: its recorded parameters over the spec's own; None for a scheme
    this installation does not have."""
    from critiquebench.graphs import SCHEMES, parse_spec

    if spec.partition(":")[0] not in SCHEMES:
        return None
    try:
        parsed = parse_spec(spec)
        return parsed.scheme.max_rounds({**parsed.given, **json.loads(params or "{}")})
    except (ValueError, TypeError):
        return None


def classify(db: Any, study: str) -> tuple[list[RunStop], dict[tuple[str, str], dict[str, Any]]]:
    """Every finished run of an iterative scheme with its class, and per (domain, scheme) the cell's other counts
    (ended_early, rejected_correct, decided_by, failed, unfinished, study_failed)."""
    from critiquebench.reports.metrics import _runs, iterative
    from critiquebench.store.reads import study_rounds
    from critiquebench.studies.define import study_config

    study_config(db, study)  # no such study: ReportError
    runs = [r for r in _runs(db, study) if iterative(r["spec"].partition(":")[0])]
    rounds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in study_rounds(db, study):
        rounds[row["thread_id"]].append({k: row[k] for k in ("round", "sound_valid", "llm_verdict", "stopped")})
    out: list[RunStop] = []
    cells: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"ended_early": 0, "rejected_correct": None, "decided_by": "sound", "failed": 0, "unfinished": 0,
                 "study_failed": 0}
    )
    for run in runs:
        cell = cells[(run["domain"], run["spec"])]
        att = rounds.get(run["thread_id"], [])
        if any(a["llm_verdict"] is not None and a["sound_valid"] is not None for a in att):
            cell["rejected_correct"] = (cell["rejected_correct"] or 0) + sum(
                1 for a in att if a["llm_verdict"] == 0 and a["sound_valid"] == 1
            )
        if run["status"] == "failed":
            cell["failed"] += 1
        if run["status"] in ("pending", "running"):
            cell["unfinished"] += 1
        if run["status"] != "done" or not att:
            continue
        cell["study_failed"] += bool(run.get("study_failed"))
        final = next((a for a in att if a["round"] == run["final_round"]), None)
        final = final or next((a for a in att if a["stopped"]), att[-1])
        if any(a["llm_verdict"] is not None for a in att):
            # an LLM verifier decides this loop: a last round it did not judge (gpt-and-i's 2023 colouring loop
            # generates a 16th answer after its 15th critique) ended it out of rounds, whatever its sound verdict
            accepted = final["llm_verdict"] == 1
            cell["decided_by"] = "llm"
        else:
            accepted = bool(final["sound_valid"])
        correct = bool(run["correct"])
        kind = f"{'accepted' if accepted else 'exhausted'}_{'correct' if correct else 'wrong'}"
        valid = [a["round"] for a in att if a["sound_valid"]]
        lost_at = max(valid) if valid and not correct else None
        if not accepted and (budget := _budget(run["spec"], run.get("params"))) and len(att) < budget:
            cell["ended_early"] += 1
        out.append(
            RunStop(
                run["thread_id"],
                run["domain"],
                run["spec"],
                str(run["instance_id"]),
                int(run["trial"]),
                kind,
                bool(valid),
                lost_at,
            )
        )
    return out, cells


def stop_rows(db: Any, study: str) -> list[StopRow]:
    """The stops table of `study`, in the study's order (see the module doc)."""
    from critiquebench.reports.metrics import ordered_keys
    from critiquebench.studies.define import study_config

    config = study_config(db, study)
    stops, cells = classify(db, study)
    by_cell: dict[tuple[str, str], list[RunStop]] = defaultdict(list)
    for s in stops:
        by_cell[(s.domain, s.scheme)].append(s)
    out = []
    for key in ordered_keys(cells, config):
        mine, extra = by_cell.get(key, []), cells[key]
        counts = Counter(s.stop for s in mine)
        lost = sorted(s.lost_at for s in mine if s.lost_at is not None)
        out.append(StopRow(study, key[0], key[1], len(mine), *(counts[c] for c in CLASSES),
                           ever_correct=sum(s.ever_correct for s in mine), lost=len(lost),
                           lost_at={str(r): n for r, n in sorted(Counter(lost).items())}, **extra))  # fmt: skip
    return out


def stop_grids(rows: Sequence[StopRow]) -> list[Grid]:
    if not rows:
        return [Grid("Why each loop stopped", ["result"], [["no finished run of an iterative scheme"]])]
    body = [[r.domain, r.scheme, str(r.runs), pct(r.accepted_correct, r.runs), pct(r.accepted_wrong, r.runs),
             pct(r.exhausted_correct, r.runs), pct(r.exhausted_wrong, r.runs), pct(r.ever_correct, r.runs),
             pct(r.lost, r.runs), ", ".join(f"{k}: {n}" for k, n in r.lost_at.items()) or "-", str(r.ended_early),
             "-" if r.rejected_correct is None else str(r.rejected_correct),
             "LLM" if r.decided_by == "llm" else "sound", str(r.study_failed)] for r in rows]  # fmt: skip
    note = ("Each finished run is in one of four classes: accepted (the verifier that decides the loop accepted the "
            "answer it stopped on; accepted wrong = a false-positive stop) or exhausted (it ended without that "
            "acceptance: out of rounds, or early), by whether its final answer is sound-valid. ever correct: a "
            "sound-valid answer at some round; lost: ever correct, final answer wrong (lost at: the last correct "
            "round, runs). ended early: exhausted before the round budget. rejected correct: rounds an LLM verifier "
            "called a sound-valid answer invalid (Table 2's false negatives). study code failed: runs that ended "
            "where the study's own code failed on a reply (marked the instance failed, or crashed), scored by their "
            "last answer as the study scored them and counted apart, as it listed them; also in their "
            "class.")  # fmt: skip
    if any(r.failed or r.unfinished for r in rows):
        note += " Failed and unfinished runs are in no class (JSON: failed, unfinished)."
    headers = ["domain", "scheme", "runs", "accepted correct", "accepted wrong", "exhausted correct",
               "exhausted wrong", "ever correct", "lost", "lost at (round: runs)", "ended early", "rejected correct",
               "decided by", "study code failed"]  # fmt: skip
    return [Grid(f"Why each loop stopped ({rows[0].study})", headers, body, note)]


GRIDS[StopRow] = stop_grids
COLUMNS = row_columns(StopRow, {  # the fields of StopRow, in order: its JSON/CSV columns
    "study": "study name",
    "domain": "domain name",
    "scheme": "scheme spec (iterative schemes only: those Figure 2 shows)",
    "runs": "finished runs (status done); the four classes sum to it",
    "accepted_correct": "the deciding verifier accepted the final answer, and it is sound-valid",
    "accepted_wrong": "the deciding verifier accepted the final answer, and it is not: a "
        "false-positive stop",
    "exhausted_correct": "ended without that acceptance (out of rounds, or early), final answer "
        "sound-valid",
    "exhausted_wrong": "ended without that acceptance, final answer wrong",
    "ever_correct": "runs that generated a sound-valid answer at some round",
    "lost": "runs ever correct whose final answer is wrong",
    "lost_at": "per round, the lost runs whose last correct answer was generated then (JSON "
        "object round -> runs)",
    "ended_early": "exhausted runs that took fewer rounds than the scheme's budget",
    "rejected_correct": "rounds an LLM verifier called a sound-valid answer invalid (Table 2's "
        "false negatives); empty when no LLM verifier judged",
    "decided_by": "llm when an LLM verifier judged the rounds the runs stopped on, else sound",
    "failed": "failed runs (in no class)",
    "unfinished": "pending or running runs (in no class)",
    "study_failed": "finished runs that ended where the study's own code failed on a reply (its loop "
        "marked the instance failed, or crashed); also in their class",
    "table": '"stops"',
})  # fmt: skip
