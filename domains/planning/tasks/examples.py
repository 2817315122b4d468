"""Example instances and the plans a prompt shows: shared by the tasks that show solved examples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from critiquebench.domains.contract import Instance
from critiquebench.domains.planning.tasks.base import Params, Step, pddl, step_of

if TYPE_CHECKING:
    from critiquebench.domains.planning.tasks.domain import TaskDomain


def example_ids(dom: TaskDomain, inst: Instance, record: Mapping[str, Any] | None) -> list[str]:
    """The recorded example ids, else PlanBench's default: the previous instance (wrapping to the last)."""
    if record is not None:
        given = record.get("example_instance_ids", record.get("example_instance_id"))
        if isinstance(given, list) and given:
            return [str(i) for i in given]
        if isinstance(given, int | str) and str(given):
            return [str(given)]
    ids = dom.ids()
    pos = ids.index(inst.id) if inst.id in ids else 0
    return [ids[pos - 1]]


def plan_for(dom: TaskDomain, params: Params, ident: str) -> list[Step]:
    """The plan shown for problem `ident`: the recorded one when PlanBench's planner chose another optimal
    plan than ours (`params["plans"]`), else ours."""
    given = (params.get("plans") or {}).get(ident)
    return [step_of(s) for s in given] if given is not None else dom.plan(ident)


def recorded_plans(dom: TaskDomain, params: Params, ids: Sequence[str], blocks: Sequence[str]) -> Params:
    """Keep in `params` each shown plan (block text) that differs from PlanBench's optimal plan for its id, or
    every shown plan when the folder has none (optimal_plans.json): PlanBench's planner may pick another of
    the optimal plans than ours, and searching large problems (t5) only to compare would be slow."""
    for ident, block in zip(ids, blocks, strict=False):
        steps = dom.index(ident).plan(block)
        if steps is not None and (not dom.knows_plan(ident) or steps != dom.plan(ident)):
            params.setdefault("plans", {})[ident] = [pddl(s) for s in steps]
    return params
