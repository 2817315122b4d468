"""The planning verification prompt against PlanBench's, byte for byte, on 100 instances of each kind.

The LLM verifier of the loops sends PlanBench's zero-shot plan-verification prompt on Blocksworld and Mystery
Blocksworld (karthikv792/LLMs-Planning `plan_verification_zero_shot`, after the config's `domain_intro` as
`get_llm_feedback` sends it; the system message is PlanBench's chat one); the verification-only study sends the
self-verification paper's instructions in the same frame. The expected
texts are written here from that template and PlanBench's way of reading a problem (facts as "pred_obj_obj"
strings, sorted, each put through the config's predicate and object templates, joined with ", " and a last
" and "; actions through the config's action templates), from the instance's PDDL and the dataset's
`config.yaml`, independently of our planning modules. Only the candidate plan's actions come from our parser, as
PlanBench's `text_to_plan` reads an answer before it builds the prompt.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
import yaml

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.base import verification_messages
from tests.test_study_cli import DATASETS

PLANBENCH = DATASETS / "planbench"
SYSTEM = "You are the planner assistant who comes up with correct plans."
# LLMs-Planning back_prompting.py@27b0c44:283, the system message of the loop's verifier call
VALIDATOR = ("You are the planner assistant that validates whether a provided plan is correct and provides feedback "
             "if not.")
INSTRUCTION = (
    'Verify whether the above plan is valid. If it is valid, please say "Plan is valid." and nothing else. If it '
    'is invalid, please say "Plan is invalid." and then provide feedback on why the plan fails.'
)


def facts(pddl: str, section: str) -> list[str]:
    """The `(:init ...)` or `(:goal (and ...))` facts of a PlanBench problem as PlanBench names them."""
    body = pddl.split(f"(:{section}", 1)[1]
    body = body.split("(:goal", 1)[0] if section == "init" else body
    return ["_".join(atom.split()) for atom in re.findall(r"\(([a-z][^()]*)\)", body) if atom.strip() != "and"]


def state_text(config: dict[str, Any], names: list[str]) -> str:
    """PlanBench's `get_state_translation`."""
    texts = []
    for name in sorted(names):
        pred, *objs = name.split("_")
        texts.append(config["predicates"][pred].format(*(config["encoded_objects"][o] for o in objs)))
    return ", ".join(texts[:-1]) + f" and {texts[-1]}" if len(texts) > 1 else "".join(texts)


def action_text(config: dict[str, Any], action: str) -> str:
    """PlanBench's `get_action_text` on "(name obj obj)"."""
    name, *objs = action.strip("()").split()
    return config["actions"][name].format(*(config["encoded_objects"][o] for o in objs))


def zero_shot(config: dict[str, Any], pddl: str, actions: list[str]) -> str:
    plan = "\n" + "".join(action_text(config, a) + "\n" for a in actions) + "[PLAN END]\n"
    return (
        config["domain_intro"]
        + f"\n[STATEMENT]\nAs initial conditions I have that, {state_text(config, facts(pddl, 'init')).strip()}."
        + f"\nMy goal is to have that {state_text(config, facts(pddl, 'goal'))}. \nMy plan is as follows:\n\n"
        + f"[PLAN]{plan}\n{INSTRUCTION}"
    )


@pytest.mark.parametrize("name", ["blocksworld", "mystery_blocksworld"])
def test_plan_verification_prompts_are_planbench_s(name: str) -> None:
    config = yaml.safe_load((PLANBENCH / name / "config.yaml").read_text())
    domain = get_domain(name)
    instances = load_instances(domain, "2-101", DATASETS)
    assert len(instances) == 100
    checked = 0
    for inst in instances:
        pddl = (PLANBENCH / name / "instances" / f"instance-{inst.id}.pddl").read_text()
        for kind in domain.candidate_kinds:
            text = domain.candidate(inst, kind, random.Random(f"{inst.id}/{kind}"))
            actions = domain.parse(inst, text)
            assert actions, (inst.id, kind, text)
            # the loop's critic call: the validator's system message (back_prompting.py@27b0c44:277-283)
            expected = [{"role": "system", "content": VALIDATOR}, {"role": "user", "content": zero_shot(config, pddl,
                                                                                                         actions)}]
            assert domain.judge_prompt(inst, "critique", text) == expected, (inst.id, kind)  # the loops' LLM verifier
            # the verification-only study's prompts share the frame (their instructions: test_paper_000_002_planning)
            frame = expected[1]["content"].removesuffix(INSTRUCTION)
            assert verification_messages(domain, inst, text, "default")[1]["content"].startswith(frame)
            checked += 1
    assert checked == 100 * len(domain.candidate_kinds)
