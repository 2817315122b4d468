"""sampling: the same prompt re-asked as samples 0..k-1; the sound verifier stops at the first correct one."""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.state import RunContext
from langgraph.graph import StateGraph

DEFAULTS: dict[str, Any] = {"k": 15, "style": None}


def build(ctx: RunContext, *, k: int = 15, style: str | None = None) -> StateGraph:
    return verified_loop(ctx, rounds=k, mode="sample", style=style)
