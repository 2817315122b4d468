"""self-consistency: k samples of the same prompt; the most common canonical answer is output (ties:
earliest).

The sound verdict of every sample is recorded (never used to choose) so reports can score any round.
"""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.cost import Calls
from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.params import samples, style, temperature
from langgraph.graph import StateGraph

PARAMS = (samples(15), style(), temperature())


def build(*, k: int, style: str | None, temperature: float | None) -> StateGraph:
    return verified_loop(rounds=k, mode="sample", policy="collect", style=style, temperature=temperature)


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=int(params["k"]), samples=True, stops=False)  # every sample is drawn, then the vote
