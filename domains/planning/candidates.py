"""Plans of known kinds for verification-only studies, after PlanBench's plan-verification examples.

- ``correct``: the built-in planner's plan.
- ``inexecutable``: PlanBench's recipe: drop one inner step of a correct plan and shuffle the rest (retried
  until some step really cannot execute).
- ``non_goal_reaching``: an executable strict prefix of a correct plan that misses the goal.
- ``random``: uniformly random ground actions, as many as the correct plan has.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from critiquebench.domains.planning.strips import GroundAction, PlanningError, Task
from critiquebench.domains.planning.validator import check_plan, first_error_index

Step = tuple[str, tuple[str, ...]]
CANDIDATE_KINDS: tuple[str, ...] = ("correct", "inexecutable", "non_goal_reaching", "random")
_TRIES = 50


def _steps(actions: Sequence[GroundAction]) -> list[Step]:
    return [(a.name, a.args) for a in actions]


def make_candidate(task: Task, plan: Sequence[GroundAction], kind: str, rng: random.Random) -> list[Step]:
    steps = _steps(plan)
    if kind == "correct":
        return steps
    if kind == "inexecutable":
        return _inexecutable(task, steps, rng)
    if kind == "non_goal_reaching":
        return _non_goal_reaching(task, steps, rng)
    if kind == "random":
        # Actions naming one object twice, like (stack a a), have no English reading; leave them out.
        actions = [a for a in _sorted_actions(task) if len(set(a.args)) == len(a.args)]
        return [(a.name, a.args) for a in (rng.choice(actions) for _ in range(max(1, len(steps))))]
    raise PlanningError(f"unknown candidate kind {kind!r}; known: {', '.join(CANDIDATE_KINDS)}")


def _inexecutable(task: Task, steps: list[Step], rng: random.Random) -> list[Step]:
    for _ in range(_TRIES):
        drop = rng.randrange(1, len(steps) - 1) if len(steps) > 2 else min(1, len(steps) - 1)
        candidate = steps[:drop] + steps[drop + 1 :]
        rng.shuffle(candidate)
        if candidate and first_error_index(task, candidate) is not None:
            return candidate
    # Tiny plans can stay executable after shuffling: lead with an action that cannot run initially.
    blocked = [a for a in _sorted_actions(task) if not a.applicable(task.init)]
    if not blocked:
        raise PlanningError(f"problem {task.name}: every action is executable initially")
    lead = rng.choice(blocked)
    return [(lead.name, lead.args), *steps]


def _non_goal_reaching(task: Task, steps: list[Step], rng: random.Random) -> list[Step]:
    lengths = list(range(1, len(steps)))
    rng.shuffle(lengths)
    for n in lengths:
        prefix = steps[:n]
        if not check_plan(task, prefix).valid:
            return prefix
    # A one-step plan has no non-empty strict prefix: take one executable action that misses the goal.
    options = [
        a for a in _sorted_actions(task) if a.applicable(task.init) and not task.goal_reached(a.apply(task.init))
    ]
    if not options:
        raise PlanningError(f"problem {task.name}: no executable plan that misses the goal")
    pick = rng.choice(options)
    return [(pick.name, pick.args)]


def _sorted_actions(task: Task) -> list[GroundAction]:
    return sorted(task.ground_all(), key=lambda a: (a.name, a.args))
