"""refine: validator-guided refinement as Merola et al. ran it. The refinement paper's zero-shot PDDL prompt
(`style=refine`: its system prompt, the full domain and problem, "Can you BUILD A PLAN?"); each plan stays in
the conversation and the validator's first error goes back as VAL's one line inside the study's request
(`feedback=request`: "The plan you provided is invalid. Plan failed to execute. Please provide a corrected
plan."); at most 4 rounds, stopping at the first valid plan; each reply capped at 5000 tokens, the study's
`max_new_tokens=5000` (Singh8899/LLM-Planning-Leonardo, `model_manager.py` `generate_with_validation`).
With the study's request each reply is judged as VAL reads the raw reply file (`ValRead`: an undefined action
anywhere fails the plan, a reply cut off mid-action is no plan). `refine:feedback=all,style=nl` is the earlier
variant (PlanBench's prompt, all errors, our reader)."""

from __future__ import annotations

from typing import Any

from critiquebench.domains.contract import FeedbackLevel
from critiquebench.graphs.cost import Calls
from critiquebench.graphs.direct import Blueprint
from critiquebench.graphs.loops import raw_turn, verified_loop
from critiquebench.graphs.params import feedback, history, reply_cap, rounds, style

# The study's code generates with max_new_tokens=5000 (model_manager.py), so that is refine's cap, not the
# study-wide 512 (which other papers' schemes keep).
STUDY_REPLY_CAP = 5000
PARAMS = (rounds(4), feedback("request"), history(), style("refine"), reply_cap(STUDY_REPLY_CAP))


def build(*, rounds: int, feedback: FeedbackLevel, history: str, style: str | None, max_tokens: int | None
          ) -> Blueprint:  # fmt: skip
    return verified_loop(rounds=rounds, level=feedback, history=history, style=style, wrap=raw_turn,
                         max_tokens=max_tokens, reader="val" if feedback == "request" else "domain")  # fmt: skip


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=int(params["rounds"]))
