"""A domain's options given on the command line (`--domain-option KEY=VALUE`), typed as the domain declares them.

A study file's `[domain_options.NAME]` reaches the domain's factory as TOML values; a flag is text, so it is read
here into the same values: each domain declares its options and their types (`declared`), read from the factory's
signature where it names them (planning) or from the module's `OPTIONS` table (factories taking `**options`). A
value is read by its declared type: a string as written, a bool as true/false, an int, and a list or table in
TOML syntax (`[5, 8]`, `{a = 1}`) or, for a list, comma-separated (`prompts=a.toml,b.toml`). A domain whose
options cannot be known (a plug-in factory taking `**options`) takes any key, its value read as TOML or else as
the text. An unknown key is one ValueError naming the domain's options.
"""

from __future__ import annotations

import importlib
import inspect
import tomllib
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from critiquebench.domains.registry import BUILTIN, PLANNING

# Every domain takes these (`get_domain` handles `stop`; `prompts` and `prompt_style` go to every factory).
COMMON: dict[str, Any] = {"stop": list, "prompts": list, "prompt_style": str}
# "DOMAIN:TASK" (PlanBench)
TASK_OPTIONS: dict[str, Any] = {"recorded": str, "instances": str, "seed": int, "state_reading": str}


def declared(name: str) -> dict[str, Any] | None:
    """Option name -> type for domain `name` (a built-in name, "NAME:TASK", a PDDL folder or a plug-in), or None
    when the domain does not say (any key is then passed through)."""
    base, _, task = name.rpartition(":")
    if base and task and (base in BUILTIN or Path(base).is_dir()):
        planning = declared(base)
        return None if planning is None else {**planning, **TASK_OPTIONS}
    target = BUILTIN[name].factory if name in BUILTIN else PLANNING if Path(name).is_dir() else None
    if target is None:
        return None
    module, _, factory = target.partition(":")
    found = getattr(importlib.import_module(module), factory)
    table = getattr(importlib.import_module(module), "OPTIONS", None)
    return {**signature_options(found), **COMMON} if table is None else {**COMMON, **table}


def signature_options(factory: Any) -> dict[str, Any]:
    """Option name -> type of a factory taking the domain's name first: its other named parameters."""
    hints = typing.get_type_hints(factory)
    params = inspect.signature(factory).parameters
    return {
        name: hints.get(name, Any)
        for i, (name, param) in enumerate(params.items())
        if i > 0 and param.kind is not inspect.Parameter.VAR_KEYWORD
    }  # the first: the domain's name


def split_option(text: str) -> tuple[str | None, str, str]:
    """ "KEY=VALUE" or "DOMAIN.KEY=VALUE" as (domain or None, key, value text); ValueError without "="."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--domain-option {text!r}: write KEY=VALUE (or DOMAIN.KEY=VALUE), e.g. reader=lenient")
    domain, _, key = key.strip().rpartition(".")
    return domain or None, key, value.strip()


def options_for(name: str, given: Iterable[str]) -> dict[str, Any]:
    """The typed options `--domain-option` flags give domain `name` (flags naming another domain are skipped)."""
    return assign(list(given), (name,)).get(name, {})


def assign(given: list[str], domains: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Typed options per domain from `--domain-option` flags: "DOMAIN.KEY=V" goes to that domain, "KEY=V" to every
    domain of `domains` that declares KEY (an error when none does). ValueError names a domain's options."""
    out: dict[str, dict[str, Any]] = {}
    for text in given:
        domain, key, value = split_option(text)
        if domain is not None and domain not in domains:
            raise ValueError(f"--domain-option {text!r}: {domain} is not among the domains ({', '.join(domains)})")
        targets = [domain] if domain else [d for d in domains if (k := declared(d)) is None or key in k]
        if not targets:
            targets = [domains[0]]  # none declares it: the first domain's error names its options
        for target in targets:
            out.setdefault(target, {})[key] = typed(target, key, value)
    return out


def typed(domain: str, key: str, value: str) -> Any:
    """`value` as option `key` of `domain` declares it; ValueError for an unknown key or an unreadable value."""
    options = declared(domain)
    if options is None:
        return _toml_or_text(value)
    if key not in options:
        raise ValueError(f"--domain-option {key}: {domain} has no option {key!r}; its options: {', '.join(options)}")
    try:
        return _as(options[key], value)
    except ValueError as exc:
        shown = value if len(value) <= 80 else value[:80] + "…"  # the flag is the user's own: its start says which
        raise ValueError(f"--domain-option {key}={shown}: {exc}") from None


def _as(kind: Any, value: str) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):  # Optional[X] and X | None: the first non-None type
        kind = next(a for a in typing.get_args(kind) if a is not type(None))
        origin = typing.get_origin(kind)
    kind = origin or kind
    if kind is str:
        parsed = _toml_or_text(value)
        return parsed if isinstance(parsed, str) else value
    if kind is bool:
        if value.lower() not in ("true", "false"):
            raise ValueError("write true or false")
        return value.lower() == "true"
    if kind is int:
        try:
            return int(value)
        except ValueError:
            raise ValueError("write an integer") from None
    if kind in (list, tuple):
        parsed = _toml_or_text(value)
        if isinstance(parsed, list):
            return parsed
        return [_toml_or_text(piece.strip()) for piece in value.split(",") if piece.strip()]
    if kind in (dict, Mapping):
        parsed = _toml_or_text(value)
        if not isinstance(parsed, dict):
            raise ValueError("write a TOML inline table, e.g. {a = 1}")
        return parsed
    return _toml_or_text(value)


def _toml_or_text(value: str) -> Any:
    """A TOML value ("true", "3", "[1, 2]", '"x"'), else the text as written ("lenient")."""
    try:
        return tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return value
    except RecursionError:  # tomllib recurses once per level: a value nested thousands deep is no option
        raise ValueError("the value is nested too deeply to read (arrays or tables in tables)") from None
