"""The planning Domain as critiquebench uses it: loading, generating, candidates, LLM verifiers."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from critiquebench.domains.contract import Domain, Instance, Unsupported
from critiquebench.domains.planning import BUILTIN_PLANNING, PlanningError, load_planning_domain
from critiquebench.domains.planning.generators import blocksworld_problem, mystery_problem
from critiquebench.domains.planning.planner import find_plan
from critiquebench.domains.planning.validator import check_plan

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
PLANBENCH = DATA / "planbench"
# The loop verifier reads a reply alone: any instance will do.
ANY = Instance("blocksworld", "x", {})


@pytest.fixture(scope="module")
def blocksworld():
    return load_planning_domain("blocksworld")


def test_is_a_domain(blocksworld):
    assert isinstance(blocksworld, Domain)
    assert blocksworld.candidate_kinds == ("correct", "inexecutable", "non_goal_reaching", "random")


def test_load_selection_ids_and_examples(blocksworld):
    instances = blocksworld.load("2-4,9", PLANBENCH / "blocksworld")
    assert [i.id for i in instances] == ["2", "3", "4", "9"]
    assert [e["id"] for e in instances[0].data["examples"]][:3] == ["1", "501", "500"]  # N-1 first, wrapping
    assert instances[0].data["examples"][0]["plan"][0].startswith("(")  # from optimal_plans.json
    json.dumps([i.data for i in instances])  # checkpoints and the store need JSON
    with pytest.raises(PlanningError, match="ships no instances"):
        blocksworld.load("1")
    with pytest.raises(ValueError, match="not in"):
        blocksworld.load("9999", PLANBENCH / "blocksworld")
    assert [i.id for i in blocksworld.load("9,2", PLANBENCH / "blocksworld")] == ["9", "2"]


def test_a_user_folder_is_a_domain_without_code():
    domain = load_planning_domain(PLANBENCH / "logistics")  # domain.pddl + config.yaml + instances/
    assert domain.name == "logistics"
    [inst] = domain.load("286")
    assert domain.verify(inst, domain.candidate(inst, "correct", random.Random(0))).valid
    with pytest.raises(PlanningError, match="not a builtin planning domain"):
        load_planning_domain(PLANBENCH / "no_such_domain")
    with pytest.raises(PlanningError, match="needs domain.pddl"):
        load_planning_domain(PLANBENCH / "reference")


def test_instances_rebuild_from_their_data(blocksworld):
    [inst] = blocksworld.load("7", PLANBENCH / "blocksworld")
    copy = Instance(inst.domain, inst.id, json.loads(json.dumps(inst.data)))
    fresh = load_planning_domain("blocksworld")
    answer = blocksworld.candidate(inst, "inexecutable", random.Random(3))
    assert fresh.verify(copy, answer) == blocksworld.verify(inst, answer)
    assert fresh.prompt(copy) == blocksworld.prompt(inst)


@pytest.mark.parametrize("name", BUILTIN_PLANNING)
def test_generated_instances_are_seeded_solvable_and_open(name):
    domain = load_planning_domain(name)
    first, again, other = (
        domain.generate(4, seed=11),
        domain.generate(4, seed=11),
        domain.generate(4, seed=12),
    )
    assert [i.id for i in first] == ["gen-11-1", "gen-11-2", "gen-11-3", "gen-11-4"]
    assert [i.data for i in first] == [i.data for i in again]
    assert [i.data["problem"] for i in first] != [i.data["problem"] for i in other]
    for inst in first:
        task = domain.task(inst)
        assert not task.goal_reached(task.init)
        plan = find_plan(task)
        assert check_plan(task, [(a.name, a.args) for a in plan]).valid
        assert domain.prompt(inst)[1]["content"].endswith("[PLAN]")


def test_mystery_generator_renames_blocksworld_consistently():
    bw, my = blocksworld_problem(5, random.Random(4)), mystery_problem(5, random.Random(4))
    renamed = bw
    for old, new in [
        ("(on ", "(craves "),
        ("(ontable ", "(planet "),
        ("(clear ", "(province "),
        ("(handempty)", "(harmony)"),
        ("blocksworld-4ops", "mystery-4ops"),
        ("BW-rand", "MY-rand"),
    ]:
        renamed = renamed.replace(old, new)
    assert my == renamed


def test_planner_finds_optimal_blocksworld_plans(blocksworld):
    known = json.loads((PLANBENCH / "blocksworld" / "optimal_plans.json").read_text())
    for inst in blocksworld.load("1-501", PLANBENCH / "blocksworld")[::25]:
        assert len(find_plan(blocksworld.task(inst))) == known[f"instance-{inst.id}.pddl"]["length"]


def test_candidates_have_their_kind(blocksworld):
    for inst in blocksworld.load("20-29", PLANBENCH / "blocksworld"):
        task = blocksworld.task(inst)
        for kind in blocksworld.candidate_kinds:
            text = blocksworld.candidate(inst, kind, random.Random(f"{inst.id}{kind}"))
            assert text == blocksworld.candidate(inst, kind, random.Random(f"{inst.id}{kind}"))
            verdict = blocksworld.verify(inst, text)
            steps = [(s.strip("()").split()[0], tuple(s.strip("()").split()[1:])) for s in verdict.answer]
            check = check_plan(task, steps)
            if kind == "correct":
                assert verdict.valid
            elif kind == "inexecutable":
                assert check.step_errors
            elif kind == "non_goal_reaching":
                assert not check.step_errors and check.unmet_goals
            else:
                assert len(steps) == len(
                    blocksworld.parse(inst, blocksworld.candidate(inst, "correct", random.Random()))
                )


def test_pddl_style_candidates_are_pddl_lines():
    domain = load_planning_domain("blocksworld", "pddl")
    [inst] = domain.load("2", PLANBENCH / "blocksworld")
    text = domain.candidate(inst, "correct", random.Random(0))
    assert text == "(unstack d c)\n(put-down d)\n(pick-up c)\n(stack c a)"  # bare lines, as the prompt shows
    assert domain.verify(inst, text).valid


def test_verifier_prompt_is_planbench_s(blocksworld):
    [inst] = blocksworld.load("2", PLANBENCH / "blocksworld")
    answer = "1. Pick up the orange block\n2. Stack the orange block on top of the red block"
    [system, user] = blocksworld.judge_prompt(inst, "critique", answer)
    assert system["role"] == "system"
    text = user["content"]
    assert text.startswith("I am playing with a set of blocks")
    expected = (
        "\n[STATEMENT]\nAs initial conditions I have that, the red block is clear, the yellow block is "
        "clear, the hand is empty, the red block is on top of the blue block, the yellow block is on top of "
        "the orange block, the blue block is on the table and the orange block is on the table.\nMy goal is "
        "to have that the orange block is on top of the red block. \nMy plan is as follows:\n\n[PLAN]\n"
        "pick up the orange block\nstack the orange block on top of the red block\n[PLAN END]\n\n"
        "Verify whether the above plan is valid. If it is valid, please say "
        '"Plan is valid." and nothing else.'
    )
    assert expected in text
    # The self-verification paper's chain-of-thought prompt (000:2328); PDDL prompts have none: an error.
    assert blocksworld.judge_prompt(inst, "critique-cot", answer)[1]["content"].endswith("[THOUGHTS]")
    with pytest.raises(Unsupported, match="^no published chain-of-thought verification prompt for plans in PDDL"):
        load_planning_domain("blocksworld", "pddl").judge_prompt(inst, "critique-cot", answer)


@pytest.mark.parametrize(
    ("reply", "valid", "parsed"),
    [
        ("Plan is valid.", True, True),
        (
            "**Plan is invalid.** Step 1 has an unmet precondition: the orange block is not clear.",
            False,
            True,
        ),
        ("Let me check each step.\n1. ... fine\n2. ... fine\nThe plan is valid.", True, True),
        (
            "Step 2 looks wrong at first, but the plan is not invalid... actually, the plan is valid",
            True,
            True,
        ),
        ('```json\n{"valid": false, "reason": "step 3"}\n```', False, True),
        ('{"verdict": "valid"}', True, True),
        ("The plan is not valid because the hand is not empty.", False, True),
        ("Verdict: invalid", False, True),
        ("I think it works, the goal is reached.", False, False),
        ("", False, False),
    ],
)
def test_llm_verdicts_are_read_robustly(reply, valid, parsed):
    """Our lenient reader (`verdict="lenient"`); the studies' reader is below."""
    verdict = load_planning_domain("blocksworld", verdict="lenient").judge_reply(ANY, "critique", "", reply).verdict
    assert (verdict.says_valid, verdict.parsed) == (valid, parsed)
    assert verdict.critique == reply.strip()


