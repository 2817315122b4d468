"""Problem domains: the registry of built-in domains and instance loading.

`get_domain(name, **options)` builds a domain by name: a built-in one (`BUILTIN` in `domains.registry`, the one
table of them),
one a package adds through the entry-point group `critiquebench.domains`, a factory in the user's own module
("my_module:make_domain"), or a PDDL domain folder path;
"NAME:TASK" asks a planning domain one of PlanBench's tasks, e.g. "blocksworld:t3"; `load_instances`
turns a selection ("901-1000", "1,5,9-12", "all", "gen:N:SEED") into instances. Domain modules are imported
lazily, so importing this package stays cheap and the planning subpackage can import `base` freely.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from critiquebench.domains.contract import (
    FEEDBACK_LEVELS,
    CallOptions,
    Domain,
    FeedbackLevel,
    FromFolder,
    Instance,
    LLMVerdict,
    Verdict,
)
from critiquebench.domains.datasets import Generated, parse_selection, resolve_data_path
from critiquebench.domains.prompts import Prompts
from critiquebench.domains.registry import BUILTIN, PLANNING

ENTRY_POINT_GROUP = "critiquebench.domains"  # a package's domains: name = "module:factory"
DOMAIN_NAMES = tuple(BUILTIN)

__all__ = [
    "BUILTIN",
    "DOMAIN_NAMES",
    "ENTRY_POINT_GROUP",
    "FEEDBACK_LEVELS",
    "Domain",
    "FeedbackLevel",
    "Instance",
    "LLMVerdict",
    "Verdict",
    "available_domains",
    "call_options",
    "get_domain",
    "load_instances",
]


def get_domain(name: str, **options: Any) -> Domain:
    """The domain called `name`, or the PDDL domain in folder `name` (domain.pddl + config.yaml).

    Options go to the domain's factory, e.g. `prompt_style="pddl"` for planning domains, `prompts=[...]` (prompt
    set names or files over the built-in sets); None values are dropped so callers can pass optional CLI flags
    straight through. `stop` (a list of stop sequences, e.g. the self-verification study's "[ANSWER END]") is
    no factory's: every LLM call made for the domain carries it (`call_options`); nor is `recorded_prompts`
    (instance id -> the messages someone else sent for it, `import samples`): the domain is then wrapped in
    `domains.replayed.Replayed`, whose generation prompt for those instances is what was sent."""
    stop = options.pop("stop", None)
    recorded = options.pop("recorded_prompts", None)
    domain = _build(name, **options)
    if stop is not None:
        try:
            domain.call_options = {"stop": stop_sequences(stop)}  # type: ignore[attr-defined]
        except AttributeError as exc:  # a frozen or slotted plug-in domain
            raise ValueError(f"domain {name!r} cannot carry a stop sequence: {exc}") from None
    if recorded:
        from critiquebench.domains.replayed import Replayed

        domain = Replayed(domain, recorded)  # type: ignore[assignment]
    return domain


MAX_STOP_SEQUENCES = 4  # what the OpenAI API accepts


def stop_sequences(value: Any) -> tuple[str, ...]:
    """`stop` as given in a study's domain options: a string or a list of up to 4 non-empty strings."""
    seqs = [value] if isinstance(value, str) else value
    if not isinstance(seqs, list | tuple) or not all(isinstance(s, str) and s for s in seqs):
        raise ValueError(f'stop must be a list of non-empty strings, e.g. ["[ANSWER END]"], not {value!r}')
    if len(seqs) > MAX_STOP_SEQUENCES:
        raise ValueError(f"stop takes at most {MAX_STOP_SEQUENCES} sequences, not {len(seqs)}")
    return tuple(seqs)


def call_options(domain: Any) -> dict[str, Any]:
    """The options every LLM call for `domain` carries (its stop sequences), {} for none."""
    return dict(domain.call_options or {}) if isinstance(domain, CallOptions) else {}


def _build(name: str, **options: Any) -> Domain:
    options = {key: value for key, value in options.items() if value is not None}
    if "prompts" in options and not isinstance(options["prompts"], Prompts):  # set names or files (a study's)
        options["prompts"] = Prompts.of(options["prompts"])
    if name in BUILTIN:
        factory = BUILTIN[name].factory
        return _load(factory)(name, **options) if factory == PLANNING else _load(factory)(**options)
    base, _, task = name.rpartition(":")
    if base and task:  # "blocksworld:t3": a PlanBench task on a planning domain
        from critiquebench.domains.planning.tasks import TASKS, task_domain

        if task in TASKS and (base in DOMAIN_NAMES or Path(base).is_dir()):
            return task_domain(base, task, **options)
    plugins = _entry_points()
    if name in plugins:
        try:
            make = plugins[name].load()
        except Exception as exc:  # a broken plug-in must not look like our bug
            raise ValueError(f"domain plug-in {name!r} ({plugins[name].value}) failed to load: {exc}") from exc
        return make(**options)
    if ":" in name and not Path(name).exists():  # "package.module:factory": a domain in the user's own code
        return _imported(name)(**options)
    if Path(name).is_dir():
        from critiquebench.domains.planning import load_planning_domain

        return load_planning_domain(name, **options)
    known = ", ".join([*DOMAIN_NAMES, *sorted(plugins)])
    raise ValueError(f"unknown domain {name!r}: use one of {known}, module:factory, or a PDDL domain folder")


def available_domains() -> list[tuple[str, str]]:
    """(name, source) of every domain: the built-in ones, then plug-ins ("module:factory (distribution)")."""
    found = [(name, "built-in") for name in BUILTIN]
    for name, ep in sorted(_entry_points().items()):
        if name not in BUILTIN:
            found.append((name, f"{ep.value} ({ep.dist.name if ep.dist is not None else '?'})"))
    return found


def _imported(target: str) -> Callable[..., Domain]:
    """The factory `module:factory` names (the user's own module, on the Python path); ValueError if none."""
    module, _, factory = target.rpartition(":")
    try:
        found = getattr(importlib.import_module(module), factory)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"unknown domain {target!r}: cannot import {factory!r} from {module!r} ({exc})") from None
    if not callable(found):
        raise ValueError(f"domain {target!r}: {factory} is not a factory")
    return found


def _load(target: str) -> Callable[..., Domain]:
    module, factory = target.split(":")
    return getattr(importlib.import_module(module), factory)


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def load_instances(domain: Domain, selection: str | None, dataset: Path | None = None) -> list[Instance]:
    """The instances `selection` names, from `dataset` (the datasets root or the domain's own file/folder),
    the default dataset location when None, or the domain's generator for "gen:N:SEED"."""
    chosen = parse_selection(selection)
    if isinstance(chosen, Generated):
        return domain.generate(chosen.n, chosen.seed)
    selection = None if chosen is None else selection  # "all" reaches domains as None
    if dataset is None and (domain.name not in DOMAIN_NAMES or _has_own_instances(domain)):
        return domain.load(selection, None)  # a user PDDL folder with its own instances/
    return domain.load(selection, resolve_data_path(domain.name, dataset))


def _has_own_instances(domain: Domain) -> bool:
    if not isinstance(domain, FromFolder):  # planning domains built from a folder
        return False
    folder = domain.folder
    from critiquebench.domains.planning.instances import problem_folder

    return problem_folder(Path(folder)) is not None
