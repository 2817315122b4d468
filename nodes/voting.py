"""Voting: a critic's majority over N samples, and self-consistency's vote over the collected answers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from critiquebench.domains.base import Instance, LLMVerdict
from critiquebench.nodes.context import RunContext, RunState
from critiquebench.nodes.sound_verifier import finish


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


def make_consistency_vote(ctx: RunContext) -> Callable[[RunState], dict[str, Any]]:
    """Self-consistency's final node: output the most common answer among the run's rounds."""

    def vote(state: RunState) -> dict[str, Any]:
        rows = (
            []
            if ctx.db is None
            else list(
                ctx.db.query(
                    "SELECT round, answer, canonical FROM attempts WHERE thread_id = ? ORDER BY round",
                    [ctx.thread_id],
                )
            )
        )
        chosen = pick_consistent(rows)
        attempt = state["attempt"] if chosen == state["round"] else _row(ctx, chosen)
        return finish(ctx, chosen, attempt)

    return vote


def _row(ctx: RunContext, round_: int) -> dict[str, Any]:
    assert ctx.db is not None  # rounds to vote over exist only in a stored run
    sql = "SELECT * FROM attempts WHERE thread_id = ? AND round = ?"
    row = next(iter(ctx.db.query(sql, [ctx.thread_id, round_])))
    return {k: v for k, v in row.items() if k not in ("thread_id", "round")}
