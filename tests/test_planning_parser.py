"""Reading the plan a model committed to: prose, markdown, numbering, retractions, PDDL lines."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from critiquebench.domains.planning import load_planning_domain

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
PLANBENCH = DATA / "planbench"

# Blocksworld instance 2: red on blue, yellow on orange; goal: the orange block on the red block.
SOLUTION = ["(unstack d c)", "(put-down d)", "(pick-up c)", "(stack c a)"]

ANSWERS = {
    "markdown_fenced_numbered_bold": """Sure! Here's the plan:

```
1. **Unstack** the yellow block from on top of the orange block
2. **Put down** the yellow block
3. **Pick up** the orange block
4. **Stack** the orange block on top of the red block
```

This achieves the goal since the orange block ends up on the red block.""",
    "bullets_with_prose_around": """To reach the goal I need to free the orange block first.

- Unstack the yellow block from on top of the orange block (now I hold the yellow block)
- Put down the yellow block
- Pick up the orange block
- Stack the orange block on top of the red block

Now the orange block is on top of the red block, as required.""",
    "numbered_step_retracted_and_redone": """1. Unstack the yellow block from on top of the orange block
2. Stack the yellow block on top of the red block
Wait, step 2 is wrong because the red block must stay clear. Instead:
2. Put down the yellow block
3. Pick up the orange block
4. Stack the orange block on top of the red block""",
    "inline_retraction": """unstack the yellow block from on top of the orange block
stack the yellow block on top of the red block
stack the yellow block on top of the red block is not correct, so put down the yellow block
pick up the orange block
stack the orange block on top of the red block
[PLAN END]""",
    "steps_then_final_restatement": """Step 1: unstack the yellow block from on top of the orange block
Step 2: put down the yellow block
Step 3: pick up the orange block
Step 4: stack the orange block on top of the red block

So the final plan is:
1. unstack the yellow block from on top of the orange block
2. put down the yellow block
3. pick up the orange block
4. stack the orange block on top of the red block""",
    "plain_plan_restated_after_prose": """unstack the yellow block from on top of the orange block
put down the yellow block
pick up the orange block
stack the orange block on top of the red block

That is my plan. To summarize:
unstack the yellow block from on top of the orange block
put down the yellow block
pick up the orange block
stack the orange block on top of the red block""",
    "second_plan_block_corrects_the_first": """[PLAN]
pick up the orange block
stack the orange block on top of the red block
[PLAN END]
Oops, the orange block is not clear. Corrected:
[PLAN]
unstack the yellow block from on top of the orange block
put down the yellow block
pick up the orange block
stack the orange block on top of the red block
[PLAN END]""",
    "pddl_lines": "(unstack d c)\n(put-down d)\n(pick-up c)\n(stack c a)\n[PLAN END]",
    "pddl_fenced_numbered": "```pddl\n1. (unstack d c)\n2. (put-down d)\n3. (pick-up c)\n4. (stack c a)\n```",
    "short_colour_names": "1. Unstack yellow from orange\n2. Put down yellow\n3. Pick up orange\n"
    "4. Stack orange on red",
    "continuation_then_hallucinated_next_problem": """unstack the yellow block from on top of the orange block
put down the yellow block
pick up the orange block
stack the orange block on top of the red block
[PLAN END]

[STATEMENT]
As initial conditions I have that, the blue block is clear
My plan is as follows:
[PLAN]
pick up the blue block
[PLAN END]""",
    "commentary_between_steps": """unstack the yellow block from on top of the orange block
(the orange block is now clear)
put down the yellow block
Now my hand is empty.
pick up the orange block
stack the orange block on top of the red block""",
    "two_actions_on_one_line": "unstack the yellow block from on top of the orange block, then put down "
    "the yellow block\npick up the orange block and stack the orange block on top of the red block",
    "hyphenated_verbs": "1) unstack the yellow block from on top of the orange block\n"
    "2) put-down the yellow block\n3) pick-up the orange block\n"
    "4) stack the orange block on top of the red block",
}


@pytest.fixture(scope="module")
def blocksworld():
    domain = load_planning_domain("blocksworld")
    [inst] = domain.load("2", PLANBENCH / "blocksworld")
    return domain, inst


@pytest.mark.parametrize("key", sorted(ANSWERS))
def test_committed_plan_is_read(blocksworld, key):
    domain, inst = blocksworld
    assert domain.parse(inst, ANSWERS[key]) == SOLUTION
    assert domain.verify(inst, ANSWERS[key]).valid


def test_equal_plans_in_different_formats_share_a_canonical_string(blocksworld):
    domain, inst = blocksworld
    canon = {domain.canonical(inst, text) for text in ANSWERS.values()}
    assert canon == {"\n".join(SOLUTION)}
    assert domain.canonical(inst, "no idea") is None


def test_unreadable_lines_are_skipped_like_planbench(blocksworld):
    domain, inst = blocksworld
    parsed = domain.read(inst, "unstack the yellow block from the table\nput down the yellow block")
    assert parsed is not None and parsed.steps == (("put-down", ("d",)),)
    assert parsed.skipped == ("unstack the yellow block from the table",)


def test_reading_never_raises_on_junk(blocksworld):
    domain, inst = blocksworld
    rng = random.Random(5)
    junk = [
        "",
        "   ",
        "[PLAN]",
        "[PLAN END][PLAN END]",
        "((((",
        "(stack)",
        "1." * 500,
        "\x00\x01 stack the",
        "".join(rng.choice("()[]abc stack unstack red block\n-*`#") for _ in range(5000)),
    ]
    for text in junk:
        verdict = domain.verify(inst, text)
        assert verdict.status in {"valid", "invalid", "malformed"}


def test_mystery_answers_use_mystery_templates():
    domain = load_planning_domain("mystery_blocksworld")
    [inst] = domain.load("2", PLANBENCH / "mystery_blocksworld")
    plan = domain.candidate(inst, "correct", random.Random(0))
    assert plan.startswith(("attack object", "feast object", "succumb object", "overcome object"))
    steps = domain.parse(inst, plan)
    numbered = "\n".join(f"{i}. {line.capitalize()}" for i, line in enumerate(plan.splitlines()[:-1], 1))
    assert domain.parse(inst, "Here is my plan:\n" + numbered) == steps
    assert domain.verify(inst, plan).valid
    # Blocksworld words mean nothing here.
    assert domain.parse(inst, "pick up the red block") is None


def test_logistics_answers_pick_truck_or_airplane_actions_from_the_objects():
    domain = load_planning_domain("logistics")
    [inst] = domain.load("1", PLANBENCH / "logistics")  # package p0 at l1-0 must reach l0-0
    answer = """1. load package_0 into airplane_1 at location_1_0
    Hmm, airplane_1 is at location_0_0, so that's wrong. Let me fix it:
    1. fly airplane_1 from location_0_0 to location_1_0
    2. load package_0 into airplane_1 at location_1_0
    3. fly airplane_1 from location_1_0 to location_0_0
    4. unload package_0 from airplane_1 at location_0_0"""
    assert domain.parse(inst, answer) == [
        "(fly-airplane a1 l0-0 l1-0)",
        "(load-airplane p0 a1 l1-0)",
        "(fly-airplane a1 l1-0 l0-0)",
        "(unload-airplane p0 a1 l0-0)",
    ]
    assert domain.verify(inst, answer).valid
    truck = domain.parse(inst, "load package_0 into truck_1 at location_1_0")
    assert truck == ["(load-truck p0 t1 l1-0)"]
