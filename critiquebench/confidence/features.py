"""The attempt dataset: one row per attempt of a planning run, with the validator features of Merola et al.

Features of one attempt (recomputed from its answer text with the sound validator in `domains/planning`, so any
stored planning study qualifies, whatever scheme or feedback produced it), as the paper defines them
(`004:142-148`) and its code computes them from `VAL -v` (Singh8899/LLM-Planning-Leonardo,
`utils/dataset_generator.py`); VAL stops at the first failure, and so does the simulation here
(`domains/planning/val_words.py`):

- `plan_length`: the code's "plan_len" (`count_plan_actions`): the answer's lines that start with "(" (so an
  undefined action counts); an answer with no such line (a plan in English, which the study never saw) counts
  the actions our reader finds;
- `valid_share`: the code's "valid_action_percent", 100 x the happenings VAL checked / plan size (0-100; VAL
  checks a step before it fails on it, so the failing step counts; a plan VAL cannot read scores 0);
- `valid_prefix`: the code's "consecutive_valid_steps", the same count of happenings checked;
- `violations`: the code's "logical_violations", the lines of `VAL -v`'s output that mention "unsatisfied
  precondition" or "Plan failed": 3 when a step's preconditions do not hold ("Plan failed because of
  unsatisfied precondition in:", "... has an unsatisfied precondition at time N", "Plan failed to execute";
  KCL-Planning/VAL `Plan.cpp:127`, `RepairAdvice.cpp:26`, `Validate/src/main.cpp:315`; the study's CSV holds 3
  for every such plan), else 0 (VAL stops there; a plan that executes but misses its goal has none);
- `success`: the sound verdict of this attempt, as VAL reads the answer;

The plan is what VAL reads from the raw reply file, as the study's code ran it (`formatter` commented out):
the parenthesised actions up to the first word outside them, code fences' backticks skipped
(`domains/planning/val_words.read_val`, which the `refine` loop's verdict also reads with); on an untyped domain
an object the problem lacks is executed as one of which nothing holds.
A line naming an action the domain lacks, or a parenthesis left open (a reply cut off),
makes the whole answer unreadable: VAL builds the plan before checking it and an undefined action throws out
of the run (`Plan.cpp:1899-1904`), so nothing is checked: share, prefix and violations are 0 and the attempt
fails, whatever the other lines do. A reply with no line starting with "(" (English) is read by our reader.
On the study's own dataset these features equal its `VAL -v` ones for 558 of 558 generations.

plus where it comes from (`domain`, `problem`, `trial`, `run`, `iteration` = 1-based round) and the run's final
outcome `run_success` (the sound verdict of the answer the run output) with its number of attempts `attempts`.
`problem_text` (the PDDL problem) and `answer` (the raw reply, the code's `gen_N` text) feed the text encoder;
`plan` is the plan our reader finds (one PDDL action per line), for inspection.
`unmet_goals` (goal facts not true after a plan that executes) is recorded for inspection only: it is not a
feature of the paper, and no meta-network reads it.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import sqlite_utils

from critiquebench.domains.contract import Instance
from critiquebench.outputs import json_text, spreadsheet_row
from critiquebench.store.reads import study_rounds

if TYPE_CHECKING:
    from critiquebench.domains.planning import PlanningDomain

# The paper's four features (004:142-148), the inputs of MN-1 and, per attempt, MN-4 (004:167-189).
FEATURES: tuple[str, ...] = ("valid_share", "valid_prefix", "violations", "plan_length")
COLUMNS: tuple[str, ...] = (
    "source", "domain", "scheme", "problem", "trial", "run", "iteration", *FEATURES, "unmet_goals", "success",
    "attempts", "run_success", "problem_text", "plan", "answer",
)  # fmt: skip
OPTIONAL = ("answer",)  # absent from files written before it was added: the plan read stands in
_INTS = ("trial", "iteration", "valid_prefix", "violations", "unmet_goals", "plan_length", "attempts")
_BOOLS = ("success", "run_success")


class FeatureError(ValueError):
    """A source that holds no planning attempts, or cannot be read; the message says why."""


@dataclass(frozen=True)
class Attempt:
    """The validator's view of one answer."""

    plan_length: int
    valid_share: float
    valid_prefix: int
    violations: int
    unmet_goals: int
    success: bool
    plan: str
    answer: str = ""


# Lines of `VAL -v`'s output the study's `parse_val_output` counts for one failed precondition (see above).
VIOLATION_LINES = 3


def study_plan_length(text: str, steps: int) -> int:
    """The study's `count_plan_actions`: lines starting with "(" (`steps`, the actions read, when there are none)."""
    lines = sum(1 for line in text.splitlines() if line.strip().startswith("("))
    return lines or steps


