"""refine: validator-guided refinement as Merola et al. ran it. The refinement paper's zero-shot PDDL prompt
(`style=refine`: its system prompt, the full domain and problem, "Can you BUILD A PLAN?"); each plan stays in
the conversation and the validator's first error goes back reformulated into a request (`feedback=request`:
"The plan you provided is invalid. ... at step N. Please provide a corrected plan."); at most 4 rounds, stopping
at the first valid plan. `refine:feedback=all,style=nl` is the earlier variant (PlanBench's prompt, all errors)."""

from __future__ import annotations

from typing import Any

from critiquebench.domains.base import FeedbackLevel
from critiquebench.graphs.cost import Calls
from critiquebench.graphs.direct import Blueprint
from critiquebench.graphs.loops import raw_turn, verified_loop
from critiquebench.graphs.params import feedback, history, rounds, style

PARAMS = (rounds(4), feedback("request"), history(), style("refine"))


def build(*, rounds: int, feedback: FeedbackLevel, history: str, style: str | None) -> Blueprint:
    return verified_loop(rounds=rounds, level=feedback, history=history, style=style, wrap=raw_turn)


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=int(params["rounds"]))
