"""Cost-optimal planning (t2): the cost intro, a solved example with its total time, then the problem.

An answer is correct when its plan is valid and as short as an optimal plan (unit costs, as in PlanBench's
domains): the optimal cost is the length of PlanBench's optimal plan when the dataset ships one
(optimal_plans.json), else of our planner's breadth-first (optimal) plan.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from critiquebench.domains.contract import Instance, Verdict
from critiquebench.domains.planning.tasks.base import (
    Params,
    PlanTask,
    between,
    facts,
    plan_block,
    plan_verdict,
    statements,
)
from critiquebench.domains.planning.tasks.examples import example_ids, plan_for, recorded_plans

if TYPE_CHECKING:
    from critiquebench.domains.planning.tasks.domain import TaskDomain

_STATED = re.compile(r"\d+")


def stated_cost(text: str) -> int:
    """PlanBench's reading of the cost an answer states: the first number on or after the line that says
    'time to execute' (0 when there is none)."""
    lines = [ln.strip() for ln in text.split("\n")]
    start = next((i for i, ln in enumerate(lines) if "time to execute" in ln), None)
    if start is None:
        return 0
    for line in lines[start:]:
        numbers = [w for w in line.split() if w.isdigit()]
        if numbers:
            return int(numbers[0])
    return 0


class Optimality(PlanTask):
    name = "t2"
    title = "Optimal planning"

    def choose(self, dom: TaskDomain, inst: Instance, rng: random.Random) -> Params:
        return {"examples": example_ids(dom, inst, None)}

    def recover(self, dom: TaskDomain, inst: Instance, record: Mapping[str, Any]) -> Params:
        params: Params = {"examples": example_ids(dom, inst, record)}
        blocks = [between(s, "[PLAN]", "[PLAN END]") for s in statements(str(record.get("query", "")))[:-1]]
        return recorded_plans(dom, params, params["examples"], blocks)

    def prompt(self, dom: TaskDomain, inst: Instance, params: Params) -> str:
        cfg, texts = dom.base.cfg, dom.base.texts
        text = cfg.domain_intro_cost or cfg.domain_intro
        for ident in params["examples"]:
            plan, task = plan_for(dom, params, ident), dom.problem(ident).task
            cost = texts.render("task.t2.cost-many" if len(plan) > 1 else "task.t2.cost-one", cost=len(plan))
            text += texts.render("task.t2.example", **facts(cfg, task), plan=plan_block(cfg, plan, texts), cost=cost)
        return text + texts.render("task.t2.query", **facts(cfg, dom.base.task(inst)))

    def evaluate(self, dom: TaskDomain, inst: Instance, params: Params, text: str) -> Verdict:
        verdict = plan_verdict(dom, inst, text)
        if not verdict.valid:
            return verdict
        cost, optimal = len(verdict.answer), len(dom.plan(inst.id))
        answer = {"plan": verdict.answer, "cost": cost, "optimal_cost": optimal, "stated_cost": stated_cost(text)}
        if cost != optimal:
            sentence = dom.base.texts.render("task.t2.not-optimal", cost=cost, optimal=optimal)
            return Verdict("invalid", (sentence,), answer)
        return Verdict("valid", (), answer)
