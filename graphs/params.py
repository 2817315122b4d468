"""Typed scheme parameters: each scheme declares its parameters once (type, default, choices, help).

A scheme module lists its parameters in `PARAMS` and its `build()` takes them as keyword-only arguments
WITHOUT defaults: the declaration is the only place a default is written. To add a parameter to a scheme:

    PARAMS = (rounds(15), STYLE, Param("temperature", float, 0.0, "sampling temperature", minimum=0.0))

    def build(*, rounds: int, style: str | None, temperature: float) -> StateGraph: ...

and it is parsed from specs (`sampling:temperature=1.0`), checked (a bad value is an error naming the valid
ones), listed by `critiquebench schemes` and passed to `build()`. Only parameters given in a spec name the
configuration (thread ids, result rows), so adding a parameter keeps existing studies' names unchanged as
long as its default keeps the old behaviour.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from critiquebench.domains.contract import FEEDBACK_LEVELS, PROMPT_STYLES
from critiquebench.nodes.generator import HISTORY_POLICIES, NO_CAP

_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
_NONE = ("", "none", "default")
TYPE_NAMES = {bool: "bool", int: "int", float: "float", str: "str"}


@dataclass(frozen=True)
class Param:
    """One scheme parameter. `nullable` lets "none" (or "default") mean the default behaviour (None);
    `choices` lists the allowed values of a str parameter; `minimum` and `maximum` bound an int or float one
    (every number has both: its documented range, which `critiquebench schemes` lists; NaN and infinities are
    never accepted); `check` validates a value further (raising ValueError), e.g. that a critic is registered."""

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = False
    check: Callable[[Any], None] | None = None
    none: Any = None  # what "none" stands for, where it is not the default behaviour (a reply cap's `NO_CAP`)

    def coerce(self, value: Any, scheme: str) -> Any:
        """`value` (a spec's text, or a TOML value) as this parameter's type; ValueError naming what is valid."""
        where = f"parameter {self.name!r} of scheme {scheme!r}"
        if self.nullable and self.none is not None and (value is None or isinstance(value, str)):
            word = "default" if value is None else value.strip().lower() or "default"
            if word in _NONE:  # "none": the sentinel; "default" stays a word, so the spec's label says which
                return self.none if word == "none" else "default"
        if self.nullable and (value is None or (isinstance(value, str) and value.strip().lower() in _NONE)):
            return None
        if self.type is bool:
            out = _bool(value, where)
        elif self.type in (int, float):
            out = _number(self.type, value, where)
            if not math.isfinite(out):
                raise ValueError(f"{where} must be a finite number, not {_text(out)}")
            if self.minimum is not None and out < self.minimum:
                raise ValueError(f"{where} must be >= {_text(self.minimum)}, not {_text(out)}")
            if self.maximum is not None and out > self.maximum:
                raise ValueError(f"{where} must be <= {_text(self.maximum)}, not {_text(out)}")
        else:
            out = str(value).strip()
        if self.choices is not None and out not in self.choices:
            valid = ", ".join(map(_text, self.choices)) + (", none" if self.nullable else "")
            raise ValueError(f"{where} must be one of {valid}, not {value!r}")
        if self.check is not None:
            self.check(out)
        return out

    def describe(self) -> dict[str, Any]:
        """A JSON-able description (for `critiquebench schemes`)."""
        return {
            "name": self.name,
            "type": TYPE_NAMES.get(self.type, self.type.__name__),
            "default": self.default,
            "choices": list(self.choices) if self.choices is not None else None,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "nullable": self.nullable,
            "help": self.help,
        }


def with_defaults(params: Iterable[Param], **defaults: Any) -> tuple[Param, ...]:
    """`params` with some defaults changed (for scheme variants such as sound-first vs sound-all)."""
    out = tuple(replace(p, default=defaults.pop(p.name)) if p.name in defaults else p for p in params)
    if defaults:
        raise ValueError(f"no parameter(s) {', '.join(defaults)} to set a default for")
    return out


def resolve(scheme: str, params: Iterable[Param], given: Mapping[str, Any], open_prefix: str | None = None) -> dict:
    """The typed values of `given` (by name; unknown names are an error naming the valid ones). Names starting
    with `open_prefix` pass through untyped (extra arguments for a plug-in, e.g. `critic_level=all`)."""
    declared = {p.name: p for p in params}
    out: dict[str, Any] = {}
    for key, value in given.items():
        if key in declared:
            out[key] = declared[key].coerce(value, scheme)
        elif open_prefix is not None and key.startswith(open_prefix) and len(key) > len(open_prefix):
            out[key] = _literal(value)
        else:
            valid = ", ".join(declared) or "none"
            raise ValueError(f"unknown parameter {key!r} for scheme {scheme!r}; valid: {valid}")
    return out


def text(value: Any) -> str:
    """A parameter value as written in a canonical spec string."""
    return _text(value)


# The largest values a spec may give (the papers use at most 15 rounds, 25 samples, 10 steps, 5 runs): enough for
# any ablation, small enough that a typo such as k=1000000000 is an error instead of a study that never ends.
MAX_ROUNDS = 1000
MAX_SAMPLES = 1000
MAX_VOTES = 100
MAX_TEMPERATURE = 2.0  # the OpenAI API's
MAX_SHOTS = 1000  # example problems in a prompt
MAX_TOKENS = 10_000_000  # a prompt or reply length in tokens


# The parameters several schemes share; a scheme picks the ones it has, with its own default where it differs.
def rounds(default: int) -> Param:
    """Parameter `rounds`: most generation rounds before the run stops."""
    return Param("rounds", int, default, "most generation rounds before the run stops", minimum=1,
                 maximum=MAX_ROUNDS)  # fmt: skip


def samples(default: int) -> Param:
    """Parameter `k`: samples of the same prompt."""
    return Param("k", int, default, "number of samples of the same prompt", minimum=1, maximum=MAX_SAMPLES)


def temperature(default: float | None = None) -> Param:
    """Parameter `temperature`: the scheme's own sampling temperature (none: the study's)."""
    return Param(
        "temperature", float, default,
        "sampling temperature of this scheme's generations (none: the study's temperature)",
        minimum=0.0, maximum=MAX_TEMPERATURE, nullable=True,
    )  # fmt: skip


def votes(default: int) -> Param:
    """Parameter `votes`: critic samples per round."""
    return Param("votes", int, default, "critic samples per round; 'valid' needs a strict majority", minimum=1,
                 maximum=MAX_VOTES)  # fmt: skip


def feedback(default: str) -> Param:
    """Parameter `feedback`: how much of the sound verifier's feedback goes back (a feedback level)."""
    return Param("feedback", str, default, "how much of the sound verifier's feedback goes back", FEEDBACK_LEVELS)


