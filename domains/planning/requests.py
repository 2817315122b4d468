"""The validator's verdict reformulated into a request, as in Merola et al.'s refinement loop.

Their loop hands VAL's first complaint back inside one sentence frame (from the study's code):

    The plan you provided is invalid. {reason}. Please provide a corrected plan.

where `reason` is the part of VAL's output for one of its four failure kinds. The paper leaves the reason's
wording to VAL; ours (our validator is not VAL) names the error class, the action and the step, always ending
"at step N", one class per kind of failure:

- precondition violation: the step's preconditions do not hold, and no earlier step made them false;
- unreachable sequence: a precondition held earlier but an earlier step of the plan made it false, so the step
  cannot be reached in this order (VAL would report both as an unsatisfied precondition);
- missing or redundant steps: every step executes but the goal does not hold at the end: steps are missing, or,
  when the goal held after an earlier step, the steps after it are redundant and undo it;
- unknown or malformed action: a step that is not an action of the problem (unknown name, wrong objects or
  arity), or an answer in which no action could be read.

Like VAL, only the first failure is reported.
"""

from __future__ import annotations

from collections.abc import Sequence

from critiquebench.domains.planning.strips import Fact, GroundAction, State, Task
from critiquebench.domains.prompts import DEFAULT, Prompts, PromptSet

Step = tuple[str, tuple[str, ...]]

SET = "validator_refinement"  # the texts (`request`, `reason.*`): domains/prompts/validator_refinement.toml


def _atom(name: str, args: Sequence[str]) -> str:
    return "(" + " ".join((name, *args)) + ")"


def _fact(fact: Fact, negated: bool = False) -> str:
    text = _atom(fact[0], fact[1:])
    return f"(not {text})" if negated else text


def _facts(positive: Sequence[Fact], negative: Sequence[Fact] = ()) -> str:
    return " and ".join([_fact(f) for f in sorted(positive)] + [_fact(f, True) for f in sorted(negative)])


def _culprit(history: Sequence[tuple[State, GroundAction]], fact: Fact, negated: bool) -> int | None:
    """The latest earlier step (1-based) that made a required fact false: it deleted a positive precondition
    that held before it, or added a fact that must be false."""
    for k in range(len(history) - 1, -1, -1):
        before, action = history[k]
        if negated and fact in action.add and fact not in before:
            return k + 1
        if not negated and fact in action.delete and fact in before and fact not in action.add:
            return k + 1
    return None


def _goal_unmet(task: Task, state: State) -> tuple[list[Fact], list[Fact]]:
    return sorted(task.goal - state), sorted(task.neg_goal & state)


def refinement_reason(
    task: Task, steps: Sequence[Step] | None, unread: Sequence[tuple[int, str]] = (), texts: PromptSet | None = None
) -> str | None:
    """Why the plan fails, as the `reason` of the `request`; None when the plan is valid. `unread` holds
    (step, line) of answer lines that read as no action of the problem (VAL: "No matching action")."""
    texts = texts or DEFAULT[SET]
    first_unread = min(unread, default=None)
    if not steps and first_unread is None:
        return texts.text("reason.nothing-read")
    state = task.init
    history: list[tuple[State, GroundAction]] = []
    goal_after: int | None = 0 if not any(_goal_unmet(task, state)) else None
    for i, (name, args) in enumerate(steps or (), start=1):
        if first_unread is not None and first_unread[0] <= i:
            break
        atom = _atom(name, args)
        action = task.ground(name, args)
        if action is None:
            return texts.render("reason.unknown-action", action=atom, step=i)
        if not action.applicable(state):
            missing, present = action.unmet(state)
            for fact, negated in [(f, False) for f in sorted(missing)] + [(f, True) for f in sorted(present)]:
                k = _culprit(history, fact, negated)
                if k is not None:
                    earlier = _atom(history[k - 1][1].name, history[k - 1][1].args)
                    return texts.render(
                        "reason.unreachable", action=atom, fact=_fact(fact, negated), culprit=k, earlier=earlier, step=i
                    )
            return texts.render(
                "reason.precondition", action=atom, facts=_facts(sorted(missing), sorted(present)), step=i
            )
        history.append((state, action))
        state = action.apply(state)
        if not any(_goal_unmet(task, state)):
            goal_after = i
    if first_unread is not None:
        line = " ".join(first_unread[1].split())
        return texts.render("reason.unknown-action", action=line, step=first_unread[0])
    missing_goals, present_goals = _goal_unmet(task, state)
    if not missing_goals and not present_goals:
        return None
    unmet = _facts(missing_goals, present_goals)
    if goal_after is not None:
        return texts.render("reason.redundant", after=goal_after, facts=unmet, step=len(steps))
    return texts.render("reason.missing", facts=unmet, step=len(steps))


def refinement_request(task: Task, steps: Sequence[Step] | None, unread: Sequence[tuple[int, str]] = (),
                       prompts: Prompts = DEFAULT) -> str:  # fmt: skip
    """The user turn that hands the failure back ("" for a valid plan)."""
    texts = prompts[SET]
    reason = refinement_reason(task, steps, unread, texts)
    return "" if reason is None else texts.render("request", reason=reason)
