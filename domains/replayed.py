"""A live domain asked, for some instances, the generation prompt someone else sent: a recorded run's request.

`Wrapper` is a domain holding a live one and forwarding what it does not change; `Replayed(inner, prompts)`
changes one thing: `prompt(instance)` (its default style and
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


class Wrapper:
    """A domain holding a live one (`inner`): what a subclass defines is its own, every other member of the core
    contract and of the capabilities `inner` has is `inner`'s. Built as the subclass that forwards exactly those
    capabilities (see the module docstring)."""

    inner: Any

    def __new__(cls, inner: Any, *args: Any, **kwargs: Any) -> Any:
        base = cls.__dict__.get("_wrapping", cls)
        return super().__new__(_forwarding(base, tuple(c for c in CAPABILITIES if isinstance(inner, c))))

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def _args(self) -> tuple[Any, ...]:
        """The constructor's arguments that rebuild this wrapper (a copy)."""
        return (self.inner,)

    def __reduce__(self) -> tuple[Any, ...]:  # its class is made at run time: rebuilt through the constructor
        return type(self), self._args()

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (a copy being made): never looked up on the inner domain
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def name(self) -> str:
        return str(self.inner.name)

    # ---- the core contract, as the inner domain has it (a subclass changes what it must) ----
    def prompt(self, instance: Instance, style: str | None = None, shots: int | None = None) -> Messages:
        return self.inner.prompt(instance, style, shots)  # type: ignore[no-any-return]

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


class Replayed(Wrapper):
    """`inner` with the recorded generation prompts of the instances `prompts` holds (instance id -> messages)."""

    def __init__(self, inner: Any, prompts: Mapping[str, Sequence[Mapping[str, str]]]) -> None:
        super().__init__(inner)
        self.prompts_sent = {str(k): tuple({"role": m["role"], "content": m["content"]} for m in v)
                             for k, v in prompts.items()}  # fmt: skip

    def _args(self) -> tuple[Any, ...]:
        return self.inner, self.prompts_sent

    def __repr__(self) -> str:
        return f"Replayed({self.inner!r}, {len(self.prompts_sent)} recorded prompt(s))"

    def prompt(self, instance: Instance, style: str | None = None, shots: int | None = None) -> Messages:
        """The recorded messages of `instance` (its default style and shots), else the inner domain's prompt."""
        found = self.prompts_sent.get(instance.id) if style is None and shots is None else None
        if found is not None:
            return [dict(m) for m in found]
        return self.inner.prompt(instance, style, shots)  # type: ignore[no-any-return]


def unwrapped(domain: Any) -> Any:
    """The live domain inside a wrapper (`Replayed`, a replayed PlanBench run), `domain` itself otherwise."""
    while isinstance(domain, Wrapper):
        domain = domain.inner
    return domain


def members(capability: type) -> tuple[str, ...]:
    """The attributes and methods a capability protocol declares."""
    declared = {n for n in vars(capability) if not n.startswith("_")} | set(getattr(capability, "__annotations__", {}))
    return tuple(sorted(declared))


def _forwarded(name: str) -> property:
    return property(lambda self: getattr(self.inner, name), doc=f"the inner domain's {name}")


@functools.cache
def _forwarding(base: type, capabilities: tuple[type, ...]) -> type:
    """The subclass of wrapper `base` that forwards the members of `capabilities` it does not define itself."""
    forwarded = {name: _forwarded(name) for capability in capabilities for name in members(capability)
                 if not hasattr(base, name)}  # fmt: skip
    label = ",".join(c.__name__ for c in capabilities)
    namespace = {"__module__": base.__module__, "__doc__": base.__doc__, "_wrapping": base, **forwarded}
    return type(f"{base.__name__}[{label}]", (base,), namespace)
