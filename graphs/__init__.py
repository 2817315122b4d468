"""Schemes: one module per scheme builds an uncompiled LangGraph StateGraph from the shared nodes.

A scheme module declares its parameters once, in `PARAMS` (see `graphs/params.py` for how to add one), and a
`build(**params)` that takes them all as keyword-only arguments without defaults. `SCHEMES[name]` wraps
them: `parse_spec("sampling:k=25")` -> Spec("sampling", {"k": 25}) (unknown or ill-typed parameters raise
ValueError naming the valid ones; parsed once per distinct spec string and cached); `spec.params` adds the
defaults; `format_spec` / `spec.label` write the canonical spec string that names a scheme configuration in
thread ids and result rows. A graph takes the run's domain, instance and LLM as LangGraph's runtime context
(`RunContext`), so `compiled(spec)` compiles each scheme configuration once per process; the app layer gives
it a checkpointer per run (`critiquebench.studies.execute`).
"""

from __future__ import annotations

import importlib.metadata
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from critiquebench.domains.contract import Need, PaperLevels, unmet
from critiquebench.graphs import intrinsic, llm_llm, refine, sampling, self_consistency, sound, standard
from critiquebench.graphs.cost import Calls, critic_calls
from critiquebench.graphs.direct import Blueprint, DirectGraph, stepper
from critiquebench.graphs.params import Param, resolve, text, with_defaults
from critiquebench.graphs.state import RunContext, initial_state, recursion_limit

if TYPE_CHECKING:  # LangGraph loads only when a graph is built (graphs.direct)
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph

CRITIC_PARAM_PREFIX = "critic_"  # extra arguments for a critic factory, e.g. critic_level=first
# A package adds a scheme as a module (its docstring, PARAMS, build(**params) and optionally calls(params) and
# max_rounds(params), as the built-in modules have them) named in this entry-point group.
ENTRY_POINT_GROUP = "critiquebench.schemes"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scheme:
    """A named scheme: its graph builder and its declared parameters."""

    name: str
    builder: Callable[..., StateGraph | Blueprint]
    declared: tuple[Param, ...]
    doc: str
    rounds_of: Callable[[Mapping[str, Any]], int] | None = None
    calls_of: Callable[[Mapping[str, Any]], Calls] | None = None
    source: str = "built-in"  # or the plug-in's entry point: "module (distribution)"

    @property
    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.declared}

    @property
    def has_critic(self) -> bool:
        return any(p.name == "critic" for p in self.declared)

    def resolve(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """`given` typed and checked (without the defaults)."""
        return resolve(self.name, self.declared, given, CRITIC_PARAM_PREFIX if self.has_critic else None)

    def params(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """`given` over the defaults, checked: unknown names and bad values raise ValueError."""
        return {**self.defaults, **self.resolve(given)}

    def max_rounds(self, params: Mapping[str, Any]) -> int:
        """The most generation rounds a run can take (a module's own `max_rounds(params)` when it has one)."""
        full = self.params(params)
        if self.rounds_of is not None:
            rounds = self.rounds_of(full)
            if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
                raise ValueError(f"scheme {self.name!r} ({self.source}): max_rounds() gave {rounds!r:.60}, not a "
                                 "count of rounds >= 1")  # fmt: skip
            return rounds
        return int(full.get("rounds", full.get("k", 1)))

    def calls(self, params: Mapping[str, Any]) -> Calls:
        """The LLM calls one run makes (see `graphs.cost`), from the module's own `calls(params)`; a scheme
        without one is counted as a loop of `max_rounds` rounds with a critic call each when it has a critic."""
        full = self.params(params)
        if self.calls_of is not None:
            return _checked_calls(self, self.calls_of(full))
        return Calls(rounds=self.max_rounds(params), critic=critic_calls(full) if self.has_critic else 0)

    def __call__(self, **params: Any) -> StateGraph:
        built = self.blueprint(params)
        return built.graph() if isinstance(built, Blueprint) else built

    def blueprint(self, params: Mapping[str, Any]) -> StateGraph | Blueprint:
        """What the module's `build` returns for `params`: a `Blueprint` (the built-in schemes) or a plug-in's
        own StateGraph."""
        full = self.params(params)
        plain = {k: v for k, v in full.items() if not k.startswith(CRITIC_PARAM_PREFIX)}
        if self.has_critic:
            n = len(CRITIC_PARAM_PREFIX)
            plain["critic_params"] = {k[n:]: v for k, v in full.items() if k.startswith(CRITIC_PARAM_PREFIX)}
        return self.builder(**plain)

    def describe(self) -> dict[str, Any]:
        """A JSON-able description (for `critiquebench schemes`)."""
        return {"name": self.name, "doc": self.doc, "source": self.source,
                "params": [p.describe() for p in self.declared]}  # fmt: skip


def _checked_calls(scheme: Scheme, calls: Any) -> Calls:
    """A plug-in's `calls()` result, or ValueError: the dry run and the runaway guard do arithmetic with it."""
    counts = ("rounds", "critic", "repeats")
    ok = isinstance(calls, Calls) and all(
        isinstance(getattr(calls, c), int) and not isinstance(getattr(calls, c), bool) for c in counts
    )  # fmt: skip
    if not ok or calls.rounds < 1 or calls.critic < 0 or calls.repeats < 1:
        raise ValueError(f"scheme {scheme.name!r} ({scheme.source}): calls() gave {calls!r:.80}, not a "
                         "graphs.cost.Calls of rounds >= 1, critic >= 0, repeats >= 1")  # fmt: skip
    return calls


def _scheme(name: str, module: ModuleType, source: str = "built-in", **defaults: Any) -> Scheme:
    doc = " ".join((module.__doc__ or "").strip().split("\n\n")[0].split())
    rounds_of = getattr(module, "max_rounds", None)
    calls_of = getattr(module, "calls", None)
    return Scheme(name, module.build, with_defaults(module.PARAMS, **defaults), doc, rounds_of, calls_of, source)


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        _scheme("standard", standard),
        _scheme("llm-llm", llm_llm),
        _scheme("llm-llm-cot", llm_llm, critic="llm-cot"),
        _scheme("sound-binary", sound),
        _scheme("sound-first", sound, feedback="first"),
        _scheme("sound-all", sound, feedback="all"),
        _scheme("sampling", sampling),
        _scheme("self-consistency", self_consistency),
        _scheme("intrinsic", intrinsic),
        _scheme("intrinsic-oracle", intrinsic, critic="sound"),
        _scheme("intrinsic-sc", intrinsic, runs=5),
        _scheme("refine", refine),
    )
}


