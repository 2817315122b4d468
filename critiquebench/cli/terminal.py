"""The terminal side of running a study: live progress and the Ctrl-C handler (the study runs without them:
`critiquebench.studies.session` takes a stop event and a progress callback).

On a terminal (or in a Jupyter notebook with ipywidgets, where rich draws the same bars in the cell's output; a
notebook without it gets the dumb terminal's lines), one bar per scheme:
runs done of total, the time left, correct so far, failed, running, when the model has a price
(`critiquebench.llm.prices`) the cost so far, LLM calls, cache hits and tokens (a narrow terminal drops these
counters from the end, whole: `Fields`); then one bar for the whole study with the endpoint's
retries and the calls that failed after every retry. Log records (an endpoint's retries, a run that failed) and
the Ctrl-C notice are printed through the same console, above the bars, never between two redraws. On a dumb
terminal (`TERM=dumb`) nothing is redrawn: one line per scheme is printed when the study ends; where stderr is
not a terminal, the study's one-line summary (`critiquebench.cli.study`) is all."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.measure import Measurement

    from critiquebench.llm.prices import Price
    from critiquebench.studies.runner import ProgressFn, SchemeProgress


class StderrConsole:
    """Prints like a rich Console on stderr (no highlighting, soft wrap), made at its first print: importing rich
    costs a third of `critiquebench --help`, which it, `--version` and a command printing nothing there need not pay."""

    def __init__(self) -> None:
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        """The Console itself (for the live display), made now if it was not yet."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True, highlight=False, soft_wrap=True)
        return self._console

    def print(self, *objects: Any, **options: Any) -> None:
        self.console.print(*objects, **options)


def scheme_line(spec: str, p: SchemeProgress, price: Price | None = None) -> str:
    """One scheme's counters as one line (the plain display's)."""
    cost = _cost(p, price, ", ")
    return (f"{spec}: {p.done + p.failed}/{p.total} runs, {p.correct} correct, {p.failed} failed; "
            f"LLM calls {p.llm_calls}, cache hits {p.cache_hits}, tokens {p.tokens}{cost}")  # fmt: skip


def calls_line(calls: Mapping[str, Any]) -> str:
    """The LLM client's retries and failed calls so far."""
    return f"retries {calls.get('retries', 0)} failed calls {calls.get('failed', 0)}"


class Fields:
    """Counters as words that a narrow terminal drops from the end, whole: each field is shown or not, never cut
    (`fields` in priority order; the bar, count and time left are columns of their own and stay)."""

    def __init__(self, fields: Sequence[str]) -> None:
        self.fields = [f for f in fields if f]

    def fitted(self, width: int) -> str:
        shown = ""
        for field in self.fields:
            longer = f"{shown} {field}" if shown else field
            if len(longer) > width:
                break
            shown = longer
        return shown

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        from rich.measure import Measurement

        return Measurement(0, len(" ".join(self.fields)))  # 0: the table shrinks this column first

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        yield Text(self.fitted(options.max_width), no_wrap=True, overflow="crop")


def _fields_column() -> Any:
    from rich.progress import ProgressColumn
    from rich.table import Column

    class FieldsColumn(ProgressColumn):
        def __init__(self) -> None:
            super().__init__(table_column=Column(overflow="crop"))

        def render(self, task: Any) -> Fields:
            return Fields(task.fields["info"])

    return FieldsColumn()


def _cost(p: SchemeProgress, price: Price | None, sep: str) -> str:
    """`sep` and the cost so far of a scheme's tokens at `price`; nothing for a model without a price."""
    return "" if price is None else f"{sep}${price.cost(p.prompt_tokens, p.completion_tokens):,.4f}"


@contextmanager
def live_progress(enabled: bool, console: Console | None = None, price: Price | None = None
                  ) -> Iterator[ProgressFn | None]:  # fmt: skip
    """Progress of a running study on stderr: rich bars on a terminal or in a notebook, one line per scheme at the
    end on a dumb terminal, nothing when stderr is neither or `enabled` is false. Log records go through the same
    console while the bars are shown. `price`: the model's, for the cost so far."""
    from rich.console import Console

    console = console or Console(stderr=True)
    if not enabled or not (console.is_terminal or console.is_jupyter):
        yield None
        return
    if (console.is_dumb_terminal and not console.is_jupyter) or (console.is_jupyter and not _has_widgets()):
        last: dict[str, SchemeProgress] = {}
        usage: dict[str, Any] = {}

        def remember(progress: dict[str, SchemeProgress], calls: Mapping[str, Any] | None = None) -> None:
            last.update(progress)
            usage.update(calls or {})

        yield remember
        for spec, p in last.items():
            console.print(scheme_line(spec, p, price), markup=False, highlight=False, soft_wrap=True)
        if usage:
            console.print(f"LLM calls: {calls_line(usage)}", markup=False, highlight=False, soft_wrap=True)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.table import Column

    # rich measures the terminal and lays the columns out: the scheme, count and time left never wrap, the bar
    # shrinks, and the counters after them drop whole fields from the end (tokens and hits first), so an
    # 80-column terminal still shows how far each scheme is and how long it will take
    bars = Progress(
        TextColumn("{task.description:<24}", table_column=Column(no_wrap=True)),
        BarColumn(bar_width=20, table_column=Column(min_width=4)),
        MofNCompleteColumn(table_column=Column(no_wrap=True)),
        TimeRemainingColumn(table_column=Column(no_wrap=True)),
        _fields_column(),
        console=console,
    )
    ids: dict[str, Any] = {}

    def update(progress: dict[str, SchemeProgress], calls: Mapping[str, Any] | None = None) -> None:
        for spec, p in progress.items():
            info = [f"correct {p.correct}", f"failed {p.failed}", f"running {p.running}", _cost(p, price, "| "),
                    f"| calls {p.llm_calls}", f"hits {p.cache_hits}", f"tokens {p.tokens}"]  # fmt: skip
            if spec not in ids:
                ids[spec] = bars.add_task(spec, total=p.total, info=info)
            bars.update(ids[spec], completed=p.done + p.failed, info=info)
        if len(progress) > 1 or calls is not None:  # the whole study, and what the endpoint made us repeat
            total = sum(p.total for p in progress.values())
            done = sum(p.done + p.failed for p in progress.values())
            info = [f"retries {(calls or {}).get('retries', 0)}", f"failed calls {(calls or {}).get('failed', 0)}",
                    _cost(_summed(progress), price, "| ")]
            if "" not in ids:
                ids[""] = bars.add_task("all schemes", total=total, info=info)
            bars.update(ids[""], total=total, completed=done, info=info)

    with bars, logs_through(console):
        yield update
        bars.refresh()  # rich's Live skips its last redraw in a notebook: the cell would keep a stale bar


def _has_widgets() -> bool:
    """Whether a notebook can redraw rich's bars (it needs ipywidgets; without, the lines come at the end)."""
    import importlib.util

    return importlib.util.find_spec("ipywidgets") is not None


def _summed(progress: Mapping[str, SchemeProgress]) -> SchemeProgress:
    from critiquebench.studies.runner import SchemeProgress

    return SchemeProgress(prompt_tokens=sum(p.prompt_tokens for p in progress.values()),
                          completion_tokens=sum(p.completion_tokens for p in progress.values()))  # fmt: skip


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
