"""Voting: a critic's majority over N samples, and self-consistency's vote over the collected answers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from critiquebench.domains.base import Instance, LLMVerdict
from critiquebench.nodes.context import RunContext, RunState, rounds_before
from critiquebench.nodes.sound_verifier import finish
from langgraph.graph import END
from langgraph.runtime import Runtime


def majority(critic: Callable[..., LLMVerdict], instance: Instance, answer: str, n: int) -> LLMVerdict:
    """Ask `critic` with samples 0..n-1; "valid" needs a strict majority (a tie counts as wrong).

    The critique is the first one on the winning side, so a "wrong" majority hands back a reason to fix.
    """
    if n < 1:
        raise ValueError(f"votes must be >= 1, not {n}")
    verdicts = [critic(instance, answer, sample=i) for i in range(n)]
    says_valid = 2 * sum(v.says_valid for v in verdicts) > n
    side = [v for v in verdicts if v.says_valid == says_valid]
    return LLMVerdict(says_valid, side[0].critique if side else "", parsed=any(v.parsed for v in verdicts))


def pick_consistent(rows: list[dict[str, Any]]) -> int:
    """The round whose canonical answer is the most common (ties: the earliest to appear); round 1 when no
    answer could be parsed at all."""
    canon = [(r["round"], r["canonical"]) for r in rows if r["canonical"] is not None]
    if not canon:
        return rows[0]["round"] if rows else 1
    counts = Counter(c for _, c in canon)
    best = max(counts.values())
    return next(round_ for round_, c in canon if counts[c] == best)


def make_consistency_vote() -> Callable[[RunState, Runtime[RunContext]], dict[str, Any]]:
    """Self-consistency's final node: output the most common answer among the run's rounds."""

    def vote(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        rows = rounds_before(runtime.context, state, state["round"] + 1)
        chosen = pick_consistent(rows)
        if chosen == state["round"]:
            return finish(chosen, state["attempt"])
        # an earlier round's row only gains its `stopped` mark: its other fields are recorded already
        return {"attempt": {"round": chosen, "stopped": 1}, "next": END, "done": True, "final_round": chosen}

    return vote
