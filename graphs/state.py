"""The state every scheme graph shares, its starting value, and the step limit derived from the rounds."""

from __future__ import annotations

from critiquebench.nodes.context import RunContext, RunState

# A round runs two nodes (generator, then verifier or critic); self-consistency adds one vote at the end. One
# spare step per round keeps old threads (checkpointed when the critic loop had a third node) resumable.
STEPS_PER_ROUND = 3
EXTRA_STEPS = 5


def initial_state(instance_id: str) -> RunState:
    return {
        "instance_id": instance_id,
        "round": 0,
        "next": "generator",
        "done": False,
        "final_round": None,
        "attempt": {},
        "past": [],
    }


def recursion_limit(max_rounds: int) -> int:
    """LangGraph's step limit for a run of at most `max_rounds` generation rounds."""
    return STEPS_PER_ROUND * max(1, max_rounds) + EXTRA_STEPS


def route(state: RunState) -> str:
    """Conditional edges only read the decision the last node wrote, so a resume never re-decides."""
    return state["next"]


__all__ = ["RunContext", "RunState", "initial_state", "recursion_limit", "route"]
