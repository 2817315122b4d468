"""A study's definition, one type for both kinds of study.

A loop study (`run`) is domains x instance selections x scheme specs x model x trials; a verification-only
study (`verify-study`) is domains x instance selections x candidate kinds x model. Either comes from CLI flags,
a TOML file, or both (flags override the file). Its definition is stored in the store's `studies` table (never
an API key, only the settings of its kind, so stores written before the two kinds shared a type read and compare
the same), and `resume NAME` and `report NAME` need nothing else.

TOML keys (all optional except domains and, for a loop study, schemes; see studies/*.toml):
    domains = ["game24", "coloring"]           schemes = ["standard", "sampling:k=5"]   # loop
    instances = "901-905"  |  [instances] game24 = "901-905", coloring = "1-5"
    dataset = "../../shared/datasets"           # relative paths are relative to the TOML file
    figure = "main_figure2.png"                 # `run` also writes Figure 2 here (not part of the study)
    model, base_url, temperature, max_tokens, concurrency, timeout   # max_tokens = "none": no cap
    trials, budget_tokens                       # loop studies
    kinds, per_kind, from_study, cot, seed      # verification-only studies
    [kinds] coloring = ["correct", "llm"],  [from_study] coloring = "loops"   # the same, per domain
    llm_instances = "1-100" | [llm_instances] game24 = "1-100",  llm_per_instance = 1   # (with from_study)
    [candidate_files] game24 = "self_verification/game24_verification"   # the study's own candidates
    [domain_options.blocksworld] prompt_style = "pddl"
    [domain_options.game24] stop = ["[ANSWER END]"]   # every LLM call for the domain carries these stop sequences
    prompts = ["self_verification.toml"]       # prompt files over the built-in sets (domains/prompts/), for every
                                                # domain (or per domain: [domain_options.game24] prompts = [...])
A study records the label (name@version, and a file's digest) of every prompt set it used as `prompt_sets`.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "smollm2-135m-instruct"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# Operational settings: changing them does not change which results a study produces.
_OPERATIONAL = frozenset({"concurrency", "timeout", "budget_tokens", "replay", "unrecorded"})
LOOP, VERIFY = "loop", "verify"
# The range of every integer setting (README: "Study settings"). The upper ends are far above any paper's study
# and stop a typo (trials = 1000000000) from becoming a study that fills memory or never ends.
RANGES: dict[str, tuple[int, int]] = {"trials": (1, 1000), "concurrency": (1, 1024), "max_tokens": (1, 1_000_000),
                                      "budget_tokens": (1, 10**12), "per_kind": (1, 1000),
                                      "llm_per_instance": (0, 10_000)}  # fmt: skip
MAX_TIMEOUT_S = 3600.0
MAX_TEMPERATURE = 2.0  # the OpenAI API's (graphs.params has the same bound for a scheme's own)
NO_CAP = "none"  # max_tokens = "none": no length cap (TOML has no null)  # seconds per LLM call
# The settings only one kind of study has; a study stores (and compares) the shared ones and its own.
# Settings added later are stored only when set, so the definitions of older studies stay as they were.
_STORED_WHEN_SET = {"llm_instances": {}, "llm_per_instance": 0, "prompt_sets": {}, "candidate_files": {},
                    "unrecorded": ()}  # fmt: skip
# A verification study replays a recording only since verify studies had these: stored only when set, so the
# definitions of the others read and store as before.
_VERIFY_WHEN_SET = {"endpoint_id": None, "replay": False}
_ONLY = {
    LOOP: frozenset({"schemes", "trials", "budget_tokens", "unrecorded"}),
    VERIFY: frozenset({"kinds", "per_kind", "from_study", "llm_instances", "llm_per_instance", "cot", "seed",
                       "candidate_files"}),
}
_COMMAND = {LOOP: "run", VERIFY: "verify-study"}


class ConfigError(ValueError):
    """A study definition that cannot be run; the message says what to change."""


@dataclass(frozen=True)
class StudyConfig:
    """A loop study (kind "loop": `run`) or a verification-only one (kind "verify": `verify-study`)."""

    name: str
    domains: tuple[str, ...]
    instances: Mapping[str, str]  # domain -> selection ("901-1000", "1,5", "all", "gen:N:SEED")
    schemes: tuple[str, ...] = ()  # loop: scheme specs, canonical
    # verify: candidate kinds (empty: every kind the domain makes), for every domain or per domain (a domain
    # the table leaves out judges every kind it makes)
    kinds: tuple[str, ...] | Mapping[str, tuple[str, ...]] = ()
    per_kind: int = 1  # verify: candidates of each kind per instance
    # verify: also judge this study's LLM answers, or per domain the study whose answers it judges (a domain the
    # table leaves out judges none)
    from_study: str | Mapping[str, str] | None = None
    llm_instances: Mapping[str, str] = field(default_factory=dict)  # verify: whose earlier answers (domain -> sel)
    llm_per_instance: int = 0  # verify: earlier answers per instance, drawn at random; 0: every distinct one
    cot: bool = False  # verify: the chain-of-thought verifier prompt
    # verify: per domain, the study's own candidate files (a folder, or a PlanBench results file for the llm
    # kind), relative to the dataset root: their texts replace our generators' (`domains.study_files`)
    candidate_files: Mapping[str, str] = field(default_factory=dict)
    seed: int = 0  # verify: seed of the candidate generators
    dataset: str | None = None  # absolute path, or None for the default data lookup
    model: str = DEFAULT_MODEL
    base_url: str | None = None  # None: the embedded model
    temperature: float = 0.0
    max_tokens: int | None = 512  # None ("none" in a file): no cap, as the self-verification study's code
    trials: int = 1  # loop
    concurrency: int = 4
    timeout: float = 120.0
    budget_tokens: int | None = None  # loop
    domain_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    kind: str = LOOP
    endpoint_id: str | None = None  # cache identity of a recorded endpoint (e.g. "recorded:planbench")
    replay: bool = False  # answer every call from the cache (recorded studies); never contact an endpoint
    # loop: the sampling settings (temperature, max_tokens) a recorded study's source did not record: their values
    # above only label its calls' cache keys, and its runs' exports leave them empty (`studies.provenance`)
    unrecorded: tuple[str, ...] = ()
    # set name -> label ("self_verification@1", "+sha256:..." for a user's file) of the prompt sets the study used
    prompt_sets: Mapping[str, str] = field(default_factory=dict)

    def kinds_for(self, domain: str) -> tuple[str, ...]:
        """The kinds a verification study judges in `domain` (empty: every kind the domain makes)."""
        return tuple(self.kinds.get(domain, ())) if isinstance(self.kinds, Mapping) else self.kinds

    def from_study_for(self, domain: str) -> str | None:
        """The earlier study whose answers a verification study judges in `domain`, if any."""
        return self.from_study.get(domain) if isinstance(self.from_study, Mapping) else self.from_study

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form for the studies table: the shared settings and those of the study's kind."""
        data = {name: getattr(self, name) for name in settings_of(self.kind)}
        for key in ("domains", "schemes", "kinds"):
            if key in data:
                value = data[key]
                data[key] = {d: list(v) for d, v in value.items()} if isinstance(value, Mapping) else list(value)
        if isinstance(data.get("from_study"), Mapping):
            data["from_study"] = dict(data["from_study"])
        data["instances"] = dict(self.instances)
        data["domain_options"] = {k: dict(v) for k, v in self.domain_options.items()}
        data["base_url"] = stored_url(self.base_url)
        stored_when_set = {**_STORED_WHEN_SET, **(_VERIFY_WHEN_SET if self.kind == VERIFY else {})}
        for key, default in stored_when_set.items():
            if key in data and data[key] == default:
                del data[key]
            elif key in data and isinstance(data[key], Mapping):
                data[key] = dict(data[key])
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StudyConfig:
        kwargs = {k: v for k, v in data.items() if k in settings_of(data.get("kind", LOOP))}
        for key in ("domains", "schemes", "kinds"):
            value = kwargs.get(key, ())
            kwargs[key] = {d: tuple(v) for d, v in value.items()} if isinstance(value, Mapping) else tuple(value)
        if "unrecorded" in kwargs:
            kwargs["unrecorded"] = tuple(kwargs["unrecorded"])
        return cls(**kwargs)

    def identity(self) -> dict[str, Any]:
        """The fields that decide a study's results; a re-run must match them to resume."""
        return {k: v for k, v in self.to_dict().items() if k not in _OPERATIONAL}

    def differences(self, other: StudyConfig) -> list[str]:
        mine, theirs = self.identity(), other.identity()
        if "prompt_sets" not in theirs:  # stored before studies recorded their prompt sets
            mine.pop("prompt_sets", None)
        return [
            f"{k}: stored {theirs.get(k)!r}, given {mine.get(k)!r}" for k in mine if mine[k] != theirs.get(k)
        ]


