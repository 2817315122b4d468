"""Running a study: its matrix of runs over a bounded thread pool, with live progress and clean interruption.

Each task is one graph thread, (domain, instance, scheme spec, trial), executed by `execute.execute_run`,
which starts it, resumes it from its last checkpoint, or leaves it alone when it already finished. So running
a study again (after Ctrl-C, a crash or a failed endpoint) only does the work that is missing, and the LLM
call cache makes the repeated parts free.

Runs another process holds (a second `resume`, another worker; see `store.claims`) are not executed here: they
are retried every `CLAIM_POLL_S` seconds once nothing else is left, until their owner finishes them (they are
then counted as done) or its claim expires (this process takes the run over from its checkpoint). So two
processes on one study split its runs, and both end with the whole study done.

Interruption: `stop` (a threading.Event, set by the CLI's first Ctrl-C: `critiquebench.cli.terminal`) stops new
runs from starting; the running ones finish (their checkpoints make them resumable anyway). The caller's
`with open_llm(...)` block then stops the embedded server. Progress goes to `on_progress` (the CLI draws bars).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any

import sqlite_utils

from critiquebench.domains.contract import Domain, Instance
from critiquebench.llm.errors import EndpointUnreachable
from critiquebench.store.db import connect, full_store, store_name
from critiquebench.store.reads import study_runs
from critiquebench.store.results import ensure_schema, load_study, run_row, upsert_run
from critiquebench.studies.config import StudyConfig
from critiquebench.studies.threads import spec_of

log = logging.getLogger(__name__)

CLAIM_POLL_S = 0.5  # how often a run claimed by another process is looked at again


class StudyHalted(RuntimeError):
    """No run can go on (the store's disk is full, the Ray cluster is gone): the runner starts no more runs,
    lets the running ones end, and the study ends with this one-line message; finished runs stay, and a resume
    continues from the checkpoints."""


class RunnerError(RuntimeError):
    """The study cannot start (unknown domain, unreadable data, ...); the message says why."""


@dataclass(frozen=True)
class Task:
    domain: Domain
    instance: Instance
    spec: str
    trial: int

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.domain.name, self.spec, self.instance.id, self.trial)


@dataclass
class SchemeProgress:
    """Live counters of one scheme spec (all domains)."""

    total: int = 0
    done: int = 0
    correct: int = 0  # of `done`: the sound verifier accepted the run's output
    failed: int = 0
    running: int = 0
    llm_calls: int = 0
    tokens: int = 0
    prompt_tokens: int = 0  # of `tokens`: what a price table prices (`critiquebench.llm.prices`)
    completion_tokens: int = 0
    cache_hits: int = 0


@dataclass
class StudySummary:
    total: int = 0
    skipped: int = 0  # finished before this invocation, or meanwhile by another process
    done: int = 0
    failed: int = 0
    not_started: int = 0  # left for a later resume (interrupted)
    unfinished: int = 0  # stopped by the token budget; they continue on resume
    copied: int = 0  # of `done`: identical to runs finished before, copied (critiquebench.studies.reuse)
    study_failed: int = 0  # of `done`: ended where the study's own code failed on a reply (`nodes.llm_verifier`)
    interrupted: bool = False
    errors: list[tuple[str, str]] = field(default_factory=list)  # (run, error) of failed runs
    schemes: dict[str, SchemeProgress] = field(default_factory=dict)
    unreachable: str | None = None  # why the study stopped at once (endpoint refused, store full, Ray gone)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and not self.interrupted and self.not_started == 0 and self.unfinished == 0


ExecuteFn = Callable[..., Any]
# called with the schemes' counters; a session adds `calls=`, its LLM usage so far (retries, failed calls)
ProgressFn = Callable[..., None]


@dataclass(frozen=True)
class Skipped:
    """Cells of the matrix left out: scheme `spec` cannot run on these domains (`graphs.unsupported`)."""

    spec: str
    domains: tuple[str, ...]
    reason: str

    def describe(self) -> str:
        return f"{self.spec} on {', '.join(self.domains)} left out: {self.reason}"


@dataclass(frozen=True)
class Cell:
    """One scheme spec on one domain's instances: the matrix before its trials (`plan_cells`)."""

    domain: Domain
    instances: tuple[Instance, ...]
    spec: str


def load_matrix(config: StudyConfig) -> list[Task]:
    """Every (domain, instance, spec, trial) of the study that can run (see `plan_matrix`)."""
    return plan_matrix(config)[0]


def plan_matrix(config: StudyConfig) -> tuple[list[Task], list[Skipped]]:
    """Every (domain, instance, spec, trial) of the study, interleaved: the i-th instance (and trial) of every
    domain and scheme before the (i+1)-th of any, schemes innermost, so that any prefix of a study (one stopped
    by Ctrl-C or a budget) compares every scheme on the same instances, each scheme within one run of the others.
    Calls schemes share (standard's sample 0 is sampling's first sample) are made once: the client makes a call
    another run is already waiting on only once. Also the (scheme, domains) combinations left out because the
    scheme cannot run there. A study whose every cell is left out is an error."""
    cells, skipped = plan_cells(config)
    domains = list(dict.fromkeys(c.domain.name for c in cells))  # the study's domain order
    depth = max((len(c.instances) for c in cells), default=0)
    tasks = [Task(c.domain, c.instances[i], c.spec, trial)
             for i in range(depth) for trial in range(config.trials) for name in domains
             for c in cells if c.domain.name == name and i < len(c.instances)]  # fmt: skip
    return tasks, skipped


def plan_cells(config: StudyConfig) -> tuple[list[Cell], list[Skipped]]:
    """The study's (scheme spec, domain) cells that can run, in `plan_matrix`'s order, and those left out."""
    from critiquebench.domains import get_domain, load_instances
    from critiquebench.graphs import unsupported

    per_domain: list[tuple[Domain, list[Instance]]] = []
    for name in config.domains:
        try:
            domain = get_domain(name, **dict(config.domain_options.get(name, {})))
            dataset = Path(config.dataset) if config.dataset else None
            instances = load_instances(domain, config.instances[name], dataset)
        except (ValueError, OSError, LookupError, TypeError) as exc:
            raise RunnerError(f"domain {name!r}: {exc}") from exc
        if not instances:
            raise RunnerError(f"domain {name!r}: selection {config.instances[name]!r} has no instances")
        per_domain.append((domain, instances))
    cells: list[Cell] = []
    skipped: list[Skipped] = []
    for spec in config.schemes:
        left_out: dict[str, list[str]] = {}
        for domain, instances in per_domain:
            if (why := unsupported(spec, domain)) is not None:
                left_out.setdefault(why, []).append(domain.name)
                continue
            cells.append(Cell(domain, tuple(instances), spec))
        skipped += [Skipped(spec, tuple(names), why) for why, names in left_out.items()]
    if not cells and skipped:
        raise RunnerError("nothing can run: " + "; ".join(s.describe() for s in skipped))
    return cells, skipped


def planned_runs(config: dict[str, Any]) -> dict[tuple[str, str], int] | None:
    """Runs per (domain, scheme spec) cell of stored study `config`'s matrix (instances x trials); None when its
    instances cannot be read here (a store copied without its data)."""
    try:
        study = StudyConfig.from_dict(config)
        cells = plan_cells(study)[0]
    except Exception:  # noqa: BLE001 - any reason the data cannot be read: the count is only left out
        return None
    return {(c.domain.name, c.spec): len(c.instances) * study.trials for c in cells}


@contextmanager
def _store(store_path: Path) -> Iterator[sqlite_utils.Database]:
    """A short-lived connection: workers open their own, so no connection is shared across threads."""
    db = connect(store_path)
    try:
        yield db
    finally:
        db.conn.close()


def finished_keys(store_path: Path, study: str) -> dict[tuple[str, str, str, int], str]:
    """Status of every run the study already has, keyed like `Task.key`."""
    return {key: status for key, (status, _correct) in _finished(store_path, study).items()}


def _finished(store_path: Path, study: str) -> dict[tuple[str, str, str, int], tuple[str, bool]]:
    """Status and sound verdict of every run the study already has, keyed like `Task.key`."""
    with _store(store_path) as db:
        ensure_schema(db)
        return {(r["domain"], spec_of(r), r["instance_id"], r["trial"]): (r["status"], bool(r.get("correct")))
                for r in study_runs(db, study, answers=False)}  # fmt: skip


def _definition(store_path: Path, study: str) -> dict[str, Any] | None:
    with _store(store_path) as db:
        return load_study(db, study)


def _row_by_id(store_path: Path, thread_id: str) -> dict[str, Any] | None:
    with _store(store_path) as db:
        return run_row(db, thread_id)


def run_study(
    store_path: Path,
    config: StudyConfig,
    llm: Any,
    *,
    stop: threading.Event | None = None,
    on_progress: ProgressFn | None = None,
    execute: ExecuteFn | None = None,
    tasks: list[Task] | None = None,
) -> StudySummary:
    """Execute the study's missing runs (of `tasks`, default: the whole matrix) with at most
    `config.concurrency` at a time (one at a time in a replay: see below)."""
    reuse = execute is None  # a stand-in executor (tests) sees every run
    cpu_only = False
    if execute is None:
        from critiquebench.studies.execute import close_connections, keep_connections, replaying
        from critiquebench.studies.execute import execute_run as execute

        cpu_only = llm is not None and replaying(llm)
    stop = stop or threading.Event()
    tasks = load_matrix(config) if tasks is None else tasks
    status = _finished(store_path, config.name)
    summary = StudySummary(total=len(tasks))
    progress = summary.schemes
    for spec in config.schemes:
        progress[spec] = SchemeProgress()
    pending: list[Task] = []
    for task in tasks:
        progress[task.spec].total += 1
        done, correct = status.get(task.key, ("", False))
        if done == "done":
            summary.skipped += 1
            progress[task.spec].done += 1
            progress[task.spec].correct += correct
        else:
            pending.append(task)
    identities: dict[Any, str] = {}  # task key -> its run's identity, found while looking for identical runs
    # the study's stored definition (saved by the session just before), read once for every run rather than by each
    defined = _definition(store_path, config.name) if reuse else None
    if reuse and llm is not None:  # runs identical to finished ones (a study defined again): copied at once
        from critiquebench.studies.reuse import reuse_pending

        try:
            copied = reuse_pending(store_path, config.name, pending, llm, identities)
        except Exception:  # noqa: BLE001 - an optimisation: on any surprise the runs simply execute
            log.warning("could not reuse finished runs; running them", exc_info=True)
            copied = {}
        summary.copied = len(copied)
        for key, row in copied.items():
            _count(summary, progress[key[1]], row)
        pending = [task for task in pending if task.key not in copied]
    lock = threading.Lock()
    deferred: list[tuple[float, Task]] = []  # (when to look again, task) of runs another process holds

    def halt(message: str) -> None:
        stop.set()
        with lock:
            summary.unreachable = summary.unreachable or message

    def work(task: Task) -> None:
        try:
            known: dict[str, Any] = {"defined": defined} if defined is not None else {}
            if task.key in identities:
                known["identity"] = identities[task.key]
            outcome = execute(store_path, config.name, task.domain, task.instance, task.spec, task.trial, llm,
                              **known)  # fmt: skip
            if getattr(outcome, "status", None) == "claimed":
                with lock:
                    progress[task.spec].running -= 1
                    deferred.append((time.monotonic() + CLAIM_POLL_S, task))
                return
            row = getattr(outcome, "row", None) or _row_by_id(store_path, outcome.thread_id) or {}
        except (EndpointUnreachable, StudyHalted) as exc:  # retrying or starting more runs cannot help: stop
            outcome = None
            halt(str(exc))
            row = _row_by_id(store_path, thread_id_for_task(config.name, task)) or {}
        except Exception as exc:  # one broken run must not end the study; it is recorded and resumable
            outcome = None
            full = full_store(exc)
            if full is not None:  # nothing more can be stored: recording this run would fail too
                halt(f"store {store_name(store_path)} is full ({full}): free some space")
                with lock:
                    progress[task.spec].running -= 1
                return
            log.warning("run %s failed: %s", task.key, exc, exc_info=log.isEnabledFor(logging.DEBUG))
            row = _record_crash(store_path, config.name, task, exc)
        with lock:
            prog = progress[task.spec]
            prog.running -= 1
            if row.get("status") == "done" and getattr(outcome, "skipped", False):
                prog.done += 1  # finished by another process meanwhile: its usage is not ours
                prog.correct += bool(row.get("correct"))
                summary.skipped += 1
                return
            _count(summary, prog, row, "/".join(map(str, task.key)))

    queue = iter(pending)
    # Concurrency overlaps the waits for an endpoint. A replay (every call from the cache) has none: its runs are
    # CPU only, and a second thread only contends for the GIL and the store's write lock (GPT-4's 500 one-shot
    # answers: 10-20% more CPU at concurrency 2 than at 1, and no sooner done)
    width = 1 if cpu_only else config.concurrency
    kept: list[dict[str, Any]] = []  # the pool threads' connections (`keep_connections`), closed when they end
    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="run",
                              initializer=partial(keep_connections, kept) if reuse else None)  # fmt: skip
    running: set[Future[None]] = set()
    # Finished runs come back through a queue their futures put themselves in: `concurrent.futures.wait` sets a
    # waiter on every running future at each call, once per finished run (a 32-wide study of benchmarks/
    # bench_scale.py: 7.6% of the driver's Python time, sampled with py-spy).
    finished: SimpleQueue[Future[None]] = SimpleQueue()
    try:
        while True:
            while not stop.is_set() and len(running) < width:
                task = next(queue, None) or _due(deferred, lock)
                if task is None:
                    break
                with lock:
                    progress[task.spec].running += 1
                future = pool.submit(work, task)
                future.add_done_callback(finished.put)
                running.add(future)
            if on_progress:
                with lock:
                    on_progress(progress)
            if not running:
                with lock:
                    waiting = bool(deferred) and not stop.is_set()
                if not waiting:
                    break
                time.sleep(CLAIM_POLL_S / 5)
                continue
            try:
                done = [finished.get(timeout=0.2)]
            except Empty:
                continue
            while not finished.empty():
                done.append(finished.get())
            for fut in done:
                running.discard(fut)
                fut.result()  # re-raises only bugs in `work` itself
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)  # an abort must not wait for running graphs
        raise
    pool.shutdown(wait=True)
    if kept:
        close_connections(kept)
    summary.not_started = sum(1 for _ in queue) + len(deferred)
    summary.interrupted = stop.is_set() and summary.not_started > 0  # a late Ctrl-C that missed nothing is no stop
    if on_progress:
        on_progress(progress)
    return summary


