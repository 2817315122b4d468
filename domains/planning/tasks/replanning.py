"""Replanning (t6): a problem, its plan, an unexpected event after a random prefix of it (some facts become
true, some false), and the plan from the new state; the model replans for the problem asked.

The event is PlanBench's ("easier" replanning, its default): in Blocksworld and Mystery Blocksworld the held
block lands on a random clear block; in other domains (PlanBench's "arbitrary replanning") facts of the goal
regressed through a random part of the plan's remainder become true. The answer is checked from the new
state to the original goal, as PlanBench's evaluator does.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from critiquebench.domains.contract import Instance, Verdict
from critiquebench.domains.planning.planner import find_plan
from critiquebench.domains.planning.strips import Fact, PlanningError, Task
from critiquebench.domains.planning.tasks.base import (
    Params,
    PlanTask,
    Step,
    between,
    facts,
    pddl,
    plan_block,
    plan_verdict,
    simulate,
    statements,
    step_of,
    with_state,
)
from critiquebench.domains.planning.tasks.examples import example_ids, plan_for, recorded_plans

if TYPE_CHECKING:
    from critiquebench.domains.planning.tasks.domain import TaskDomain

# How a recorded query marks the example's plan from the new state (PlanBench's text, read back, not sent).
REPLANNED = "\nAfter re-planning from the new state, the plan is as follows:\n[PLAN]"
# (holding, clear, on, handempty) of the domains with PlanBench's "held block lands" event
_HAND_DOMAINS = (("holding", "clear", "on", "handempty"), ("pain", "province", "craves", "harmony"))
_STEP = re.compile(r'After executing the action "(.*)" at step (\d+) in the plan')


def _facts(items: list[str]) -> set[Fact]:
    return {tuple(i.split()) for i in items}


def _names(facts: set[Fact]) -> list[str]:
    return sorted(" ".join(f) for f in facts)


def perturb(task: Task, plan: list[Step], rng: random.Random) -> dict[str, Any]:
    """A prefix length and the event after it: {"prefix", "add", "remove"} (facts as "pred_arg" strings)."""
    preds = set(task.domain.predicates)
    hand = next((names for names in _HAND_DOMAINS if set(names) <= preds), None)
    if hand is not None and len(plan) > 1:
        holding, clear, on, empty = hand
        for _ in range(1000):
            k = rng.choice(range(1, len(plan)))
            state = simulate(task, plan[:k])
            held = [f for f in state if f[0] == holding]
            if held:
                block = held[0][1]
                target = rng.choice(sorted(f[1] for f in state if f[0] == clear))
                add = {(on, block, target), (empty,), (clear, block)}
                remove = {held[0], (clear, target)}
                return {"prefix": k, "add": _names(add), "remove": _names(remove)}
    k = rng.choice(range(1, len(plan))) if len(plan) > 1 else 1
    regressed = set(task.goal)
    suffix = plan[k:][::-1]
    for name, args in suffix[: rng.choice(range(len(suffix))) if suffix else 0]:
        action = task.ground(name, args)
        if action is not None:
            regressed = (regressed - (action.add | action.delete)) | action.pre
    # Static facts (types such as "airplane a0") never change, so no event makes them true.
    static = task.domain.static_predicates
    regressed = {f for f in regressed if f[0] not in static}
    add = set(rng.choices(sorted(regressed), k=rng.choice(range(1, len(regressed) + 1)))) if regressed else set()
    return {"prefix": k, "add": _names(add), "remove": []}


def new_state(task: Task, plan: list[Step], event: Mapping[str, Any]) -> frozenset[Fact]:
    state = simulate(task, plan[: event["prefix"]])
    return frozenset((state | _facts(event["add"])) - _facts(event["remove"]))


class Replanning(PlanTask):
    name = "t6"
    title = "Replanning"

    def choose(self, dom: TaskDomain, inst: Instance, rng: random.Random) -> Params:
        ids = [*example_ids(dom, inst, None), inst.id]
        return {"examples": ids[:-1], "events": [perturb(self._task(dom, inst, i), dom.plan(i), rng) for i in ids]}

    def recover(self, dom: TaskDomain, inst: Instance, record: Mapping[str, Any]) -> Params:
        params: Params = {"examples": example_ids(dom, inst, record)}
        ids = [*params["examples"], inst.id]
        parts = statements(str(record.get("query", "")))
        recorded_plans(dom, params, ids, [between(p, "[PLAN]", "[PLAN END]") for p in parts])
        events = []
        for ident, part in zip(ids, parts, strict=False):
            index = dom.index(ident)
            found = _STEP.search(part)
            if found is None:
                raise PlanningError(f"t6 record {inst.id}: no unexpected event in a statement")
            add = index.fact_list(between(part, "unexpectedly became true: ", "\n"))
            remove = index.fact_list(between(part, "became unexpectedly false: ", "\n"))
            events.append({"prefix": int(found.group(2)), "add": _names(set(add)), "remove": _names(set(remove))})
            if ident != inst.id:
                steps = index.plan(between(part.split(REPLANNED, 1)[-1], "", "[PLAN END]"))
                task = self._task(dom, inst, ident)
                if steps is not None and steps != self._replan(dom, task, ident, params, events[-1]):
                    params.setdefault("replans", {})[ident] = [pddl(s) for s in steps]
        params["events"] = events
        return params

    @staticmethod
    def _task(dom: TaskDomain, inst: Instance, ident: str) -> Task:
        return dom.base.task(inst) if ident == inst.id else dom.problem(ident).task

    @staticmethod
    def _replan(dom: TaskDomain, task: Task, ident: str, params: Params, event: Mapping[str, Any]) -> list[Step]:
        given = (params.get("replans") or {}).get(ident)
        if given is not None:
            return [step_of(s) for s in given]
        start = new_state(task, plan_for(dom, params, ident), event)
        return [(a.name, a.args) for a in find_plan(with_state(task, init=start))]

    def prompt(self, dom: TaskDomain, inst: Instance, params: Params) -> str:
        cfg, texts = dom.base.cfg, dom.base.texts
        text = cfg.domain_intro
        ids = [*params["examples"], inst.id]
        for ident, event in zip(ids, params["events"], strict=True):
            task = self._task(dom, inst, ident)
            plan = plan_for(dom, params, ident)
            k = event["prefix"]
            text += texts.render("task.t6.statement", **facts(cfg, task), plan=plan_block(cfg, plan, texts))
            text += texts.render("task.t6.event", action=cfg.action_text(*plan[k - 1]), step=k,
                                 added=cfg.state_facts(_facts(event["add"])),
                                 removed=cfg.state_facts(_facts(event["remove"])))  # fmt: skip
            if ident != inst.id:
                replan = plan_block(cfg, self._replan(dom, task, ident, params, event), texts)
                text += texts.render("task.t6.replan-example", plan=replan)
            else:
                text += texts.render("task.t6.replan-query")
        return text

    def evaluate(self, dom: TaskDomain, inst: Instance, params: Params, text: str) -> Verdict:
        task = dom.base.task(inst)
        start = new_state(task, plan_for(dom, params, inst.id), params["events"][-1])
        return plan_verdict(dom, inst, text, with_state(task, init=start))
