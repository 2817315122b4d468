"""What every node of a run shares: the run's context, its checkpointed state, and the small LLM protocol.

Nodes compute; they never store. A node reads the state and the run's context (LangGraph's runtime context:
`graph.invoke(..., context=RunContext(...))`, so one compiled graph serves every run) and returns a state
update. The app layer records each update's `attempt` as the round's row (`critiquebench.studies.execute`).

The state is small and JSON-serialisable: the round counter, the routing decision, the current round's attempt
and, for the prompts' history and self-consistency's vote, the few fields of each finished round (`past`,
accumulated by a reducer).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Protocol, TypedDict

from critiquebench.domains import call_options
from critiquebench.domains.contract import Domain, Instance

END = "__end__"  # LangGraph's name of a graph's end (langgraph.graph.END), where a node that decides ends a run
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "llm_calls", "cache_hits")
PAST_KEYS = ("round", "answer", "canonical", "feedback")  # what later rounds read of a finished round


def merge_past(left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Entries by round, a later entry for the same round replacing the earlier one."""
    by_round = {e["round"]: e for e in (left or [])}
    by_round.update({e["round"]: e for e in (right or [])})
    return [by_round[r] for r in sorted(by_round)]


def _fold_past(state: list[dict[str, Any]] | None, writes: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The reducer of `past` over a batch of writes (the same result however the writes are batched)."""
    return merge_past(state, [entry for write in writes for entry in write or ()])


def DeltaChannel(reducer: Callable[..., Any]) -> Any:  # noqa: N802 - the name RunState's annotation gives
    """LangGraph's DeltaChannel over `reducer`, imported when a StateGraph reads RunState's annotations (they are
    strings until then): importing the nodes does not import LangGraph (see `graphs.direct`)."""
    from langgraph.channels.delta import DeltaChannel as channel

    return channel(reducer)


class RunState(TypedDict, total=False):
    """The checkpointed state of one run (one graph thread).

    `next` is written by the node that decides (so a resume never re-decides a route); conditional edges only
    read it. `attempt` holds the fields of one round's row as the last node left them, with its `round`
    (answer text, verdicts, feedback, usage). `past` holds `PAST_KEYS` of every judged round.
    """

    instance_id: str
    round: int  # the current round, 1-based; 0 before the first generation
    next: str
    done: bool
    final_round: int | None
    attempt: dict[str, Any]
    # A delta channel: checkpoints store each round's entry once (as the node's write), not the whole list at
    # every step, so checkpoint bytes stay linear in rounds.
    past: Annotated[list[dict[str, Any]], DeltaChannel(_fold_past)]


class Reply(Protocol):
    """One answered LLM call, as nodes see it."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool


class ChatLLM(Protocol):
    """All that nodes need of an LLM client (`critiquebench.llm.client.LLMClient` is one)."""

    def complete(
        self, messages: Sequence[Mapping[str, str]], sample: int = 0, temperature: float | None = None
    ) -> Reply: ...


# The cached "answer" of a call that a recorded run saw fail because the conversation outgrew the model's
# context window (PlanBench's `context_window_hit`, stored by `import planbench`): `Meter` raises
# ContextOverflow on it, and the feedback loops end there with the last judged answer, as PlanBench's did.
RECORDED_CONTEXT_OVERFLOW = "[critiquebench: recorded call failed: context window exceeded]"


class ContextOverflow(RuntimeError):
    """The call failed because the conversation no longer fits the model's context window (as recorded)."""


class Meter:
    """An LLM wrapper that counts the usage of calls since the last `take()`.

    A run's nodes execute one at a time, so one meter per run attributes usage to the node that spent it.
    """

    def __init__(self, llm: ChatLLM, options: Mapping[str, Any] | None = None) -> None:
        self.llm = llm
        self.options = dict(options or {})  # every call's (the domain's `call_options`: its stop sequences)
        self._lock = threading.Lock()
        self._usage = dict.fromkeys(USAGE_KEYS, 0)
        self._keys: list[str] = []

    def complete(
        self, messages: Sequence[Mapping[str, str]], sample: int = 0, temperature: float | None = None, **options: Any
    ) -> Reply:
        """`options` (e.g. a scheme's `max_tokens`) go to the client as they are; none are sent when none are given,
        so simple clients need only the protocol's arguments."""
        done = self.llm.complete(messages, sample=sample, temperature=temperature, **{**self.options, **options})
        with self._lock:
            self._usage["prompt_tokens"] += done.prompt_tokens
            self._usage["completion_tokens"] += done.completion_tokens
            self._usage["llm_calls"] += 1
            self._usage["cache_hits"] += int(done.cached)
            if isinstance(key := getattr(done, "key", None), str):
                self._keys.append(key)
        if done.text == RECORDED_CONTEXT_OVERFLOW:
            raise ContextOverflow("the recorded call failed: the conversation outgrew the context window")
        return done

    def take_keys(self) -> list[str]:
        """The cache keys of the calls since the previous `take_keys`, in call order, and reset (the app
        layer records them per node step, so a transcript can show every call of a run)."""
        with self._lock:
            keys, self._keys = self._keys, []
        return keys

    def take(self) -> dict[str, int]:
        """The usage since the previous take, and reset."""
        with self._lock:
            usage, self._usage = self._usage, dict.fromkeys(USAGE_KEYS, 0)
        return usage


@dataclass(frozen=True)
class RunContext:
    """One run's fixed parts, passed to every node as LangGraph's runtime context.

    `prior` holds finished rounds (`PAST_KEYS`) of a thread checkpointed before the state carried `past`
    (stores written by older versions); it is empty for every thread started since.
    """

    domain: Domain
    instance: Instance
    llm: Meter
    thread_id: str = ""
    prior: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def create(
        cls, domain: Domain, instance: Instance, llm: ChatLLM, thread_id: str = "", prior: Sequence[Mapping] = ()
    ) -> RunContext:
        meter = llm if isinstance(llm, Meter) else Meter(llm, call_options(domain))
        return cls(domain, instance, meter, thread_id, tuple(prior))


def add_usage(attempt: Mapping[str, Any], usage: Mapping[str, int]) -> dict[str, int]:
    """The attempt's usage plus `usage` (from the state, so re-running a node cannot double count)."""
    return {k: int(attempt.get(k) or 0) + int(usage.get(k) or 0) for k in USAGE_KEYS}


def past_entry(attempt: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The `past` update that records a judged round."""
    return [{k: attempt.get(k) for k in PAST_KEYS}]


def rounds_before(ctx: RunContext, state: Mapping[str, Any], before_round: int) -> list[dict[str, Any]]:
    """The judged rounds before `before_round`, oldest first (from the state, and `prior` for old threads)."""
    merged = merge_past([dict(e) for e in ctx.prior], state.get("past"))
    return [e for e in merged if e["round"] < before_round]


def history(
    ctx: RunContext,
    state: Mapping[str, Any],
    before_round: int,
    policy: str = "full",
    wrap: Callable[[Instance, str], str] | None = None,
) -> list[dict[str, str]]:
    """Chat turns replaying earlier rounds: each answer as an assistant turn, its critique as a user turn.

    `policy` "last" keeps only the latest answer and its critique. `wrap` turns a critique into the user turn
    (default: the domain's backprompt wrapper).
    """
    wrap = wrap or ctx.domain.backprompt
    rows = rounds_before(ctx, state, before_round)
    if policy == "last":
        rows = rows[-1:]
    turns: list[dict[str, str]] = []
    for row in rows:
        turns.append({"role": "assistant", "content": row["answer"] or ""})
        turns.append({"role": "user", "content": wrap(ctx.instance, row["feedback"] or "")})
    return turns
