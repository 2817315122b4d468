"""Plan verification (t3): three verified examples (one valid, one inexecutable, one missing its goal, in a
random order, on random other problems), then a plan to verify.

The shown verdicts are our validator's, in PlanBench's words (VAL's first failure). The model's answer is
judged at PlanBench's three levels: binary (valid or not), type (also the kind of failure: unmet goal or unmet
precondition) and explanation (also a fact of the failure, and for preconditions the failing action).
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
    Step,
    between,
    facts,
    pddl,
    plan_block,
    recorded_intro,
    statements,
    step_of,
)
from critiquebench.domains.planning.tasks.states import StateReader
from critiquebench.domains.planning.validator import check_plan, error_sentences, render

if TYPE_CHECKING:
    from critiquebench.domains.planning.tasks.domain import TaskDomain

KINDS = (-1, 0, 1)  # PlanBench's plan kinds: inexecutable, goal not reached, valid


def corrupt(plan: list[Step], kind: int, rng: random.Random) -> list[Step]:
    """PlanBench's example plans: -1 drops a middle step and shuffles, 0 drops the last step, 1 is valid."""
    if kind == -1:
        cut = rng.choice(range(1, len(plan) - 1)) if len(plan) > 2 else 1
        plan = plan[:cut] + plan[cut + 1 :]
        rng.shuffle(plan)
        return plan
    return plan[:-1] if kind == 0 else list(plan)


class Verification(PlanTask):
    name = "t3"
    title = "Plan verification"

    def choose(self, dom: TaskDomain, inst: Instance, rng: random.Random) -> Params:
        others = [i for i in dom.ids() if i != inst.id]
        kinds = list(KINDS)
        rng.shuffle(kinds)
        shown = [(i, k) for i, k in zip(rng.choices(others, k=3), kinds, strict=True)]
        shown.append((inst.id, rng.choice(KINDS)))
        return {"plans": [[i, [pddl(s) for s in corrupt(dom.plan(i), k, rng)]] for i, k in shown]}

    def recover(self, dom: TaskDomain, inst: Instance, record: Mapping[str, Any]) -> Params:
        parts = statements(str(record.get("query", "")))
        if len(parts) < 1:
            raise PlanningError(f"t3 record {inst.id}: no [STATEMENT] in its query")
        plans = []
        for i, part in enumerate(parts):
            init = between(part, "As initial conditions I have that, ", ".\nMy goal is to have that ")
            goal = between(part, "My goal is to have that ", ". \nMy plan is as follows")
            ident = inst.id if i == len(parts) - 1 else dom.problem_stated(init, goal)
            if ident is None:
                raise PlanningError(f"t3 record {inst.id}: example {i + 1} is none of the folder's problems")
            steps = dom.index(ident).plan(between(part, "[PLAN]", "[PLAN END]"))
            if steps is None:
                raise PlanningError(f"t3 record {inst.id}: a plan line of example {i + 1} is not an action")
            plans.append([ident, [pddl(s) for s in steps]])
        return {"plans": plans, **recorded_intro(dom.base.cfg, str(record.get("query", "")))}

    def prompt(self, dom: TaskDomain, inst: Instance, params: Params) -> str:
        cfg, texts = dom.base.cfg, dom.base.texts
        text = cfg.intros.get(str(params.get("intro"))) or cfg.domain_intro
        shown = params["plans"]
        for n, (ident, lines) in enumerate(shown):
            task = dom.problem(ident).task if ident != inst.id else dom.base.task(inst)
            steps = [step_of(s) for s in lines]
            fields = dict(facts(cfg, task), plan=plan_block(cfg, steps, texts))
            if n < len(shown) - 1:
                text += texts.render("task.t3.example", **fields, verdict=message(dom, task, steps))
            else:
                text += texts.render("task.t3.query", **fields)
        return text

    def evaluate(self, dom: TaskDomain, inst: Instance, params: Params, text: str) -> Verdict:
        task = dom.base.task(inst)
        steps = [step_of(s) for s in params["plans"][-1][1]]
        truth = failure(task, steps)
        said = read_answer(dom, inst, text)
        binary = said["valid"] is not None and said["valid"] == truth["valid"]
        kind = expl = binary
        if binary and not truth["valid"]:
            kind = said["kind"] == truth["kind"]
            expl = kind and bool(set(map(tuple, said["facts"])) & set(map(tuple, truth["facts"])))
            if kind and truth["kind"] == "unmet_precondition":
                expl = expl and said.get("action") == truth.get("action")
        answer = {"said": said, "truth": truth, "binary": binary, "type": kind, "explanation": expl}
        wrong = dom.base.texts.render("task.t3.wrong-verdict", truth="valid" if truth["valid"] else "invalid")
        errors = () if binary else (wrong,)
        return Verdict("valid" if binary else "invalid", errors, answer)


