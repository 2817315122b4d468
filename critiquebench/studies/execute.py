"""Run or resume ONE graph thread: one (study, domain, scheme spec, instance, trial).

A built-in scheme's run is stepped without LangGraph (`graphs.direct`), its rows written step by step, with no
checkpoint: every call a step makes is in the call cache before the step's rows are, so an unfinished run resumes
by stepping again from the start, each call so far a cache hit, writing rows only after the steps whose rows
are stored (the run row's `steps`). LangGraph's per-step checkpoints cost about 8 ms of CPU per LLM call of a
32-run study (benchmarks/bench_scale.py) for what the cache already holds. Other graphs (a plug-in's own
StateGraph, the intrinsic scheme's), runs that have a checkpoint (started by an older version, or live with
`$CRITIQUEBENCH_CHECKPOINTS=1`) and, while that variable is set, every live run go through LangGraph: the scheme
graph (compiled once per configuration) gets a SQLite checkpointer on the store file here, and the run's domain,
instance and LLM as its runtime context; an unfinished thread continues from its last checkpoint.
Nodes only compute: this module records each node's update as the round's `attempts` row, and nothing else
writes them. A finished run is not run again. A run is claimed first (see `store.claims`): one that another
process is executing is left to it and reported with status "claimed". The `runs` row goes running -> done
(totals summed from the `attempts` rows) or failed (with the error; the run stays resumable), or back to pending
when the token budget stops it.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils

from critiquebench.domains.contract import Domain, Instance
from critiquebench.graphs import Spec, compiled, direct, parse_spec
from critiquebench.graphs.direct import DirectGraph
from critiquebench.graphs.state import initial_state, recursion_limit
from critiquebench.llm.errors import BudgetExceeded, EndpointUnreachable, LLMError, ReplayMiss
from critiquebench.nodes.context import PAST_KEYS, USAGE_KEYS, ChatLLM, RunContext
from critiquebench.store.cache import CallCache, write_events
from critiquebench.store.claims import Leases, held_elsewhere, holder, leases_for
from critiquebench.store.db import connect, full_store, transaction
from critiquebench.store.memo import remember
from critiquebench.store.postgres import is_postgres
from critiquebench.store.reads import step_recorded
from critiquebench.store.results import (
    attempts,
    ensure_schema,
    forget_rounds,
    has_checkpoint,
    load_study,
    recorded_steps,
    round_usage,
    run_row,
    run_status,
    set_recorded_steps,
    upsert_attempt,
    upsert_round_calls,
    upsert_run,
)
from critiquebench.studies.provenance import run_provenance
from critiquebench.studies.reuse import copy_finished, run_key
from critiquebench.studies.threads import thread_id_for

log = logging.getLogger(__name__)


class _NotLoaded(Exception):
    """Stands for PlanningError while no planning module is loaded: nothing raises it then."""


def _planning_error() -> type[Exception]:
    """PlanningError, which only the planning domains' modules raise, without loading them (with their PDDL
    parser, a third of a command's start-up) for a study that has none: `except` reads it when it is reached."""
    strips = sys.modules.get("critiquebench.domains.planning.strips")
    return strips.PlanningError if strips is not None else _NotLoaded


DURABILITY = "sync"  # a checkpoint is on disk before the next node starts, so a kill loses at most one node
CHECKPOINTS_ENV = "CRITIQUEBENCH_CHECKPOINTS"  # "1": live runs keep LangGraph's per-step checkpoints