BUILTIN_SCHEMES = frozenset(SCHEMES)


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _plugin(name: str, ep: importlib.metadata.EntryPoint) -> Scheme:
    """The scheme a plug-in's entry point names (its module loaded and checked), or ValueError saying why not."""
    where = f"scheme plug-in {name!r} ({ep.value})"
    try:
        module = ep.load()
    except Exception as exc:  # a broken plug-in must not look like our bug
        raise ValueError(f"{where} failed to load: {exc}") from exc
    missing = [attr for attr in ("PARAMS", "build") if not hasattr(module, attr)]
    if missing or not callable(module.build):
        raise ValueError(f"{where} lacks {' and '.join(missing) or 'a callable build'}: see graphs/refine.py")
    declared = module.PARAMS
    if not isinstance(declared, list | tuple) or not all(isinstance(p, Param) for p in declared):
        raise ValueError(f"{where}: PARAMS must be a tuple of graphs.params.Param, not {declared!r:.60}")
    dist = ep.dist.name if ep.dist is not None else "?"
    try:
        return _scheme(name, module, source=f"{ep.value} ({dist})")
    except Exception as exc:  # a declaration our checks missed: still the plug-in's, in one line
        raise ValueError(f"{where}: {type(exc).__name__}: {exc}") from exc


def load_plugin(name: str) -> bool:
    """Register the installed plug-in scheme `name` in SCHEMES (a built-in name is never replaced); False when no
    plug-in has that name. Loaded on first use, so a study naming no plug-in never imports one."""
    if name in SCHEMES:
        return True
    ep = _entry_points().get(name)
    if ep is None:
        return False
    SCHEMES[name] = _plugin(name, ep)
    return True


def available_schemes() -> list[Scheme]:
    """Built-in schemes, then every installed plug-in's (a plug-in that fails to load is left out with a
    warning and kept in `PLUGIN_ERRORS`; one with a built-in's name is shadowed)."""
    for name, ep in sorted(_entry_points().items()):
        if name in BUILTIN_SCHEMES:
            log.warning("scheme plug-in %r (%s) is shadowed by the built-in scheme", name, ep.value)
            continue
        try:
            load_plugin(name)
        except ValueError as exc:
            PLUGIN_ERRORS[name] = (ep.value, str(exc))
            log.warning("%s", exc)
    return list(SCHEMES.values())


