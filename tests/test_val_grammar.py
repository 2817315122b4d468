"""VAL's reading of a raw reply as a plan file, rule by rule of its grammar (KCL-Planning/VAL
`libraries/VAL/src/Parser/pddl+.y`: `mystartsymbol`, `c_plan`, `c_step_t_d`, `c_step_d`, `c_step`, `c_float`;
its lexer `pddl+.l`: `{int}`, `{float}`, `^"time"`, characters it has no token for echoed and skipped).

The refinement study (Singh8899/LLM-Planning-Leonardo, `model_manager.py:270-282`) hands VAL the reply as it is;
these are the reply shapes its recorded replies never held (a reply opening with prose or a language-tagged
fence, timed and `[duration]` steps after untimed ones), read as the grammar reads them."""

from __future__ import annotations

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.planning.val_words import val_steps
from tests.conftest import DATASETS

SOLUTION = "(unstack a b)\n(put-down a)\n(unstack d c)\n(put-down d)\n(pick-up c)\n(stack c a)"  # instance 2
STEPS = [("unstack", ("a", "b")), ("put-down", ("a",)), ("unstack", ("d", "c")), ("put-down", ("d",)),
         ("pick-up", ("c",)), ("stack", ("c", "a"))]  # fmt: skip


def _request(reason: str) -> str:  # the study's request (model_manager.py:316)
    return f"The plan you provided is invalid. {reason}. Please provide a corrected plan."


def _verdict(text: str) -> tuple[str, str | None]:
    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    verdict, _ = domain.assess_val(instance, text)
    return verdict.status, verdict.sent


def test_a_reply_opening_with_prose_is_the_empty_plan() -> None:
    """`mystartsymbol : ... | c_plan {top_thing= $1;}` with `c_plan : ... | /* empty */`: "Here" (a NAME) opens
    no step, so bison's default reduction ends an empty `c_plan`, `top_thing` is that plan, and the syntax error
    that follows does not undo it: VAL runs the empty plan ("Goal not satisfied", "Plan invalid")."""
    assert val_steps(f"Here is the plan:\n{SOLUTION}") == ([], True)
    assert _verdict(f"Here is the plan:\n{SOLUTION}")[1] == _request("Plan invalid")


def test_a_language_tagged_fence_is_the_empty_plan_and_a_bare_one_is_skipped() -> None:
    """The lexer has no token for a backtick (echoed and skipped); "pddl" after it is a NAME (`{string}`), which
    opens no `c_step_t_d`: the empty plan as above. A bare fence leaves the steps the first token."""
    assert val_steps(f"```pddl\n{SOLUTION}\n```") == ([], True)
    assert val_steps(f"```\n{SOLUTION}\n```") == (STEPS, True)
    assert _verdict(f"```\n{SOLUTION}\n```")[0] == "valid"


def test_timed_and_duration_steps_after_untimed_ones_are_read() -> None:
    """`c_plan : c_step_t_d c_plan`, `c_step_t_d : c_float COLON c_step_d | c_step_d`, `c_step_d : c_step OPEN_SQ
    c_float CLOSE_SQ | c_step`: every step may carry a start time and a duration, mixed as they come."""
    lines = SOLUTION.splitlines()
    mixed = "\n".join([lines[0], "1.0: " + lines[1] + " [1]", lines[2] + " [1.5]", "3: " + lines[3], *lines[4:]])
    assert val_steps(mixed) == (STEPS, True)
    assert _verdict(mixed)[0] == "valid"
    all_timed = "\n".join(f"{k}.000: {line} [1.000]" for k, line in enumerate(lines))
    assert val_steps(all_timed) == (STEPS, True)
    # c_plan : TIME FLOATVAL c_plan (`^"time"`: a line opening "time")
    assert val_steps("time 0.02\n" + SOLUTION) == (STEPS, True)


def test_a_rule_opened_and_not_completed_leaves_no_plan() -> None:
    """A number (`c_float`) must be followed by COLON and a step, "[" by a number and "]": a numbered list after a
    step ("1." is a FLOATVAL, then "(") or a bad duration reduces no `c_plan`, so `top_thing` is no plan and
    Validate prints "Bad plan description!" (`applications/Validate/src/main.cpp`, `getPlan`)."""
    lines = SOLUTION.splitlines()
    assert val_steps(lines[0] + "\n1. " + lines[1]) == ([], False)
    assert val_steps(lines[0] + " [one]") == ([], False)
    assert val_steps("0.5 " + lines[0]) is None  # no line opens with a step or a timed step: English, our reader
    assert _verdict(lines[0] + "\n2. " + lines[1]) == ("malformed", _request("Bad plan description!"))


def test_what_follows_the_plan_is_not_read() -> None:
    """At the first token that cannot open another step the default reduction ends `c_plan` with the steps read."""
    assert val_steps(SOLUTION + "\nThis plan is valid.\n(unstack a") == (STEPS, True)