def _count(summary: StudySummary, prog: SchemeProgress, row: dict[str, Any], run: str = "") -> None:
    """Add one finished attempt at a run (its `runs` row) to the study's and its scheme's counters."""
    if row.get("status") == "done":
        prog.done += 1
        prog.correct += bool(row.get("correct"))
        summary.done += 1
        summary.study_failed += bool(row.get("study_failed"))
    elif row.get("status") == "pending":  # the token budget stopped it; not a failure
        summary.unfinished += 1
    else:
        prog.failed += 1
        summary.failed += 1
        summary.errors.append((run, str(row.get("error") or row.get("status"))))
    prog.llm_calls += row.get("llm_calls") or 0
    prog.cache_hits += row.get("cache_hits") or 0
    prog.prompt_tokens += row.get("prompt_tokens") or 0
    prog.completion_tokens += row.get("completion_tokens") or 0
    prog.tokens += (row.get("prompt_tokens") or 0) + (row.get("completion_tokens") or 0)


def _due(deferred: list[tuple[float, Task]], lock: threading.Lock) -> Task | None:
    """Take the first deferred task whose time to look again has come."""
    now = time.monotonic()
    with lock:
        for i, (when, task) in enumerate(deferred):
            if when <= now:
                del deferred[i]
                return task
    return None


def thread_id_for_task(study: str, task: Task) -> str:
    from critiquebench.studies.threads import thread_id_for

    return thread_id_for(study, task.domain.name, task.spec, task.instance.id, task.trial)


def _record_crash(store_path: Path, study: str, task: Task, exc: Exception) -> dict[str, Any]:
    """Mark a run that raised as failed (execute_run records its own failures; this covers the rest)."""
    tid = thread_id_for_task(study, task)
    with _store(store_path) as db:
        ensure_schema(db)
        upsert_run(db, tid, study=study, domain=task.domain.name, scheme=task.spec, instance_id=task.instance.id,
                   trial=task.trial, status="failed", error=f"{type(exc).__name__}: {exc}")  # fmt: skip
    return _row_by_id(store_path, tid) or {}
