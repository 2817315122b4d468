"""The validator's verdict handed back as a request, as in Merola et al.'s refinement loop.

Their loop (Singh8899/LLM-Planning-Leonardo, `generate_with_validation`) runs VAL on the model's reply and hands
its complaint back inside one sentence frame:

    The plan you provided is invalid. {reason}. Please provide a corrected plan.

`reason` is what the code keeps of VAL's output (run without `-v`): from the first of "No matching action",
"Plan failed", "Bad plan", "Plan invalid" up to "Failed plans" / "Errors". Without `-v` VAL records no repair
advice, so the reason is VAL's one line for the first failure (`val_words`; the texts are `reason.*` of
domains/prompts/validator_refinement.toml):

- a step naming no action of the domain: "Plan invalid" ("Bad plan description!" on a typed domain). VAL builds
  the whole plan before it runs it; an undefined action throws `BadOperator` out of the run (KCL-Planning/VAL
  `libraries/VAL/src/Plan.cpp:1899-1904`: "No matching action defined for" is printed under `-v` only), so the
  output holds none of the four phrases and the code's fallback sends "Plan invalid"; a typed domain fails the
  plan's type check first (`typecheck.cpp:489-499`, `applications/Validate/src/main.cpp:138-140`);
- a step whose objects do not fit its action, or an answer line that is no action: "Bad plan description!";
- a step whose preconditions do not hold: "Plan failed to execute";
- a plan that executes but misses its goal (an empty plan too): "Plan invalid".

The refine scheme reads the answer as VAL reads the raw reply (`val_words.read_val`) and sends `run_request`
for VAL's run; `refinement_request` words the failure of a plan our reader read (other schemes' `request`).

The paper's own example, "Plan failed due to precondition violation at step 3" (`004:88`), paraphrases this.
"""

from __future__ import annotations

from collections.abc import Sequence

from critiquebench.domains.planning.strips import Task
from critiquebench.domains.planning.val_words import ValRun, run_val, typed
from critiquebench.domains.prompts import DEFAULT, Prompts, PromptSet

Step = tuple[str, tuple[str, ...]]

SET = "validator_refinement"  # the texts (`request`, `reason.*`): domains/prompts/validator_refinement.toml
REASON_KEYS = {"bad-plan": "reason.bad-plan", "precondition": "reason.plan-failed", "goal": "reason.plan-invalid"}


def reason_key(task: Task, run: ValRun) -> str:
    """The `reason.*` text VAL run without `-v` leads the study's code to send for `run`'s first failure."""
    if run.failure == "no-action":
        return "reason.bad-plan" if typed(task) else "reason.plan-invalid"
    return REASON_KEYS[str(run.failure)]


def first_failure(
    task: Task, steps: Sequence[Step] | None, unread: Sequence[tuple[int, str]] = (), known_actions: Sequence[str] = ()
) -> ValRun:
    """VAL's first failure of the answer. `unread` holds (step, line) of answer lines that read as no action:
    VAL cannot read such a plan ("No matching action" when the line names an action the domain lacks)."""
    if unread:
        line = " ".join(min(unread)[1].split())
        words = line.strip("()").split()
        names = {n.lower() for n in known_actions}
        kind = "no-action" if line.startswith("(") and words and names and words[0].lower() not in names else "bad-plan"
        return ValRun(len(steps or ()), 0, kind, min(unread)[0], line)
    # an object the problem lacks fails its step on an untyped domain, as VAL executes it (the Oracle's advice on the
    # study's pddl_7_11 "(unstack b2 btable)": VAL's unmet precondition of an earlier step, not "Bad plan description!")
    return run_val(task, steps or (), known_actions, any_objects=not typed(task))


def refinement_reason(
    task: Task,
    steps: Sequence[Step] | None,
    unread: Sequence[tuple[int, str]] = (),
    known_actions: Sequence[str] = (),
    texts: PromptSet | None = None,
) -> str | None:
    """Why the plan fails, as the `reason` of the `request`; None when the plan is valid."""
    return run_reason(task, first_failure(task, steps, unread, known_actions), texts or DEFAULT[SET])


def run_reason(task: Task, run: ValRun, texts: PromptSet) -> str | None:
    """The `reason` the study's code cuts from VAL's output for `run`; None when the plan is valid."""
    return None if run.failure is None else texts.render(reason_key(task, run), action=run.action)


def run_request(task: Task, run: ValRun, prompts: Prompts = DEFAULT) -> str:
    """The user turn the study's code sends after VAL's `run` ("" for a valid plan)."""
    texts = prompts[SET]
    reason = run_reason(task, run, texts)
    return "" if reason is None else texts.render("request", reason=reason)


def refinement_request(
    task: Task, steps: Sequence[Step] | None, unread: Sequence[tuple[int, str]] = (), prompts: Prompts = DEFAULT
) -> str:
    """The user turn that hands the failure back ("" for a valid plan); the domain's actions are the task's."""
    return run_request(task, first_failure(task, steps, unread, tuple(task.domain.schemas)), prompts)