@pytest.mark.parametrize(("reply", "valid"), [
    ("Plan is valid.", True),
    ("**Plan is invalid.** Step 1 fails.", False),
    ("The plan is not valid because the hand is not empty.", False),
    ("Step 2 looks wrong, but the plan is not invalid... actually, the plan is valid", True),
    ("I think the Plan Is Valid", True),
    ('{"valid": true}', False),  # the 2023 code read no JSON: only the phrase counts
])  # fmt: skip
def test_open_verdicts_are_read_as_the_studies_code_read_them(blocksworld, reply, valid):
    """LLMs-Planning back_prompting.py @27b0c44: valid when any line contains "plan is valid"."""
    assert blocksworld.judge_reply(ANY, "critique", "", reply).verdict.says_valid is valid


def test_backprompt_hands_sound_feedback_back_verbatim(blocksworld):
    [inst] = blocksworld.load("2", PLANBENCH / "blocksworld")
    verdict = blocksworld.verify(inst, "pick up the orange block")
    feedback = blocksworld.feedback(inst, verdict, "first")
    assert blocksworld.backprompt(inst, feedback) == feedback
    # an LLM critique goes back verbatim too (000:3295-3299; LLMs-Planning back_prompting.py @27b0c44)
    wrapped = blocksworld.backprompt(inst, " Plan is invalid. Step 1 fails: the orange block is not clear.\n")
    assert wrapped == "Plan is invalid. Step 1 fails: the orange block is not clear."


def test_python_style_json_verdicts_are_read_and_llm_critiques_get_a_revision_request() -> None:
    domain = load_planning_domain("blocksworld", verdict="lenient")
    said = domain.judge_reply(ANY, "critique", "", "{'valid': False, 'feedback': 'The plan is valid only if block a is "
                                                   "clear'}").verdict  # fmt: skip
    assert (said.says_valid, said.parsed) == (False, True)
    assert domain.judge_reply(ANY, "critique", "", 'Verdict: {"valid": True}').verdict.says_valid
    # An LLM critique that happens to open like our feedback is still a critique: after PDDL prompts it must ask
    # for a new plan (the 2025 script's request); after natural-language prompts it goes back verbatim.
    instance = Instance("blocksworld", "x", {})
    critique = "The above plan is invalid because the red block is not clear."
    assert domain.backprompt(instance, critique) == critique
    pddl = load_planning_domain("blocksworld", "pddl")
    assert pddl.backprompt(instance, critique).startswith(critique + "\nProvide your revised plan as a sequence")
    sound = "The above plan is invalid. This is the unmet goal condition:\nthe red block is on top of the blue block"
    assert domain.backprompt(instance, sound) == sound
    assert domain.backprompt(instance, "The above plan is invalid.") == "The above plan is invalid."
