"""Reusing finished runs: a run identical to one already finished in the store copies its rows.

A run's result is a function of its identity: the code (critiquebench's own files and the installed critic
plug-ins), the domain (its options and, for a PDDL folder, its files), the instance's content, the canonical
scheme spec, the trial, and the LLM's model, endpoint and sampling parameters. Two runs with one identity make
the same calls, every one of them answered by the call cache after the first run, and reach the same rows. So
the second run copies the first's `runs` and `attempts` rows instead of stepping through the graph again. The
runner copies every such run of a study in one transaction before it starts any (`reuse_pending`), and a run
started on its own checks too (`copy_finished`): well under a millisecond a run instead of ~10 ms of LangGraph
steps and checkpoint writes (benchmarks/bench_reuse.py: 900 runs in 1.6 s against 28.8 s the first time).
Its counts read as a replay's would (every call a cache hit); it gets no checkpoints, which only unfinished
runs need. Any change to the code, data or settings changes the identity, and the run executes as usual.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from critiquebench.domains.contract import Domain, FromFolder, Instance
from critiquebench.domains.memo import ObjectMemo, read_once
from critiquebench.store.db import Store, transaction
from critiquebench.store.memo import copy_run, finished_with

# Settings of a study that do not change what a run computes (or are already part of the run's identity).
_NOT_IDENTITY = frozenset({"name", "domains", "instances", "schemes", "trials", "planned_runs", "concurrency",
                           "timeout", "budget_tokens", "replay", "kind"})  # fmt: skip


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of every file of critiquebench's packages and of the installed critic and scheme plug-ins' versions."""
    import critiquebench
    import critiquebench.domains
    import critiquebench.graphs
    import critiquebench.nodes
    import critiquebench.store

    digest = hashlib.sha256()
    for package in (critiquebench, critiquebench.domains, critiquebench.graphs, critiquebench.nodes,
                    critiquebench.store):  # fmt: skip
        root = os.path.dirname(package.__file__)
        for parts in _files(root):
            path = os.path.join(root, *parts)
            if os.path.isfile(path):
                digest.update(os.path.join(*parts).encode())
                with open(path, "rb") as file:
                    digest.update(file.read())
    installed = metadata.entry_points()  # one scan of the installed distributions for both groups, not one each
    for group in ("critiquebench.critics", "critiquebench.schemes"):
        for entry in sorted(installed.select(group=group), key=lambda e: e.name):
            version = entry.dist.version if entry.dist is not None else "?"
            digest.update(f"{group}:{entry.name}={entry.value}@{version}".encode())
    return digest.hexdigest()


def _files(root: str) -> list[tuple[str, ...]]:
    """The path parts of every file under `root` but in `__pycache__` folders, in `sorted(Path.rglob)`'s order:
    the walk leaves those folders out rather than listing (and stat-ing) their compiled files to drop them."""
    found: list[tuple[str, ...]] = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        where = os.path.relpath(folder, root)
        parts = () if where == os.curdir else tuple(where.split(os.sep))
        found += [(*parts, name) for name in files]
    return sorted(found)


def run_key(
    study_config: dict[str, Any] | None, domain: Domain, instance: Instance, spec: str, trial: int, llm: Any,
    files: dict[str, str | None] | None = None,
) -> str | None:
    """The run's identity as a hash, or None when it cannot be told (an LLM without model/endpoint/params, or a
    domain whose files cannot be read): such a run just executes. `files`: the domain's `domain_files`, when the
    caller has them (one look for every run of a domain)."""
    settings, endpoint = getattr(llm, "settings", None), getattr(llm, "endpoint", None)
    if settings is None or not isinstance(endpoint, str) or study_config is None:
        return None
    try:
        files = domain_files(domain) if files is None else files
        return _identity_hash(study_config, domain, instance, spec, trial, settings, endpoint, files)
    except (OSError, TypeError, ValueError):
        return None


def domain_files(domain: Domain) -> dict[str, str | None]:
    """The digests of a PDDL folder domain's files, part of what it computes ({} for any other domain)."""
    files: dict[str, str | None] = {}
    if isinstance(domain, FromFolder):
        from critiquebench.domains.planning.instances import domain_file  # loaded only for such domains

        for name in ("domain.pddl", "config.yaml"):
            found = domain_file(Path(domain.folder)) if name == "domain.pddl" else None
            files[name] = _file_digest(found or Path(domain.folder) / name)
    return files


