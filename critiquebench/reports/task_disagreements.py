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

Plan answers of any recorded file (the breadth benchmark, `plan_why`), told apart by judging the plan PlanBench
stored for the answer (`extracted_llm_plan`) with our validator on the problem the prompt stated:

- "'no plan' judged on the extracted plan": PlanBench applied its unsolvable-problem rule
  (`validate_plan_unsolvable`) to the plan its extractor kept, which dropped the answer's "No plan possible";
- "plan stated twice, read as one": its stored plan is one plan written twice in a row (bold and in a code block),
  read by PlanBench as one plan of twice the steps;
- "several [PLAN] blocks": PlanBench's reader took the first block, ours the last;
- "plan read past [PLAN END]", as above;
- "PlanBench read another plan": its stored plan, judged by our validator, gives its label; ours reads the answer
  otherwise;
- "label contradicts PlanBench's own plan": its stored plan, judged by our validator on the problem the prompt
  stated, gives the other verdict (the label was judged against other problems, or by another rule);
- "no stored plan": the file keeps no `extracted_llm_plan` for the answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critiquebench.importers.planbench.file import label

CLAUSES = "clause not split at ' and '"
TWICE = "fact stated twice"
NO_LONGER = "'no longer' read as a fact"
OBJECTS = "objects picked otherwise"
PAST_END = "plan read past [PLAN END]"
OTHER = "read otherwise"
NO_PLAN = "'no plan' judged on the extracted plan"
DOUBLED = "plan stated twice, read as one"
BLOCKS = "several [PLAN] blocks"
READ_OTHERWISE = "PlanBench read another plan"
CONTRADICTS = "label contradicts PlanBench's own plan"
NOT_STORED = "no stored plan"
_ACTION = re.compile(r"\(([^()]*)\)")


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
        replayed = mine if replay is ours else replay.verify(inst, answer).valid  # plan tasks: the same reading
        if theirs == mine == replayed:
            continue
        why = OTHER
        if task == "t7":
            why = state_why(answer, ours.base.cfg, record, mine)
        elif _past_end(answer):
            why = PAST_END
        stored_read = record.get("extracted_llm_plan")
        found.append(TaskDisagreement(task, inst.id, theirs, replayed, mine, why, answer,
                                      _words(stored_read), _words(own.answer)))  # fmt: skip
    return labelled, found


def state_why(answer: str, cfg: Any, record: Mapping[str, Any], ours_right: bool) -> str:
    """Why PlanBench's t7 label and a reading part on `answer` (`cfg`: the domain's English templates)."""
    from critiquebench.domains.planning.planbench_reading import planbench_state

    committed = planbench_state(answer, cfg, {})
    stored = record.get("extracted_llm_plan") or planbench_state(answer, cfg, {}, commas=True)
    truth = sorted(record.get("ground_truth_plan") or [])
    if len(set(stored)) < len(stored) or len(set(committed)) < len(committed):
        return TWICE
    if (sorted(committed) == truth) == ours_right and sorted(stored) != sorted(committed):
        return CLAUSES
    return NO_LONGER if "no longer" in answer.lower() else OBJECTS


def plan_steps(read: object, cfg: Any = None) -> list[str]:
    """The actions of a stored or parsed plan ("(unstack d c)\n(put-down d)", "['(unstack d c)', ...]", a list),
    each as "(name arg ...)", lower case, spaces collapsed; with the domain's English templates `cfg`, objects
    PlanBench's older pipeline stored by colour ("(pick-up red)") are named by their keys ("(pick-up a)")."""
    text = "\n".join(map(str, read)) if isinstance(read, list | tuple) else "" if read is None else str(read)
    names = {v.lower().replace(" block", ""): k for k, v in getattr(cfg, "encoded_objects", {}).items()}
    return ["(" + " ".join(names.get(w, w) for w in m.group(1).lower().split()) + ")" for m in _ACTION.finditer(text)]


def plan_why(
    answer: str, stored: object, ours_read: object, stored_right: bool | None, label: bool, cfg: Any = None
) -> str:
    """Why PlanBench's label and our verdict part on a plan `answer`: `stored` is the plan PlanBench kept for it
    (`extracted_llm_plan`), `ours_read` the plan we read, `stored_right` our validator's verdict on `stored`
    (None: not judged), `cfg` the domain's English templates (`plan_steps`). The classes are the module's."""
    theirs, ours = plan_steps(stored, cfg), plan_steps(ours_read, cfg)
    lower = answer.lower()
    if not label and not theirs and "no plan" in lower:
        return NO_PLAN
    if stored is None or stored_right is None:
        return NOT_STORED
    if stored_right != label:
        return CONTRADICTS
    half = len(theirs) // 2
    if theirs and len(theirs) % 2 == 0 and theirs[:half] == theirs[half:]:
        return DOUBLED
    if lower.count("[plan]") > 1:
        return BLOCKS
    if _past_end(answer):
        return PAST_END
    return READ_OTHERWISE if theirs != ours else OTHER


def _past_end(answer: str) -> bool:
    lower = answer.lower()
    return "[plan end]" in lower and bool(lower.split("[plan end]", 1)[1].strip())


def _words(read: object) -> str:
    """Facts or plan steps as one line ("clear_b, ontable_c" / "(pick-up b) (stack b c)")."""
    if isinstance(read, str):
        return " ".join(line.strip() for line in read.splitlines() if line.strip())
    if isinstance(read, list | tuple):
        return ", ".join(map(str, read))
    return "" if read is None else str(read)
