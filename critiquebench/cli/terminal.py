"""The terminal side of running a study: live progress bars and the Ctrl-C handler (the study runs without them:
`critiquebench.studies.session` takes a stop event and a progress callback)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from critiquebench.studies.runner import ProgressFn, SchemeProgress


@contextmanager
def live_progress(enabled: bool) -> Iterator[ProgressFn | None]:
    """A rich progress display on stderr (one bar per scheme), or nothing when stderr is not a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield None
        return
    bars = Progress(
        TextColumn("{task.description:<24}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=console,
    )
    ids: dict[str, Any] = {}

    def update(progress: dict[str, SchemeProgress]) -> None:
        for spec, p in progress.items():
            info = (
                f"running {p.running} failed {p.failed} | calls {p.llm_calls} "
                f"hits {p.cache_hits} tokens {p.tokens}"
            )
            if spec not in ids:
                ids[spec] = bars.add_task(spec, total=p.total, info=info)
            bars.update(ids[spec], completed=p.done + p.failed, info=info)

    with bars:
        yield update


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
