"""`refine` as Merola et al. ran it, message by message on the scripted server: the paper's PDDL prompt, every plan
kept in the conversation, the validator's first error reformulated into a request, at most four rounds, and an
early stop at the first valid plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.planning.prompts import REFINE_SYSTEM, strip_comments
from critiquebench.domains.planning.requests import refinement_request
from critiquebench.llm.client import LLMClient
from critiquebench.store.db import connect
from critiquebench.store.reads import round_calls
from critiquebench.store.results import attempts
from critiquebench.studies.execute import execute_run
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer

# Blocksworld instance 2: a on b, d on c, both clear, hand empty; the goal is (on c a).
SOLUTION = "(unstack a b)\n(put-down a)\n(unstack d c)\n(put-down d)\n(pick-up c)\n(stack c a)"


def request(reason: str) -> str:
    return f"The plan you provided is invalid. {reason}. Please provide a corrected plan."


def scripted(answers: list[str]) -> Any:
    """Attempt n of a conversation (n - 1 assistant turns so far) answers answers[n - 1]."""

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        return answers[sum(m["role"] == "assistant" for m in messages)]

    return reply


def run(tmp_path: Path, server: ScriptedServer, llm: LLMClient, answers: list[str], trial: int) -> tuple[Any, list]:
    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    server.reply = scripted(answers)
    server.calls.clear()
    out = execute_run(tmp_path / "store.sqlite", "refine-test", domain, instance, "refine", trial, llm)
    return (domain, instance, out), attempts(connect(tmp_path / "store.sqlite"), out.thread_id)


def test_refine_prompts_and_requests_message_by_message(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    answers = [
        "(unstack a b)\n(unstack a b)",  # step 2's preconditions fail (step 1 made (clear a) false)
        "(fly b)\n(pick-up b)",  # no such action in the (untyped) domain: VAL cannot build the plan
        "(unstack a b)\n(stack a)\n(put-down a)",  # step 2 does not fit its action
        "(unstack a b)\n(put-down a)",  # executes, misses the goal; the fourth round is the last
        SOLUTION,  # never asked for
    ]
    (domain, instance, out), rows = run(tmp_path, scripted_server, scripted_llm, answers, trial=0)
    assert (out.status, out.rounds, out.correct) == ("done", 4, False)

    # Round 1: the paper's system prompt, then the full domain and problem in its "build a plan" frame.
    first = scripted_server.calls[0][0]
    assert [m["role"] for m in first] == ["system", "user"]
    assert first[0]["content"] == REFINE_SYSTEM
    user = first[1]["content"]
    assert user.startswith("\nProblem description: you are an agent capable of solving the planning problems")
    assert f"=== DOMAIN DEFINITION ===\n{strip_comments(domain.domain_pddl)}\n=== PROBLEM DEFINITION ===\n" in user
    assert instance.data["problem"].strip() in user
    assert user.endswith("Can you BUILD A PLAN?\nDo not include any narrative or explanation\u2014output only the "
                         "chosen actions for the PLAN.\nThe actions should have no ':action' prefix since it is in "
                         "the domain definition and should not be outputted in the plan text.\n")  # fmt: skip

    # Every later round: the whole conversation so far, each plan followed by the request about it, whose reason
    # is what the study's code keeps of VAL's output (run without -v): VAL's one line for the first failure. An
    # undefined action stops VAL before it runs the plan (BadOperator; "No matching action defined for" is printed
    # under -v only), so none of the code's four phrases is there and it falls back to "Plan invalid"
    # (model_manager.py generate_with_validation; KCL-Planning/VAL Plan.cpp:1899-1904).
    expected = [
        request("Plan failed to execute"),
        request("Plan invalid"),
        request("Bad plan description!"),
        request("Plan invalid"),
    ]
    assert [r["feedback"] for r in rows] == expected
    assert len(scripted_server.calls) == 4  # at most four rounds
    for n in range(1, 4):
        messages = scripted_server.calls[n][0]
        turns = []
        for k in range(n):
            turns += [{"role": "assistant", "content": answers[k]}, {"role": "user", "content": expected[k]}]
        assert messages == first + turns, f"round {n + 1}"
    assert [r["stopped"] for r in rows] == [0, 0, 0, 1]
    # every request carries the study's generation length, max_new_tokens=5000 (model_manager.py), not the
    # study-wide 512 other papers' schemes keep
    assert [params.get("max_tokens") for _, params in scripted_server.calls] == [5000] * 4


def test_refine_stops_at_the_first_valid_plan(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    redundant = SOLUTION + "\n(unstack c a)\n(put-down c)"
    (domain, instance, out), rows = run(tmp_path, scripted_server, scripted_llm, [redundant, SOLUTION], trial=1)
    assert (out.status, out.rounds, out.correct) == ("done", 2, True)
    assert rows[0]["feedback"] == request("Plan invalid")  # it executes; the goal no longer holds at the end
    assert scripted_server.calls[1][0][-2:] == [
        {"role": "assistant", "content": redundant},
        {"role": "user", "content": rows[0]["feedback"]},
    ]
    assert len(scripted_server.calls) == 2 and rows[1]["sound_valid"] == 1 and not rows[1]["feedback"]
    # an answer with no action at all is a malformed one
    assert refinement_request(domain.task(instance), None) == request("Plan invalid")  # VAL: an empty plan


def test_the_reply_cap_is_the_refinement_studys_not_a_global_change(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """`standard` keeps the study's max_tokens (512 unless the study says otherwise; 001's No-Critique baseline
    shares it); the refinement study's one-shot runs ask for the 5000 of its code's generate_response."""
    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    scripted_server.reply = SOLUTION
    sent = []
    specs = ("standard", "standard:style=refine,max_tokens=5000", "standard:max_tokens=none",
             "standard:max_tokens=default", "refine:max_tokens=none")  # fmt: skip
    for trial, spec in enumerate(specs):
        scripted_server.calls.clear()
        out = execute_run(tmp_path / "store.sqlite", "cap-test", domain, instance, spec, trial, scripted_llm)
        assert (out.status, out.correct) == ("done", True)
        sent += [params.get("max_tokens", "no cap") for _, params in scripted_server.calls]
    # max_tokens=none is no cap, as intrinsic's and the study's own max_tokens = "none" (the No-Critique baseline
    # of 001, step 0's request); "default" is the study's: the first request again, served from the cache
    assert sent == [512, 5000, "no cap", "no cap"]


def test_an_undefined_action_gets_what_val_without_v_leads_the_code_to_send() -> None:
    """VAL throws out of the run on an undefined action (BadOperator; "No matching action defined for" only under
    -v): the code finds none of its phrases and sends "Plan invalid"; a typed domain fails VAL's plan type check
    first, "Bad plan description!" (KCL-Planning/VAL Plan.cpp:1899-1904, typecheck.cpp:489-499)."""
    for name, reason in (("blocksworld_3_7", "Plan invalid"), ("minigrid", "Bad plan description!")):
        domain = get_domain(name)
        (instance,) = load_instances(domain, "gen:1:1")
        assert refinement_request(domain.task(instance), [], [(1, "(fly a b)")]) == request(reason), name


# The study's code hands VAL the raw reply file (model_manager.py:270, `formatter` commented out; :282
# validate_plan) and cuts the request's reason from VAL's output: "Plan failed" (model_manager.py:300-303),
# "Bad plan" (:304-307), else "Plan invalid" (:312-313), inside the frame of model_manager.py:316.
def test_an_undefined_action_beside_a_plan_that_reaches_the_goal_fails_the_plan(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """VAL builds the whole plan before it runs it; an undefined action throws out of the run (KCL-Planning/VAL
    Plan.cpp:1899-1904), whatever the other lines do: not valid, and the code's fallback "Plan invalid"
    (model_manager.py:312-313; Blocksworld is untyped)."""
    fenced = f"```pddl\n{SOLUTION}\n(celebrate a)\n```"
    (_, _, out), rows = run(tmp_path, scripted_server, scripted_llm, [fenced, SOLUTION], trial=2)
    assert (out.status, out.rounds, out.correct) == ("done", 2, True)
    assert rows[0]["sound_valid"] == 0 and rows[0]["feedback"] == request("Plan invalid")
    assert scripted_server.calls[1][0][-1] == {"role": "user", "content": request("Plan invalid")}


def test_an_unknown_object_on_an_untyped_domain_fails_at_its_step(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """On an untyped domain VAL executes a step naming an object the problem lacks: nothing holds of it, so the
    step fails its preconditions there, "Plan failed to execute" (KCL-Planning/VAL
    applications/Validate/src/main.cpp:315; model_manager.py:300-303), not "Bad plan description!"."""
    answer = "(unstack a b)\n(put-down a)\n(pick-up btable)"
    (_, _, out), rows = run(tmp_path, scripted_server, scripted_llm, [answer, SOLUTION], trial=3)
    assert (out.rounds, out.correct) == (2, True)
    assert rows[0]["feedback"] == request("Plan failed to execute")
    reasons = [reason for round_, _, _, reason in round_calls(connect(tmp_path / "store.sqlite"), out.thread_id)
               if round_ == 1 and reason]  # fmt: skip
    assert reasons[0].startswith("(pick-up btable) has an unsatisfied precondition at time 3")


def test_a_reply_cut_off_mid_action_is_no_plan(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """A reply cut at the length cap leaves a parenthesis open: VAL's parser builds no plan and prints "Bad plan
    description!" (KCL-Planning/VAL applications/Validate/src/main.cpp:132-140), which the code keeps
    (model_manager.py:304-307)."""
    cut = "(unstack a b)\n(put-down a)\n(unst"  # not an action named "unst": the file does not parse
    (_, _, out), rows = run(tmp_path, scripted_server, scripted_llm, [cut, SOLUTION], trial=4)
    assert (out.rounds, out.correct) == (2, True)
    assert rows[0]["sound_valid"] == 0 and rows[0]["feedback"] == request("Bad plan description!")


def test_other_schemes_keep_their_reader(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """Only refine's request reads as VAL: sound-first still reads the plan with our reader (the undefined line
    is skipped, the plan reaches the goal)."""
    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    scripted_server.reply = f"{SOLUTION}\n(celebrate a)"
    out = execute_run(tmp_path / "store.sqlite", "other", domain, instance, "sound-first", 0, scripted_llm)
    assert (out.status, out.rounds, out.correct) == ("done", 1, True)


def test_val_reads_the_plan_up_to_the_first_word_outside_an_action(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """VAL's parser builds the plan from the steps before the first token that cannot continue it and reads no
    further (KCL-Planning/VAL libraries/VAL/src/Parser/pddl+.y:1549-1587): the study's
    generated_plans/plans/model_outputs_llama_blocksword/blocksworld/pddl_4_12_temp2.txt, a solution followed by
    "is not a valid plan.", repeats and a cut-off action, ended its loop as valid (pddl_4_12_plan.txt: "Generated
    in 3 iterations"; model_manager.py:285-286 breaks only on a valid plan)."""
    reply = f"```\n{SOLUTION}\n```\nis not a valid plan.\n\nA valid plan is:\n(unstack a b)\n(put"
    (_, _, out), rows = run(tmp_path, scripted_server, scripted_llm, [reply], trial=5)
    assert (out.status, out.rounds, out.correct) == ("done", 1, True)
