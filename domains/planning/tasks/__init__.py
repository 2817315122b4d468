"""PlanBench's eight tasks, for any planning domain: a prompt builder, the task's random choices and an
evaluator per task (one module per task family), and the registry that names them.

    dom = task_domain("blocksworld", "t3")          # the Domain every scheme runs: name "blocksworld:t3"
    dom = task_domain("path/to/folder_domain", "t7", recorded="task_7_plan_execution.json")

| task | PlanBench name | module |
|---|---|---|
| t1 | plan generation | generation |
| t2 | cost-optimal planning | optimality |
| t3 | plan verification | verification |
| t4 | plan reuse | reuse |
| t5 | plan generalization | generation |
| t6 | replanning | replanning |
| t7 | plan execution (reasoning about the resulting state) | execution |
| t8_1, t8_2, t8_3 | goal reformulation: shuffling, full to partial, partial to full | goals |
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from critiquebench.domains.planning.strips import PlanningError
from critiquebench.domains.planning.tasks.base import PlanTask
from critiquebench.domains.planning.tasks.execution import Execution
from critiquebench.domains.planning.tasks.generation import Generalization, Generation
from critiquebench.domains.planning.tasks.goals import FullToPartial, GoalShuffling, PartialToFull
from critiquebench.domains.planning.tasks.optimality import Optimality
from critiquebench.domains.planning.tasks.replanning import Replanning
from critiquebench.domains.planning.tasks.reuse import Reuse
from critiquebench.domains.planning.tasks.verification import Verification

TASKS: dict[str, PlanTask] = {
    t.name: t
    for t in (
        Generation(),
        Optimality(),
        Verification(),
        Reuse(),
        Generalization(),
        Replanning(),
        Execution(),
        GoalShuffling(),
        FullToPartial(),
        PartialToFull(),
    )
}
# PlanBench's file and task names ("task_3_plan_verification", "t3") -> ours.
PLANBENCH_NAMES: dict[str, str] = {
    "task_1_plan_generation": "t1",
    "task_2_plan_optimality": "t2",
    "task_3_plan_verification": "t3",
    "task_4_plan_reuse": "t4",
    "task_5_plan_generalization": "t5",
    "task_6_replanning": "t6",
    "task_7_plan_execution": "t7",
    "task_8_1_goal_shuffling": "t8_1",
    "task_8_2_full_to_partial": "t8_2",
    "task_8_3_partial_to_full": "t8_3",
}

__all__ = ["PLANBENCH_NAMES", "TASKS", "PlanTask", "get_task", "task_domain", "task_of"]


def get_task(name: str) -> PlanTask:
    task = TASKS.get(task_of(name) or name)
    if task is None:
        raise PlanningError(f"unknown PlanBench task {name!r}; known: {', '.join(TASKS)}")
    return task


def task_of(name: str) -> str | None:
    """Our task name for a PlanBench task or file name ("task_7_plan_execution.json" -> "t7")."""
    stem = Path(str(name)).name.removesuffix(".json")
    if stem in TASKS:
        return stem
    if stem in PLANBENCH_NAMES:
        return PLANBENCH_NAMES[stem]
    return next((ours for theirs, ours in PLANBENCH_NAMES.items() if stem.startswith(theirs)), None)


def task_domain(name_or_folder: str | Path, task: str, **options: Any) -> Any:
    """The planning domain `name_or_folder` asked task `task` (options: recorded, instances, seed, state_reading
    (t7), and the planning domain's own options)."""
    from critiquebench.domains.planning import load_planning_domain
    from critiquebench.domains.planning.tasks.domain import TaskDomain

    own = {k: options.pop(k) for k in ("recorded", "instances", "seed", "state_reading") if k in options}
    return TaskDomain(load_planning_domain(name_or_folder, **options), get_task(task), **own)
