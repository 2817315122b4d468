"""A study's definition: domains x instance selections x scheme specs x model x trials.

A study comes from CLI flags, a TOML file, or both (flags override the file). Its full definition is stored in
the store's `studies` table (never an API key), so `resume NAME` and `report NAME` need nothing else.

TOML keys (all optional except domains and schemes; see studies/main.toml):
    domains = ["game24", "coloring"]           schemes = ["standard", "sampling:k=5"]
    instances = "901-905"  |  [instances] game24 = "901-905", coloring = "1-5"
    dataset = "../../shared/datasets"           # relative paths are relative to the TOML file
    figure = "main_figure2.png"                 # `run` also writes Figure 2 here (not part of the study)
    model, base_url, temperature, max_tokens, trials, concurrency, timeout, budget_tokens
    [domain_options.blocksworld] prompt_style = "pddl"
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "smollm2-135m-instruct"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# Operational settings: changing them does not change which results a study produces.
_OPERATIONAL = frozenset({"concurrency", "timeout", "budget_tokens", "replay"})


class ConfigError(ValueError):
    """A study definition that cannot be run; the message says what to change."""


@dataclass(frozen=True)
class StudyConfig:
    name: str
    domains: tuple[str, ...]
    instances: Mapping[str, str]  # domain -> selection ("901-1000", "1,5", "all", "gen:N:SEED")
    schemes: tuple[str, ...]
    dataset: str | None = None  # absolute path, or None for the default data lookup
    model: str = DEFAULT_MODEL
    base_url: str | None = None  # None: the embedded model
    temperature: float = 0.0
    max_tokens: int = 512
    trials: int = 1
    concurrency: int = 4
    timeout: float = 120.0
    budget_tokens: int | None = None
    domain_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    kind: str = "loop"  # "loop" for generate/verify/critique studies, "verify" for verification-only ones
    endpoint_id: str | None = None  # cache identity of a recorded endpoint (e.g. "recorded:planbench")
    replay: bool = False  # answer every call from the cache (recorded studies); never contact an endpoint

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form for the studies table."""
        data = asdict(self)
        data["domains"] = list(self.domains)
        data["schemes"] = list(self.schemes)
        data["instances"] = dict(self.instances)
        data["domain_options"] = {k: dict(v) for k, v in self.domain_options.items()}
        data["base_url"] = stored_url(self.base_url)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StudyConfig:
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["domains"] = tuple(kwargs.get("domains", ()))
        kwargs["schemes"] = tuple(kwargs.get("schemes", ()))
        return cls(**kwargs)

    def identity(self) -> dict[str, Any]:
        """The fields that decide a study's results; a re-run must match them to resume."""
        return {k: v for k, v in self.to_dict().items() if k not in _OPERATIONAL}

    def differences(self, other: StudyConfig) -> list[str]:
        mine, theirs = self.identity(), other.identity()
        return [
            f"{k}: stored {theirs.get(k)!r}, given {mine.get(k)!r}" for k in mine if mine[k] != theirs.get(k)
        ]


def stored_url(url: str | None) -> str | None:
    """A base URL as stored and shown: credentials and secret-looking query values redacted, so neither the
    store nor a "different definition" error holds them, and a new key is not a new study."""
    from critiquebench.llm.urls import redact_url

    return redact_url(url) if url else url


def with_endpoint_secrets(config: Any) -> Any:
    """`config` (a loop or verification study) with its full base URL when the stored one was redacted: the
    secrets come from $OPENAI_BASE_URL, which must be the same URL (ConfigError otherwise)."""
    from critiquebench.llm.urls import REDACTED, redact_url

    if not config.base_url or REDACTED not in config.base_url:
        return config
    given = os.environ.get("OPENAI_BASE_URL")
    if given and redact_url(given) == config.base_url:
        return replace(config, base_url=given)
    raise ConfigError(
        f"study {config.name!r} talks to {config.base_url}, whose secrets are never stored: set OPENAI_BASE_URL "
        "to the full URL (or pass --base-url with `run`)"
    )


