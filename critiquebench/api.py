"""The Python API: define and run a study, resume it, load its results as pandas DataFrames, render its reports.

    import critiquebench as cb

    cb.run("demo", domains="game24", instances="gen:5:1", schemes="standard,sound-first:rounds=3",
           model="my-model", base_url="http://localhost:8000/v1", store="demo.sqlite")
    runs = cb.runs("demo", store="demo.sqlite")          # one row per run: correct, final_answer, model, ...
    runs.groupby("scheme")["correct"].mean()
    print(cb.report("demo", store="demo.sqlite"))        # Table 1 as Markdown

Every function takes the store as `store=` (a SQLite file or a postgresql:// URL; default `$CRITIQUEBENCH_STORE`,
else ./critiquebench.sqlite), exactly as the command line's `--store` does: `cb.run` is `critiquebench run`,
`cb.resume` is `critiquebench resume` (both show the live progress bars, in a notebook too: `progress=False`
silences them), `cb.runs` / `cb.rounds` / `cb.calls` are `critiquebench export --table runs|rounds|calls` as
DataFrames (columns: `critiquebench.reports.records.RUN_COLUMNS` / `ROUND_COLUMNS` / `CALL_COLUMNS`), and `cb.report` is
`critiquebench report`. A study is stored as it runs: running it again (or `cb.resume`) does only what is
missing, and every LLM call is cached. Anything that stops a study before it runs (a bad definition, no such
study, an endpoint that refuses the key) raises `StudyError` with a one-line message; runs that fail are recorded
and counted in the returned `Result`, never raised. A setting that invites a wrong conclusion (sampling at
temperature 0) is a `UserWarning`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from critiquebench.studies.session import Session, StudyError

if TYPE_CHECKING:
    import pandas

    from critiquebench.studies.config import StudyConfig

__all__ = ["Result", "Settings", "StudyError", "calls", "compare", "define", "import_samples", "list_studies", "report",
           "resume", "rounds", "run", "runs", "stops"]  # fmt: skip

Store = str | os.PathLike[str] | None
Names = str | Sequence[str]


@dataclass(frozen=True)
class Result:
    """What `run` or `resume` did: the study as it ran, and its runs' counts (over the whole study: `done`
    includes runs finished in earlier sessions; `new_calls` and `cache_hits` are this session's)."""

    study: str
    store: str
    total: int
    done: int
    failed: int
    not_started: int
    unfinished: int  # stopped by the token budget; a resume with a higher budget continues them
    new_calls: int
    cache_hits: int
    tokens: int
    errors: tuple[tuple[str, str], ...]  # (run, error) of runs that failed in this session

    @property
    def ok(self) -> bool:
        """Every run of the study finished."""
        return self.done == self.total

    def runs(self) -> pandas.DataFrame:
        """The study's runs (see `runs`)."""
        return runs(self.study, store=self.store)

    def rounds(self) -> pandas.DataFrame:
        """Every round of the study's runs (see `rounds`)."""
        return rounds(self.study, store=self.store)


def _store(store: Store) -> Path | str:
    from critiquebench.store.db import resolve_store

    return resolve_store(None if store is None else os.fspath(store))


def _result(store: Path | str, session: Session) -> Result:
    s = session.summary
    return Result(
        study=session.config.name, store=str(store), total=s.total, done=s.done + s.skipped, failed=s.failed,
        not_started=s.not_started, unfinished=s.unfinished, new_calls=int(session.usage.get("calls", 0)),
        cache_hits=int(session.usage.get("hits", 0)), tokens=session.tokens, errors=tuple(s.errors),
    )  # fmt: skip


def _one_line(exc: BaseException) -> StudyError:
    return StudyError(str(exc).replace("\n", " "))


class Settings(TypedDict, total=False):
    """A study's settings, as `critiquebench run` takes them (docs/cli.md); `config` is a study TOML file whose
    values the others override.

    Keys: `config` (a study TOML file), `domains` ("game24,coloring" or a list), `instances` ("901-1000",
    "gen:N:SEED", or a mapping per domain), `schemes` ("standard,sampling:k=5" or a list of scheme specs), `model`,
    `base_url` (an OpenAI-compatible endpoint; none: the embedded model), `dataset` (a data folder), `trials`
    (runs per instance), `temperature` (default 0.0), `max_tokens`, `concurrency` (runs at once), `timeout` (seconds
    per LLM call), `budget_tokens` (stop starting runs past this many tokens), `domain_options` (a study file's
    `[domain_options]`: `{"game24": {"reader": "lenient"}}` per domain, or `{"reader": "lenient"}` for every
    domain that declares the key, as `--domain-option KEY=VALUE`)."""

    config: str | os.PathLike[str]
    domains: Names  # "game24,coloring" or a list
    instances: str | Mapping[str, str]  # "901-1000", "gen:N:SEED", or per domain
    schemes: Names  # "standard,sampling:k=5" or a list of scheme specs
    model: str
    base_url: str
    dataset: str | os.PathLike[str]
    trials: int
    temperature: float
    max_tokens: int
    concurrency: int
    timeout: float
    budget_tokens: int
    domain_options: Mapping[str, Any]  # {"reader": "lenient"} or per domain {"game24": {"reader": "lenient"}}


