"""PlanBench's results table for a study holding PlanBench tasks (domains "DOMAIN:TASK", plus t1 on the plain
planning domain): one row per task in PlanBench's order, accuracy with its 95% Wilson interval, and for plan
verification (t3) the LLM-as-verifier at PlanBench's three levels (binary, type, explanation) with its
false-positive and false-negative rates.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from critiquebench.domains.planning.tasks import TASKS
from critiquebench.reports.metrics import ratio, shown_domain, wilson
from critiquebench.reports.tables import GRIDS, Grid, pct
from critiquebench.store.reads import study_rounds, study_runs
from critiquebench.studies.define import study_config

LEVELS = ("binary", "type", "explanation")


@dataclass(frozen=True)
class TaskRow:
    study: str
    domain: str
    task: str
    title: str
    model: str
    level: str  # "" for the task's accuracy; binary / type / explanation for t3's verifier levels
    correct: int
    total: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    false_pos: int | None = None
    truth_invalid: int | None = None
    false_neg: int | None = None
    truth_valid: int | None = None
    table: str = "planbench"


def split_task(domain: str, config: dict[str, Any]) -> tuple[str, str] | None:
    """(planning domain, task) of a study domain, or None when it is not a PlanBench task."""
    base, _, task = domain.rpartition(":")
    if base and task in TASKS:
        return base, task
    options = (config.get("domain_options") or {}).get(domain) or {}
    if "prompt_style" in options and any(d.rpartition(":")[2] in TASKS for d in config.get("domains", [])):
        return domain, "t1"
    return None


def is_task_study(config: dict[str, Any]) -> bool:
    return any(":" in d and split_task(d, config) for d in config.get("domains", []))


def task_rows(db: sqlite_utils.Database, study: str) -> list[TaskRow]:
    config = study_config(db, study)
    model = str(config.get("model", ""))
    tasks = {d: t for d in config.get("domains", []) if (t := split_task(d, config))}
    # a run names its domain as the domain object does: a folder key ("/x/planbench-domains/NAME-ID:t5") by the
    # folder's name ("NAME-ID:t5")
    named = {_run_name(d): d for d in tasks}
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in study_runs(db, study, done_only=True):
        key = run["domain"] if run["domain"] in tasks else named.get(run["domain"])
        if key is not None:
            runs[key].append(run)
    order = list(TASKS)
    out: list[TaskRow] = []
    for domain in sorted(tasks, key=lambda d: (order.index(tasks[d][1]), d)):
        base, task = tasks[domain]
        done = runs[domain]
        n, correct = len(done), sum(1 for r in done if r["correct"])
        out.append(_row(study, domain, task, model, "", correct, n))
        if task == "t3":
            out += _verifier_rows(db, study, domain, model)
    return out


def _run_name(domain: str) -> str:
    """The name a run stores for study domain `domain`: a folder's own name, with the task."""
    base, sep, task = domain.rpartition(":")
    return base.rstrip("/").rpartition("/")[2] + sep + task if sep else domain


def _row(study: str, domain: str, task: str, model: str, level: str, correct: int, n: int, **rates: Any) -> TaskRow:
    low, high = wilson(correct, n)
    # a domain laid out from a checkout is shown by PlanBench's name, not its folder's path
    return TaskRow(study, shown_domain(domain), task, TASKS[task].title, model, level, correct, n, ratio(correct, n),
                   None if n == 0 else low, None if n == 0 else high, **rates)  # fmt: skip


def _verifier_rows(db: sqlite_utils.Database, study: str, domain: str, model: str) -> list[TaskRow]:
    stopped = study_rounds(db, study, done_only=True, stopped_only=True, domain=_run_name(domain))
    judged = [json.loads(r["canonical"]) for r in stopped if r["canonical"]]
    n = len(judged)
    invalid = [j for j in judged if not j["truth"]["valid"]]
    valid = [j for j in judged if j["truth"]["valid"]]
    fp = sum(1 for j in invalid if j["said"]["valid"] is True)
    fn = sum(1 for j in valid if j["said"]["valid"] is not True)
    rows = []
    for level in LEVELS:
        correct = sum(1 for j in judged if j[level])
        rates = {"false_pos": fp, "truth_invalid": len(invalid), "false_neg": fn, "truth_valid": len(valid)}
        rows.append(_row(study, domain, "t3", model, level, correct, n, **(rates if level == "binary" else {})))
    return rows


def task_grids(rows: Sequence[TaskRow]) -> list[Grid]:
    study = rows[0].study if rows else ""
    main = [
        [r.task, r.title, r.domain.rpartition(":")[0] or r.domain, pct(r.correct, r.total), _interval(r)]
        for r in rows
        if not r.level
    ]
    grids = [] if not main else [
        Grid(
            f"PlanBench tasks ({study}, {rows[0].model if rows else ''})",
            ["task", "PlanBench task", "domain", "instances correct", "95% interval"],
            main,
            "Accuracy = answers the task's evaluator accepts / finished runs; 95% Wilson interval. "
            "t3 counts binary verdicts.",
        )
    ]
    verifier = [
        [r.domain, r.level, pct(r.correct, r.total), pct(r.false_pos, r.truth_invalid), pct(r.false_neg, r.truth_valid)]
        for r in rows
        if r.level
    ]
    if verifier:
        grids.append(
            Grid(
                f"Plan verification (t3): the LLM as verifier ({study})",
                ["domain", "level", "accuracy", "FPR", "FNR"],
                verifier,
                "binary: valid/invalid right; type: also the kind of failure (unmet goal or precondition); "
                "explanation: also a failing fact (and action). FPR: said valid among invalid plans; FNR: said "
                "not valid among valid plans.",
            )
        )
    return grids


def _interval(row: TaskRow) -> str:
    if row.ci_low is None or row.ci_high is None:
        return "-"
    return f"[{100 * row.ci_low:.1f}, {100 * row.ci_high:.1f}]"


GRIDS[TaskRow] = task_grids
