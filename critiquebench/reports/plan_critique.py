"""The plan self-critique study's tables (Valmeekam et al., *Can large language models really improve by
self-critiquing their own plans?*), computed from a loop study's store rows.

- Table 2 (`report NAME --table final-verifier`): the LLM verifier on each run's final answer, i.e. the last
  round an LLM judged (in `llm-llm` the round where it said "valid", or the last round of the budget), against
  the sound verdict: TP = said valid and valid, FP = said valid but invalid, TN, FN; TPR = TP / valid,
  FPR = FP / invalid, TNR = TN / invalid, FNR = FN / valid.
- Table 3 (`report NAME --table feedback`): accuracy by the feedback the generator got: none (`standard`, the
  LLM planning alone), binary (`sound-binary`), first error (`sound-first`), all errors (`sound-all`), and the
  LLM verifier's own critique (`llm-llm`). The paper's "no feedback" row re-prompts without information; the
  closest scheme here is one plan (`standard`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import sqlite_utils

from critiquebench.graphs import parse_spec
from critiquebench.reports.metrics import Confusion, ordered_keys, table1
from critiquebench.reports.tables import GRIDS, Grid, pct
from critiquebench.store.reads import final_judged_rounds
from critiquebench.studies.define import study_config
from critiquebench.studies.threads import spec_of

FEEDBACK_OF = {
    "standard": "no feedback",
    "sound-binary": "binary",
    "sound-first": "first error",
    "sound-all": "all errors",
    "llm-llm": "LLM critique",
    "llm-llm-cot": "LLM critique (CoT)",
}


@dataclass(frozen=True)
class FinalVerifierRow:
    study: str
    domain: str
    scheme: str
    runs: int
    tp: int
    fp: int
    tn: int
    fn: int
    tpr: float | None
    fpr: float | None
    tnr: float | None
    fnr: float | None
    table: str = "final-verifier"


@dataclass(frozen=True)
class FeedbackRow:
    study: str
    domain: str
    feedback: str
    scheme: str
    correct: int
    total: int
    accuracy: float | None
    mean_rounds: float | None
    table: str = "feedback"


def final_verifier(db: sqlite_utils.Database, study: str) -> list[FinalVerifierRow]:
    """Table 2: the LLM's verdict on each finished run's final judged answer, per domain x scheme."""
    config = study_config(db, study)
    counts: dict[tuple[str, str], Confusion] = defaultdict(Confusion)
    for row in final_judged_rounds(db, study):
        counts[(row["domain"], spec_of(row))].add(row["llm_verdict"], row["sound_valid"])
    out = []
    for domain, scheme in ordered_keys(counts, config):
        c = counts[(domain, scheme)]
        out.append(FinalVerifierRow(study, domain, scheme, c.n, c.tp, c.fp, c.tn, c.fn, *c.rates()))
    return out


def feedback_table(db: sqlite_utils.Database, study: str) -> list[FeedbackRow]:
    """Table 3: accuracy of the study's schemes that differ in the feedback the generator gets."""
    return [
        FeedbackRow(study, r.domain, FEEDBACK_OF[name], r.scheme, r.correct, r.total, r.accuracy, r.mean_rounds)
        for r in table1(db, study)
        if (name := parse_spec(r.scheme).name) in FEEDBACK_OF
    ]


def final_verifier_grids(rows: Sequence[FinalVerifierRow]) -> list[Grid]:
    body = [
        [r.domain, r.scheme, str(r.runs), pct(r.tp, r.tp + r.fn), pct(r.fp, r.fp + r.tn), pct(r.tn, r.tn + r.fp),
         pct(r.fn, r.fn + r.tp)]
        for r in rows
    ]  # fmt: skip
    note = (
        "Each finished run's last answer an LLM judged. TPR: said valid among valid answers; FPR: said valid "
        "among invalid ones; TNR: said invalid among invalid ones; FNR: said invalid among valid ones."
    )
    title = f"Table 2: the LLM verifier on final answers ({rows[0].study if rows else ''})"
    return [Grid(title, ["domain", "scheme", "runs", "TPR", "FPR", "TNR", "FNR"], body, note)]


def feedback_grids(rows: Sequence[FeedbackRow]) -> list[Grid]:
    body = [[r.domain, r.feedback, r.scheme, pct(r.correct, r.total),
             "-" if r.mean_rounds is None else f"{r.mean_rounds:.1f}"] for r in rows]  # fmt: skip
    note = "Accuracy of the final answer (sound verifier) by the feedback the generator got between rounds."
    title = f"Table 3: accuracy by feedback ({rows[0].study if rows else ''})"
    return [Grid(title, ["domain", "feedback", "scheme", "accuracy", "mean rounds"], body, note)]


GRIDS[FinalVerifierRow] = final_verifier_grids
GRIDS[FeedbackRow] = feedback_grids
