"""self-consistency: k samples of the same prompt; the most common canonical answer is output (ties:
earliest).

The sound verdict of every sample is recorded (never used to choose) so reports can score any round.
"""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.state import RunContext
from langgraph.graph import StateGraph

DEFAULTS: dict[str, Any] = {"k": 15, "style": None}


def build(ctx: RunContext, *, k: int = 15, style: str | None = None) -> StateGraph:
    return verified_loop(ctx, rounds=k, mode="sample", policy="collect", style=style)