def settings_of(kind: str) -> list[str]:
    """The settings a study of `kind` has, in field order (which is the order they are stored in)."""
    if kind not in _ONLY:
        raise ConfigError(f"study kind {kind!r}: a study is a {LOOP!r} or a {VERIFY!r} study")
    other = _ONLY[VERIFY if kind == LOOP else LOOP]
    return [f.name for f in fields(StudyConfig) if f.name not in other]


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


def llm_selection(value: str | Mapping[str, str], domains: tuple[str, ...]) -> dict[str, str]:
    """`llm_instances`: one selection for every domain ("1-100") or some domains' ("game24=1-100"); a domain
    left out judges the earlier answers of all its instances."""
    if isinstance(value, str) and "=" in value:
        named = tuple(piece.partition("=")[0].strip() for piece in value.split(",") if "=" in piece)
    else:
        named = tuple(value) if isinstance(value, Mapping) else domains if value else ()
    if unknown := sorted(set(named) - set(domains)):
        raise ConfigError(f"llm_instances for {', '.join(unknown)}, which is not among the study's domains")
    return parse_instances(value, named) if named else {}


def _kind_list(value: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    return tuple(split_list(value) if isinstance(value, str) else value)


def _per_domain(value: Any, domains: tuple[str, ...], key: str, one: Any) -> Any:
    """A setting given for every domain (`one(value)`) or as a table per domain (`one` of each entry), whose
    domains must be the study's."""
    if not isinstance(value, Mapping):
        return one(value) if value is not None else None
    if unknown := sorted(set(value) - set(domains)):
        raise ConfigError(f"{key} for {', '.join(unknown)}, which is not among the study's domains")
    return {d: one(value[d]) for d in domains if d in value}


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
    "max_tokens": (lambda v: _is_int(v) or v == NO_CAP, f'an integer, or "{NO_CAP}" for no cap'),
    "trials": (_is_int, "an integer"),
    "concurrency": (_is_int, "an integer"),
    "budget_tokens": (_is_int, "an integer"),
    "kinds": (
        lambda v: _is_names(v) or (isinstance(v, dict) and all(_is_names(x) for x in v.values())),
        'a list of candidate kinds, e.g. ["correct", "random-cot"], or a table of them per domain',
    ),
    "per_kind": (_is_int, "an integer"),
    "from_study": (
        lambda v: isinstance(v, str) or (isinstance(v, dict) and all(isinstance(x, str) for x in v.values())),
        "a study name, or a table of them per domain",
    ),
    "llm_instances": (
        lambda v: isinstance(v, str) or (isinstance(v, dict) and all(isinstance(x, str) for x in v.values())),
        'a selection string such as "1-100", or a table of them per domain',
    ),
    "llm_per_instance": (_is_int, "an integer"),
    "candidate_files": (
        lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
        'a table of paths per domain, e.g. [candidate_files] game24 = "self_verification/game24_verification"',
    ),
    "cot": (lambda v: isinstance(v, bool), "true or false"),
    "seed": (_is_int, "an integer"),
    "prompts": (_is_names, 'a list of prompt set names or files, e.g. ["my_prompts.toml"]'),
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
    except RecursionError:  # tomllib recurses once per level of nesting
        raise ConfigError(f"config file {path} is nested too deeply to read (arrays or tables in tables)") from None
    check_toml_types(data, f"config file {path}")
    for key in ("dataset", "figure"):  # paths in the file are relative to the file, wherever it is run from
        if isinstance(data.get(key), str):
            data[key] = str((path.parent / data[key]).resolve())
    if "prompts" in data:
        data["prompts"] = prompt_paths(data["prompts"], path.parent)
    for options in (data.get("domain_options") or {}).values():
        if "prompts" in options:
            options["prompts"] = prompt_paths(options["prompts"], path.parent)
    return data


def prompt_paths(value: str | list[str], base: Path) -> list[str]:
    """Prompt set specs with files made absolute relative to `base` (built-in set names stay names)."""
    from critiquebench.domains.prompts import SETS

    names = split_list(value) if isinstance(value, str) else list(value)
    return [n if n in SETS else str((base / n).expanduser().resolve()) for n in names]


def with_prompts(merged: dict[str, Any], domains: tuple[str, ...]) -> None:
    """Resolve the study's prompt files: `prompts` (every domain) goes into each domain's options, every
    domain's sets are read now (a bad file is a ConfigError before anything runs), and the labels of the sets
    used become `prompt_sets`."""
    from critiquebench.domains.prompts import Prompts

    common = prompt_paths(merged.pop("prompts", None) or [], Path.cwd())
    options = {d: dict(v) for d, v in (merged.get("domain_options") or {}).items()}
    labels: dict[str, str] = {}
    for domain in domains:
        specs = [*common, *prompt_paths(options.get(domain, {}).get("prompts") or [], Path.cwd())]
        if specs:
            options.setdefault(domain, {})["prompts"] = specs
        try:
            used = Prompts.of(specs)
        except ValueError as exc:
            raise ConfigError(f"prompts of domain {domain!r}: {exc}") from None
        for name, label in used.labels().items():
            if labels.setdefault(name, label) != label:
                raise ConfigError(f"two domains use different {name!r} prompt sets; run them as two studies")
    if options:
        merged["domain_options"] = options
    merged["prompt_sets"] = labels


def with_flagged_options(
    options: Mapping[str, Mapping[str, Any]], flagged: list[str], domains: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """A study's `domain_options` with `--domain-option` flags over the file's values, key by key."""
    from critiquebench.domains.options import assign

    try:
        extra = assign(list(flagged), domains)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    merged = {d: dict(v) for d, v in options.items()}
    for domain, values in extra.items():
        merged.setdefault(domain, {}).update(values)
    return merged


def build_config(
    name: str, file_values: Mapping[str, Any], flags: Mapping[str, Any], kind: str = LOOP,
    defaults: Mapping[str, Any] | None = None,
) -> StudyConfig:
    """Merge `defaults`, TOML values and CLI flags (each wins over the one before; None means "not given") into a
    study of `kind`, and validate it."""
    given = {k: v for k, v in flags.items() if v is not None}
    merged: dict[str, Any] = {**(defaults or {}), **file_values, **given}
    merged.pop("name", None)
    flagged_options = merged.pop("domain_option", None) or []  # --domain-option KEY=VALUE, typed below
    if merged.get("max_tokens") == NO_CAP:  # stored as null: requests carry no length field
        merged["max_tokens"] = None
    if merged.pop("kind", kind) != kind:
        other = VERIFY if kind == LOOP else LOOP
        raise ConfigError(f"this is a {other} study's definition: use `critiquebench {_COMMAND[other]}`")
    allowed = (set(settings_of(kind)) - {"kind", "prompt_sets"}) | {"prompts"}
    if other_kind := sorted(set(merged) & _ONLY[VERIFY if kind == LOOP else LOOP]):
        raise ConfigError(f"{', '.join(other_kind)}: not a setting of `{_COMMAND[kind]}` studies")
    if unknown := sorted(set(merged) - allowed):
        raise ConfigError(f"unknown study setting(s): {', '.join(unknown)}")
    domains = merged.get("domains")
    domains = tuple(split_list(domains) if isinstance(domains, str) else domains or ())
    if not domains:
        hint = "set domains in --config" if kind == LOOP else "--from-study to take the earlier study's"
        raise ConfigError(f"no domains: pass --domains game24,coloring,... or {hint}")
    if kind == LOOP:
        schemes = merged.get("schemes")
        schemes = tuple(split_schemes(schemes) if isinstance(schemes, str) else schemes or ())
        if not schemes:
            raise ConfigError("no schemes: pass --schemes standard,llm-llm,... or set schemes in --config")
    else:
        merged["kinds"] = _per_domain(merged.get("kinds", ()), domains, "kinds", _kind_list)
        merged["from_study"] = _per_domain(merged.get("from_study"), domains, "from_study", lambda v: v)
        merged["llm_instances"] = llm_selection(merged.get("llm_instances") or {}, domains)
        files = dict(merged.get("candidate_files") or {})
        if unknown := sorted(set(files) - set(domains)):
            raise ConfigError(f"candidate_files for {', '.join(unknown)}, which is not among the study's domains")
        merged["candidate_files"] = files
    if "instances" not in merged:
        hint = "set instances in --config" if kind == LOOP else "--from-study"
        raise ConfigError(f"no instances: pass --instances 901-1000 (or gen:N:SEED) or {hint}")
    instances = parse_instances(merged["instances"], domains)  # before the schemes, which import LangGraph
    if flagged_options:
        merged["domain_options"] = with_flagged_options(merged.get("domain_options") or {}, flagged_options, domains)
    merged.update(domains=domains, instances=instances)
    if kind == LOOP:
        merged["schemes"] = canonical_schemes(schemes)
    if merged.get("dataset"):
        merged["dataset"] = str(Path(merged["dataset"]).expanduser().resolve())
    with_prompts(merged, domains)
    if merged.get("base_url") is None and os.environ.get("OPENAI_BASE_URL"):
        # Resolved once and stored, so a resume talks to the same endpoint whatever the environment then is.
        merged["base_url"] = os.environ["OPENAI_BASE_URL"]
    config = StudyConfig(name=name, kind=kind, **merged)
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
    for key, (low, high) in RANGES.items():
        value = getattr(config, key)
        if value is None and key in ("budget_tokens", "max_tokens"):
            continue
        if not _is_int(value) or value < low:
            raise ConfigError(f"{key} must be an integer >= {low}, got {value!r}")
        if value > high:
            raise ConfigError(f"{key} must be an integer <= {high}, got {value!r}")
    if not _is_number(config.timeout) or not 0 < float(config.timeout) <= MAX_TIMEOUT_S:  # NaN fails too
        raise ConfigError(f"timeout must be a number of seconds in (0, {MAX_TIMEOUT_S:g}], got {config.timeout!r}")
    if not _is_number(config.temperature) or not 0.0 <= float(config.temperature) <= MAX_TEMPERATURE:
        raise ConfigError(f"temperature must be in [0, {MAX_TEMPERATURE:g}], got {config.temperature}")
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
