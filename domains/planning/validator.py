"""Sound plan validation on ground STRIPS, with PlanBench's feedback wording.

`check_plan` simulates the whole plan and records every step whose preconditions are unmet (effects are
applied anyway so later steps are still judged), every step that is not an action of the problem, and the
goals unmet at the end. The first recorded error is what VAL reports and PlanBench's first-error backprompt
quotes.

Wording, reproduced exactly from PlanBench's `get_validation_message` (including its missing space before the
singular precondition sentence)::

    The above plan is invalid.The following action at step 1 has an unmet precondition:
    unstack the red block from on top of the orange block
    The unmet precondition is:
    the red block is clear
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from critiquebench.domains.planning.strips import Fact, Task
from critiquebench.domains.planning.templates import NLConfig
from critiquebench.domains.prompts import DEFAULT, PromptSet

Step = tuple[str, tuple[str, ...]]

SET = "planbench"  # the wording (`feedback.*`): domains/prompts/planbench.toml
ALL_SET = "self_verification"  # the all-errors feedback's headers (`planning.feedback.all.*`)
INVALID = DEFAULT[SET].text("feedback.invalid")  # the built-in binary verdicts
VALID = DEFAULT[SET].text("feedback.valid")


@dataclass(frozen=True)
class StepError:
    step: int  # 1-based, as in VAL's "time step"
    action: Step
    unmet: tuple[Fact, ...] = ()
    unmet_negative: tuple[Fact, ...] = ()
    not_an_action: bool = False


@dataclass(frozen=True)
class PlanCheck:
    step_errors: tuple[StepError, ...]
    unmet_goals: tuple[Fact, ...]

    @property
    def valid(self) -> bool:
        return not self.step_errors and not self.unmet_goals


def check_plan(task: Task, steps: Sequence[Step]) -> PlanCheck:
    state = task.init
    errors: list[StepError] = []
    for i, (name, args) in enumerate(steps, start=1):
        action = task.ground(name, args)
        if action is None:
            errors.append(StepError(i, (name, tuple(args)), not_an_action=True))
            continue
        if not action.applicable(state):
            missing, present = action.unmet(state)
            errors.append(StepError(i, (name, tuple(args)), _sorted(missing), _sorted(present)))
        state = action.apply(state)
    unmet_goals = task.goal - state
    return PlanCheck(tuple(errors), _sorted(unmet_goals | (task.neg_goal & state)))


def first_error_index(task: Task, steps: Sequence[Step]) -> int | None:
    """0-based index of the first inexecutable step, or None; the fast path for first-error checks."""
    state = task.init
    for i, (name, args) in enumerate(steps):
        action = task.ground(name, args)
        if action is None or not action.applicable(state):
            return i
        state = action.apply(state)
    return None


def _sorted(facts: frozenset[Fact]) -> tuple[Fact, ...]:
    return tuple(sorted(facts, key=lambda f: "_".join(f)))


def error_sentences(cfg: NLConfig, task: Task, check: PlanCheck, texts: PromptSet | None = None) -> tuple[str, ...]:
    """One sentence per error, in PlanBench's words, without the leading "The above plan is invalid."."""
    texts = texts or DEFAULT[SET]
    out = [_step_sentence(cfg, e, texts) for e in check.step_errors]
    if check.unmet_goals:
        goals = [f for f in check.unmet_goals if f in task.goal]
        negated = [f for f in check.unmet_goals if f not in task.goal]
        key = "feedback.unmet-goals" if len(check.unmet_goals) > 1 else "feedback.unmet-goal"
        out.append(texts.render(key, facts=_facts(cfg, goals, negated, texts)))
    return tuple(out)


