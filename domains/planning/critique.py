"""The intrinsic self-critique paper's critic (Bohnet et al., critic prompts A.1-A.5): prompt, verdict, examples.

Every text of this module is in domains/prompts/intrinsic_self_critique.toml, each with the paper line it comes
from: A.2 (001:242) is the zero-shot critic; A.1 (001:241) adds "For instance, we verify the following steps."
and the exemplars after the domain definition; A.3 (001:243) drops the domain (`domain_definition=False`); A.4
(001:244) and A.5 (001:245), Table 4's last two ablations, drop the numbered instructions ("verify-each") and
"verify each action" too ("chain-of-thought"). The verdict phrases "the plan is correct", "the plan is wrong",
"goal not reached" are the paper's; how a reply is read (the last phrase wins; none is "wrong") is ours, as the
paper gives no parsing rule.

A.1's exemplars are, in the paper, the model's own verifications of training plans, bootstrapped from one
handcrafted example and kept where the verdict agreed with VAL (001:132). Ours are written by our validator in
the shape of the paper's verifications (D.1 001:433-599: "## plan evaluation:", "**step N: (act)**", the action
and its preconditions, the checks with where each fact comes from, the resulting state, the verdict): correct
plans and plans with a step dropped or cut, so exemplars of every verdict. How A.1 lays out one exemplar is not
shown: ours gives A.2's labels, then the verification.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from critiquebench.domains.contract import CRITIC_INSTRUCTIONS, LLMVerdict
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


# The critic's instructions: A.1-A.3's three numbered steps, or Table 4's two last ablations (A.4, A.5), which
# have no domain definition and no exemplars, or Table 6's self-verification templates of paper 000 (001:274):
# "formatted" (000's format-based JSON prompt) and "cot-formatted" (its chain-of-thought JSON prompt), read by
# their JSON's "valid" key, without exemplars.
INSTRUCTIONS = CRITIC_INSTRUCTIONS
FORMATTED = ("formatted", "cot-formatted")


def critic_prompt(
    domain_pddl: str,
    problem_pddl: str,
    plan_text: str,
    examples: Sequence[tuple[str, str, str]] = (),
    domain_definition: bool = True,
    prompts: Prompts = DEFAULT,
    instructions: str = "three-step",
) -> str:
    """The critic prompt for a plan; `examples` are (problem, plan, verification trace) for the few-shot A.1;
    `domain_definition=False` drops the domain (A.3); `instructions` "verify-each" is A.4, "chain-of-thought"
    A.5 (both without domain and exemplars), "formatted" / "cot-formatted" Table 6's templates (`FORMATTED`)."""
    texts = prompts[SET]
    if instructions not in INSTRUCTIONS:
        raise ValueError(f"unknown critic instructions {instructions!r}; known: {', '.join(INSTRUCTIONS)}")
    block = texts.render("critic-domain", domain=strip_comments(domain_pddl)) if domain_definition else ""
    if instructions in FORMATTED:  # Table 6's templates after PDDL prompts (the frame is ours: see the file)
        return texts.render("critic-formatted-pddl", domain_block=block, problem=problem_pddl.strip(),
                            plan=plan_text.strip(), instruction=texts.text(f"critic-{instructions}"))  # fmt: skip
    if instructions != "three-step":
        return texts.render(f"critic-{instructions}", problem=problem_pddl.strip(), plan=plan_text.strip())
    shots = "".join(
        texts.render("critic-example", problem=p.strip(), plan=pl.strip(), trace=t.strip()) for p, pl, t in examples
    )
    intro = texts.render("critic-examples", examples=shots) if shots else ""
    return texts.render(
        "critic", domain_block=block, examples=intro, problem=problem_pddl.strip(), plan=plan_text.strip()
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
    """A step-by-step verification of `steps` in the shape of the paper's (D.1), computed by our simulation:
    each step's action schema and preconditions, each precondition checked with where it comes from, the
    resulting state, up to the first failure; then the conclusion with its verdict phrase."""
    texts = texts or _BUILTIN
    state = task.init
    since: dict[Fact, int] = {}  # the step that last made each fact true or false (absent: the initial state)
    parts = [texts.text("trace.header")]
    for i, (name, args) in enumerate(steps, start=1):
        text = pddl_plan_text([(name, args)])
        action = task.ground(name, args)
        schema = task.domain.schemas.get(name)
        if action is None or schema is None:
            parts.append(texts.render("trace.not-an-action", step=i, action=text))
            return "\n\n".join(parts)
        binding = dict(zip(schema.params, args, strict=False))
        checks = [(f, True) for f in _bound(schema.pre, binding)] + [
            (f, False) for f in _bound(schema.neg_pre, binding)
        ]
        lines = [
            texts.render(
                "trace.check",
                fact=_atom(f) if positive else f"(not {_atom(f)})",
                value="true" if (f in state) == positive else "false",
                origin=_origin(since.get(f), i, texts),
            )
            for f, positive in checks
        ]
        ok = action.applicable(state)
        lines.append(texts.text("trace.met" if ok else "trace.unmet"))
        parts.append(
            texts.render(
                "trace.step",
                step=i,
                action=text,
                schema=" ".join((schema.name, *schema.params)),
                preconditions=_conjunction(schema.pre, schema.neg_pre),
                checks="\n".join(lines),
            )
        )
        if not ok:
            parts.append(texts.render("trace.wrong", action=text, step=i))
            return "\n\n".join(parts)
        effects = [_atom(f) for f in _bound(schema.add, binding)]
        effects += [f"(not {_atom(f)})" for f in _bound(schema.delete, binding)]
        before = texts.text("trace.before-first" if i == 1 else "trace.before-later")
        facts = "\n".join(texts.render("trace.fact", fact=f) for f in effects)
        parts[-1] += texts.render("trace.result", facts=facts, before=before)
        for f in action.add | action.delete:
            since[f] = i
        state = action.apply(state)
    unmet = sorted(task.goal - state)
    goals = sorted(task.goal) if not unmet else unmet
    listed = "\n".join(texts.render("trace.goal", fact=_atom(f)) for f in goals)
    parts.append(texts.render("trace.not-reached" if unmet else "trace.correct", goals=listed))
    return "\n\n".join(parts)


def _atom(fact: Fact) -> str:
    return "(" + " ".join(fact) + ")"


def _bound(facts: Sequence[Fact], binding: dict[str, str]) -> list[Fact]:
    return [tuple(binding.get(term, term) for term in f) for f in facts]


def _conjunction(pre: Sequence[Fact], neg_pre: Sequence[Fact]) -> str:
    atoms = [_atom(f) for f in pre] + [f"(not {_atom(f)})" for f in neg_pre]
    return atoms[0] if len(atoms) == 1 else "(and " + " ".join(atoms) + ")"


def _origin(step: int | None, now: int, texts: PromptSet) -> str:
    if step is None:
        return texts.text("trace.origin-init")
    if step == now - 1:
        return texts.text("trace.origin-previous")
    return texts.render("trace.origin-step", step=step)


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
