"""intrinsic: intrinsic self-critique for planning. The model plans (PDDL prompt style), then critiques its
plan in a fresh conversation (no history) with N=5 votes; on a "wrong" majority the request below is appended
to the planning conversation (verbatim; with `show_critique=true` the critique is put before it). Up to 10
rounds; the output is the last plan."""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.loops import critic_loop, raw_turn
from critiquebench.graphs.params import Param, critic, history, rounds, style, votes
from langgraph.graph import StateGraph

REQUEST = "Please can you explain the error and fix it."

PARAMS = (
    rounds(10),
    critic("llm"),
    votes(5),
    history(),
    style("pddl"),
    Param("show_critique", bool, False, "put the critique before the request to fix the plan"),
)


def build(
    *,
    rounds: int,
    critic: str,
    votes: int,
    history: str,
    style: str | None,
    show_critique: bool,
    critic_params: dict[str, Any],
) -> StateGraph:
    def handback(critique: str) -> str:
        return f"{critique.strip()}\n\n{REQUEST}" if show_critique and critique.strip() else REQUEST

    return critic_loop(
        rounds=rounds,
        critic=critic,
        critic_params=critic_params,
        votes=votes,
        style=style,
        history=history,
        wrap=raw_turn,
        handback=handback,
    )
