"""What every node of a run shares: the run's context, its small state, and how a round's row is recorded.

The graph state is deliberately tiny and JSON-serialisable (so checkpoints grow linearly in rounds): it holds
the round counter, the routing decision and the LAST attempt only. Everything per round goes to the store's
`attempts` table, one row per (thread, round), upserted so a node re-run after a crash overwrites its own row.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict

import sqlite_utils
from critiquebench.domains.base import Domain, Instance
from critiquebench.store.results import upsert_attempt

from critiquebench.llm.client import Completion

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "llm_calls", "cache_hits")


class RunState(TypedDict, total=False):
    """The checkpointed state of one run (one graph thread).

    `next` is written by the node that decides (so a resume never re-decides a route); conditional edges only
    read it. `attempt` mirrors the current round's `attempts` row (answer text, verdicts, feedback, usage).
    """

    instance_id: str
    round: int  # the round of `attempt`, 1-based; 0 before the first generation
    next: str
    done: bool
    final_round: int | None
    attempt: dict[str, Any]


class ChatLLM(Protocol):
    """The slice of `nodes.llm.LLMClient` the nodes use."""

    def complete(self, messages: Sequence[Mapping[str, str]], sample: int = 0) -> Completion: ...


class Meter:
    """An LLM wrapper that counts the usage of calls since the last `take()`.

    A run's nodes execute one at a time, so one meter per run attributes usage to the node that spent it.
    """

    def __init__(self, llm: ChatLLM) -> None:
        self.llm = llm
        self._lock = threading.Lock()
        self._usage = dict.fromkeys(USAGE_KEYS, 0)

    def complete(self, messages: Sequence[Mapping[str, str]], sample: int = 0) -> Completion:
        done = self.llm.complete(messages, sample=sample)
        with self._lock:
            self._usage["prompt_tokens"] += done.prompt_tokens
            self._usage["completion_tokens"] += done.completion_tokens
            self._usage["llm_calls"] += 1
            self._usage["cache_hits"] += int(done.cached)
        return done

    def take(self) -> dict[str, int]:
        """The usage since the previous take, and reset."""
        with self._lock:
            usage, self._usage = self._usage, dict.fromkeys(USAGE_KEYS, 0)
        return usage


@dataclass(frozen=True)
class RunContext:
    """One run's fixed parts, closed over by its nodes. `db` is None only when a graph is built to draw it."""

    domain: Domain
    instance: Instance
    llm: Meter
    db: sqlite_utils.Database | None
    thread_id: str

    @classmethod
    def create(
        cls,
        domain: Domain,
        instance: Instance,
        llm: ChatLLM,
        db: sqlite_utils.Database | None,
        thread_id: str,
    ) -> RunContext:
        return cls(domain, instance, llm if isinstance(llm, Meter) else Meter(llm), db, thread_id)


def add_usage(attempt: Mapping[str, Any], usage: Mapping[str, int]) -> dict[str, int]:
    """The attempt's usage plus `usage` (from the state, so re-running a node cannot double count)."""
    return {k: int(attempt.get(k) or 0) + int(usage.get(k) or 0) for k in USAGE_KEYS}


def record(ctx: RunContext, round_: int, attempt: Mapping[str, Any], **fields: Any) -> dict[str, Any]:
    """Merge `fields` into the round's attempt, upsert its row, and return the merged attempt."""
    merged = {**attempt, **fields}
    if ctx.db is not None:
        upsert_attempt(ctx.db, ctx.thread_id, round_, **merged)
    return merged


def history(
    ctx: RunContext,
    before_round: int,
    policy: str = "full",
    wrap: Callable[[Instance, str], str] | None = None,
) -> list[dict[str, str]]:
    """Chat turns replaying earlier rounds: each answer as an assistant turn, its critique as a user turn.

    Rebuilt from the `attempts` rows (the state keeps only the last attempt); the `feedback` column holds the
    critique text that was handed back. `policy` "last" keeps only the latest answer and its critique. `wrap`
    turns a critique into the user turn (default: the domain's backprompt wrapper).
    """
    wrap = wrap or ctx.domain.backprompt
    if ctx.db is None or before_round <= 1:
        return []
    rows = list(
        ctx.db.query(
            "SELECT round, answer, feedback FROM attempts WHERE thread_id = ? AND round < ? ORDER BY round",
            [ctx.thread_id, before_round],
        )
    )
    if policy == "last":
        rows = rows[-1:]
    turns: list[dict[str, str]] = []
    for row in rows:
        turns.append({"role": "assistant", "content": row["answer"] or ""})
        turns.append({"role": "user", "content": wrap(ctx.instance, row["feedback"] or "")})
    return turns