def checkpointing() -> bool:
    """Whether live runs are checkpointed by LangGraph at every step (`$CRITIQUEBENCH_CHECKPOINTS=1`), where a
    run could resume from its cached calls instead (see the module docstring)."""
    return os.environ.get(CHECKPOINTS_ENV, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class RunOutcome:
    thread_id: str
    # "done", "failed", "pending" (stopped by the token budget) or "claimed" (another process is executing it;
    # nothing ran here)
    status: str
    correct: bool | None = None
    final_answer: str | None = None  # the raw text of the answer the scheme output
    final_round: int | None = None
    rounds: int = 0
    resumed: bool = False  # continued from an earlier checkpoint
    skipped: bool = False  # already done before this call; nothing ran
    error: str | None = None
    row: dict[str, Any] | None = field(default=None, compare=False, repr=False)  # its `runs` row as stored


@dataclass
class _Run:
    """One run's arguments as `execute_run` received them, for the paths that step it (`_replay`, `_claimed_run`)."""

    study: str
    domain: Domain
    instance: Instance
    parsed: Spec
    tid: str
    trial: int
    llm: ChatLLM
    identity: str | None  # its `studies.reuse.run_key`, when the caller had it
    defined: dict[str, Any] | None  # the study's stored definition, when the caller had read it

    def ident(self) -> dict[str, Any]:
        """The run's identity columns, so its row is complete whether a write creates it or updates it."""
        return dict(study=self.study, domain=self.domain.name, scheme=self.parsed.label, params=self.parsed.params,
                    instance_id=self.instance.id, trial=self.trial)  # fmt: skip

    def reuse_key(self, db: sqlite_utils.Database) -> str | None:
        """Its `run_key` (reading the study's definition here if the caller had not)."""
        if self.defined is None:
            self.defined = load_study(db, self.study)
        return self.identity or run_key(self.defined, self.domain, self.instance, self.parsed.label, self.trial,
                                        self.llm)  # fmt: skip


def execute_run(
    store_path: str | os.PathLike[str],
    study: str,
    domain: Domain | str,
    instance: Instance,
    spec: str,
    trial: int,
    llm: ChatLLM,
    identity: str | None = None,
    defined: dict[str, Any] | None = None,
) -> RunOutcome:
    """Run the thread to its end (fresh, resumed, or not at all when already done) and record its `runs` row.
    `identity`: the run's `studies.reuse.run_key` when the caller has it (the runner, from `reuse_pending`);
    `defined`: the study's stored definition when the caller has read it (the runner, once for all its runs).

    Raises ValueError for a bad scheme spec, and EndpointUnreachable (after recording it) when the endpoint
    refused its first calls; other LLM failures (LLMCallError, ReplayMiss) and other errors inside the graph are
    recorded on the row (status failed) and returned, not raised; a run the token budget stops stays pending
    (unfinished). A run identical to one finished before copies its rows (`studies.reuse`).
    """
    if isinstance(domain, str):
        from critiquebench.domains import get_domain

        domain = get_domain(domain)
    parsed = parse_spec(spec)  # once per run (and cached per spec string)
    label = parsed.label
    tid = thread_id_for(study, domain.name, label, instance.id, trial)
    kept = _kept_connection(store_path)
    db = kept or connect(store_path)
    run = _Run(study, domain, instance, parsed, tid, trial, llm, identity, defined)
    try:
        if kept is None:
            ensure_schema(db)
        if run_status(db, tid) == "done":
            return _outcome(db, tid, skipped=True)
        stepper = direct(label) if replaying(llm) else None
        if stepper is not None and not has_checkpoint(db, tid):  # stepped without a claim (`_replayed_run`)
            return _replay(db, stepper, run)
        leases = leases_for(str(store_path), lambda: connect(store_path))
        if not leases.claim(db, tid):
            owner = holder(db, "run_claims", tid) or "another process"
            return RunOutcome(tid, status="claimed", skipped=True, error=f"claimed by {owner}")
        try:
            try:
                return _claimed_run(db, store_path, run, leases)
            except _ProcessFault as fault:  # not the answer's doing: once more, from the last checkpoint
                log.warning("run %s: %s; running it again", tid, fault)
                return _claimed_run(db, store_path, run, leases, retried=True)
        finally:
            leases.release(db, tid)
    finally:
        if kept is None:
            db.conn.close()


def _replay(db: sqlite_utils.Database, stepper: DirectGraph, run: _Run) -> RunOutcome:
    """`_replayed_run` of a run with what it records besides its steps, once more after an error of the process
    itself."""
    reuse = run.reuse_key(db)
    assert run.defined is not None  # read by `reuse_key`
    # its provenance rides on the one row written at its end (no "running" row: nothing is written before)
    ident = {**run.ident(), **run_provenance(run.llm, run.defined)}
    limit = recursion_limit(run.parsed.max_rounds)
    try:
        return _replayed_run(db, stepper, RunContext.create(run.domain, run.instance, run.llm, run.tid), ident,
                             limit, reuse)  # fmt: skip
    except _ProcessFault as fault:  # not the answer's doing: once more, from the start
        log.warning("run %s: %s; running it again", run.tid, fault)
        return _replayed_run(db, stepper, RunContext.create(run.domain, run.instance, run.llm, run.tid), ident,
                             limit, reuse, retried=True)  # fmt: skip


_kept = threading.local()


def keep_connections(kept: list[dict[str, Any]] | None = None) -> None:
    """Let this thread keep its connection to a SQLite store from one run to the next (live or replayed): opening
    one and checking the schema cost about 1 ms a run, as much as a replayed one-shot run's own work. The runner's pool
    threads call it as they start, each adding its connections to `kept`, which the runner closes
    (`close_connections`) once they have ended: left to the garbage collector (a connection is in a reference
    cycle with its statement cache), one could stay open to the process's end and keep the store's -wal file."""
    _kept.held = {}
    if kept is not None:
        kept.append(_kept.held)


def close_connections(kept: list[dict[str, Any]]) -> None:
    """Close the connections of threads that kept them in `kept` (`keep_connections`), all of which have ended."""
    for held in kept:
        for db in held.values():
            db.close()
        held.clear()


def _kept_connection(store_path: str | os.PathLike[str]) -> sqlite_utils.Database | None:
    """This thread's kept connection to the store at `store_path` (see `keep_connections`), or None: a thread
    that keeps none, or a Postgres store."""
    held: dict[str, sqlite_utils.Database] | None = getattr(_kept, "held", None)
    if held is None or is_postgres(store_path):
        return None
    db = held.get(os.fspath(store_path))
    if db is None:
        db = held[os.fspath(store_path)] = connect(store_path)
        ensure_schema(db)
    return db


def _claimed_run(
    db: sqlite_utils.Database,
    store_path: str | os.PathLike[str],
    run: _Run,
    leases: Leases,
    retried: bool = False,
) -> RunOutcome:
    """The body of `execute_run` once this process holds the run's claim (in `leases`); raises `_ProcessFault`
    for an error of the process itself unless `retried` (the second time it is recorded as the process's)."""
    tid, llm, label, domain, instance = run.tid, run.llm, run.parsed.label, run.domain, run.instance
    if run_status(db, tid) == "done":  # finished by the previous holder just before we claimed it
        return _outcome(db, tid, skipped=True)
    reuse = run.reuse_key(db)
    defined = run.defined
    ident = run.ident()
    # An identical run finished before gives its rows, no graph steps. A replay does not look again per run: the
    # runner copied every such run just before it started (`reuse_pending`), and a run it missed is replayed from
    # the cache, to the same rows.
    if reuse and not replaying(llm) and copy_finished(db, reuse, tid, ident):
        return _outcome(db, tid)
    # a run started with checkpoints resumes from its checkpoint, through LangGraph (a replay's other runs are
    # stepped by `execute_run` without a claim)
    stepper = direct(label) if not replaying(llm) and not checkpointing() else None
    if stepper is not None and not has_checkpoint(db, tid):
        ctx = RunContext.create(domain, instance, llm, tid)
        limit = recursion_limit(run.parsed.max_rounds)
        return _live_run(db, stepper, ctx, ident, run_provenance(llm, defined), limit, reuse, leases, retried)
    # One background thread per run: every scheme's steps hold one node, so LangGraph's per-run pool only writes
    # checkpoints (in order, each waited for); its default of up to cpu+4 threads started and joined per run
    # cost about 0.3 ms of CPU per LLM call in a 32-run study (benchmarks/bench_scale.py).
    config: Any = {"configurable": {"thread_id": tid}, "recursion_limit": recursion_limit(run.parsed.max_rounds),
                   "max_concurrency": 1}  # fmt: skip
    from critiquebench.store.checkpoints import open_saver  # LangGraph's saver: only runs stepped by LangGraph

    with open_saver(store_path) as saver:
        graph = compiled(label).copy(update={"checkpointer": saver})
        snapshot = graph.get_state(config)
        resumed = bool(snapshot.values)
        # what this run is made with (a resumed run: what it goes on with), in the row it writes anyway
        upsert_run(db, tid, **ident, status="running", error=None, **run_provenance(llm, defined))
        prior: list[dict[str, Any]] = []
        if resumed and (lost := _unrecorded_step(db, tid, graph, snapshot)) is not None:
            config = {**config, "configurable": lost["configurable"]}  # the step again, from the checkpoint before it
            snapshot = graph.get_state(config)
        if resumed:  # a kill may have come between a node's checkpoint and its row: write the row again
            _record(db, tid, snapshot.values.get("attempt"), snapshot.values.get("round"))
            # `tasks`, not `next`: a kill between a step's stored writes and the next checkpoint leaves tasks
            # that already ran (their writes in the values, absent from `next`); streaming on applies them
            if not snapshot.tasks and not snapshot.values.get("done"):
                # checkpointed by an older graph whose critic loop had a separate verifier step after the
                # generator (a node this graph lacks): continue as if the generator just finished
                graph.update_state(config, {"round": snapshot.values.get("round", 0)}, as_node="generator")
            elif not snapshot.tasks:  # finished, but killed before its row said so
                return _finish(db, tid, ident, resumed=True)
            prior = _legacy_past(db, tid, snapshot.values)
        ctx = RunContext.create(domain, instance, llm, tid, prior)
        try:
            start = None if resumed else initial_state(instance.id)
            for step in graph.stream(start, config, context=ctx, durability=DURABILITY, stream_mode="updates"):
                # the one place where rounds are recorded: a step's rows in one commit
                made = [(node, update, ctx.llm.take_keys()) for node, update in step.items()]
                if any(isinstance(update, dict) and update.get("attempt") for _, update, _ in made):
                    with transaction(db):
                        for node, update, keys in made:
                            if isinstance(update, dict):
                                _record(db, tid, update.get("attempt"), None, node, keys)
        except Exception as exc:  # `_run_error` sorts what stops the study from what fails this run
            return _run_error(db, tid, ident, exc, resumed, retried)
    return _finished(db, tid, ident, resumed, reuse)


def _finished(
    db: sqlite_utils.Database, tid: str, ident: dict[str, Any], resumed: bool, reuse: str | None
) -> RunOutcome:
    """A run that ended without an error, recorded (and remembered for reuse by identical runs)."""
    outcome = _finish(db, tid, ident, resumed=resumed)
    if reuse:
        remember(db, reuse, tid)
    return outcome


def _run_error(
    db: sqlite_utils.Database, tid: str, ident: dict[str, Any], exc: Exception, resumed: bool, retried: bool
) -> RunOutcome:
    """A run's error, recorded (LangGraph's path and the direct one alike): the run's outcome, or the error raised
    again where it stops the study."""
    if isinstance(exc, EndpointUnreachable):  # the caller stops the study; this run resumes later
        _fail(db, tid, ident, f"{type(exc).__name__}: {exc}", resumed)
        raise exc
    if isinstance(exc, BudgetExceeded):  # not a failure: the run continues from here once the budget is raised
        return _fail(db, tid, ident, str(exc), resumed, status="pending")
    if isinstance(exc, LLMError):
        return _fail(db, tid, ident, f"{type(exc).__name__}: {exc}", resumed)
    if isinstance(exc, _planning_error()):  # the domain's input cannot be used (its message says why): no traceback
        log.warning("run %s failed: %s", tid, exc)
        return _fail(db, tid, ident, f"{type(exc).__name__}: {exc}", resumed)
    # a domain or plug-in bug fails this run, not the whole study
    if full_store(exc) is not None:  # no run can be recorded: the caller stops the study
        raise exc
    _process_fault(exc, retried)
    _log_failure(tid, exc)
    return _fail(db, tid, ident, _error_text(exc), resumed)


# Errors of the interpreter itself (python/cpython#106905's `SystemError` from the AST constructor under thread
# switches): nothing in the run's answer causes them, so the run is tried once more before it fails
PROCESS_ERRORS: tuple[type[BaseException], ...] = (SystemError,)
PROCESS_ERROR_PREFIX = "process error (not the model's answer; `resume` runs it again)"


class _ProcessFault(Exception):
    """A run hit one of `PROCESS_ERRORS` for the first time: `execute_run` runs it once more."""


def _process_fault(exc: Exception, retried: bool) -> None:
    """Raise `_ProcessFault` for a first error of the process (see `PROCESS_ERRORS`)."""
    if isinstance(exc, PROCESS_ERRORS) and not retried:
        raise _ProcessFault(f"{type(exc).__name__}: {exc}") from exc


def _log_failure(tid: str, exc: Exception) -> None:
    """Log a run's unexpected error: a bug's traceback, or one line for an error of the process."""
    if isinstance(exc, PROCESS_ERRORS):
        log.warning("run %s failed: %s", tid, _error_text(exc))
    else:
        log.exception("run %s failed", tid)


def _error_text(exc: Exception) -> str:
    """A failed run's error; one of the process's own says so, so no one reads it as the model's."""
    text = f"{type(exc).__name__}: {exc}"
    return f"{PROCESS_ERROR_PREFIX}: {text}" if isinstance(exc, PROCESS_ERRORS) else text


def replaying(llm: Any) -> bool:
    """Whether every call of `llm` must come from the cache (no endpoint can be asked): a run is then redone
    from the start at no cost, and needs no checkpoints."""
    return bool(getattr(getattr(llm, "settings", None), "replay", False))


def _live_run(
    db: sqlite_utils.Database,
    stepper: DirectGraph,
    ctx: RunContext,
    ident: dict[str, Any],
    provenance: dict[str, Any],
    limit: int,
    reuse: str | None,
    leases: Leases,
    retried: bool = False,
) -> RunOutcome:
    """A live run stepped without LangGraph or checkpoints (`graphs.direct`): each step's rows in one commit with
    the count of steps recorded (the run row's `steps`). An unfinished run (killed, failed, stopped by the budget)
    is stepped again from the start: its calls so far are cache hits (a call is cached before its step's rows are
    written), the steps already recorded write nothing, and the round in progress goes on with the usage its row
    holds, so the resumed run's rows are an uninterrupted run's (a step in flight at a kill is done again, as
    from a checkpoint). Failures are recorded as `_claimed_run`'s LangGraph path records them."""
    tid = ctx.thread_id
    recorded = recorded_steps(db, tid)
    resumed = recorded > 0
    # what this run is made with (a resumed run: what it goes on with), in the row it writes anyway
    upsert_run(db, tid, **ident, status="running", error=None, **provenance)
    try:
        try:
            _step_live(db, stepper, ctx, limit, recorded)
        except _Diverged as diverged:  # the rows recorded are not what the scheme now computes: start afresh
            log.warning("run %s: %s; running it again from the start", tid, diverged)
            forget_rounds(db, tid)
            ctx.llm.take_keys()
            ctx.llm.take()
            _step_live(db, stepper, ctx, limit, 0)
    except Exception as exc:  # `_run_error` sorts what stops the study from what fails this run
        return _run_error(db, tid, ident, exc, resumed, retried)
    if not isinstance(db, sqlite_utils.Database):  # Postgres: `remember` may take the schema's lock (DDL)
        return _finished(db, tid, ident, resumed, reuse)
    with transaction(db):  # its end, its identity and giving up its claim: one commit, not three
        outcome = _finished(db, tid, ident, resumed, reuse)
        leases.release(db, tid)
    return outcome


class _Diverged(Exception):
    """Stepping a resumed run again asked for a call its recorded steps did not make (not in the cache)."""


def _step_live(db: sqlite_utils.Database, stepper: DirectGraph, ctx: RunContext, limit: int, recorded: int) -> None:
    """Step a live run from the start, writing each step's rows (with the step count) after the `recorded` steps
    whose rows are stored. Those steps are stepped again with calls from the cache only (a cache-only client of
    the same endpoint): a call missing there (the scheme's prompts changed since, or the cache was cleared) raises
    `_Diverged` before anything is asked of the endpoint, where it would be paid again."""
    tid = ctx.thread_id
    live = ctx.llm.llm
    if recorded:
        ctx.llm.llm = _cache_only(live)
    # A step that made no LLM call (a sound verifier's) is written with the next step's rows, one commit for
    # both, or when stepping ends however it ends: a kill in between loses only a step that costs nothing to
    # do again and comes out the same (no call, so no cache hit in its usage), as a step in flight would.
    pending: list[tuple[int, str, dict[str, Any]]] = []
    stepped = False  # (not sys.exc_info(): the caller's retry after `_Diverged` runs inside its except block)
    try:
        for step, (node, update) in enumerate(stepper.stream(initial_state(ctx.instance.id), ctx, limit), 1):
            keys = ctx.llm.take_keys()
            attempt = update.get("attempt") if isinstance(update, dict) else None
            if step < recorded:
                continue
            if step == recorded:  # the last step whose rows are stored: its round goes on from its row
                ctx.llm.llm = live
                if attempt and attempt.get("round"):
                    # `stream` applies the update after this: the state's attempt carries the stored usage
                    stored_usage = round_usage(db, tid, attempt["round"], USAGE_KEYS)
                    update["attempt"] = {**attempt, **{k: v for k, v in stored_usage.items() if k in attempt}}
                continue
            if attempt and not keys:
                pending.append((step, node, attempt))
            elif attempt:  # the one place where rounds are recorded: a step's rows in one commit
                with transaction(db):
                    _record_pending(db, tid, pending)
                    _record(db, tid, attempt, None, node, keys)
                    set_recorded_steps(db, tid, step)
                pending.clear()
        stepped = True
    except ReplayMiss as exc:
        if ctx.llm.llm is live:
            raise
        raise _Diverged("a call of its recorded steps is not in the call cache") from exc
    finally:
        ctx.llm.llm = live
        if pending:
            _write_pending(db, tid, pending, failing=not stepped)


def _record_pending(db: sqlite_utils.Database, tid: str, pending: list[tuple[int, str, dict[str, Any]]]) -> None:
    for _, node, attempt in pending:
        _record(db, tid, attempt, None, node, [])


def _write_pending(
    db: sqlite_utils.Database, tid: str, pending: list[tuple[int, str, dict[str, Any]]], failing: bool
) -> None:
    """Write call-free steps held back by `_step_live` (with their step count) when stepping ends. While an
    error ends it, a store that cannot take them (a full disk) leaves them to be done again by the resume,
    and the error that ended the stepping is the one raised."""
    try:
        with transaction(db):
            _record_pending(db, tid, pending)
            set_recorded_steps(db, tid, pending[-1][0])
    except Exception:
        if not failing:
            raise
        log.debug("run %s: call-free steps left to the resume", tid, exc_info=True)


def _cache_only(llm: Any) -> Any:
    """A client answering `llm`'s calls from its cache only (`ReplayMiss` otherwise), or `llm` itself when it is
    not an `LLMClient` (a test's stand-in)."""
    from critiquebench.llm.client import LLMClient

    if not isinstance(llm, LLMClient):
        return llm
    from dataclasses import replace

    return LLMClient(replace(llm.settings, replay=True), llm.cache, llm.budget)


def _replayed_run(
    db: sqlite_utils.Database,
    stepper: DirectGraph,
    ctx: RunContext,
    ident: dict[str, Any],
    limit: int,
    reuse: str | None,
    retried: bool = False,
) -> RunOutcome:
    """A run whose every call comes from the cache, stepped without LangGraph or checkpoints (`graphs.direct`),
    its rows, and its calls' cache-hit events, written in one transaction at its end: a replay interrupted
    midway has stored nothing of the runs it was stepping, which the next resume steps again from the cache,
    and everything of those it finished. A run that fails (a call missing from the cache, bad input) is
    recorded failed with the rounds it made, as through LangGraph (`limit`: its step limit). The same
    transaction records a finished run's identity (`reuse`).

    It takes no claim: stepping it costs no call, so the claim's two commits of their own (take, give up) and
    its renewing thread bought nothing. The transaction itself decides, as a claim would have: a run another
    process finished meanwhile, or is running now (its live claim), gets none of these rows."""
    tid = ctx.thread_id
    cache = getattr(ctx.llm.llm, "cache", None)
    steps: list[tuple[str, Any, list[str]]] = []
    error: str | None = None
    status = "failed"
    with cache.holding_events() if isinstance(cache, CallCache) else nullcontext([]) as events:
        try:
            for node, update in stepper.stream(initial_state(ctx.instance.id), ctx, limit):
                steps.append((node, update, ctx.llm.take_keys()))
        except EndpointUnreachable:  # cannot happen in a replay (no endpoint); kept for the caller's contract
            raise
        except BudgetExceeded as exc:
            error, status = str(exc), "pending"
        except (LLMError, _planning_error()) as exc:
            if not isinstance(exc, LLMError):
                log.warning("run %s failed: %s", tid, exc)
            error = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a domain or plug-in bug fails this run, not the whole study
            _process_fault(exc, retried)
            _log_failure(tid, exc)
            error = _error_text(exc)
    with transaction(db):
        write_events(db, events)  # the calls were answered, whoever records the run
        if run_status(db, tid) == "done":  # finished by another process while this one stepped it
            return _outcome(db, tid, skipped=True)
        owner = held_elsewhere(db, "run_claims", tid)
        if owner is not None:  # another process runs it now: it records the run
            return RunOutcome(tid, status="claimed", skipped=True, error=f"claimed by {owner}")
        _record_steps(db, tid, steps)
        if error is None:
            outcome = _finish(db, tid, ident, resumed=False)
            if reuse:
                remember(db, reuse, tid)
        else:
            outcome = _fail(db, tid, ident, error, False, status=status)
    return outcome


def _unrecorded_step(db: sqlite_utils.Database, tid: str, graph: Any, snapshot: Any) -> Any:
    """The config of the checkpoint before the last step when a kill came after that step's checkpoint and
    before its rows (`round_calls`: the calls it made, the sound reason it found; one transaction): streaming
    from there does the step again, its calls cache hits, and records it as an uninterrupted run did. Else None.
    (Probe B1 of the rel48 re-run: the rows were rewritten from the checkpoint without the step's calls and
    reason, so a critique round exported no sound reason.)"""
    attempt = snapshot.values.get("attempt") or {}
    round_ = attempt.get("round") or snapshot.values.get("round")
    if not round_ or snapshot.parent_config is None:
        return None
    before = graph.get_state(snapshot.parent_config)
    if len(before.next) != 1:
        return None
    return None if step_recorded(db, tid, round_, before.next[0]) else snapshot.parent_config


def _record(
    db: sqlite_utils.Database,
    tid: str,
    attempt: dict[str, Any] | None,
    round_: int | None,
    node: str | None = None,
    keys: list[str] | None = None,
) -> None:
    """Upsert a node's attempt as its round's row (only the fields it holds), and the calls the node's step
    made with the sound reason it found as the round's `round_calls` row of that node."""
    if not attempt:
        return
    fields = dict(attempt)
    reason = fields.pop("sound_reason", None)
    round_ = fields.pop("round", None) or round_
    if round_ and fields:
        upsert_attempt(db, tid, round_, **fields)
    if round_ and node and (keys or reason):
        upsert_round_calls(db, tid, round_, node, keys or [], reason)


def _record_steps(db: sqlite_utils.Database, tid: str, steps: list[tuple[str, Any, list[str]]]) -> None:
    """`_record` of each step in turn, with a round's attempt fields merged into one row write: a later step's
    fields over an earlier one's, as their upserts in turn leave them (a replayed round's generator and verifier
    wrote its row twice)."""
    merged: dict[int, dict[str, Any]] = {}
    for node, update, keys in steps:
        attempt = update.get("attempt") if isinstance(update, dict) else None
        if not attempt:
            continue
        fields = dict(attempt)
        reason = fields.pop("sound_reason", None)
        round_ = fields.pop("round", None)
        if round_ and fields:
            merged.setdefault(round_, {}).update(fields)
        if round_ and node and (keys or reason):
            upsert_round_calls(db, tid, round_, node, keys or [], reason)
    for round_, fields in merged.items():
        upsert_attempt(db, tid, round_, **fields)


def _legacy_past(db: sqlite_utils.Database, tid: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    """The judged rounds of a thread checkpointed before the state carried them (`past`), from its rows."""
    if values.get("past"):
        return []
    current = int(values.get("round") or 0)
    last = current if values.get("next") in ("generator", "vote") else current - 1
    return [{k: row[k] for k in PAST_KEYS} for row in attempts(db, tid) if row["round"] <= last]


def _finish(db: sqlite_utils.Database, tid: str, ident: dict[str, Any], resumed: bool) -> RunOutcome:
    rows = attempts(db, tid)
    final = next((r for r in rows if r["stopped"]), rows[-1] if rows else None)
    totals = {k: sum(int(r[k] or 0) for r in rows) for k in USAGE_KEYS}
    upsert_run(
        db,
        tid,
        **ident,
        status="done",
        error=None,
        rounds=max((r["round"] for r in rows), default=0),
        final_round=final["round"] if final else None,
        final_answer=final["answer"] if final else None,
        correct=final["sound_valid"] if final else None,
        study_failed=final.get("study_failed") if final else None,
        steps=None,  # a finished run is never stepped again
        **totals,
    )
    return _outcome(db, tid, resumed=resumed)


def _fail(
    db: sqlite_utils.Database, tid: str, ident: dict[str, Any], error: str, resumed: bool, status: str = "failed"
) -> RunOutcome:
    rows = attempts(db, tid)
    totals = {k: sum(int(r[k] or 0) for r in rows) for k in USAGE_KEYS}
    upsert_run(db, tid, **ident, status=status, error=error, rounds=len(rows), **totals)
    return _outcome(db, tid, resumed=resumed)


def _outcome(db: sqlite_utils.Database, tid: str, resumed: bool = False, skipped: bool = False) -> RunOutcome:
    row = run_row(db, tid)
    assert row is not None  # every caller wrote it first
    correct = None if row["correct"] is None else bool(row["correct"])
    return RunOutcome(
        thread_id=tid,
        status=row["status"],
        correct=correct,
        final_answer=row["final_answer"],
        final_round=row["final_round"],
        rounds=row["rounds"],
        resumed=resumed,
        skipped=skipped,
        error=row["error"],
        row=row,
    )
