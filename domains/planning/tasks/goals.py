"""Goal reformulation (t8): the same problem twice, its goal written another way the second time.

- t8_1 goal shuffling: the goal's facts in a random order;
- t8_2 full to partial: the example states the full state the plan reaches, the problem only its goal;
- t8_3 partial to full: the other way round.

Answers are checked against the problem's own goal, as PlanBench's evaluator does (for t8_3 the stated full
state includes it, so every plan reaching the full state passes).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from critiquebench.domains.contract import Instance, Verdict
from critiquebench.domains.planning.strips import Task
from critiquebench.domains.planning.tasks.base import (
    Params,
    PlanTask,
    between,
    fill_template,
    ordered_goal,
    plan_block,
    plan_verdict,
    simulate,
    statements,
)
from critiquebench.domains.planning.tasks.examples import plan_for, recorded_plans

if TYPE_CHECKING:
    from critiquebench.domains.planning.tasks.domain import TaskDomain


class _Goals(PlanTask):
    def recover(self, dom: TaskDomain, inst: Instance, record: Mapping[str, Any]) -> Params:
        parts = statements(str(record.get("query", "")))
        return recorded_plans(dom, {}, [inst.id], [between(parts[0], "[PLAN]", "[PLAN END]")])

    def goals(self, dom: TaskDomain, inst: Instance, params: Params) -> tuple[str, str]:
        """The goal text of the example and of the problem."""
        raise NotImplementedError

    def prompt(self, dom: TaskDomain, inst: Instance, params: Params) -> str:
        cfg, task = dom.base.cfg, dom.base.task(inst)
        shown, asked = self.goals(dom, inst, params)
        init = cfg.prompt_facts(task.init)
        texts = dom.base.texts
        plan = plan_block(cfg, plan_for(dom, params, inst.id), texts)
        example = fill_template(cfg, init, shown, plan, texts)
        return cfg.domain_intro + example + fill_template(cfg, init, asked, "", texts)

    def evaluate(self, dom: TaskDomain, inst: Instance, params: Params, text: str) -> Verdict:
        return plan_verdict(dom, inst, text)

    @staticmethod
    def full(dom: TaskDomain, inst: Instance, params: Params) -> str:
        task: Task = dom.base.task(inst)
        return dom.base.cfg.state_facts(simulate(task, plan_for(dom, params, inst.id)))


class GoalShuffling(_Goals):
    name = "t8_1"
    title = "Goal shuffling"

    def choose(self, dom: TaskDomain, inst: Instance, rng: random.Random) -> Params:
        order = sorted(" ".join(f) for f in dom.base.task(inst).goal)
        rng.shuffle(order)
        return {"goal_order": order}

    def recover(self, dom: TaskDomain, inst: Instance, record: Mapping[str, Any]) -> Params:
        params = super().recover(dom, inst, record)
        last = statements(str(record.get("query", "")))[-1]
        facts = dom.index(inst.id).fact_list(between(last, "My goal is to have that ", ".\n\nMy plan is"))
        params["goal_order"] = [" ".join(f) for f in facts]
        return params

    def goals(self, dom: TaskDomain, inst: Instance, params: Params) -> tuple[str, str]:
        cfg = dom.base.cfg
        order = [tuple(s.split()) for s in params["goal_order"]]
        return cfg.prompt_facts(dom.base.task(inst).goal), ordered_goal(cfg, order)


class FullToPartial(_Goals):
    name = "t8_2"
    title = "Full to partial goal"

    def goals(self, dom: TaskDomain, inst: Instance, params: Params) -> tuple[str, str]:
        return self.full(dom, inst, params), dom.base.cfg.prompt_facts(dom.base.task(inst).goal)


class PartialToFull(_Goals):
    name = "t8_3"
    title = "Partial to full goal"

    def goals(self, dom: TaskDomain, inst: Instance, params: Params) -> tuple[str, str]:
        return dom.base.cfg.prompt_facts(dom.base.task(inst).goal), self.full(dom, inst, params)
