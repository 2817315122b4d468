"""Plan execution (t7): a solved example (start, action sequence, resulting state), then a start and an
action sequence (a random prefix of an optimal plan) whose resulting state the model must give.

Correct when the facts read from the answer are exactly the simulated state (PlanBench compares the two
sets of facts). A replay of a recorded file reads the answer as PlanBench's code read it (the task domain's
`state_reading`, `planbench_reading.STATE_READERS`), so its verdict is PlanBench's label; where our own reading
(`states.StateReader`) judges otherwise, its verdict is the last error sentence (`task.t7.our-reading`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from critiquebench.domains.contract import Instance, Verdict
from critiquebench.domains.planning.planbench_reading import planbench_state
from critiquebench.domains.planning.strips import Fact
from critiquebench.domains.planning.tasks.base import (
    Params,
    PlanTask,
    Step,
    between,
    facts,
    pddl,
    plan_block,
    simulate,
    statements,
)
from critiquebench.domains.planning.tasks.examples import example_ids, plan_for
from critiquebench.domains.planning.tasks.reuse import random_prefix
from critiquebench.domains.planning.tasks.states import StateReader

if TYPE_CHECKING:
    from critiquebench.domains.planning.tasks.domain import TaskDomain


class Execution(PlanTask):
    name = "t7"
    title = "Plan execution"

    def choose(self, dom: TaskDomain, inst: Instance, rng: random.Random) -> Params:
        ids = [*example_ids(dom, inst, None), inst.id]
        return {"examples": ids[:-1], "prefixes": [random_prefix(len(dom.plan(i)), rng) for i in ids]}

    def recover(self, dom: TaskDomain, inst: Instance, record: Mapping[str, Any]) -> Params:
        params: Params = {"examples": example_ids(dom, inst, record)}
        ids = [*params["examples"], inst.id]
        blocks = [between(s, "[ACTION SEQUENCE]", "[ACTION SEQUENCE END]") for s in statements(str(record["query"]))]
        prefixes = []
        for ident, block in zip(ids, blocks, strict=False):
            steps = dom.index(ident).plan(block) or []
            ours = dom.plan(ident)
            if steps != ours[: len(steps)]:
                # PlanBench's planner chose another optimal plan: keep its prefix as the plan shown.
                params.setdefault("plans", {})[ident] = [pddl(s) for s in steps]
            prefixes.append(len(steps))
        params["prefixes"] = prefixes
        return params

    def prompt(self, dom: TaskDomain, inst: Instance, params: Params) -> str:
        cfg, texts = dom.base.cfg, dom.base.texts
        text = cfg.domain_intro
        ids = [*params["examples"], inst.id]
        for n, (ident, k) in enumerate(zip(ids, params["prefixes"], strict=True)):
            task = dom.problem(ident).task if ident != inst.id else dom.base.task(inst)
            steps = plan_for(dom, params, ident)[:k]
            fields = dict(facts(cfg, task), plan=plan_block(cfg, steps, texts, "task.t7.action-sequence"))
            if n < len(ids) - 1:
                text += texts.render("task.t7.example", **fields, state=cfg.state_facts(simulate(task, steps)))
            else:
                text += texts.render("task.t7.query", **fields)
        return text

    def evaluate(self, dom: TaskDomain, inst: Instance, params: Params, text: str) -> Verdict:
        task = dom.base.task(inst)
        steps: list[Step] = plan_for(dom, params, inst.id)[: params["prefixes"][-1]]
        truth = simulate(task, steps)
        ours = self._ours(dom, truth, StateReader(dom.base.cfg, task).read(text))
        if dom.state_reading is None:
            return ours
        theirs = self._planbench(dom, task, truth, text)
        if theirs.valid == ours.valid:
            return theirs
        texts = dom.base.texts
        why = "" if ours.valid else " " + " ".join(ours.errors)
        note = texts.render("task.t7.our-reading", verdict="right" if ours.valid else "wrong", why=why)
        return Verdict(theirs.status, (*theirs.errors, note), theirs.answer)

    @staticmethod
    def _ours(dom: TaskDomain, truth: frozenset[Fact] | set[Fact], said: list[Fact]) -> Verdict:
        answer = sorted("_".join(f) for f in said)
        if set(said) == truth:
            return Verdict("valid", (), answer)
        missing, extra = sorted(truth - set(said)), sorted(set(said) - truth)
        errors, cfg, texts = [], dom.base.cfg, dom.base.texts
        if missing:
            errors.append(texts.render("task.t7.missing-facts", facts=cfg.state_facts(missing)))
        if extra:
            errors.append(texts.render("task.t7.extra-facts", facts=cfg.state_facts(extra)))
        return Verdict("invalid", tuple(errors), answer)

    @staticmethod
    def _planbench(dom: TaskDomain, task: Any, truth: frozenset[Fact] | set[Fact], text: str) -> Verdict:
        """PlanBench's label: `sorted(ground_state) == sorted(llm_state)` (`response_evaluation.py:158-161`)."""
        commas = dom.state_reading == "planbench-state-commas"
        read = planbench_state(text, dom.base.cfg, task.domain.predicates, commas=commas)
        names = sorted("_".join(f) for f in truth)
        if sorted(read) == names:
            return Verdict("valid", (), sorted(read))
        cfg, texts = dom.base.cfg, dom.base.texts
        said = {tuple(n.split("_")) for n in read}
        missing = sorted(truth - said)
        extra = sorted(f for f in said if f not in truth)
        twice = sorted({tuple(n.split("_")) for n in read if read.count(n) > 1})
        errors = []
        if missing:
            errors.append(texts.render("task.t7.missing-facts", facts=cfg.state_facts(missing)))
        if extra:
            errors.append(texts.render("task.t7.extra-facts", facts=cfg.state_facts(extra)))
        if twice:
            errors.append(texts.render("task.t7.repeated-facts", facts=cfg.state_facts(twice)))
        return Verdict("invalid", tuple(errors), sorted(read))
