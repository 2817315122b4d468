"""standard: one prompt (sample 0); its answer is final."""

from __future__ import annotations

from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.params import style
from langgraph.graph import StateGraph

PARAMS = (style(),)


def build(*, style: str | None) -> StateGraph:
    return verified_loop(rounds=1, style=style)
