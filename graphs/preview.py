"""What a scheme really sends: run its graph with a stand-in LLM that records every call's messages.

The graph is the one a study runs (`compiled(spec)`), so the messages are the run's own, not a second
rendering of them: the planner prompt with the scheme's shots, the critic's prompt with its examples, and every
later round with the history that the given replies make. The stand-in answers call k with `replies[k-1]` (the
model's answer or the critic's critique, in the order the scheme asks) and "" after them, and stops the run after
`calls` calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from critiquebench.domains.contract import Domain, Instance, Messages
from critiquebench.graphs import compiled, parse_spec
from critiquebench.graphs.state import RunContext, initial_state, recursion_limit


@dataclass(frozen=True)
class Reply:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False


class _Enough(Exception):
    """The stand-in has recorded the calls asked for."""


@dataclass
class Call:
    """One call the scheme made: its messages and the options it asked with (sample, temperature, ...)."""

    messages: Messages
    options: dict[str, Any] = field(default_factory=dict)


class _Recorder:
    def __init__(self, replies: Sequence[str], calls: int) -> None:
        self.replies, self.limit, self.calls = list(replies), calls, []

    def complete(self, messages: Sequence[Mapping[str, str]], sample: int = 0, temperature: float | None = None,
                 **options: Any) -> Reply:  # fmt: skip
        self.calls.append(Call([dict(m) for m in messages], {"sample": sample, "temperature": temperature, **options}))
        if len(self.calls) >= self.limit:
            raise _Enough
        k = len(self.calls) - 1
        return Reply(self.replies[k] if k < len(self.replies) else "")


def scheme_calls(spec: str, domain: Domain, instance: Instance, replies: Sequence[str] = (), calls: int = 1
                 ) -> list[Call]:  # fmt: skip
    """The first `calls` calls scheme `spec` makes on `instance`, the model answering with `replies`."""
    if calls < 1:
        raise ValueError(f"calls must be >= 1, not {calls}")
    parsed = parse_spec(spec)
    recorder = _Recorder(replies, calls)
    ctx = RunContext.create(domain, instance, recorder)
    config = {"recursion_limit": recursion_limit(parsed.max_rounds)}
    try:
        compiled(parsed.label).invoke(initial_state(instance.id), config, context=ctx)
    except _Enough:
        pass
    return recorder.calls