def measure(domain: PlanningDomain, instance: Instance, text: str) -> Attempt:
    """Features of answer `text` for `instance` of a planning domain (never raises on bad text)."""
    from critiquebench.domains.planning.val_words import read_val, run_val

    text = text or ""
    task = domain.task(instance)
    known = tuple(domain.model.schemas)
    read = read_val(task, text, known)
    if read is None:  # no PDDL lines: our reader's plan, judged by the domain
        parsed = domain.read(instance, text)
        steps = list(parsed.steps) if parsed is not None else []
        val, unreadable = run_val(task, steps, known), False
        success = domain.assess(instance, text)[0].valid
    else:
        steps, val = read
        unreadable = val.failure in ("no-action", "bad-plan")  # VAL cannot build the plan: nothing is checked
        success = val.valid
    size = 0 if unreadable else len(steps)
    return Attempt(
        plan_length=study_plan_length(text, len(steps)),
        valid_share=100.0 * val.checked / size if size else 0.0,
        valid_prefix=0 if unreadable else val.checked,
        violations=VIOLATION_LINES * int(val.failure == "precondition"),
        unmet_goals=len(val.unmet) + len(val.unmet_negative) if val.failure == "goal" else 0,
        success=success,
        plan="\n".join("(" + " ".join((name, *args)) + ")" for name, args in steps),
        answer=text,
    )


def _is_planning(domain: Any) -> bool:
    from critiquebench.domains.planning import PlanningDomain
    from critiquebench.domains.replayed import unwrapped

    return isinstance(unwrapped(domain), PlanningDomain)


def _row(source: str, domain: str, scheme: str, instance: Instance, trial: int, run: str, iteration: int,
         attempt: Attempt) -> dict[str, Any]:  # fmt: skip
    return {
        "source": source, "domain": domain, "scheme": scheme, "problem": instance.id, "trial": trial, "run": run,
        "iteration": iteration, "valid_share": round(attempt.valid_share, 6), "valid_prefix": attempt.valid_prefix,
        "violations": attempt.violations, "unmet_goals": attempt.unmet_goals, "plan_length": attempt.plan_length,
        "success": attempt.success, "problem_text": instance.data.get("problem", ""), "plan": attempt.plan,
        "answer": attempt.answer,
    }  # fmt: skip


def _close_runs(rows: list[dict[str, Any]], outcome: dict[str, bool]) -> list[dict[str, Any]]:
    """Add each run's number of attempts and final outcome to its rows."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["run"]] = counts.get(row["run"], 0) + 1
    for row in rows:
        row["attempts"] = counts[row["run"]]
        row["run_success"] = outcome[row["run"]]
    return rows


def study_rows(db: sqlite_utils.Database, study: str) -> list[dict[str, Any]]:
    """Rows for every finished run of `study` in a planning domain (other domains are left out)."""
    from critiquebench.studies.config import StudyConfig
    from critiquebench.studies.define import study_config
    from critiquebench.studies.runner import RunnerError, load_matrix
    from critiquebench.studies.threads import spec_of

    config = StudyConfig.from_dict(study_config(db, study))
    if config.kind != "loop":
        raise FeatureError(f"study {study!r} is a verification-only study: it has no planning runs")
    try:
        tasks = load_matrix(config)
    except RunnerError as exc:
        raise FeatureError(f"study {study!r}: {exc}") from exc
    found = {(t.domain.name, t.instance.id): t for t in tasks if _is_planning(t.domain)}
    if not found:
        raise FeatureError(f"study {study!r} has no planning domain (domains: {', '.join(config.domains)})")
    rows, outcome = [], {}
    for rec in study_rounds(db, study, done_only=True):
        task = found.get((rec["domain"], rec["instance_id"]))
        if task is None:
            continue
        attempt = measure(task.domain, task.instance, rec["answer"] or "")
        rows.append(_row(study, rec["domain"], spec_of(rec), task.instance, rec["trial"], rec["thread_id"],
                         rec["round"], attempt))  # fmt: skip
        outcome[rec["thread_id"]] = bool(rec["correct"])
    if not rows:
        raise FeatureError(f"study {study!r} has no finished planning runs yet: run or resume it first")
    return _close_runs(rows, outcome)


def planbench_rows(path: Path, dataset: Path | None = None) -> list[dict[str, Any]]:
    """Rows from a PlanBench backprompting results file: every recorded assistant turn is one attempt.

    This reads the recorded conversations directly (no replay), so it works for any domain PlanBench ships
    even where our prompts differ from the recorded ones; the run's outcome is our validator's verdict on its
    last recorded answer (PlanBench stops a conversation at the first valid plan)."""
    from critiquebench.domains import get_domain, load_instances
    from critiquebench.importers.planbench import ImportError_, read_planbench

    try:
        run = read_planbench(path)
    except ImportError_ as exc:
        raise FeatureError(str(exc)) from exc
    if run.kind != "backprompting":
        raise FeatureError(f"{path}: a plan-generation file has one attempt per problem; use a backprompting file")
    folder = dataset or Path(path).resolve().parent.parent / run.domain
    try:
        domain = get_domain(run.domain)
        instances = {i.id: i for i in load_instances(domain, ",".join(map(str, run.instance_ids)), folder)}
    except (ValueError, OSError) as exc:
        raise FeatureError(f"{path}: cannot load the {run.domain} instances from {folder}: {exc}") from exc
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    source = Path(path).stem
    rows, outcome = [], {}
    for record in data["instances"]:
        instance = instances[str(record["instance_id"])]
        run_id = f"{source}/{run.domain}/{instance.id}"
        answers = [str(m["content"]) for m in record["messages"] if m.get("role") == "assistant"]
        for i, text in enumerate(answers, start=1):
            attempt = measure(domain, instance, text)
            rows.append(_row(source, run.domain, "sound-first", instance, 0, run_id, i, attempt))
            outcome[run_id] = attempt.success
    return _close_runs(rows, outcome)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows from a features file (`export NAME --features`, JSON lines or CSV)."""
    try:
        with path.open(encoding="utf-8", newline="") as fp:
            if path.suffix.lower() == ".csv":
                raw = list(csv.DictReader(fp))
            else:
                raw = [json.loads(line) for line in fp if line.strip()]
    except (OSError, json.JSONDecodeError, csv.Error, UnicodeDecodeError) as exc:
        raise FeatureError(f"{path}: cannot read a features file: {exc}") from None
    missing = [c for c in COLUMNS if raw and c not in raw[0] and c not in OPTIONAL]
    if not raw or missing:
        raise FeatureError(f"{path}: not a features file ({'missing ' + ', '.join(missing) if raw else 'empty'})")
    return [_typed(row) for row in raw]


