"""Schemes: one module per scheme builds an uncompiled LangGraph StateGraph from the shared nodes.

`SCHEMES[name](ctx, **params)` builds a scheme's graph (unknown or ill-typed parameters raise ValueError);
`parse_spec("sampling:k=25")` -> ("sampling", {"k": 25}); `format_spec` writes the canonical spec string that
names a scheme configuration in thread ids and result rows. Compilation with the SQLite checkpointer
happens in one place, `critiquebench.studies.execute`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from critiquebench.domains.base import FEEDBACK_LEVELS
from critiquebench.graphs import intrinsic, llm_llm, refine, sampling, self_consistency, sound, standard
from critiquebench.graphs.state import RunContext, initial_state, recursion_limit
from critiquebench.nodes.critics import get_critic_factory
from critiquebench.nodes.generator import HISTORY_POLICIES
from langgraph.graph import StateGraph

CRITIC_PARAM_PREFIX = "critic_"  # extra arguments for a critic factory, e.g. critic_level=first
CHOICES: dict[str, tuple[str, ...]] = {"history": HISTORY_POLICIES, "feedback": FEEDBACK_LEVELS}
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


@dataclass(frozen=True)
class Scheme:
    """A named scheme: its graph builder and its parameters with their defaults (which give their types)."""

    name: str
    builder: Callable[..., StateGraph]
    defaults: Mapping[str, Any]
    doc: str

    def params(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """`given` over the defaults, checked: unknown names and bad values raise ValueError."""
        out = dict(self.defaults)
        for key, value in given.items():
            if key == "critic" and "critic" in self.defaults:
                get_critic_factory(str(value))  # an unknown critic fails here, before anything runs
                out[key] = str(value)
            elif key in self.defaults:
                out[key] = _coerce(self.name, key, value, self.defaults[key])
                if key in CHOICES and out[key] not in CHOICES[key]:
                    choices = ", ".join(CHOICES[key])
                    raise ValueError(
                        f"parameter {key!r} of scheme {self.name!r} must be one of {choices}, not {value!r}"
                    )
            elif key.startswith(CRITIC_PARAM_PREFIX) and "critic" in self.defaults:
                out[key] = _literal(value)
            else:
                valid = ", ".join(self.defaults) or "none"
                raise ValueError(f"unknown parameter {key!r} for scheme {self.name!r}; valid: {valid}")
        return out

    def max_rounds(self, params: Mapping[str, Any]) -> int:
        full = self.params(params)
        return int(full.get("rounds", full.get("k", 1)))

    def __call__(self, ctx: RunContext, **params: Any) -> StateGraph:
        full = self.params(params)
        critic_params = {
            k[len(CRITIC_PARAM_PREFIX) :]: v for k, v in full.items() if k.startswith(CRITIC_PARAM_PREFIX)
        }
        plain = {k: v for k, v in full.items() if not k.startswith(CRITIC_PARAM_PREFIX)}
        if "critic" in self.defaults:
            plain["critic_params"] = critic_params
        return self.builder(ctx, **plain)


def _scheme(name: str, module: Any, defaults: Mapping[str, Any] | None = None) -> Scheme:
    doc = (module.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    return Scheme(name, module.build, dict(defaults if defaults is not None else module.DEFAULTS), doc)


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        _scheme("standard", standard),
        _scheme("llm-llm", llm_llm, llm_llm.defaults("llm")),
        _scheme("llm-llm-cot", llm_llm, llm_llm.defaults("llm-cot")),
        _scheme("sound-binary", sound, sound.defaults("binary")),
        _scheme("sound-first", sound, sound.defaults("first")),
        _scheme("sound-all", sound, sound.defaults("all")),
        _scheme("sampling", sampling),
        _scheme("self-consistency", self_consistency),
        _scheme("intrinsic", intrinsic),
        _scheme("refine", refine),
    )
}


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """ "name" or "name:key=value,key=value" -> (name, checked params as given, typed)."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    if name not in SCHEMES:
        raise ValueError(f"unknown scheme {name!r}; available: {', '.join(SCHEMES)}")
    given: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"bad parameter {part!r} in scheme spec {spec!r}; expected key=value")
        given[key.strip()] = value.strip()
    full = SCHEMES[name].params(given)
    return name, {k: full[k] for k in given}


def format_spec(name: str, params: Mapping[str, Any]) -> str:
    """The canonical spec string (parameters sorted; as given, defaults not added)."""
    if not params:
        return name
    return name + ":" + ",".join(f"{k}={_text(v)}" for k, v in sorted(params.items()))


def normalize_spec(spec: str) -> str:
    return format_spec(*parse_spec(spec))


def build_graph(ctx: RunContext, spec: str) -> StateGraph:
    name, params = parse_spec(spec)
    return SCHEMES[name](ctx, **params)


def _coerce(scheme: str, key: str, value: Any, default: Any) -> Any:
    where = f"parameter {key!r} of scheme {scheme!r}"
    if isinstance(default, bool):
        if isinstance(value, str) and value.lower() in _TRUE + _FALSE:
            return value.lower() in _TRUE
        if isinstance(value, bool):
            return value
        raise ValueError(f"{where} must be true or false, not {value!r}")
    if isinstance(default, int):
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{where} must be an integer, not {value!r}") from None
        if number < 1:
            raise ValueError(f"{where} must be >= 1, not {number}")
        return number
    if isinstance(value, str) and value.lower() in ("", "none", "default"):
        return None
    return value


def _literal(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)


__all__ = [
    "SCHEMES",
    "Scheme",
    "RunContext",
    "build_graph",
    "format_spec",
    "initial_state",
    "normalize_spec",
    "parse_spec",
    "recursion_limit",
]