def split_list(text: str) -> list[str]:
    """Comma-separated names: "a, b ,c" -> ["a", "b", "c"]."""
    return [part.strip() for part in text.split(",") if part.strip()]


def split_schemes(text: str) -> list[str]:
    """Scheme specs from one comma-separated flag.

    Parameters also use commas ("llm-llm:rounds=10,critic=partial"), so a piece holding "=" but no ":"
    continues the previous spec's parameters; any other piece starts a new spec.
    """
    specs: list[str] = []
    for piece in split_list(text):
        if "=" in piece and ":" not in piece and specs:
            specs[-1] = f"{specs[-1]},{piece}"
        else:
            specs.append(piece)
    return specs


def parse_instances(value: str | Mapping[str, str], domains: tuple[str, ...]) -> dict[str, str]:
    """One selection for every domain ("901-905") or per domain ("game24=901-905,coloring=1,5")."""
    if isinstance(value, Mapping):
        per = {str(k): str(v).strip() for k, v in value.items()}
    elif "=" not in value:
        per = {d: value.strip() for d in domains}
    else:
        per, current = {}, None
        for piece in value.split(","):
            if "=" in piece:
                current, _, sel = piece.partition("=")
                current = current.strip()
                per[current] = sel.strip()
            elif current is None:
                raise ConfigError(f"--instances {value!r}: start with DOMAIN=SELECTION or give one selection")
            else:
                per[current] = f"{per[current]},{piece.strip()}"
    unknown = sorted(set(per) - set(domains))
    if unknown:
        raise ConfigError(f"instance selection for {', '.join(unknown)}, which is not in --domains")
    missing = [d for d in domains if not per.get(d)]
    if missing:  # an empty selection is a mistake, never "everything": that is spelled "all"
        raise ConfigError(
            f"empty instance selection for {', '.join(missing)}: give ids (901-1000, 1,5), all, or gen:N:SEED"
        )
    return {d: per[d] for d in domains}


# What each TOML key must hold, as (check, description); bools are not numbers here, though Python says so.
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return _is_int(v) or isinstance(v, float)


def _is_names(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))


_TOML_TYPES: dict[str, tuple[Any, str]] = {
    "domains": (_is_names, 'a list of names, e.g. ["game24", "coloring"]'),
    "schemes": (_is_names, 'a list of scheme specs, e.g. ["standard", "sampling:k=5"]'),
    "instances": (
        lambda v: isinstance(v, str) or (isinstance(v, dict) and all(isinstance(x, str) for x in v.values())),
        'a selection string such as "901-905", or a table of them per domain',
    ),
    "model": (lambda v: isinstance(v, str), "a string"),
    "base_url": (lambda v: isinstance(v, str), "a URL string"),
    "dataset": (lambda v: isinstance(v, str), "a path string"),
    "figure": (lambda v: isinstance(v, str), "a path string"),
    "temperature": (_is_number, "a number"),
    "timeout": (_is_number, "a number of seconds"),
    "max_tokens": (_is_int, "an integer"),
    "trials": (_is_int, "an integer"),
    "concurrency": (_is_int, "an integer"),
    "budget_tokens": (_is_int, "an integer"),
    "domain_options": (
        lambda v: isinstance(v, dict) and all(isinstance(x, dict) for x in v.values()),
        "a table of tables, e.g. [domain_options.blocksworld]",
    ),
}


def check_toml_types(data: Mapping[str, Any], source: str) -> None:
    """A ConfigError naming the file, the key and the value as written, for the first value of the wrong type."""
    for key, value in data.items():
        check, wanted = _TOML_TYPES.get(key, (None, ""))
        if check is not None and not check(value):
            shown = json.dumps(value) if isinstance(value, str | bool | list) else repr(value)
            raise ConfigError(f"{source}: {key} = {shown}: {key} must be {wanted}")


