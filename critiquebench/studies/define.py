"""Which study a `run` or `resume` means: a definition from a TOML file and flags, checked against the stored one.

`study_for_run` is `critiquebench run NAME [--config FILE] [flags]`: a new study, the stored one again (the same
definition resumes it; plain `run NAME` too), or an error when the definition differs. `stored_study` is
`resume NAME`. Operational settings (concurrency, timeout, token budget) may change between sessions; identity
settings may not. `study_config` is a stored study's definition, or ReportError naming the known ones.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from critiquebench.store import results
from critiquebench.store.db import Locator, Store, opened
from critiquebench.store.reads import study_names
from critiquebench.store.results import StudyRunning as StudyRunning  # re-exported: delete_study raises it
from critiquebench.store.results import ensure_schema, has_runs, load_study
from critiquebench.studies.config import ConfigError, StudyConfig, build_config, read_toml
from critiquebench.studies.main_job import Recorded, generated_fallback, missing_data, read_recorded, sources_note

IDENTITY_FLAGS = ("domains", "instances", "schemes", "model", "base_url", "dataset", "trials", "temperature",
                  "max_tokens", "prompts", "domain_option")  # fmt: skip
OPERATIONAL_FLAGS = ("concurrency", "timeout", "budget_tokens")


class ReportError(LookupError):
    """The study asked for does not exist (message names the known studies), or a report of it cannot be made."""


def study_config(db: Any, study: str) -> dict[str, Any]:
    """The stored definition of `study`; ReportError naming the known studies when there is none."""
    ensure_schema(db)
    config = load_study(db, study)
    if config is None:
        known = study_names(db)
        hint = f"; known studies: {', '.join(known)}" if known else "; the store has no studies"
        raise ReportError(f"no study named {study!r} in this store{hint}")
    return config


@dataclass
class RunRequest:
    """The study a `run` executes, the figure path its TOML names, the recorded studies of a main job, and
    lines to tell the user (a missing datasets folder)."""

    study: StudyConfig
    figure: Path | None = None
    recorded: list[Recorded] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def study_for_run(db: Any, name: str, config: Path | None, flags: Mapping[str, Any]) -> RunRequest:
    """See the module docstring; `db` is the store (read-only) or None when it does not exist yet.
    Raises ConfigError."""
    flags = {k: flags.get(k) for k in (*IDENTITY_FLAGS, *OPERATIONAL_FLAGS)}
    file_values = read_toml(config) if config else {}
    figure = file_values.pop("figure", None)
    recorded = read_recorded(file_values.pop("recorded"), config.parent) if config and "recorded" in file_values else []
    notes: list[str] = []
    if recorded and flags["dataset"] is None and missing_data(file_values.get("dataset")):
        notes = sources_note(file_values.get("dataset"))
        name, file_values = generated_fallback(name, file_values)
    stored = load_study(db, name) if db is not None else None
    if stored is not None and stored.get("kind") == "verify":
        raise ConfigError(f"{name} is a verification-only study: run `critiquebench verify-study {name}` again")
    if stored is not None and config is None and all(flags[k] is None for k in IDENTITY_FLAGS):
        return RunRequest(operational(StudyConfig.from_dict(stored), flags))  # plain `run NAME` resumes
    study = build_config(name, file_values, flags)
    # a stored definition with no runs yet (say, one an endpoint check stopped) is replaced: nothing is lost
    if stored is not None and (diff := study.differences(StudyConfig.from_dict(stored))) and has_runs(db, name):
        raise ConfigError(
            f"study {name!r} already exists with a different definition:\n  "
            + "\n  ".join(diff)
            + f"\nchoose another name, or `critiquebench resume {name}` to continue the stored one"
        )
    return RunRequest(study, Path(figure) if figure else None, recorded, notes)


def stored_study(db: Any, name: str, **flags: Any) -> StudyConfig:
    """The stored loop study `name` with the operational settings in `flags` (None: unchanged).
    Raises ReportError when there is no such study, ConfigError for a verification-only one."""
    study = operational(StudyConfig.from_dict(study_config(db, name)), flags)
    if study.kind == "verify":
        raise ConfigError(f"{name} is a verification-only study: run `critiquebench verify-study {name}` again")
    return study


@contextmanager
def reading(store: Locator) -> Iterator[Store]:
    """The store opened read-only for a `with` block (reading commands never create or change it, and close it
    when they end); StoreError when unusable."""
    with opened(store, readonly=True) as db:
        ensure_schema(db)
        yield db


def delete_study(store: Locator, name: str) -> dict[str, int]:
    """Delete study `name` with its runs, rounds, checkpoints and budget (the call cache stays); rows removed
    per table. ReportError (naming the known studies) when there is no such study."""
    with reading(store) as db:
        study_config(db, name)
    with opened(store) as db:
        return results.delete_study(db, name)


def operational(config: StudyConfig, flags: Mapping[str, Any]) -> StudyConfig:
    return replace(config, **{k: flags[k] for k in OPERATIONAL_FLAGS if flags.get(k) is not None})