def message(dom: TaskDomain, task: Any, steps: list[Step]) -> str:
    """The verdict PlanBench shows after an example: "The above plan is valid.\\n" or VAL's first failure."""
    check = check_plan(task, steps)
    if check.valid:
        return dom.base.texts.text("feedback.valid") + "\n"
    return render(error_sentences(dom.base.cfg, task, check, dom.base.texts), "first", False, dom.base.texts)


def failure(task: Any, steps: list[Step]) -> dict[str, Any]:
    """The truth: valid, or the first failure VAL reports (the first inexecutable step, else unmet goals)."""
    check = check_plan(task, steps)
    if check.valid:
        return {"valid": True, "kind": None, "facts": []}
    if check.step_errors:
        first = check.step_errors[0]
        return {"valid": False, "kind": "unmet_precondition", "action": pddl(first.action),
                "facts": [list(f) for f in first.unmet]}  # fmt: skip
    return {"valid": False, "kind": "unmet_goal", "facts": [list(f) for f in check.unmet_goals]}


def read_answer(dom: TaskDomain, inst: Instance, text: str) -> dict[str, Any]:
    """The model's verdict, failure kind, failing action and facts, read line by line as PlanBench does:
    up to the first "plan is valid" or the next [STATEMENT]."""
    reader = StateReader(dom.base.cfg, dom.base.task(inst))
    said: dict[str, Any] = {"valid": None, "kind": None, "facts": []}
    kinds: set[str] = set()
    goal_facts: list[list[str]] = []
    pre_facts: list[list[str]] | None = None
    lines = [ln for ln in text.split("\n") if ln.strip()]
    for i, line in enumerate(lines):
        low = line.lower()
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if "[statement]" in low:
            break
        if "plan is valid" in low:
            if said["valid"] is None:
                said["valid"] = True
            break
        if "plan is invalid" in low:
            said["valid"] = False
        if "unmet goal" in low and "unmet precondition" in low:
            break
        if "unmet goal" in low:
            kinds.add("unmet_goal")
            goal_facts = [list(f) for f in reader.read(nxt)]
        elif "unmet precondition" in low:
            if "action" in low:
                kinds.add("unmet_precondition")
                parsed = dom.base.read(inst, nxt)
                said["action"] = pddl(parsed.steps[0]) if parsed and parsed.steps else None
            elif "unmet_precondition" in kinds and pre_facts is None:
                # The first listed failure counts, as in PlanBench's reader; its facts follow on the next line,
                # or on this one after "Unmet precondition:".
                inline = line.split(":", 1)[1] if ":" in line else ""
                pre_facts = [list(f) for f in reader.read(inline if inline.strip() else nxt)]
    # Naming both kinds of failure is the wrong type (PlanBench compares the sets of kinds named).
    said["kind"] = next(iter(kinds)) if len(kinds) == 1 else ("both" if kinds else None)
    said["facts"] = (goal_facts if said["kind"] == "unmet_goal" else pre_facts) or []
    return said