# plug-ins `available_schemes` could not load: name -> (entry point, why), for `critiquebench schemes` to list
PLUGIN_ERRORS: dict[str, tuple[str, str]] = {}


class Spec(NamedTuple):
    """A parsed scheme spec: the scheme's name and the parameters given in the spec (typed)."""

    name: str
    given: dict[str, Any]

    @property
    def scheme(self) -> Scheme:
        return SCHEMES[self.name]

    @property
    def params(self) -> dict[str, Any]:
        """All parameters: the given ones over the defaults."""
        return {**self.scheme.defaults, **self.given}

    @property
    def label(self) -> str:
        """The canonical spec string."""
        return format_spec(self.name, self.given)

    @property
    def max_rounds(self) -> int:
        return self.scheme.max_rounds(self.given)

    @property
    def calls(self) -> Calls:
        """The LLM calls one run of this configuration makes (`graphs.cost.Calls`)."""
        return self.scheme.calls(self.given)

    def build(self) -> StateGraph:
        return self.scheme(**self.given)


def parse_spec(spec: str) -> Spec:
    """ "name" or "name:key=value,key=value" -> Spec(name, checked params as given, typed).

    Parsed once per distinct string (the result is shared: do not mutate `given`).
    """
    return _parse(spec)


@lru_cache(maxsize=1024)
def _parse(spec: str) -> Spec:
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    if not load_plugin(name):
        raise ValueError(f"unknown scheme {name!r}; available: {', '.join([*SCHEMES, *sorted(_entry_points())])}")
    given: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"bad parameter {part!r} in scheme spec {spec!r}; expected key=value")
        given[key.strip()] = value.strip()
    return Spec(name, SCHEMES[name].resolve(given))


def format_spec(name: str, params: Mapping[str, Any]) -> str:
    """The canonical spec string (parameters sorted; as given, defaults not added)."""
    if not params:
        return name
    return name + ":" + ",".join(f"{k}={text(v)}" for k, v in sorted(params.items()))


def normalize_spec(spec: str) -> str:
    return parse_spec(spec).label


def build_graph(spec: str) -> StateGraph:
    return parse_spec(spec).build()


def needs(spec: str) -> tuple[Need, ...]:
    """What scheme `spec` needs of a domain beyond the core contract, as alternatives (one is enough): its
    critic's needs (its `nodes.critics.CRITICS` row); nothing for schemes without a critic."""
    from critiquebench.nodes.critics import critic_needs

    parsed = parse_spec(spec)
    return critic_needs(parsed.params["critic"]) if parsed.scheme.has_critic else ()


def unsupported(spec: str, domain: Any) -> str | None:
    """Why scheme `spec` cannot run on `domain`, in the domain's words (e.g. llm-llm-cot on a planning domain:
    no published chain-of-thought verification prompt), or None. It compares what the scheme needs with the
    capabilities the domain declares (`domains.contract`); asked before a study starts, so the combination is
    left out, not failed. A feedback level the domain did not have in its paper (`unsupported_levels`, e.g.
    Game of 24's all-errors feedback, 000:238) is left out the same way."""
    level = parse_spec(spec).params.get("feedback")
    if isinstance(level, str) and isinstance(domain, PaperLevels) and (why := domain.unsupported_levels.get(level)):
        return str(why)
    return unmet(domain, needs(spec))


@lru_cache(maxsize=256)
def direct(spec: str) -> DirectGraph | None:
    """The scheme configuration's graph to step without LangGraph (a replay's runs: `graphs.direct`), or None
    when it must go through LangGraph (a plug-in's own StateGraph, the intrinsic scheme's state)."""
    parsed = parse_spec(spec)
    return stepper(parsed.scheme.blueprint(parsed.given))


@lru_cache(maxsize=256)
def compiled(spec: str) -> CompiledStateGraph:
    """The scheme configuration's graph, compiled without a checkpointer (give one per run with
    `.copy(update={"checkpointer": saver})`)."""
    return parse_spec(spec).build().compile()


__all__ = [
    "ENTRY_POINT_GROUP",
    "SCHEMES",
    "available_schemes",
    "Calls",
    "Param",
    "Scheme",
    "Spec",
    "RunContext",
    "build_graph",
    "compiled",
    "direct",
    "format_spec",
    "needs",
    "initial_state",
    "normalize_spec",
    "parse_spec",
    "recursion_limit",
    "unsupported",
]
