"""The intrinsic self-critique paper's analyses, computed from the store like every other report.

Every configuration of the intrinsic scheme counts, whichever name started it (`intrinsic`, `intrinsic-oracle`,
`intrinsic-sc`); its `curve` names the paper's line: Self-Critique, Oracle (`critic=sound`, 001:142), "+ SC (N
votes)" (the paper's Critique+SC, `votes`) or "+ SC (N runs)" (`runs`, ours: the most common final plan of N
runs). A study's `standard` cells are No-Critique.

- Figure 2 (`--table steps`): accuracy at each step 0..`steps` (001:142-145): at step s a run's answer is the plan
  it stopped at if it stopped by then, else its plan of step s; with `runs` > 1 the answer at step s is the most
  common of the runs' answers at step s (ties: the earliest run's), as the scheme's own vote picks. Step 0 is the
  No-Critique baseline (001:145); a `standard` cell is one more row, at step 0.
- Figure 3 (`--table shots`): accuracy by the number of planning examples, from the intrinsic cells of one
  study that sweeps `shots` (e.g. intrinsic:shots=1, intrinsic:shots=4, intrinsic:shots=16); the configuration's
  other parameters name its series. The No-Critique series (001:149-151) is step 0 of the one-run
  configurations (the same many-shot prompt, no critique), and a `standard` cell at the shots its domain gives.
- Figure 4 (`--table critic-steps`): the critic's accuracy, precision and recall at each step, over the rounds
  the critic judged: a positive is "the plan is correct"; precision = valid plans among those the critic
  passed, recall = passed plans among the valid ones (the sound validator is the truth).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from critiquebench.graphs import SCHEMES, parse_spec
from critiquebench.graphs import intrinsic as intrinsic_graph
from critiquebench.nodes.voting import pick_consistent
from critiquebench.reports.metrics import ordered_keys, ratio, table1, wald_half_width
from critiquebench.reports.tables import GRIDS, Grid, pct
from critiquebench.store.reads import study_rounds
from critiquebench.studies.define import study_config
from critiquebench.studies.threads import spec_of

SCHEME = "intrinsic"
NO_CRITIQUE = "No-Critique"
BASELINE = "standard"  # the study's No-Critique cells


def _is_intrinsic(spec: str) -> bool:
    """A spec of any scheme built on the intrinsic graph (a named variant or a plug-in's alias too)."""
    scheme = SCHEMES.get(spec.partition(":")[0].strip())
    return scheme is not None and scheme.builder is intrinsic_graph.build


def curve_of(spec: str) -> str:
    """The paper's name for the line a configuration draws."""
    if spec.partition(":")[0].strip() == BASELINE:
        return NO_CRITIQUE
    params = parse_spec(spec).params
    name = {"sound": "Oracle", "intrinsic": "Self-Critique"}.get(params["critic"], f"critic {params['critic']}")
    if int(params["votes"]) > 1:
        name += f" + SC ({params['votes']} votes)"
    if int(params["runs"]) > 1:
        name += f" + SC ({params['runs']} runs)"
    return name


@dataclass(frozen=True)
class StepPoint:
    study: str
    domain: str
    scheme: str
    step: int
    correct: int
    total: int
    accuracy: float | None
    wald: float | None = None  # a Wald half-width at this step, the form of Table 4's "±" at its 1st and 11th step
    table: str = "steps"
    curve: str = ""  # No-Critique, Self-Critique, Oracle, ... + SC


def _answer_at(rows: Sequence[dict[str, Any]], step: int) -> dict[str, Any]:
    """One self-critique run's answer at `step`: its plan of that step, or the plan it stopped at before it.
    `rows` are the run's rounds in order; a run makes no round after the one it stopped at."""
    return rows[min(step, len(rows) - 1)]


def _correct_at(runs: Sequence[Sequence[dict[str, Any]]], step: int) -> int:
    """1 if the output at `step` of one instance's `runs` independent self-critique runs is valid: with one
    run its answer, with several the most common of their answers (the scheme's vote)."""
    answers = [_answer_at(rows, step) for rows in runs if rows]
    if not answers:
        return 0
    chosen = pick_consistent(answers)  # one answer: its own round
    return int(next(a for a in answers if a["round"] == chosen)["sound_valid"] or 0)


def steps_curve(db: sqlite_utils.Database, study: str) -> list[StepPoint]:
    """Figure 2: accuracy at steps 0..`steps` of each intrinsic configuration, and the No-Critique cells."""
    config = study_config(db, study)
    per_run: dict[tuple[str, str], int] = {}
    threads: dict[tuple[str, str], dict[str, list[list[dict[str, Any]]]]] = defaultdict(dict)
    for row in study_rounds(db, study, done_only=True):
        spec = spec_of(row)
        key = (row["domain"], spec)
        if _is_intrinsic(spec):
            size = per_run.setdefault(key, int(parse_spec(spec).params["steps"]) + 1)
            runs = threads[key].setdefault(row["thread_id"], [[] for _ in range(int(parse_spec(spec).params["runs"]))])
            runs[min((row["round"] - 1) // size, len(runs) - 1)].append(row)
        elif spec.partition(":")[0].strip() == BASELINE:
            per_run[key] = 1
            threads[key].setdefault(row["thread_id"], [[]])[0].append(row)
    out = []
    for domain, spec in ordered_keys(threads, config):
        instances = list(threads[(domain, spec)].values())
        for step in range(per_run[(domain, spec)]):
            correct = sum(_correct_at(runs, step) for runs in instances)
            out.append(StepPoint(study, domain, spec, step, correct, len(instances), ratio(correct, len(instances)),
                                 wald_half_width(correct, len(instances)), curve=curve_of(spec)))  # fmt: skip
    return out


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
    curve: str = ""


PLANNER = ("style", "temperature", "max_tokens")  # what, besides shots, makes a step-0 plan differ


def _series(name: str, given: dict[str, Any], keep: Sequence[str] | None = None) -> str:
    rest = {k: v for k, v in given.items() if k != "shots" and (keep is None or k in keep)}
    return name + (":" + ",".join(f"{k}={v}" for k, v in sorted(rest.items())) if rest else "")


def _baseline_shots(config: dict[str, Any], domain: str, spec: str) -> int | None:
    """The planning examples a `standard` cell's prompt showed (the domain's `shots` in pddl style); None when
    its prompt is not the many-shot one or the domain cannot be built here."""
    from critiquebench.domains import get_domain
    from critiquebench.domains.planning import PlanningDomain
    from critiquebench.domains.replayed import unwrapped

    try:
        built = get_domain(domain, **dict((config.get("domain_options") or {}).get(domain, {})))
    except (ValueError, LookupError, OSError):
        return None
    built = unwrapped(built)
    if not isinstance(built, PlanningDomain):
        return None
    return built.shots if (parse_spec(spec).params.get("style") or built.prompt_style) == "pddl" else None


def shots_sweep(db: sqlite_utils.Database, study: str) -> list[ShotsPoint]:
    """Figure 3: accuracy by number of planning shots, one series per other-parameters configuration, and the
    No-Critique series: step 0 of each one-run configuration (once per planner prompt) and `standard` cells."""
    config = study_config(db, study)
    out = []
    for row in table1(db, study):
        if _is_intrinsic(row.scheme):
            spec = parse_spec(row.scheme)
            out.append(ShotsPoint(study, row.domain, _series(spec.name, spec.given), int(spec.params["shots"]),
                                  row.correct, row.total, row.accuracy, curve=curve_of(row.scheme)))  # fmt: skip
        elif row.scheme.partition(":")[0].strip() == BASELINE:
            shots = _baseline_shots(config, row.domain, row.scheme)
            if shots is not None:
                out.append(ShotsPoint(study, row.domain, row.scheme, shots, row.correct, row.total, row.accuracy,
                                      curve=NO_CRITIQUE))  # fmt: skip
    seen = set()
    for point in steps_curve(db, study):
        if point.step != 0 or not _is_intrinsic(point.scheme) or int(parse_spec(point.scheme).params["runs"]) > 1:
            continue
        spec = parse_spec(point.scheme)
        key = (point.domain, _series(f"{NO_CRITIQUE} (step 0)", spec.given, PLANNER), int(spec.params["shots"]))
        if key not in seen:  # the same prompt's first plan: the first configuration's runs stand for all
            seen.add(key)
            out.append(ShotsPoint(study, *key, point.correct, point.total, point.accuracy, curve=NO_CRITIQUE))
    return sorted(out, key=lambda p: (p.domain, p.curve != NO_CRITIQUE, p.series, p.shots))


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
    curve: str = ""


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
                    tp + fp, tp + fn, curve=curve_of(spec),
                )
            )  # fmt: skip
    return out


# -- the terminal and Markdown layout (JSON and CSV carry every field) ---------------------------------------


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _title(kind: str, rows: Sequence[Any]) -> str:
    return f"{kind} ({rows[0].study})" if rows else kind


def steps_grids(rows: Sequence[StepPoint]) -> list[Grid]:
    body = [[r.domain, r.scheme, r.curve, str(r.step), pct(r.correct, r.total),
             "-" if r.wald is None else f"±{100 * r.wald:.1f}"] for r in rows]  # fmt: skip
    return [Grid(_title("Figure 2 data: accuracy by self-critique step", rows),
                 ["domain", "scheme", "curve", "step", "accuracy", "± Wald (%)"], body,
                 "Step s: a run's answer is the plan it stopped at if it stopped by then, else its plan of step s "
                 "(with runs > 1, the most common of the runs' answers); step 0 is the No-Critique baseline "
                 "(001:145). ± Wald = 1.96 sqrt(p(1-p)/n).")]  # fmt: skip


def shots_grids(rows: Sequence[ShotsPoint]) -> list[Grid]:
    body = [[r.domain, r.series, r.curve, str(r.shots), pct(r.correct, r.total)] for r in rows]
    return [Grid(_title("Figure 3 data: accuracy by planning shots", rows),
                 ["domain", "series", "curve", "shots", "accuracy"], body,
                 "Self-critique series: the final plan. No-Critique: the first plan (step 0) of the one-run "
                 "configurations, and `standard` cells at the shots their domain gives.")]  # fmt: skip


def critic_grids(rows: Sequence[CriticPoint]) -> list[Grid]:
    body = [[r.domain, r.scheme, r.curve, str(r.step), str(r.n), _share(r.accuracy), _share(r.precision),
             _share(r.recall), str(r.passed), str(r.valid)] for r in rows]  # fmt: skip
    return [Grid(_title("Figure 4 data: the critic by step", rows),
                 ["domain", "scheme", "curve", "step", "judged", "accuracy", "precision", "recall", "passed",
                  "valid"], body,
                 "Positive = the critic said \"the plan is correct\"; truth = the validator. precision = valid among "
                 "passed, recall = passed among valid.")]  # fmt: skip


GRIDS.update({StepPoint: steps_grids, ShotsPoint: shots_grids, CriticPoint: critic_grids})


# -- figures -------------------------------------------------------------------------------------------------


def _by_domain(points: Sequence[Any], key: str) -> dict[str, dict[str, list[Any]]]:
    out: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for p in points:
        out[p.domain][getattr(p, key)].append(p)
    return out


def _figure(points: Sequence[Any], key: str, draw: Any, path: Path, title: str, xlabel: str, ylabel: str,
            shots: bool = False) -> Path:  # fmt: skip
    """One panel per domain; `draw(ax, i, name, points)` draws the i-th line (points sharing `key`) of a panel.
    `shots`: the x axis is the paper's 0, 1, 2, 4 ... 64 shots, evenly spaced."""
    from matplotlib.ticker import MaxNLocator

    from critiquebench.reports.figures import domain_panels, save_figure

    series = _by_domain(points, key)
    fig, axes = domain_panels(list(series))
    for ax, (domain, lines) in zip(axes, series.items(), strict=False):
        for i, (name, ps) in enumerate(lines.items()):
            draw(ax, i, name, ps)
        ax.set(title=domain, xlabel=xlabel, ylabel=ylabel, ylim=(-2, 102))
        if shots:
            ax.set_xscale("symlog", base=2, linthresh=1)
            xs = sorted({int(x) for line in ax.get_lines() for x in line.get_xdata()})
            ax.set_xticks(xs, [str(x) for x in xs])
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    fig.suptitle(title)
    return save_figure(fig, path)


def _step_line(ax: Any, i: int, scheme: str, ps: Sequence[StepPoint]) -> None:
    label = f"{ps[0].curve}: {scheme} (n={ps[0].total})"
    ys = [100 * (p.accuracy or 0.0) for p in ps]
    if len(ps) == 1 and ps[0].curve == NO_CRITIQUE:  # a `standard` cell: a level across the steps
        ax.axhline(ys[0], linestyle="--", color="black", label=label)
    else:
        ax.plot([p.step for p in ps], ys, marker="o", markersize=3, label=label)


def _shots_line(ax: Any, i: int, series: str, ps: Sequence[ShotsPoint]) -> None:
    ax.plot([p.shots for p in ps], [100 * (p.accuracy or 0.0) for p in ps], "--" if ps[0].curve == NO_CRITIQUE
            else "-", marker="o", markersize=3, label=f"{ps[0].curve}: {series}")  # fmt: skip


def _critic_lines(ax: Any, i: int, scheme: str, ps: Sequence[CriticPoint]) -> None:
    for field, style in (("accuracy", "-"), ("precision", "--"), ("recall", ":")):
        ys = [100 * v if (v := getattr(p, field)) is not None else float("nan") for p in ps]
        label = f"{ps[0].curve}: {scheme}" if field == "accuracy" else None  # one legend entry a scheme
        ax.plot([p.step for p in ps], ys, style, color=f"C{i}", marker="o", markersize=3, label=label)


def steps_figure(points: Sequence[StepPoint], path: Path, study: str) -> Path:
    """Figure 2: one panel per domain, a line per configuration; a `standard` cell is a dashed level."""
    return _figure(points, "scheme", _step_line, path, f"Figure 2: accuracy by self-critique step ({study})",
                   "self-critique step", "accuracy (%)")  # fmt: skip


def shots_figure(points: Sequence[ShotsPoint], path: Path, study: str) -> Path:
    """Figure 3: one panel per domain, a line per series (No-Critique dashed)."""
    return _figure(points, "series", _shots_line, path, f"Figure 3: accuracy by planning shots ({study})",
                   "planning shots", "accuracy (%)", shots=True)  # fmt: skip


def critic_figure(points: Sequence[CriticPoint], path: Path, study: str) -> Path:
    """Figure 4: one panel per domain, the critic's accuracy, precision and recall by step."""
    return _figure(points, "scheme", _critic_lines, path, f"Figure 4: the critic by step ({study})\nsolid: "
                   "accuracy, dashed: precision, dotted: recall", "self-critique step", "%")  # fmt: skip


FIGURES = {
    "steps": ("Figure 2 (accuracy by step)", steps_curve, steps_figure),
    "shots": ("Figure 3 (accuracy by shots)", shots_sweep, shots_figure),
    "critic-steps": ("Figure 4 (the critic by step)", critic_by_step, critic_figure),
}


def intrinsic_figure(db: sqlite_utils.Database, study: str, table: str, path: Path) -> str:
    """Write the figure of `table` (steps, shots, critic-steps) as a PNG; a line saying where."""
    name, rows, draw = FIGURES[table]
    return f"{name} written to {draw(rows(db, study), path, study)}"
