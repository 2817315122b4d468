"""llm-llm (and llm-llm-cot): the LLM generates, the same LLM verifies and critiques (a critic without the
history), the critique is backprompted with the full history; stop when the critic says correct or after
`rounds` rounds. The sound verdict of every answer is recorded beside the critic's (FP/FN rates)."""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.loops import critic_loop
from critiquebench.graphs.state import RunContext
from langgraph.graph import StateGraph


def defaults(critic: str) -> dict[str, Any]:
    return {"rounds": 15, "critic": critic, "votes": 1, "history": "full", "style": None}


def build(
    ctx: RunContext,
    *,
    rounds: int = 15,
    critic: str = "llm",
    votes: int = 1,
    history: str = "full",
    style: str | None = None,
    critic_params: dict[str, Any] | None = None,
) -> StateGraph:
    return critic_loop(
        ctx,
        rounds=rounds,
        critic=critic,
        critic_params=critic_params or {},
        votes=votes,
        style=style,
        history=history,
    )
