"""Problem domains: the registry of built-in domains and instance loading.

`get_domain(name, **options)` builds a domain by name (or from a PDDL domain folder path; "NAME:TASK" asks a
planning domain one of PlanBench's tasks, e.g. "blocksworld:t3"); `load_instances`
turns a selection ("901-1000", "1,5,9-12", "all", "gen:N:SEED") into instances. Domain modules are imported
lazily, so importing this package stays cheap and the planning subpackage can import `base` freely.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from critiquebench.domains.base import (
    FEEDBACK_LEVELS,
    Domain,
    FeedbackLevel,
    Instance,
    LLMVerdict,
    Verdict,
)
from critiquebench.domains.datasets import Generated, parse_selection, resolve_data_path

DOMAIN_NAMES = (
    "game24",
    "coloring",
    "blocksworld",
    "mystery_blocksworld",
    "logistics",
    # the intrinsic self-critique paper's generated sets (gen:N:SEED only)
    "blocksworld_3_7",
    "logistics_hard",
    "minigrid",
    "minigrid_hard",
)

# name -> "module:factory"; factories take the keyword options of `get_domain`.
_BUILTIN: dict[str, str] = {
    "game24": "critiquebench.domains.game24:make_game24",
    "coloring": "critiquebench.domains.coloring:make_coloring",
}

__all__ = [
    "DOMAIN_NAMES",
    "FEEDBACK_LEVELS",
    "Domain",
    "FeedbackLevel",
    "Instance",
    "LLMVerdict",
    "Verdict",
    "get_domain",
    "load_instances",
]


def get_domain(name: str, **options: Any) -> Domain:
    """The domain called `name`, or the PDDL domain in folder `name` (domain.pddl + config.yaml).

    Options go to the domain's factory, e.g. `prompt_style="pddl"` for planning domains; None values are
    dropped so callers can pass optional CLI flags straight through."""
    options = {key: value for key, value in options.items() if value is not None}
    if name in _BUILTIN:
        module, factory = _BUILTIN[name].split(":")
        make: Callable[..., Domain] = getattr(importlib.import_module(module), factory)
        return make(**options)
    base, _, task = name.rpartition(":")
    if base and task:  # "blocksworld:t3": a PlanBench task on a planning domain
        from critiquebench.domains.planning.tasks import TASKS, task_domain

        if task in TASKS and (base in DOMAIN_NAMES or Path(base).is_dir()):
            return task_domain(base, task, **options)
    if name in DOMAIN_NAMES or Path(name).is_dir():
        from critiquebench.domains.planning import load_planning_domain

        return load_planning_domain(name, **options)
    raise ValueError(f"unknown domain {name!r}: use one of {', '.join(DOMAIN_NAMES)} or a PDDL domain folder")


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
    folder = getattr(domain, "folder", None)  # planning domains built from a folder
    if folder is None:
        return False
    from critiquebench.domains.planning.instances import problem_folder

    return problem_folder(Path(folder)) is not None
