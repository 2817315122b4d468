"""Plan generation (t1) and plan generalization (t5): one solved example, then the problem to plan for.

t1 uses the previous instance as its example (PlanBench's default); t5 is the same prompt on the larger
problems of the domain's `generated/` folder. PlanBench's published GPT-4 t1 run used the earlier Blocksworld
intro and a newline after the final ``[PLAN]``: `params["legacy"]` reproduces it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from critiquebench.domains.contract import Instance, Verdict
from critiquebench.domains.planning.tasks.base import (
    Params,
    PlanTask,
    between,
    fill_template,
    plan_block,
    plan_verdict,
    statements,
)
from critiquebench.domains.planning.tasks.examples import example_ids, plan_for, recorded_plans

if TYPE_CHECKING:
    from critiquebench.domains.planning.tasks.domain import TaskDomain


class Generation(PlanTask):
    name = "t1"
    title = "Plan generation"

    def choose(self, dom: TaskDomain, inst: Instance, rng: random.Random) -> Params:
        return {"examples": example_ids(dom, inst, None)}

    def recover(self, dom: TaskDomain, inst: Instance, record: Mapping[str, Any]) -> Params:
        params = {"examples": example_ids(dom, inst, record)}
        query = str(record.get("query", ""))
        cfg = dom.base.cfg
        if cfg.domain_intro_legacy and not query.startswith(cfg.domain_intro):
            params["legacy"] = query.startswith(cfg.domain_intro_legacy)
        blocks = [between(s, "[PLAN]", "[PLAN END]") for s in statements(query)[:-1]]
        return recorded_plans(dom, params, params["examples"], blocks)

    def prompt(self, dom: TaskDomain, inst: Instance, params: Params) -> str:
        cfg, texts = dom.base.cfg, dom.base.texts
        legacy = bool(params.get("legacy"))
        intro = (cfg.domain_intro_legacy or cfg.domain_intro) if legacy else cfg.domain_intro
        text = intro
        for ident in params["examples"]:
            task = dom.problem(ident).task
            shown = plan_block(cfg, plan_for(dom, params, ident), texts)
            text += fill_template(cfg, cfg.prompt_facts(task.init), cfg.prompt_facts(task.stated_goal), shown, texts)
        task = dom.base.task(inst)
        tail = "\n" if legacy else ""
        return text + fill_template(cfg, cfg.prompt_facts(task.init), cfg.prompt_facts(task.stated_goal), tail, texts)

    def evaluate(self, dom: TaskDomain, inst: Instance, params: Params, text: str) -> Verdict:
        return plan_verdict(dom, inst, text)


class Generalization(Generation):
    name = "t5"
    title = "Plan generalization"
    folder = "generated"
