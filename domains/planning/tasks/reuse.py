"""Plan reuse (t4): the problem with its whole plan, then the same start with the state a prefix of that
plan reaches as the goal; the model should reuse the prefix.

As PlanBench's evaluator does, an answer is checked against the new goal "facts the prefix made true"
(the resulting state minus the initial state), although the prompt states the whole resulting state.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from critiquebench.domains.contract import Instance, Verdict
from critiquebench.domains.planning.strips import PlanningError
from critiquebench.domains.planning.tasks.base import (
    Params,
    PlanTask,
    between,
    facts,
    plan_block,
    plan_verdict,
    simulate,
    statements,
    with_state,
)
from critiquebench.domains.planning.tasks.examples import plan_for, recorded_plans

if TYPE_CHECKING:
    from critiquebench.domains.planning.tasks.domain import TaskDomain


def random_prefix(plan_length: int, rng: random.Random) -> int:
    """PlanBench's random plan prefix: 1 .. len-1 steps (1 for a one-step plan)."""
    return rng.choice(range(1, plan_length)) if plan_length > 1 else 1


def prefix_matching(cfg: Any, task: Any, plan: list[Any], text: str) -> int:
    """The prefix length whose resulting state PlanBench wrote as `text`."""
    for k in range(1, max(len(plan), 1) + 1):
        if cfg.state_facts(simulate(task, plan[:k])) == text:
            return k
    raise PlanningError(f"problem {task.name}: no prefix of its plan reaches the state {text[:80]!r}...")


class Reuse(PlanTask):
    name = "t4"
    title = "Plan reuse"

    def choose(self, dom: TaskDomain, inst: Instance, rng: random.Random) -> Params:
        return {"prefix": random_prefix(len(dom.plan(inst.id)), rng)}

    def recover(self, dom: TaskDomain, inst: Instance, record: Mapping[str, Any]) -> Params:
        parts = statements(str(record.get("query", "")))
        params: Params = recorded_plans(dom, {}, [inst.id], [between(parts[0], "[PLAN]", "[PLAN END]")])
        goal = between(parts[-1], "My goal is to have that ", ".\nMy plan is as follows")
        plan = plan_for(dom, params, inst.id)
        params["prefix"] = prefix_matching(dom.base.cfg, dom.base.task(inst), plan, goal)
        return params

    def prompt(self, dom: TaskDomain, inst: Instance, params: Params) -> str:
        cfg, texts, task = dom.base.cfg, dom.base.texts, dom.base.task(inst)
        plan = plan_for(dom, params, inst.id)
        reached = simulate(task, plan[: params["prefix"]])
        shown = texts.render("task.t4.example", **facts(cfg, task), plan=plan_block(cfg, plan, texts))
        asked = texts.render("task.t4.query", init=facts(cfg, task)["init"], goal=cfg.state_facts(reached))
        return cfg.domain_intro + shown + asked

    def evaluate(self, dom: TaskDomain, inst: Instance, params: Params, text: str) -> Verdict:
        task = dom.base.task(inst)
        reached = simulate(task, plan_for(dom, params, inst.id)[: params["prefix"]])
        return plan_verdict(dom, inst, text, with_state(task, goal=reached - task.init))