def _typed(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out.setdefault("answer", out["plan"])
    for key in _INTS:
        out[key] = int(out[key])
    out["valid_share"] = float(out["valid_share"])
    for key in _BOOLS:
        value = out[key]
        out[key] = value.lower() in ("true", "1") if isinstance(value, str) else bool(value)
    return out


def load_rows(source: str, store: Path | None = None) -> list[dict[str, Any]]:
    """Rows from a stored study name, a PlanBench backprompting .json file, or a features .jsonl/.csv file."""
    path = Path(source)
    if path.suffix.lower() == ".json" and path.is_file():
        return planbench_rows(path)
    if path.suffix.lower() in (".jsonl", ".csv") and path.is_file():
        return read_rows(path)
    from critiquebench.store.db import default_store_path, opened
    from critiquebench.studies.define import ReportError

    store = store or default_store_path()
    if not Path(store).exists():
        raise FeatureError(f"{source!r} is not a features or PlanBench file, and there is no store at {store}")
    try:
        with opened(store) as db:
            return study_rows(db, source)
    except ReportError as exc:
        raise FeatureError(str(exc)) from exc


def write_rows(rows: Iterable[dict[str, Any]], fp: IO[str], fmt: str = "jsonl") -> int:
    """Write rows as JSON lines or CSV; return how many."""
    count = 0
    writer = csv.DictWriter(fp, fieldnames=COLUMNS, extrasaction="ignore") if fmt == "csv" else None
    if writer is not None:
        writer.writeheader()
    for row in rows:
        if writer is not None:
            writer.writerow(spreadsheet_row(row))
        else:
            fp.write(json_text({c: row[c] for c in COLUMNS}, ensure_ascii=False) + "\n")
        count += 1
    return count


_OBJECTS = re.compile(r"\(\s*:objects\b([^()]*)\)", re.IGNORECASE)


def object_count(problem_text: str) -> int | None:
    """How many objects a PDDL problem declares (`a b - block c` is 3), None without an `:objects` section."""
    found = _OBJECTS.search(problem_text or "")
    if found is None:
        return None
    words = found.group(1).split()
    types = {i + 1 for i, w in enumerate(words) if w == "-"}  # the word after "-" names a type
    return sum(1 for i, w in enumerate(words) if w != "-" and i not in types)


def problem_type(row: dict[str, Any]) -> str:
    """The row of 004's Table 2 a run belongs to (004:233-252): its study's code groups by folder and names the
    Blocksworld rows by block count ("blocksworld 4 blocks" ... "10 blocks", its problems `pddl_N_K`); so a
    Blocksworld domain's runs are grouped by the objects of their problem, any other domain's by domain."""
    domain = str(row["domain"])
    blocks = object_count(str(row.get("problem_text", ""))) if "blocksworld" in domain.lower() else None
    return domain if blocks is None else f"{domain} {blocks} blocks"


def runs(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Rows grouped by run, each run's attempts in order."""
    by_run: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_run.setdefault(row["run"], []).append(row)
    for attempts in by_run.values():
        yield sorted(attempts, key=lambda r: r["iteration"])