def _option_text(value: Any) -> str:
    """A Python value as `--domain-option` text: strings as written, anything else as its TOML literal."""
    import json

    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)  # numbers and lists of them or of strings are the same in TOML


def _domain_option_flags(options: Mapping[str, Any]) -> list[str]:
    """`domain_options=` as the CLI's repeated `--domain-option` texts, so both are typed and checked alike."""
    flags = []
    for key, value in options.items():
        if isinstance(value, Mapping):
            flags += [f"{key}.{inner}={_option_text(v)}" for inner, v in value.items()]
        else:
            flags.append(f"{key}={_option_text(value)}")
    return flags


def _flags(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The CLI's flags (None: not given) from API settings; StudyError for a name that is not a setting."""
    if unknown := sorted(set(settings) - set(Settings.__annotations__)):
        raise StudyError(f"unknown study setting(s): {', '.join(unknown)}")
    flags = {key: settings.get(key) for key in Settings.__annotations__ if key not in ("config", "domain_options")}
    if settings.get("domain_options"):
        flags["domain_option"] = _domain_option_flags(settings["domain_options"])
    for key in ("domains", "schemes"):
        if flags[key] is not None and not isinstance(flags[key], str):
            flags[key] = ",".join(flags[key])
    if flags["dataset"] is not None:
        flags["dataset"] = os.fspath(flags["dataset"])
    return flags


def _config_file(settings: Mapping[str, Any]) -> Path | None:
    return Path(settings["config"]) if settings.get("config") else None


def define(name: str, **settings: Unpack[Settings]) -> StudyConfig:
    """A validated study definition from a TOML file (`config`) and/or settings (which win over the file), as
    `critiquebench run` builds it; nothing is stored or called. Raises StudyError."""
    from critiquebench.studies.config import ConfigError, build_config, read_toml

    flags = _flags(settings)
    file = _config_file(settings)
    try:
        return build_config(name, read_toml(file) if file else {}, flags)
    except ConfigError as exc:
        raise _one_line(exc) from exc


def run(name: str, *, store: Store = None, replay: bool = False, progress: bool = True,
        **settings: Unpack[Settings]) -> Result:  # fmt: skip
    """Run study `name` (defined by `config` and the settings, as `define` does) in `store`, or continue it: the
    same definition resumes, `run(name, store=...)` alone continues the stored study, a different one raises
    StudyError. With no `base_url` (nor $OPENAI_BASE_URL) the embedded model answers. `replay`: every call must
    come from the cache. `progress`: the command line's live bars, in a terminal or a notebook (False: nothing
    shown). Returns the counts; failed runs are recorded (`Result.errors`), not raised."""
    from critiquebench.store.db import StoreError, opened, store_exists
    from critiquebench.studies.config import ConfigError
    from critiquebench.studies.define import study_for_run
    from critiquebench.studies.guards import temperature_warnings
    from critiquebench.studies.session import run_session

    path = _store(store)
    flags, file = _flags(settings), _config_file(settings)
    try:
        if store_exists(path):
            with opened(path, readonly=True) as db:
                request = study_for_run(db, name, file, flags)
        else:
            request = study_for_run(None, name, file, flags)
    except (ConfigError, StoreError, OSError) as exc:
        raise _one_line(exc) from exc
    for line in temperature_warnings(request.study.schemes, request.study.temperature):
        warnings.warn(line.removeprefix("warning: "), UserWarning, stacklevel=2)
    with _progress(progress, request.study.model) as on_progress:
        return _result(path, run_session(path, request.study, replay=replay, on_progress=on_progress))


@contextmanager
def _progress(show: bool, model: str) -> Iterator[Any]:
    """The live display of `critiquebench.cli.terminal` on stderr (a notebook's cell output), priced at `model`'s
    price; nothing when `show` is false or stderr is neither a terminal nor a notebook."""
    if not show:
        yield None
        return
    from critiquebench.cli.terminal import live_progress
    from critiquebench.llm.prices import PriceError, load_prices, price_of

    try:
        price = price_of(model, load_prices())
    except PriceError as exc:
        raise StudyError(str(exc)) from exc
    with live_progress(True, price=price) as on_progress:
        yield on_progress


def resume(
    name: str,
    *,
    store: Store = None,
    base_url: str | None = None,
    concurrency: int | None = None,
    budget_tokens: int | None = None,
    replay: bool = False,
    progress: bool = True,
) -> Result:
    """Continue stored study `name`: finished runs stay, the others continue from their checkpoints. `base_url`
    moves the study to another endpoint (a mistyped URL, a server on a new port) and keeps its runs; each run
    finished before keeps the endpoint it was made on in `runs()`. `progress` as for `run`."""
    from critiquebench.studies.session import run_session

    path = _store(store)
    study = resumable(path, name, base_url=base_url, concurrency=concurrency, budget_tokens=budget_tokens)
    with _progress(progress, study.model) as on_progress:
        return _result(path, run_session(path, study, replay=replay, on_progress=on_progress))


def resumable(path: Path | str, name: str, *, base_url: str | None = None, **operational: Any) -> StudyConfig:
    """The stored loop study `name` with new operational settings and, when given, a new endpoint (how `resume`
    and `critiquebench resume` read it). Raises StudyError."""
    from critiquebench.store.db import StoreError, opened
    from critiquebench.studies.config import ConfigError, validate
    from critiquebench.studies.define import ReportError, stored_study

    try:
        with opened(path, readonly=True) as db:
            study = stored_study(db, name, **operational)
        if base_url is not None:
            study = replace(study, base_url=base_url)
            validate(study)
    except (ReportError, StoreError, ConfigError) as exc:
        raise _one_line(exc) from exc
    return study


def _frame(name: str, store: Store, table: str) -> pandas.DataFrame:
    import pandas as pd

    from critiquebench.reports.records import COLUMNS, records
    from critiquebench.store.db import StoreError, opened
    from critiquebench.studies.define import ReportError

    try:
        with opened(_store(store), readonly=True) as db:
            rows = records(db, name, table)
    except (ReportError, StoreError) as exc:
        raise _one_line(exc) from exc
    dtypes = {"str": "string", "int": "Int64", "float": "Float64", "bool": "boolean"}
    columns = COLUMNS[table]
    frame = pd.DataFrame.from_records(rows, columns=[c.name for c in columns])
    return frame.astype({c.name: dtypes[c.type] for c in columns})


def runs(name: str, *, store: Store = None) -> pandas.DataFrame:
    """One row per run of study `name`: its identity (domain, scheme, params, instance, trial), status, `correct`
    (the sound verdict of the answer the scheme output), final answer, rounds, tokens, cost, latency, times, the
    model, endpoint (secrets redacted), temperature and cap the run itself was made with, the critiquebench version
    and the problem as the model saw it. Columns and their meaning: `critiquebench.reports.records.RUN_COLUMNS`."""
    return _frame(name, store, "runs")


def rounds(name: str, *, store: Store = None) -> pandas.DataFrame:
    """One row per round of every run of study `name`: the answer, its parse, the sound and LLM verdicts, the
    critique, the sound verifier's reason and the feedback handed back. Columns:
    `critiquebench.reports.records.ROUND_COLUMNS`."""
    return _frame(name, store, "rounds")


def calls(name: str, *, store: Store = None) -> pandas.DataFrame:
    """One row per recorded LLM call of every run of study `name`: its round and node, model, endpoint, sampling
    settings, tokens, latency and time. Columns: `critiquebench.reports.records.CALL_COLUMNS`."""
    return _frame(name, store, "calls")


def report(name: str, *, store: Store = None, table: str = "1", fmt: str = "md", compare: str | None = None,
           pairs: str | None = None) -> str:  # fmt: skip
    """A study's table as `critiquebench report NAME --table TABLE --format FMT` prints it (fmt: table, md, csv,
    json); `compare`: a second study, side by side (of `table="compare"`: its schemes against this study's);
    `pairs`: `--pairs`."""
    from critiquebench.reports.catalog import report_rows
    from critiquebench.reports.tables import FORMATS, render
    from critiquebench.store.db import StoreError, opened
    from critiquebench.studies.define import ReportError

    if fmt not in FORMATS:
        raise StudyError(f"fmt must be one of {', '.join(FORMATS)}, not {fmt!r}")
    try:
        with opened(_store(store), readonly=True) as db:
            return render(report_rows(db, name, table, compare, pairs), fmt)
    except (ReportError, StoreError) as exc:
        raise _one_line(exc) from exc


def _rows_frame(rows: Sequence[Any]) -> pandas.DataFrame:
    import pandas as pd

    from critiquebench.reports.metrics import row_dict

    return pd.DataFrame.from_records([row_dict(r) for r in rows])


def compare(name: str, *, store: Store = None, other: str | None = None, pairs: str | None = None,
            seed: int | None = None, resamples: int | None = None) -> pandas.DataFrame:  # fmt: skip
    """`critiquebench report NAME --table compare` as a DataFrame: per domain, every pair of schemes on the runs
    both finished (`other`: this study's schemes against another study's; `pairs`: only "A:B,C:D"), one row per
    pair with each one's accuracy, the difference and its paired bootstrap interval (`seed`, `resamples`: the
    bootstrap's, default `critiquebench.reports.stats.SEED` / `RESAMPLES`), McNemar's exact p and its Holm
    adjustment (columns: `critiquebench.reports.paired.PairRow`)."""
    from critiquebench.reports import stats
    from critiquebench.reports.paired import compare_rows
    from critiquebench.store.db import StoreError, opened
    from critiquebench.studies.define import ReportError, study_config

    try:
        with opened(_store(store), readonly=True) as db:
            if other is not None:
                study_config(db, other)
            rows = compare_rows(db, name, other, pairs, seed=stats.SEED if seed is None else seed,
                                resamples=stats.RESAMPLES if resamples is None else resamples)  # fmt: skip
    except (ReportError, StoreError) as exc:
        raise _one_line(exc) from exc
    return _rows_frame(rows)


def stops(name: str, *, store: Store = None, runs: bool = False) -> pandas.DataFrame:
    """`critiquebench report NAME --table stops` as a DataFrame: per domain x iterative scheme, the finished runs
    in the four classes (accepted_correct, accepted_wrong, exhausted_correct, exhausted_wrong), ever_correct, lost
    and the round each was lost at (columns: `critiquebench.reports.stops.StopRow`). `runs=True`: one row per
    finished run instead (thread_id, domain, scheme, instance, trial, stop, ever_correct, lost_at)."""
    from critiquebench.reports.stops import classify, stop_rows
    from critiquebench.store.db import StoreError, opened
    from critiquebench.studies.define import ReportError

    try:
        with opened(_store(store), readonly=True) as db:
            rows: Sequence[Any] = classify(db, name)[0] if runs else stop_rows(db, name)
    except (ReportError, StoreError) as exc:
        raise _one_line(exc) from exc
    return _rows_frame(rows)


def import_samples(
    samples: pandas.DataFrame | str | os.PathLike[str], *, domain: str, study: str, store: Store = None,
    k: Sequence[int] | None = None, dataset: str | os.PathLike[str] | None = None,
    domain_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`critiquebench import samples`: recorded samples (a DataFrame with columns instance, response and optionally
    sample, messages or prompt, label, model, temperature; or a .jsonl / .csv / .parquet file) as study `study`.
    Returns what was imported: samples, instances, valid (by our sound verifier), labelled, schemes, and `skipped`
    (one "line N: reason" per bad row; a DataFrame's rows count from 1). Nothing is imported when it raises."""
    from critiquebench.importers.samples import SamplesError
    from critiquebench.importers.samples import import_samples as run_import
    from critiquebench.studies.config import ConfigError

    source = samples if hasattr(samples, "to_dict") else Path(samples)
    try:
        done = run_import(source, _store(store), study, domain, options=domain_options,
                          dataset=Path(dataset) if dataset else None, ks=k)  # fmt: skip
    except (SamplesError, ConfigError) as exc:
        raise _one_line(exc) from exc
    return {"study": study, "samples": done.samples, "instances": done.instances, "valid": done.valid,
            "labelled": done.labelled, "schemes": list(done.config.schemes),
            "skipped": [b.describe() for b in done.bad], "notes": list(done.notes)}  # fmt: skip


def list_studies(*, store: Store = None) -> list[dict[str, Any]]:
    """The store's studies: name, kind, domains, schemes, done, failed and total (planned) runs (`critiquebench
    studies`; not named `studies`, which is a subpackage of critiquebench)."""
    from critiquebench.reports import export
    from critiquebench.store.db import StoreError, opened

    try:
        with opened(_store(store), readonly=True) as db:
            return export.list_studies(db)
    except StoreError as exc:
        raise _one_line(exc) from exc
