"""Every table `critiquebench report --table` knows, in one place: its name, its help and how its rows are made.

A table is made for loop studies (`loop(db, study)`), for verification-only studies (`verify(study, config,
rows)` over the judged answers), or both. To add a table, add one `Table` row: the CLI's choices and help text
are read from `TABLES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Rows = list[Any]


@dataclass(frozen=True)
class Table:
    name: str
    help: str
    loop: Callable[[Any, str], Rows] | None = None
    verify: Callable[[str, dict[str, Any], list[dict[str, Any]]], Rows] | None = None
    intrinsic_figure: bool = False  # its --figure is the intrinsic self-critique paper's Figure 2, 3 or 4
    figure: Callable[[Any, str, Path], str] | None = None  # its own --figure (a line saying where it went)


def _table1(db: Any, study: str) -> Rows:
    from critiquebench.reports.metrics import table1
    from critiquebench.reports.planbench import is_task_study, task_rows
    from critiquebench.studies.define import study_config
    from critiquebench.studies.runner import planned_runs

    return task_rows(db, study) if is_task_study(study_config(db, study)) else table1(db, study, planned_runs)


def _table2(db: Any, study: str) -> Rows:
    """Every round an LLM verifier judged; of a PlanBench plan-verification (t3) study, where the model under
    test is the verifier, its verdicts against the truth (accuracy, FPR, FNR at PlanBench's levels)."""
    from critiquebench.reports.metrics import table2
    from critiquebench.reports.planbench import is_task_study, task_rows
    from critiquebench.studies.define import study_config

    if is_task_study(study_config(db, study)) and (verifier := [r for r in task_rows(db, study) if r.level]):
        return verifier
    return table2(db, study)


def _loop(module: str, name: str) -> Callable[[Any, str], Rows]:
    def rows(db: Any, study: str) -> Rows:
        import importlib

        return getattr(importlib.import_module(f"critiquebench.reports.{module}"), name)(db, study)

    return rows


def _verify(name: str) -> Callable[[str, dict[str, Any], list[dict[str, Any]]], Rows]:
    def rows(study: str, config: dict[str, Any], judged: list[dict[str, Any]]) -> Rows:
        from critiquebench.reports import verification

        return getattr(verification, name)(study, config, judged)

    return rows


def _samples(name: str) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        from critiquebench.reports import samples

        return getattr(samples, name)(*args)

    return call


# "2" of a loop study is every round an LLM judged, pooled ("verifier-in-the-loop"); of a verification-only
# study it is the paper's Table 2, and "critique" its critique-quality table.
TABLES: dict[str, Table] = {t.name: t for t in (
    Table("1", "accuracy", _table1, _verify("kind_rows")),
    Table("2", "LLM verifier; of a loop study: verifier-in-the-loop", _table2,
          _verify("paper_table2_rows")),
    Table("figure", "budget data", _loop("metrics", "budget_curve")),
    Table("compare", "every pair of schemes per domain on the runs both finished: difference with a bootstrap "
          "interval, McNemar's exact p, Holm-adjusted (--pairs A:B to choose; --compare OTHER: against its schemes)",
          _loop("paired", "compare_rows")),
    Table("stops", "loop studies: why each run ended (accepted / out of rounds, right / wrong), ever correct, lost",
          _loop("stops", "stop_rows")),
    Table("verifier-in-the-loop", "every round an LLM judged", _table2),
    Table("critique", "critique quality of verification studies", verify=_verify("critique_rows")),
    Table("plan-critique", "self-verification Tables A5-A6: binary / type / critique per planning kind",
          verify=_verify("plan_critique_rows")),
    Table("final-verifier", "plan-critique Table 2", _loop("plan_critique", "final_verifier")),
    Table("feedback", "plan-critique Table 3", _loop("plan_critique", "feedback_table")),
    Table("steps", "intrinsic self-critique: correct by step", _loop("intrinsic", "steps_curve"),
          intrinsic_figure=True),
    Table("shots", "intrinsic self-critique: accuracy by planning shots", _loop("intrinsic", "shots_sweep"),
          intrinsic_figure=True),
    Table("critic-steps", "intrinsic self-critique: critic accuracy, precision, recall by step",
          _loop("intrinsic", "critic_by_step"), intrinsic_figure=True),
    Table("pass-at-k", "recorded samples: first-k sampling, unbiased pass@k and maj@k by k",
          _samples("pass_at_k_rows"), figure=_samples("pass_at_k_figure")),
    Table("labels", "recorded samples: the source's verdicts beside ours, every disagreement",
          _samples("label_rows")),
)}  # fmt: skip
HELP = "; ".join(f"{t.name} ({t.help})" for t in TABLES.values()) + "."


def report_rows(db: Any, study: str, table: str = "1", compare_to: str | None = None,
                pairs: str | None = None) -> Rows:
    """The rows of `table` for `study` (or, with `compare_to`, the two studies side by side; of `--table compare`,
    each scheme of one against each of the other). `pairs`: the pairs of `--table compare` ("A:B,C:D"). Raises
    ReportError for an unknown study or a table its kind of study does not have."""
    from critiquebench.studies.define import ReportError, study_config  # not at import: the CLI's help reads TABLES

    if table not in TABLES:
        raise ReportError(f"--table must be one of {', '.join(TABLES)}")
    config = study_config(db, study)
    spec = TABLES[table]
    if config.get("kind") == "verify":
        if spec.verify is None:
            have = ", ".join(t.name for t in TABLES.values() if t.verify is not None)
            raise ReportError(f"a verification-only study has tables {have}")
        from critiquebench.store.verify import verify_rows

        return spec.verify(study, config, list(verify_rows(db, study)))
    if pairs and table != "compare":
        raise ReportError("--pairs chooses the pairs of --table compare")
    if table == "compare":
        from critiquebench.reports.paired import compare_rows

        if compare_to:
            study_config(db, compare_to)  # an unknown study: the one-line error
        return compare_rows(db, study, compare_to, pairs)
    if compare_to:
        from critiquebench.reports.metrics import compare

        return compare(db, study, compare_to)
    if spec.loop is None:
        raise ReportError(f"--table {table} is a table of verification-only studies")
    return spec.loop(db, study)


def write_figure(db: Any, study: str, table: str, path: Path) -> str:
    """Write the figure that goes with `table` (Figure 2, or the intrinsic paper's Figure 2, 3 or 4, or the
    table's own); a line saying where."""
    if (own := TABLES[table].figure) is not None:
        return own(db, study, path)
    if TABLES[table].intrinsic_figure:
        from critiquebench.reports.intrinsic import intrinsic_figure

        return intrinsic_figure(db, study, table, path)
    from critiquebench.reports.figures import budget_figure
    from critiquebench.reports.metrics import budget_curve

    return f"Figure 2 written to {budget_figure(budget_curve(db, study), path, study)}"
