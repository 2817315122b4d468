"""The terminal side of running a study: live progress and the Ctrl-C handler (the study runs without them:
`critiquebench.studies.session` takes a stop event and a progress callback).

On a terminal, one bar per scheme: runs done of total, correct so far, failed, the time left, LLM calls, cache
hits and tokens. Log records (an endpoint's retries, a run that failed) and the Ctrl-C notice are printed through
the same console, above the bars, never between two redraws. On a dumb terminal (`TERM=dumb`) nothing is redrawn:
one line per scheme is printed when the study ends; where stderr is not a terminal, the study's one-line summary
(`critiquebench.cli.study`) is all."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from critiquebench.studies.runner import ProgressFn, SchemeProgress


def scheme_line(spec: str, p: SchemeProgress) -> str:
    """One scheme's counters as one line (the plain display's, and the bars' right-hand side)."""
    return (f"{spec}: {p.done + p.failed}/{p.total} runs, {p.correct} correct, {p.failed} failed; "
            f"LLM calls {p.llm_calls}, cache hits {p.cache_hits}, tokens {p.tokens}")  # fmt: skip


@contextmanager
def live_progress(enabled: bool, console: Console | None = None) -> Iterator[ProgressFn | None]:
    """Progress of a running study on stderr: rich bars on a terminal, one line per scheme at the end on a dumb
    one, nothing when stderr is not a terminal or `enabled` is false. Log records go through the same console
    while the bars are shown."""
    from rich.console import Console

    console = console or Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield None
        return
    if console.is_dumb_terminal:
        last: dict[str, SchemeProgress] = {}

        def remember(progress: dict[str, SchemeProgress]) -> None:
            last.update(progress)

        yield remember
        for spec, p in last.items():
            console.print(scheme_line(spec, p), markup=False, highlight=False, soft_wrap=True)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bars = Progress(
        TextColumn("{task.description:<24}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeRemainingColumn(),
        console=console,
    )
    ids: dict[str, Any] = {}

    def update(progress: dict[str, SchemeProgress]) -> None:
        for spec, p in progress.items():
            info = (f"correct {p.correct} failed {p.failed} running {p.running} | calls {p.llm_calls} "
                    f"hits {p.cache_hits} tokens {p.tokens}")  # fmt: skip
            if spec not in ids:
                ids[spec] = bars.add_task(spec, total=p.total, info=info)
            bars.update(ids[spec], completed=p.done + p.failed, info=info)

    with bars, logs_through(console):
        yield update


@contextmanager
def logs_through(console: Console) -> Iterator[None]:
    """Route the root logger's records through `console` (above a live display) instead of the stream its
    handlers held since start-up, which rich's redraws would overwrite; restored afterwards."""
    from rich.logging import RichHandler

    root = logging.getLogger()
    previous = list(root.handlers)
    level = previous[0].level if previous else logging.NOTSET
    handler = RichHandler(console=console, show_time=False, show_path=False, markup=False, level=level)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    for old in previous:
        root.removeHandler(old)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        for old in previous:
            root.addHandler(old)


@contextmanager
def stop_on_ctrl_c(say: Callable[[str], Any]) -> Iterator[threading.Event]:
    """First Ctrl-C sets the event (no new runs start, running ones finish); a second one raises
    KeyboardInterrupt to abort at once. Outside the main thread signals cannot be caught: the event stays
    unset unless the caller sets it."""
    stop = threading.Event()

    def handle(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        say("stopping: no new runs start, running ones finish (Ctrl-C again to abort now)")

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, handle) if main else None
    try:
        yield stop
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
