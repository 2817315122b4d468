"""standard: one prompt (sample 0); its answer is final."""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.state import RunContext
from langgraph.graph import StateGraph

DEFAULTS: dict[str, Any] = {"style": None}


def build(ctx: RunContext, *, style: str | None = None) -> StateGraph:
    return verified_loop(ctx, rounds=1, style=style)
