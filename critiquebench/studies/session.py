"""A study session: everything it takes to run (or resume) a stored study, without a terminal.

`run_session(store, config)` opens what the study needs (its LLM settings and endpoint secrets, the store, the
study's token budget, the call cache, the LLM client, and the Ray executor when asked for), runs the missing
runs (`studies.runner.run_study`) and closes everything again, however it ends. It returns a `Session`: the
runner's summary, the LLM usage (with the budget when the study has one) and the matrix cells left out. It
raises `StudyError` (one line, meant to be shown as it is) when the study cannot run, and lets
KeyboardInterrupt through after releasing this process's run claims, so a resume takes them over at once.

The caller decides how to show it: the CLI (`critiquebench.cli.study`) passes its Ctrl-C event and progress
bars (`critiquebench.cli.terminal`) and prints the summary; a Python caller passes nothing. A Ray worker
(`critiquebench.scale.ray_executor`) builds its client with `studies.clients.worker_client`.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from critiquebench.store.db import Locator, opened
from critiquebench.store.results import ensure_schema, save_study
from critiquebench.studies.clients import StudyError, llm_settings
from critiquebench.studies.config import StudyConfig
from critiquebench.studies.runner import ProgressFn, Skipped, StudySummary, finished_keys, plan_matrix, run_study

log = logging.getLogger(__name__)

CONFIRM_ENV = "CRITIQUEBENCH_CONFIRM_CALLS"
CONFIRM_CALLS = 20_000  # a study that may make more new LLM calls than this needs confirming (or a token budget)

EXECUTORS = ("local", "ray")
EXIT_FAILED, EXIT_USAGE, EXIT_BUDGET, EXIT_INTERRUPTED = 1, 2, 3, 130


@dataclass(frozen=True)
class Execution:
    """How a study's runs are executed (never part of its definition)."""

    executor: str = "local"
    workers: int = 2
    ray_address: str | None = None

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise StudyError(f"--executor must be one of {', '.join(EXECUTORS)}")


LOCAL = Execution()  # threads in this process


@dataclass
class Session:
    """What a session did: the study as it ran, the runner's summary, LLM usage and cells left out."""

    config: StudyConfig
    summary: StudySummary
    usage: dict[str, Any] = field(default_factory=dict)
    left_out: list[Skipped] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return int(self.usage.get("prompt_tokens", 0)) + int(self.usage.get("completion_tokens", 0))

    @property
    def budget(self) -> tuple[int, int] | None:
        """(limit, tokens spent over all sessions) of a study with a token budget."""
        return self.usage.get("budget")


def run_session(
    store: Locator,
    config: StudyConfig,
    *,
    replay: bool = False,
    execution: Execution = LOCAL,
    stop: threading.Event | None = None,
    on_progress: ProgressFn | None = None,
    confirmed: bool = False,
) -> Session:
    """Run (or resume) study `config` in `store`: its definition is stored (or checked against the stored one
    by the caller), finished runs stay, the rest run. See the module docstring.

    A study that may make more than `confirm_calls()` new LLM calls, with no token budget, is refused before
    anything is stored or called unless `confirmed` (the CLI's --yes)."""
    from critiquebench.llm.budget import StudyBudget
    from critiquebench.llm.client import open_llm
    from critiquebench.store.cache import CallCache

    settings = llm_settings(config, replay)
    stop = stop or threading.Event()
    try:
        tasks, left_out = plan_matrix(config)  # data problems surface before anything is stored or started
        with ExitStack() as held:  # every connection the study opens is closed when it ends, however it ends
            db = held.enter_context(opened(store))
            ensure_schema(db)
            held.enter_context(_session_claim(store, db, config.name))  # before the study is read or written
            budget = StudyBudget.open(store, config.name, config.budget_tokens)  # tokens spent before count too
            if budget is not None:  # a budget set once stays the study's, until a new limit replaces it
                held.callback(budget.close)
                config = replace(config, budget_tokens=budget.state()[0])
            status = finished_keys(store, config.name)
            if not (confirmed or replay or config.replay or budget is not None):
                _check_size(store, config, tasks, status)
            save_study(db, config.name, {**config.to_dict(), "planned_runs": len(tasks)})
            todo = any(status.get(task.key) != "done" for task in tasks)
            if todo and not settings.replay and settings.resolved_base_url() is not None:
                check_endpoint(settings, config.name)  # a wrong URL, key or model stops here, before any run
            # A finished study needs no endpoint: do not start the embedded server just to find that out.
            client = open_llm(settings, held.enter_context(CallCache(store)), budget) if todo else nullcontext()
            llm = held.enter_context(client)
            executor = held.enter_context(_executor(store, config, llm, execution))
            execute = executor.execute if executor is not None else None
            shown = _with_usage(on_progress, executor if executor is not None else llm)
            summary = run_study(store, config, llm, stop=stop, on_progress=shown, tasks=tasks, execute=execute)
            usage = executor.usage() if executor is not None else llm.usage() if llm is not None else {}
            if budget is not None:
                usage["budget"] = budget.state()
    except KeyboardInterrupt:
        from critiquebench.store.claims import release_all_claims

        release_all_claims()  # so a resume takes them over at once rather than after their leases expire
        raise
    except (RuntimeError, ValueError, OSError) as exc:  # RunnerError, EmbeddedServerError, bad data, ...
        log.debug("study %s could not run", config.name, exc_info=True)
        raise StudyError(str(exc)) from exc
    if summary.unreachable:  # nothing ran, and a resume continues
        raise StudyError(f"{summary.unreachable}; nothing is lost: critiquebench resume {config.name}")
    return Session(config, summary, usage, left_out)


