"""refine: validator-guided refinement. The validator's full feedback goes back verbatim as a chat turn after
the model's answer (no backprompt wrapper), for up to `rounds` generations (4 by default)."""

from __future__ import annotations

from critiquebench.domains.base import FeedbackLevel
from critiquebench.graphs.loops import raw_turn, verified_loop
from critiquebench.graphs.params import feedback, history, rounds, style
from langgraph.graph import StateGraph

PARAMS = (rounds(4), feedback("all"), history(), style())


def build(*, rounds: int, feedback: FeedbackLevel, history: str, style: str | None) -> StateGraph:
    return verified_loop(rounds=rounds, level=feedback, history=history, style=style, wrap=raw_turn)
