"""The intrinsic self-critique paper's critic (Bohnet et al., critic prompts A.1 / A.2): prompt, verdict, examples.

Every text of this module is in domains/prompts/intrinsic_self_critique.toml.

Sources. The paper's appendix is not readable in a source we have (the stored arXiv page,
arxiv.org/html/2512.24103v1, yields only its opening). The critic prompt (`critic`) is the zero-shot
prompt A.2 as two public readings of the paper quote it: a reimplementation's critic prompt
(az9713/llm-self-critique, backend/src/critique/orchestrator.py) and a summary written from the paper's PDF;
both give step 1 as "... from the domain definition for the specific action." (an earlier copy in the same
reimplementation's docs omits the last four words). The verdict phrases "the plan is correct", "the plan is
wrong", "goal not reached" are the paper's. The few-shot prompt A.1 places its exemplars
(`{self_evaluations_exemplars}`) after the domain definition and before the instructions, as the
reimplementation's design document gives A.1's structure.

Not from the paper (marked ``not from the paper`` below): each A.1 exemplar is laid out with A.2's own
labels ("The problem to solve:", "The suggested solution:") followed by its verification trace, and the traces
are generated from our validator's simulation of each example plan, in our own wording ("Step N: ...",
"Preconditions: ...", "All met. Resulting state: ..."); the paper's exemplar traces are not available.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from critiquebench.domains.base import LLMVerdict
from critiquebench.domains.planning.prompts import pddl_plan_text, strip_comments
from critiquebench.domains.planning.strips import Fact, Task
from critiquebench.domains.prompts import DEFAULT, Prompts, PromptSet

Step = tuple[str, tuple[str, ...]]

SET = "intrinsic_self_critique"  # the texts: domains/prompts/intrinsic_self_critique.toml
_BUILTIN = DEFAULT[SET]
CORRECT, WRONG, NOT_REACHED = (_BUILTIN.text(f"verdict.{k}") for k in ("correct", "wrong", "not-reached"))


def _phrase(text: str) -> str:
    return r"\s+".join(map(re.escape, text.split()))


# The last verdict phrase in a reply decides; words may be split by any whitespace (critics wrap lines).
_VERDICT = re.compile(
    rf"{_phrase(CORRECT)}|(?P<wrong>{_phrase(WRONG)})|(?P<not_reached>{_phrase(NOT_REACHED)})", re.IGNORECASE
)


def critic_prompt(
    domain_pddl: str,
    problem_pddl: str,
    plan_text: str,
    examples: Sequence[tuple[str, str, str]] = (),
    domain_definition: bool = True,
    prompts: Prompts = DEFAULT,
) -> str:
    """The critic prompt for a plan; `examples` are (problem, plan, verification trace) for the few-shot A.1;
    `domain_definition=False` drops the domain (the paper's Table 4 ablation)."""
    texts = prompts[SET]
    block = texts.render("critic-domain", domain=strip_comments(domain_pddl)) if domain_definition else ""
    shots = "".join(
        texts.render("critic-example", problem=p.strip(), plan=pl.strip(), trace=t.strip()) for p, pl, t in examples
    )
    return texts.render(
        "critic", domain_block=block, examples=shots, problem=problem_pddl.strip(), plan=plan_text.strip()
    )


def parse_critic_verdict(text: str) -> LLMVerdict:
    """The last of the three verdict phrases wins (critics reason first and conclude last); none is "wrong"
    with `parsed=False`, so a silent critic never passes a plan."""
    critique = (text or "").strip()
    found = list(_VERDICT.finditer(critique))
    if not found:
        return LLMVerdict(says_valid=False, critique=critique, parsed=False)
    last = found[-1]
    return LLMVerdict(says_valid=last.group("wrong") is None and last.group("not_reached") is None, critique=critique)


@dataclass(frozen=True)
class Example:
    problem: str
    plan: str
    trace: str


def verification_trace(task: Task, steps: Sequence[Step], texts: PromptSet | None = None) -> str:
    """A step-by-step verification of `steps` in the critic's requested form, from our simulation (not from
    the paper: its wording is ours, `trace.*` in the prompt set)."""
    texts = texts or _BUILTIN
    state = task.init
    lines = []
    for i, (name, args) in enumerate(steps, start=1):
        text = pddl_plan_text([(name, args)])
        action = task.ground(name, args)
        if action is None:
            lines.append(texts.render("trace.not-an-action", step=i, action=text))
            return "\n".join([*lines, texts.text("verdict.wrong")])
        pre = sorted(action.pre) + [("not", *f) for f in sorted(action.neg_pre)]
        lines.append(texts.render("trace.step", step=i, action=text, facts=_facts(pre, texts)))
        missing, present = action.unmet(state)
        if missing or present or not action.applicable(state):
            unmet = sorted(missing) + [("not", *f) for f in sorted(present)]
            lines.append(texts.render("trace.unmet", facts=_facts(unmet, texts)))
            return "\n".join([*lines, texts.text("verdict.wrong")])
        state = action.apply(state)
        lines.append(texts.render("trace.applied", facts=_facts(sorted(state), texts)))
    unmet_goals = sorted(task.goal - state)
    if unmet_goals or task.neg_goal & state:
        lines.append(texts.render("trace.goal-unmet", facts=_facts(unmet_goals + sorted(task.neg_goal & state), texts)))
        return "\n".join([*lines, texts.text("verdict.not-reached")])
    lines.append(texts.text("trace.goal-holds"))
    return "\n".join([*lines, texts.text("verdict.correct")])


def _facts(facts: Sequence[Fact], texts: PromptSet) -> str:
    return " ".join("(" + " ".join(f) + ")" for f in facts) or texts.text("trace.no-facts")


def example_plans(steps: Sequence[Step], rng: random.Random) -> list[tuple[str, list[Step]]]:
    """A correct plan and its broken variants (a step dropped, the last step cut), for critic examples."""
    out: list[tuple[str, list[Step]]] = [("correct", list(steps))]
    if len(steps) > 2:
        i = rng.randrange(1, len(steps) - 1)
        out.append(("dropped", [*steps[:i], *steps[i + 1 :]]))
    if steps:
        out.append(("cut", list(steps[:-1])))
    return out


def make_examples(solved: Sequence[tuple[str, Task, Sequence[Step]]], shots: int, seed: str,
                  texts: PromptSet | None = None) -> list[Example]:  # fmt: skip
    """`shots` critic examples from solved example problems (problem text, task, a valid plan): correct and
    broken plans in turn, each with its verification trace."""
    rng = random.Random(seed)
    pool: list[Example] = []
    for problem, task, steps in solved:
        for _kind, plan in example_plans(steps, rng):
            pool.append(Example(problem, pddl_plan_text(plan), verification_trace(task, plan, texts)))
    return pool[:shots]  # correct, dropped, cut of one problem, then the next: every few shots mix verdicts
