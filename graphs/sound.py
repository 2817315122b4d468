"""sound-binary, sound-first, sound-all: LLM + sound verifier, backprompting with the history and the
verifier's feedback at that level (via the domain's backprompt wrapper), until a correct answer or `rounds`
rounds."""

from __future__ import annotations

from typing import Any

from critiquebench.domains.base import FeedbackLevel
from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.state import RunContext
from langgraph.graph import StateGraph


def defaults(level: FeedbackLevel) -> dict[str, Any]:
    return {"rounds": 15, "feedback": level, "history": "full", "style": None}


def build(
    ctx: RunContext,
    *,
    rounds: int = 15,
    feedback: FeedbackLevel = "binary",
    history: str = "full",
    style: str | None = None,
) -> StateGraph:
    return verified_loop(ctx, rounds=rounds, level=feedback, history=history, style=style)
