"""A live domain asked, for some instances, the generation prompt someone else sent: a recorded run's request.

`Replayed(inner, prompts)` holds a live domain and changes one thing: `prompt(instance)` (its default style and
shots) is the recorded messages where `prompts` has the instance (`import samples` with a source's own
prompts), so a replay sends, and its transcript shows, what was sent. Everything else is the inner domain's.

The wrapper has exactly the inner domain's capabilities (`domains.contract`): a capability is a runtime-checkable
protocol, which Python 3.12 checks on the class (`inspect.getattr_static`), not through `__getattr__`, so each
wrapper's class forwards the members of the capabilities its inner domain has, and no other (a scheme the inner
domain cannot serve is still left out with its reason). Anything else (a planning domain's `verify`, `task`, ...)
is forwarded by `__getattr__`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from critiquebench.domains.contract import (
    CallOptions,
    Candidates,
    FeedbackLevel,
    FromFolder,
    Instance,
    Judged,
    Messages,
    PaperLevels,
    Prompted,
    SelfCritiqued,
    Transcribed,
    ValidatorAdvice,
    ValRead,
    Verdict,
)

CAPABILITIES: tuple[type, ...] = (
    Judged, SelfCritiqued, Candidates, Prompted, FromFolder, Transcribed, PaperLevels, ValidatorAdvice, CallOptions,
    ValRead,
)  # fmt: skip


class Replayed:
    """`inner` with the recorded generation prompts of the instances `prompts` holds (instance id -> messages).
    Built as the subclass forwarding `inner`'s capabilities (see the module docstring)."""

    def __new__(cls, inner: Any, prompts: Mapping[str, Sequence[Mapping[str, str]]]) -> Replayed:
        if cls is Replayed:
            cls = _forwarding(tuple(c for c in CAPABILITIES if isinstance(inner, c)))
        return super().__new__(cls)

    def __init__(self, inner: Any, prompts: Mapping[str, Sequence[Mapping[str, str]]]) -> None:
        self.inner = inner
        self.prompts_sent = {str(k): tuple({"role": m["role"], "content": m["content"]} for m in v)
                             for k, v in prompts.items()}  # fmt: skip

    def __reduce__(self) -> tuple[Any, ...]:  # its class is made at run time: rebuilt from its parts
        return Replayed, (self.inner, self.prompts_sent)

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "prompts_sent"):  # not set yet (unpickling): never the inner domain's
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"Replayed({self.inner!r}, {len(self.prompts_sent)} recorded prompt(s))"

    @property
    def name(self) -> str:
        return str(self.inner.name)

    # ---- the one change ----
    def prompt(self, instance: Instance, style: str | None = None, shots: int | None = None) -> Messages:
        found = self.prompts_sent.get(instance.id) if style is None and shots is None else None
        if found is not None:
            return [dict(m) for m in found]
        return self.inner.prompt(instance, style, shots)  # type: ignore[no-any-return]

    # ---- the rest of the core contract, as the inner domain has it ----
    def load(self, selection: str | None = None, path: Path | None = None) -> list[Instance]:
        return self.inner.load(selection, path)  # type: ignore[no-any-return]

    def generate(self, n: int, seed: int) -> list[Instance]:
        return self.inner.generate(n, seed)  # type: ignore[no-any-return]

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        return self.inner.assess(instance, text)  # type: ignore[no-any-return]

    def feedback(self, instance: Instance, verdict: Verdict, level: FeedbackLevel) -> str:
        return self.inner.feedback(instance, verdict, level)  # type: ignore[no-any-return]

    def backprompt(self, instance: Instance, critique: str) -> str:
        return self.inner.backprompt(instance, critique)  # type: ignore[no-any-return]


def unwrapped(domain: Any) -> Any:
    """The live domain inside a `Replayed` one (`domain` itself otherwise)."""
    return domain.inner if isinstance(domain, Replayed) else domain


def members(capability: type) -> tuple[str, ...]:
    """The attributes and methods a capability protocol declares."""
    declared = {n for n in vars(capability) if not n.startswith("_")} | set(getattr(capability, "__annotations__", {}))
    return tuple(sorted(declared))


def _forwarded(name: str) -> property:
    return property(lambda self: getattr(self.inner, name), doc=f"the inner domain's {name}")


@functools.cache
def _forwarding(capabilities: tuple[type, ...]) -> type[Replayed]:
    """The `Replayed` class that forwards the members of `capabilities` to its inner domain."""
    forwarded = {name: _forwarded(name) for capability in capabilities for name in members(capability)}
    label = ",".join(c.__name__ for c in capabilities)
    return type(f"Replayed[{label}]", (Replayed,), {"__module__": __name__, "__doc__": Replayed.__doc__, **forwarded})