def _identity_hash(
    study_config: dict[str, Any], domain: Domain, instance: Instance, spec: str, trial: int, settings: Any,
    endpoint: str, files: dict[str, str | None],
) -> str:
    identity = {
        "code": code_fingerprint(),
        "study": {k: v for k, v in study_config.items() if k not in _NOT_IDENTITY},
        "domain": domain.name,
        "domain_files": files,
        "instance": [instance.id, _data_identity(instance.data)],
        "spec": spec,
        "trial": trial,
        "llm": [settings.model, endpoint, settings.sampling_params()],
    }
    return _digest(identity)


# An instance's data (its problem and examples, and a planning folder's many-shot pool: every problem text of the
# folder, one list all its instances share) is serialised once per process while it lives, not again for every run
# (twice a run: to find identical finished runs, then to record the run). Loaded instances are not changed.
_DIGESTS = ObjectMemo(4096)


def _digest_once(value: Any, identity: Any = None) -> str:
    """The digest of `identity` (default: `value`), computed once while `value` lives."""
    return _DIGESTS.get((value,), None, lambda: _digest(value if identity is None else identity))


def _digest(value: Any) -> str:
    """SHA-256 of `value`'s canonical JSON."""
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _data_identity(data: dict[str, Any]) -> str:
    pool = data.get("train_pool")
    if not isinstance(pool, list):
        return _digest_once(data)
    return _digest_once(data, {**data, "train_pool": _digest_once(pool)})


def _file_digest(path: Path) -> str | None:
    """The SHA-256 of the file at `path` (None: no such file), hashed again only when it changes: every run of a
    study asks for the same two files of its domain."""
    return read_once(path, _hash_file) if path.is_file() else None


def _hash_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copy_finished(db: Store, key: str, thread_id: str, ident: dict[str, Any]) -> bool:
    """Give `thread_id` the rows of a finished run with the same key; False when there is none."""
    return bool(copy_runs(db, [(key, thread_id, ident)]))


def copy_runs(db: Store, wanted: list[tuple[str, str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """For each (key, thread id, identity columns) whose key a finished run has, give the thread that run's rows,
    all in one transaction. Returns the copied threads' `runs` rows by thread id."""
    sources = finished_with(db, [key for key, _, _ in wanted])
    todo = [(key, tid, ident) for key, tid, ident in wanted if key in sources and sources[key]["thread_id"] != tid]
    if not todo:
        return {}
    copied: dict[str, dict[str, Any]] = {}
    with transaction(db):
        for key, tid, ident in todo:
            row = sources[key]
            results = copy_run(db, key, row, tid, ident)
            copied[tid] = {**row, **ident, **results, "thread_id": tid, "status": "done",
                           "cache_hits": row["llm_calls"]}  # fmt: skip
    return copied


def reuse_pending(
    store_path: str | os.PathLike[str],
    study: str,
    tasks: Iterable[Any],
    llm: Any,
    identities: dict[Any, str] | None = None,
) -> dict[Any, Any]:
    """Copy every task (a runner `Task`) that an identical finished run covers, in one transaction: a study
    defined like an earlier one pays neither calls nor graph steps. Returns task key -> its new `runs` row.
    `identities`, when given, receives each task's identity (task key -> `run_key`), which its run then need not
    compute again (`execute_run(identity=...)`)."""
    from critiquebench.graphs import parse_spec
    from critiquebench.store.db import connect
    from critiquebench.store.results import ensure_schema, load_study
    from critiquebench.studies.threads import thread_id_for

    tasks = list(tasks)
    if not tasks:
        return {}
    db = connect(store_path)
    try:
        ensure_schema(db)
        config = load_study(db, study)
        wanted, by_thread = [], {}
        files: dict[int, dict[str, str | None]] = {}  # id of a task's domain (alive in `tasks`) -> its files
        for task in tasks:
            parsed = parse_spec(task.spec)
            try:
                found = files.get(id(task.domain))
                if found is None:
                    found = files[id(task.domain)] = domain_files(task.domain)
            except (OSError, TypeError, ValueError):
                return {}  # the identity cannot be told (`run_key`): the runs execute
            key = run_key(config, task.domain, task.instance, parsed.label, task.trial, llm, found)
            if key is None:
                return {}
            if identities is not None:
                identities[task.key] = key
            tid = thread_id_for(study, task.domain.name, parsed.label, task.instance.id, task.trial)
            ident = dict(study=study, domain=task.domain.name, scheme=parsed.label, params=parsed.params,
                         instance_id=task.instance.id, trial=task.trial)  # fmt: skip
            wanted.append((key, tid, ident))
            by_thread[tid] = task.key
        return {by_thread[tid]: row for tid, row in copy_runs(db, wanted).items()}
    finally:
        db.conn.close()
