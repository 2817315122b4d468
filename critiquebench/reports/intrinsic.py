"""The intrinsic self-critique paper's analyses, computed from the store like every other report.

- Figure 2 (`--table steps`): correct instances at each step 0..N of every `intrinsic` configuration (the
  oracle, `intrinsic:critic=sound`, is one of them): at step s a run's answer is the plan it stopped at if it
  stopped by then, else its plan of step s (round s+1).
- Figure 3 (`--table shots`): accuracy by the number of planning examples, from the `intrinsic` cells of one
  study that sweeps `shots` (e.g. schemes intrinsic:shots=1, intrinsic:shots=4, intrinsic:shots=16); the
  configuration's other parameters name its series.
- Figure 4 (`--table critic-steps`): the critic's accuracy, precision and recall at each step, over the rounds
  the critic judged: a positive is "the plan is correct"; precision = valid plans among those the critic
  passed, recall = passed plans among the valid ones (the sound validator is the truth).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from critiquebench.graphs import parse_spec
from critiquebench.reports.metrics import (
    budget_curve,
    ordered_keys,
    ratio,
    spec_of,
    study_config,
    table1,
    wald_half_width,
)
from critiquebench.store.reads import study_rounds

SCHEME = "intrinsic"


def _is_intrinsic(spec: str) -> bool:
    return spec.partition(":")[0] == SCHEME


@dataclass(frozen=True)
class StepPoint:
    study: str
    domain: str
    scheme: str
    step: int
    correct: int
    total: int
    accuracy: float | None
    wald: float | None = None  # the paper's "±" at this step (Table 4's 1st and 11th step): a Wald half-width
    table: str = "steps"


def steps_curve(db: sqlite_utils.Database, study: str) -> list[StepPoint]:
    """Figure 2: correct instances by step for each intrinsic configuration (steps = rounds - 1)."""
    return [
        StepPoint(p.study, p.domain, p.scheme, p.budget - 1, p.correct, p.total, p.accuracy,
                  wald_half_width(p.correct, p.total))  # fmt: skip
        for p in budget_curve(db, study)
        if _is_intrinsic(p.scheme)
    ]


@dataclass(frozen=True)
class ShotsPoint:
    study: str
    domain: str
    series: str  # the configuration without its shots
    shots: int
    correct: int
    total: int
    accuracy: float | None
    table: str = "shots"


def shots_sweep(db: sqlite_utils.Database, study: str) -> list[ShotsPoint]:
    """Figure 3: accuracy by number of planning shots, one series per other-parameters configuration."""
    out = []
    for row in table1(db, study):
        if not _is_intrinsic(row.scheme):
            continue
        spec = parse_spec(row.scheme)
        rest = {k: v for k, v in spec.given.items() if k != "shots"}
        series = SCHEME + (":" + ",".join(f"{k}={v}" for k, v in sorted(rest.items())) if rest else "")
        out.append(
            ShotsPoint(study, row.domain, series, int(spec.params["shots"]), row.correct, row.total, row.accuracy)
        )
    return sorted(out, key=lambda p: (p.domain, p.series, p.shots))


@dataclass(frozen=True)
class CriticPoint:
    study: str
    domain: str
    scheme: str
    step: int
    n: int
    accuracy: float | None
    precision: float | None
    recall: float | None
    passed: int  # the critic said "the plan is correct"
    valid: int  # the validator accepted the plan
    table: str = "critic-steps"


def critic_by_step(db: sqlite_utils.Database, study: str) -> list[CriticPoint]:
    """Figure 4: the critic's accuracy, precision and recall at each step of each intrinsic configuration."""
    config = study_config(db, study)
    counts: dict[tuple[str, str], dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    for row in study_rounds(db, study, judged=True):
        domain, rnd, said, valid = row["domain"], row["round"], row["llm_verdict"], row["sound_valid"]
        spec = spec_of(row)
        if not _is_intrinsic(spec):
            continue
        per_run = int(parse_spec(spec).params["steps"]) + 1
        cell = (0 if valid else 1) if said else (2 if valid else 3)  # tp, fp, fn, tn
        counts[(domain, spec)][(rnd - 1) % per_run][cell] += 1
    out = []
    for domain, spec in ordered_keys(counts, config):
        for step, (tp, fp, fn, tn) in sorted(counts[(domain, spec)].items()):
            n = tp + fp + fn + tn
            out.append(
                CriticPoint(
                    study, domain, spec, step, n, ratio(tp + tn, n), ratio(tp, tp + fp), ratio(tp, tp + fn),
                    tp + fp, tp + fn,
                )
            )  # fmt: skip
    return out


def intrinsic_figure(db: sqlite_utils.Database, study: str, path: Path) -> Path:
    """Figures 2-4 of the paper in one PNG: correct by step, accuracy by shots, the critic by step."""
    from critiquebench.reports.figures import plt, save_figure  # matplotlib only when a figure is drawn

    steps, shots, critic = steps_curve(db, study), shots_sweep(db, study), critic_by_step(db, study)
    fig, (a2, a3, a4) = plt.subplots(1, 3, figsize=(14, 3.8))
    for key in dict.fromkeys((p.domain, p.scheme) for p in steps):
        series = [p for p in steps if (p.domain, p.scheme) == key]
        a2.plot([p.step for p in series], [p.correct for p in series], marker="o", markersize=3, label=" ".join(key))
    a2.set(title="Figure 2: correct instances by step", xlabel="step", ylabel="correct")
    for key in dict.fromkeys((p.domain, p.series) for p in shots):
        series = [p for p in shots if (p.domain, p.series) == key]
        a3.plot([p.shots for p in series], [100 * (p.accuracy or 0) for p in series], marker="o", label=" ".join(key))
    a3.set(title="Figure 3: accuracy by planning shots", xlabel="shots", ylabel="accuracy (%)")
    for key in dict.fromkeys((p.domain, p.scheme) for p in critic):
        series = [p for p in critic if (p.domain, p.scheme) == key]
        for field, style in (("accuracy", "-"), ("precision", "--"), ("recall", ":")):
            ys = [100 * v if (v := getattr(p, field)) is not None else float("nan") for p in series]
            a4.plot([p.step for p in series], ys, style, marker="o", markersize=3, label=f"{' '.join(key)} {field}")
    a4.set(title="Figure 4: the critic by step", xlabel="step", ylabel="%")
    for ax in (a2, a3, a4):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    fig.suptitle(f"Intrinsic self-critique ({study})")
    return save_figure(fig, path)
