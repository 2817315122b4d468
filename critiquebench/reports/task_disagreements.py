"""Every instance of a recorded PlanBench task file (t2-t8) where PlanBench's label, the replay's verdict and our
own reading part, and why (docs/planbench.md's table is generated from these rows, `docs/generate.py`).

A replay reads a t7 answer as PlanBench's code read it (`planbench_reading.STATE_READERS`, chosen by the
importer), so its verdict is the label; our own reading (`tasks.states.StateReader`) is judged beside it. Plan
tasks read answers with our reader only; where it parts from the label the stored `extracted_llm_plan` says how
PlanBench read the answer. Each row's class is told apart by reading the answer each way:

- "clause not split at ' and '": PlanBench's labels come from `text_to_state` without its `' and '` split
  (`state_reading = "planbench-state-commas"`), so "X is on the table and Y is on the table" names X only; its
  committed code (`planbench-state`) splits it and agrees with ours;
- "fact stated twice": PlanBench compares sorted lists (`response_evaluation.py:160`), so a repeated fact fails
  an answer whose state is right;
- "'no longer' read as a fact": only " not " marks a negation in PlanBench's reader (and ours, as its rule), so
  "X is no longer clear" reads as "X is clear"; which object each reader then names decides;
- "objects picked otherwise": PlanBench's reader takes the first object word of each part around the keyword
  ("both the blue block and the orange block are on the table": the blue one); ours reads each clause;
- "plan read past [PLAN END]": PlanBench's plan reader takes every action line of the answer; ours stops at
  `[PLAN END]`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from critiquebench.importers.planbench.file import label

CLAUSES = "clause not split at ' and '"
TWICE = "fact stated twice"
NO_LONGER = "'no longer' read as a fact"
OBJECTS = "objects picked otherwise"
PAST_END = "plan read past [PLAN END]"
OTHER = "read otherwise"


@dataclass(frozen=True)
class TaskDisagreement:
    """One instance where PlanBench's label, the replay's verdict or our own reading's verdict differ."""

    task: str
    instance: str
    label: bool  # PlanBench's
    replay: bool  # the replay's verdict (PlanBench's reading where the importer chose one)
    ours: bool  # our own reading's
    why: str
    answer: str
    planbench_read: str  # the facts or plan PlanBench read (its stored `extracted_llm_plan`)
    ours_read: str  # the facts or plan our reader read


def task_disagreements(path: Path, domain: str, dataset: Path) -> tuple[int, list[TaskDisagreement]]:
    """The labelled instances of the task file at `path` (the shipped `domain`'s problems under `dataset`) and
    those where the label, the replay's verdict and our own reading's verdict are not all equal."""
    from critiquebench.domains.planning.planbench_reading import planbench_state
    from critiquebench.domains.planning.tasks import task_domain, task_of
    from critiquebench.importers.planbench.readers import state_reading

    task = task_of(path.name)
    if task is None:
        raise ValueError(f"{path}: not a PlanBench task file")
    records = [r for r in json.loads(path.read_text(encoding="utf-8"))["instances"] if isinstance(r, dict)]
    ids = ",".join(str(r["instance_id"]) for r in records)
    ours = task_domain(domain, task, recorded=str(path))
    reading = state_reading(path, domain, None) if task == "t7" else None
    replay = task_domain(domain, task, recorded=str(path), state_reading=reading) if reading else ours
    instances = {i.id: i for i in ours.load(ids, dataset)}
    if replay is not ours:
        replay.load(ids, dataset)
    found, labelled = [], 0
    for record in records:
        theirs = label(record)
        inst = instances.get(str(record["instance_id"]))
        if theirs is None or inst is None:
            continue
        labelled += 1
        answer = str(record.get("llm_raw_response") or "")
        own = ours.verify(inst, answer)
        mine = own.valid
        replayed = replay.verify(inst, answer).valid
        if theirs == mine == replayed:
            continue
        why = OTHER
        if task == "t7":
            cfg = ours.base.cfg
            committed = planbench_state(answer, cfg, {})
            stored = record.get("extracted_llm_plan") or planbench_state(answer, cfg, {}, commas=True)
            truth = sorted(record.get("ground_truth_plan") or [])
            if len(set(stored)) < len(stored) or len(set(committed)) < len(committed):
                why = TWICE
            elif (sorted(committed) == truth) == mine and sorted(stored) != sorted(committed):
                why = CLAUSES
            elif "no longer" in answer.lower():
                why = NO_LONGER
            else:
                why = OBJECTS
        elif "[plan end]" in answer.lower() and answer.lower().split("[plan end]", 1)[1].strip():
            why = PAST_END
        stored_read = record.get("extracted_llm_plan")
        found.append(TaskDisagreement(task, inst.id, theirs, replayed, mine, why, answer,
                                      _words(stored_read), _words(own.answer)))  # fmt: skip
    return labelled, found


def _words(read: object) -> str:
    """Facts or plan steps as one line ("clear_b, ontable_c" / "(pick-up b) (stack b c)")."""
    if isinstance(read, str):
        return " ".join(line.strip() for line in read.splitlines() if line.strip())
    if isinstance(read, list | tuple):
        return ", ".join(map(str, read))
    return "" if read is None else str(read)