def _step_sentence(cfg: NLConfig, err: StepError, texts: PromptSet) -> str:
    action = cfg.action_text(*err.action)
    if err.not_an_action:
        return texts.render("feedback.not-an-action", step=err.step, action=action)
    n = len(err.unmet) + len(err.unmet_negative)
    key = "feedback.unmet-preconditions" if n > 1 else "feedback.unmet-precondition"
    return texts.render(key, step=err.step, action=action, facts=_facts(cfg, err.unmet, err.unmet_negative, texts))


def _facts(cfg: NLConfig, positive: Sequence[Fact], negative: Sequence[Fact], texts: PromptSet) -> str:
    text = cfg.state_facts(positive) if positive else ""
    if negative:
        neg = " and ".join(texts.render("feedback.negated-fact", fact=cfg.state_facts([f])) for f in negative)
        text = f"{text} and {neg}" if text else neg
    return text


# What our own feedback can be: the bare binary verdict, or it followed by one of the error sentences above. An
# LLM critique such as "The above plan is invalid because ..." matches neither.
_SOUND_FEEDBACK = re.compile(
    r"The above plan is invalid\.(?:\s*$|\s?(?:The following action at step \d+ "
    r"|These are the unmet goal conditions:|This is the unmet goal condition:|No plan could be read"
    r"|There is an unmet goal condition\. This is:|There are unmet goal conditions\. These are:"
    r"|There are unsatisfied preconditions\.))"
)


def is_sound_feedback(text: str) -> bool:
    """Whether `text` is feedback this validator wrote (handed back verbatim, as PlanBench does)."""
    return bool(_SOUND_FEEDBACK.match(text.strip()))


def render(errors: Sequence[str], level: str, valid: bool, texts: PromptSet | None = None,
           all_texts: PromptSet | None = None) -> str:  # fmt: skip
    """The backprompt for `errors` at feedback `level` (binary, first, all): PlanBench's first-error message,
    or the self-verification paper's all-errors one (`all_errors`)."""
    texts = texts or DEFAULT[SET]
    if valid:
        return texts.text("feedback.valid")
    invalid = texts.text("feedback.invalid")
    if level == "binary" or not errors:
        return invalid
    if level == "all":
        return all_errors(errors, texts, all_texts or DEFAULT[ALL_SET])
    return invalid + _glue(errors[0]) + errors[0]


def all_errors(errors: Sequence[str], texts: PromptSet, all_texts: PromptSet) -> str:
    """The self-verification paper's all-errors feedback (000:2486-2508, 000:3306-3325): "The above plan is
    invalid.", the unmet goals first ("There is an unmet goal condition. This is:"), then "There are unsatisfied
    preconditions." and PlanBench's sentence for every failing step. Lines are joined by single newlines (the
    paper's blank lines are its PDF's paragraphing, as in its first-error example, whose real text has none).

    Which steps count is ours: every step whose preconditions are unmet in the state reached by applying every
    earlier action's effects (failed ones too; `check_plan`). The paper's Mystery example lists steps 3 and 5 of
    the A.5.6 answer but not step 7, whose precondition "planet object c" no semantics makes true (effects
    applied or failed steps skipped, support by any earlier step, VAL's repair advice); its Blocksworld example's
    plan is not printed."""
    heads = {texts["feedback.unmet-goal"].text.split("$")[0]: "planning.feedback.all.goal",
             texts["feedback.unmet-goals"].text.split("$")[0]: "planning.feedback.all.goals"}  # fmt: skip
    goals, steps = [], []
    for sentence in errors:
        head = next((h for h in heads if sentence.startswith(h)), None)
        if head is None:
            steps.append(sentence)
        else:
            goals.append(all_texts.render(heads[head], facts=sentence[len(head):]))
    parts = [texts.text("feedback.invalid"), *goals]
    if steps:
        parts += [all_texts.text("planning.feedback.all.preconditions"), *steps]
    return "\n".join(parts)


def _glue(sentence: str) -> str:
    # PlanBench prefixes every sentence with a space except the singular-precondition one.
    return "" if "has an unmet precondition:" in sentence else " "