def read_toml(path: Path) -> dict[str, Any]:
    """The study keys of a TOML file, with `dataset` and `figure` made absolute relative to its folder."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} not found") from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"config file {path} is a directory") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not UTF-8 text") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    check_toml_types(data, f"config file {path}")
    for key in ("dataset", "figure"):  # paths in the file are relative to the file, wherever it is run from
        if isinstance(data.get(key), str):
            data[key] = str((path.parent / data[key]).resolve())
    return data


def build_config(name: str, file_values: Mapping[str, Any], flags: Mapping[str, Any]) -> StudyConfig:
    """Merge TOML values and CLI flags (flags win; None means "not given") and validate the result."""
    merged: dict[str, Any] = {**file_values, **{k: v for k, v in flags.items() if v is not None}}
    merged.pop("name", None)
    unknown = sorted(set(merged) - {f.name for f in fields(StudyConfig)})
    if unknown:
        raise ConfigError(f"unknown study setting(s): {', '.join(unknown)}")
    domains = merged.get("domains")
    domains = tuple(split_list(domains) if isinstance(domains, str) else domains or ())
    schemes = merged.get("schemes")
    schemes = tuple(split_schemes(schemes) if isinstance(schemes, str) else schemes or ())
    if not domains:
        raise ConfigError("no domains: pass --domains game24,coloring,... or set domains in --config")
    if not schemes:
        raise ConfigError("no schemes: pass --schemes standard,llm-llm,... or set schemes in --config")
    if "instances" not in merged:
        raise ConfigError(
            "no instances: pass --instances 901-1000 (or gen:N:SEED) or set instances in --config"
        )
    instances = parse_instances(merged["instances"], domains)  # before the schemes, which import LangGraph
    merged.update(domains=domains, schemes=canonical_schemes(schemes), instances=instances)
    if merged.get("dataset"):
        merged["dataset"] = str(Path(merged["dataset"]).expanduser().resolve())
    if merged.get("base_url") is None and os.environ.get("OPENAI_BASE_URL"):
        # Resolved once and stored, so a resume talks to the same endpoint whatever the environment then is.
        merged["base_url"] = os.environ["OPENAI_BASE_URL"]
    config = StudyConfig(name=name, **merged)
    validate(config)
    return config


def validate(config: StudyConfig) -> None:
    """Clear errors for values that cannot work, before anything is stored or called."""
    if not NAME_RE.match(config.name):
        raise ConfigError(f"study name {config.name!r}: use letters, digits, '_', '-', '.' (no '/')")
    if len(set(config.domains)) != len(config.domains):
        raise ConfigError("a domain is listed twice")
    if len(set(config.schemes)) != len(config.schemes):
        raise ConfigError("a scheme spec is listed twice")
    for key, low in (("trials", 1), ("concurrency", 1), ("max_tokens", 1), ("budget_tokens", 1)):
        value = getattr(config, key)
        if value is None and key == "budget_tokens":
            continue
        if not _is_int(value) or value < low:
            raise ConfigError(f"{key} must be an integer >= {low}, got {value!r}")
    if not _is_number(config.temperature) or not 0.0 <= float(config.temperature) <= 2.0:
        raise ConfigError(f"temperature must be in [0, 2], got {config.temperature}")
    if config.dataset and not Path(config.dataset).exists():
        raise ConfigError(f"dataset {config.dataset} does not exist")


def canonical_schemes(specs: tuple[str, ...]) -> tuple[str, ...]:
    """Specs in the canonical form the scheme registry writes into thread ids and result rows
    ("llm-llm:rounds=10,critic=partial" -> "llm-llm:critic=partial,rounds=10"); unknown schemes or parameters
    raise ConfigError."""
    from critiquebench.graphs import normalize_spec

    out = []
    for spec in specs:
        try:
            out.append(normalize_spec(spec))
        except ValueError as exc:
            raise ConfigError(f"scheme {spec!r}: {exc}") from exc
    if len(set(out)) != len(out):
        raise ConfigError("a scheme spec is listed twice")
    return tuple(out)
