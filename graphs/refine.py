"""refine: validator-guided refinement as Merola et al. ran it. The refinement paper's zero-shot PDDL prompt
(`style=refine`: its system prompt, the full domain and problem, "Can you BUILD A PLAN?"); each plan stays in
the conversation and the validator's first error goes back as VAL's one line inside the study's request
(`feedback=request`: "The plan you provided is invalid. Plan failed to execute. Please provide a corrected
plan."); at most 4 rounds, stopping at the first valid plan; each reply capped at 5000 tokens, the study's
`max_new_tokens=5000` (Singh8899/LLM-Planning-Leonardo, `model_manager.py` `generate_with_validation`).
With the study's request each reply is judged as VAL reads the raw reply file (`ValRead`: an undefined action
anywhere fails the plan, a reply cut off mid-action is no plan). `refine:feedback=all,style=nl` is the earlier
variant (PlanBench's prompt, all errors, our reader). `system=NAME` sends another of the study's system prompts
(or none) and `cot=true` its chain-of-thought line after the prompt: the prompt variants of 004:45-49.
`validator=val` judges with the real VAL (KCL-Planning/VAL's `Validate`, the `val` extra:
`domains.planning.val_binary`) run as the study ran it; the default, our VAL reading, gave the same verdict and
request on all 1093 recorded replies of the study (tests/test_val_binary.py) without a process a step and without
the extra."""

from __future__ import annotations

from typing import Any

from critiquebench.domains.contract import FeedbackLevel, Prompted
from critiquebench.graphs.cost import Calls
from critiquebench.graphs.direct import Blueprint
from critiquebench.graphs.loops import raw_turn, verified_loop
from critiquebench.graphs.params import Param, feedback, history, reply_cap, rounds, style, validator
from critiquebench.nodes.sound_verifier import Reader

# The study's code generates with max_new_tokens=5000 (model_manager.py), so that is refine's cap, not the
# study-wide 512 (which other papers' schemes keep).
STUDY_REPLY_CAP = 5000
# The study's system prompts by their names in its prompts.py @315ac15 (`domains.planning.prompts.REFINE_SYSTEMS`,
# written out here so that listing the schemes does not load the planning domain); the first is the one its code
# sends (model_manager.py:226-227), Figure 1 of the paper, which made its numbers.
SYSTEMS = ("system_prompt_pddl", "system_prompt", "system_prompt_pddl_updated", "system_prompt_pddl_predicates",
           "system_prompt_pddl_predicates_complex", "none")  # fmt: skip
PARAMS = (
    rounds(4), feedback("request"), history(), style("refine"), reply_cap(STUDY_REPLY_CAP),
    Param("system", str, SYSTEMS[0], "the study's system prompt by its name in its prompts.py (style=refine; none: "
          "no system message, its add_system_prompt=False)", SYSTEMS),
    Param("cot", bool, False, "the study's cot_prompt line after the prompt, as its --cot (style=refine)"),
    validator("who judges each reply: ours (our VAL reading of the raw reply) or val (KCL-Planning/VAL's Validate on "
              "the raw reply, its output cut as the study's code cut it; the val extra)"),
)  # fmt: skip


def build(*, rounds: int, feedback: FeedbackLevel, history: str, style: str | None, max_tokens: int | None,
          system: str, cot: bool, validator: str) -> Blueprint:  # fmt: skip
    def variant(domain: Any, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        # another style's prompt is no refinement prompt: `refine_variant` fails that run in one line
        from critiquebench.domains.planning.prompts import DEFAULT, refine_variant

        return refine_variant(messages, domain.prompts if isinstance(domain, Prompted) else DEFAULT, system, cot)

    frame = variant if system != SYSTEMS[0] or cot else None  # the default sends the domain's prompt untouched
    if validator == "val":  # the real VAL: on the raw reply with the study's request, else on the plan we read
        reader: Reader = "val-binary" if feedback == "request" else "binary"
    else:
        reader = "val" if feedback == "request" else "domain"
    return verified_loop(rounds=rounds, level=feedback, history=history, style=style, wrap=raw_turn,
                         max_tokens=max_tokens, reader=reader, frame=frame)  # fmt: skip


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=int(params["rounds"]))