def style(default: str | None = None) -> Param:
    """Parameter `style`: the prompt style of planning domains."""
    return Param(
        "style",
        str,
        default,
        "prompt style of planning domains (none: the domain's own; other domains have one style)",
        PROMPT_STYLES,
        nullable=True,
    )


# A scheme's `max_tokens=none` is `NO_CAP`: no cap (the request carries no length field), as `intrinsic`'s and
# the study's own `max_tokens = "none"` mean; left out (or "default"), the scheme takes the study's setting.


def reply_cap(default: int | str = "default") -> Param:
    """A scheme's own cap on each generated reply, sent as the request's `max_tokens` (not given or "default":
    the study's setting, 512 unless the study says otherwise; "none": no cap, `NO_CAP`)."""
    return Param("max_tokens", int, default, "longest generated reply in tokens (default: the study's max_tokens; "
                 "none: no cap)", minimum=1, maximum=MAX_TOKENS, nullable=True, none=NO_CAP)  # fmt: skip


VALIDATORS = ("ours", "val")


def _val_installed(value: str) -> None:
    if value == "val":
        from critiquebench.domains.planning.val_binary import ValUnavailable, validate_path

        try:
            validate_path()
        except ValUnavailable as exc:  # a bad spec's ValueError: one line saying how to install it
            raise ValueError(str(exc)) from None


def validator(help: str) -> Param:
    """Parameter `validator`: our validator (default: no process a step, the same verdicts on every recorded reply
    compared) or the real VAL (KCL-Planning/VAL's `Validate` from the `val` extra, `domains.planning.val_binary`)."""
    return Param("validator", str, "ours", help, VALIDATORS, check=_val_installed)


def history(default: str = "full") -> Param:
    """Parameter `history`: earlier rounds in the prompt, all or only the last."""
    return Param(
        "history", str, default, "earlier rounds in the prompt: all of them, or only the last", HISTORY_POLICIES
    )


def critic(default: str) -> Param:
    """Parameter `critic`: the critic by name (built-in or plug-in), its arguments as critic_KEY=VALUE."""
    def registered(name: str) -> None:
        from critiquebench.nodes.critics import get_critic_factory

        get_critic_factory(name)  # an unknown critic fails here, before anything runs

    return Param(
        "critic",
        str,
        default,
        "the critic (`critiquebench critics`); its arguments as critic_KEY=VALUE",
        check=registered,
    )


def _bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(f"{where} must be true or false, not {value!r}")


def _number(kind: type, value: Any, where: str) -> Any:
    noun = "an integer" if kind is int else "a number"
    if isinstance(value, bool) or (kind is int and isinstance(value, float)):
        raise ValueError(f"{where} must be {noun}, not {value!r}")
    try:
        return kind(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be {noun}, not {value!r}") from None


def _literal(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)
