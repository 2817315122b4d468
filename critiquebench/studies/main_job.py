"""The main job: recorded GPT-4 runs replayed offline beside a small live study, as one command.

A study TOML becomes a main job when it has a `[recorded]` table: study name -> recorded results file (paths
relative to the TOML file): a PlanBench results file, or one of gpt-and-i's `responses.json` (the
self-verification study's GPT-4 runs, `import self-verification`). `critiquebench run NAME --config FILE` then
imports and replays every recorded file (each call answered from the cache, 0 calls to any endpoint), runs the
live study NAME, and prints one summary (`critiquebench.reports.findings`). Without the datasets folder, it says
where each dataset comes from and runs the live study on generated instances instead, under the name
NAME-generated (so the study stored under NAME never changes definition).

A recorded file the store already holds, imported from the same bytes by the same version of critiquebench
with the same datasets folder, is not imported again (`recorded_imports`): re-checking 500 recorded prompts
found nothing new and was most of what a second run with nothing to do cost (13 s of CPU, of ~14). Nor is its
replay planned again once every run of it is done (planning reads its 500 problems back): the runs the finished
replay had are all there, done, under the same definition.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critiquebench.studies.config import NAME_RE, ConfigError

# Where each folder of the datasets root comes from (see the datasets' own README.md).
DATASET_SOURCES: dict[str, str] = {
    "game24": "Game of 24 ranks (24.csv): princeton-nlp/tree-of-thought-llm, src/tot/data/24/24.csv (MIT)",
    "graph_coloring": "planar graphs instance-N.col: kstechly/gpt-and-i, data/instances/graph_coloring/",
    "planbench": "PDDL domains, instances and GPT-4's recorded runs (reference/, tasks/): karthikv792/LLMs-Planning "
    "(PlanBench), plan-bench/ and llm_planning_analysis/results/ (MIT)",
}
GENERATED = "gen:2:1"  # two generated instances per domain, seed 1: what runs when no data is there


@dataclass(frozen=True)
class Recorded:
    """One recorded results file to import and replay as study `study`."""

    study: str
    file: Path


def read_recorded(values: Any, base: Path) -> list[Recorded]:
    """The `[recorded]` table of a study TOML, with paths made absolute relative to `base` (the file's folder)."""
    if not isinstance(values, Mapping):
        raise ConfigError("[recorded] must be a table of study name = results file")
    out = []
    for study, file in values.items():
        if not NAME_RE.match(str(study)) or not isinstance(file, str):
            raise ConfigError(f"[recorded] {study!r}: write STUDY_NAME = \"path/to/results.json\"")
        out.append(Recorded(str(study), (base / file).resolve()))
    return out


def gpt_and_i(file: Path) -> bool:
    """Whether `file` is one of kstechly/gpt-and-i's response files (`llm-csp/responses/...`), not PlanBench's."""
    return file.name == "responses.json" and "responses" in file.parts[:-1]


def missing_data(dataset: str | None) -> bool:
    return bool(dataset) and not Path(str(dataset)).is_dir()


def sources_note(dataset: str | None) -> list[str]:
    """Lines telling a user without the datasets folder what goes in it and where each part comes from."""
    lines = [f"datasets folder {dataset} is missing; it holds public data, as published:"]
    lines += [f"  {folder}/: {source}" for folder, source in DATASET_SOURCES.items()]
    lines.append("running what needs no data: the live study on generated instances; recorded runs are skipped")
    return lines


def generated_fallback(name: str, file_values: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The live study's name and TOML values when its dataset is missing: generated instances, no dataset."""
    values = {k: v for k, v in file_values.items() if k != "dataset"}
    values["instances"] = GENERATED
    return f"{name}-generated", values


@dataclass
class MainJob:
    """What `run_main_job` did: a session per replayed recorded study and the live one, and why any recorded
    study was skipped."""

    sessions: list[Any]
    replayed: list[str]
    skipped: list[str]


def run_main_job(store: Any, live: Any, recorded: list[Recorded], *, replay: bool = False, execution: Any = None,
                 run: Any = None, confirmed: bool = False, shown: Any = None) -> MainJob:  # fmt: skip
    """Replay every recorded file (0 calls), then run the live study; `run(store, config, replay, execution)`
    runs one study (default: `studies.session.run_session`, so a caller can wrap it with its terminal UI).
    `shown(session)` is given the session of a recorded study found finished, which `run` did not run."""
    from critiquebench.studies.runner import StudySummary
    from critiquebench.studies.session import LOCAL, Session, run_session

    execution = execution or LOCAL
    if run is None:
        def run(store: Any, config: Any, replay: bool, execution: Any) -> Any:
            return run_session(store, config, replay=replay, execution=execution, confirmed=confirmed)

    dataset = Path(live.dataset) if getattr(live, "dataset", None) else None
    job = MainJob([], [], [])
    for item in recorded:
        if not item.file.is_file():
            job.skipped.append(f"recorded study {item.study}: skipped, {item.file} is missing")
            continue
        source = _source(item, dataset)
        config, finished = _imported_before(store, item.study, source)
        if config is not None and finished is not None:  # nothing to do: said as a session that found it so
            session = Session(config, StudySummary(total=finished, skipped=finished))
            if shown is not None:
                shown(session)
            job.sessions.append(session)
            job.replayed.append(item.study)
            continue
        if config is None:
            config, why = _import(store, item, dataset)
            if config is None:
                job.skipped.append(f"recorded study {item.study}: skipped: {why}")
                continue
            _remember_import(store, config, source)
        session = run(store, config, True, LOCAL)
        summary = session.summary
        if summary.ok and summary.done + summary.skipped == summary.total:
            _remember_finished(store, config, summary.total)
        job.sessions.append(session)
        job.replayed.append(item.study)
    job.sessions.append(run(store, live, replay, execution))
    return job


def _import(store: Any, item: Recorded, dataset: Path | None) -> tuple[Any, str]:
    """The study `item`'s file imports as, or None and why it does not import."""
    from critiquebench.importers.planbench import ImportError_, import_planbench
    from critiquebench.importers.self_verification import SelfVerificationError, import_files

    try:
        if gpt_and_i(item.file):  # GPT-4's recorded self-verification runs (gpt-and-i's responses.json)
            # its graphs are the study's datasets folder's, not whatever folder the command runs in
            [done] = import_files([item.file], store, item.study, dataset=dataset)
            return done.config, ""
        return import_planbench(item.file, store, item.study).config, ""
    except (ImportError_, ConfigError, SelfVerificationError) as exc:
        return None, str(exc)


def _source(item: Recorded, dataset: Path | None) -> str:
    """What an import of `item` is made from: the file's bytes, critiquebench's version (its prompts, parsers
    and importers) and the datasets folder the study reads."""
    from critiquebench import __version__

    digest = hashlib.sha256(item.file.read_bytes())
    digest.update(json.dumps([__version__, str(dataset.resolve()) if dataset else None]).encode())
    return digest.hexdigest()


def _definition(config: Any) -> str:
    return hashlib.sha256(json.dumps(config.identity(), sort_keys=True).encode()).hexdigest()


def _imported_before(store: Any, study: str, source: str) -> tuple[Any, int | None]:
    """The stored definition of `study` if a main job imported it from `source` and the store still holds what
    that import stored (the same definition, every recorded answer), else None: the file is imported; and the
    number of its runs if its replay finished them all and exactly those runs are there, all done."""
    from critiquebench.store.db import opened
    from critiquebench.store.imports import recorded_calls, recorded_import
    from critiquebench.store.reads import study_progress
    from critiquebench.store.results import ensure_schema, load_study
    from critiquebench.studies.config import StudyConfig

    with opened(store) as db:
        ensure_schema(db)
        row = recorded_import(db, study)
        stored = load_study(db, study)
        if row is None or stored is None or row["source"] != source:
            return None, None
        config = StudyConfig.from_dict(stored)
        if (_definition(config) != row["definition"]
                or recorded_calls(db, config.model, config.endpoint_id) < row["calls"]):  # fmt: skip
            return None, None
        statuses = study_progress(db, study)["statuses"]
        runs, done = sum(statuses.values()), statuses.get("done", 0)
        finished = row.get("finished")
        return config, finished if finished is not None and runs == done == finished else None


def _remember_import(store: Any, config: Any, source: str) -> None:
    from critiquebench.store.db import opened
    from critiquebench.store.imports import recorded_calls, remember_import

    with opened(store) as db:
        calls = recorded_calls(db, config.model, config.endpoint_id)
        remember_import(db, config.name, source, _definition(config), calls)


def _remember_finished(store: Any, config: Any, runs: int) -> None:
    """Every one of the `runs` runs of `config`'s replay is done (a later job finds them so, or replays)."""
    from critiquebench.store.db import opened
    from critiquebench.store.imports import remember_finished

    with opened(store) as db:
        remember_finished(db, config.name, _definition(config), runs)