@contextmanager
def _session_claim(store: Locator, db: Any, study: str) -> Iterator[None]:
    """Hold a claim of this process on `study` for the whole session, from its first statement on the store:
    `studies delete` refuses while any process holds a claim under the study's prefix (`store.results`), and
    before, a delete that landed between the run's definition and its first run's claim went through, so the
    run paid for every call and left its runs with no study. Each process claims its own key, so two resumers
    of one study do not exclude each other."""
    from critiquebench.store.claims import drop_stale, leases_for, process_owner
    from critiquebench.store.db import connect

    leases = leases_for(str(store), lambda: connect(store))
    drop_stale(db, "run_claims", f"{study}/{SESSION_CLAIM}")  # those of killed processes (probe B1 found 6)
    # and in-flight markers nobody holds any more: a process killed between storing a call's answer and dropping
    # its marker (`CallCache.answered`: separate statements) left one for good (probe B2); any caller would
    # take such a marker over anyway
    drop_stale(db, "llm_inflight", "")
    key = f"{study}/{SESSION_CLAIM}{process_owner()}"  # thread ids are study/domain/spec/instance/trial: no clash
    leases.claim(db, key)
    try:
        yield
    finally:
        with suppress(Exception):  # the lease expires anyway; a broken store must not hide the study's error
            leases.release(db, key)


SESSION_CLAIM = "session:"


def _with_usage(on_progress: ProgressFn | None, source: Any) -> ProgressFn | None:
    """`on_progress` given the LLM usage so far (`calls=`: retries, failed calls) with each update."""
    if on_progress is None or source is None:
        return on_progress
    report = on_progress

    def shown(progress: Any) -> None:
        report(progress, calls=source.usage())

    return shown


def confirm_calls() -> int:
    """New LLM calls a study may make without confirming (`$CRITIQUEBENCH_CONFIRM_CALLS`, default 20,000)."""
    try:
        return max(0, int(os.environ.get(CONFIRM_ENV) or CONFIRM_CALLS))
    except ValueError:
        return CONFIRM_CALLS


def _check_size(store: Locator, config: StudyConfig, tasks: list[Any], status: dict[Any, str]) -> None:
    """StudyError when the study may make more new calls than `confirm_calls()`. A bound from the schemes' sizes
    alone comes first (no prompt is built); only a study over it is estimated with its cache (`--dry-run`'s
    figure), so a study already paid for is not held up."""
    from critiquebench.graphs import parse_spec

    limit = confirm_calls()
    cells = {(t.domain.name, t.spec, t.instance.id) for t in tasks if status.get(t.key) != "done"}
    if sum(parse_spec(spec).calls.most for _, spec, _ in cells) <= limit:
        return
    from critiquebench.studies.estimate import estimate_study

    most = estimate_study(config, Path(store) if not isinstance(store, str) else store).max_calls
    if most > limit:
        raise StudyError(
            f"study {config.name} may make up to {most:.0f} new LLM calls (more than {limit}): run it with --yes, "
            f"or cap it with --budget-tokens N; --dry-run shows the estimate"
        )


def check_endpoint(settings: Any, study: str) -> None:
    """StudyError, naming the fix, when the study's endpoint cannot serve it (`critiquebench.llm.preflight`)."""
    from critiquebench.llm.preflight import PreflightError, preflight
    from critiquebench.llm.urls import redact_url

    try:
        preflight(settings.resolved_base_url(), settings.model, settings.timeout)
    except PreflightError as exc:
        if exc.kind == "url" and exc.base_url:
            fix = f"no run started: critiquebench resume {study} --base-url {redact_url(exc.base_url)}"
        elif exc.kind in ("key", "unreachable"):
            fix = f"nothing is lost: critiquebench resume {study}"
        else:
            fix = "no run started"
        raise StudyError(f"{exc}; {fix}") from exc


def _executor(store: Locator, config: StudyConfig, llm: Any, execution: Execution) -> Any:
    """The Ray executor for the block, or a null context (the runner's local threads)."""
    if execution.executor == "local" or llm is None:  # nothing to run: no workers to start either
        return nullcontext(None)
    from critiquebench.scale.ray_executor import RayExecutor

    return RayExecutor(
        store,
        llm.settings,  # the embedded server's URL when it serves the study: started once, shared by all
        concurrency=config.concurrency,
        workers=execution.workers,
        address=execution.ray_address,
        domain_options=config.domain_options,
    )


def exit_code(sessions: list[Session]) -> int:
    """0 when every run finished; 130 if interrupted, 1 if runs failed, 3 if the token budget stopped runs."""
    summaries = [s.summary for s in sessions]
    if any(s.interrupted or s.not_started for s in summaries):
        return EXIT_INTERRUPTED
    if any(s.failed for s in summaries):
        return EXIT_FAILED
    return EXIT_BUDGET if any(s.unfinished for s in summaries) else 0
