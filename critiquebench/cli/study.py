"""`critiquebench run | resume | report | studies | export`: studies from definition to tables."""

import functools
import inspect
import os
import sys
from collections.abc import Callable
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from critiquebench.cli.domain_options import DomainOptionOpt
from critiquebench.cli.terminal import StderrConsole
from critiquebench.outputs import json_text
from critiquebench.reports.catalog import HELP as REPORT_HELP

if TYPE_CHECKING:  # what the commands run is imported in their bodies, so --help loads none of it
    from critiquebench.llm.prices import Price
    from critiquebench.studies.config import StudyConfig
    from critiquebench.studies.estimate import Estimate
    from critiquebench.studies.main_job import Recorded
    from critiquebench.studies.session import Execution, Session

EXIT_USAGE = 2  # studies.session.EXIT_USAGE, which this module does not import to start

err = StderrConsole()


StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Store file or postgresql:// URL (default: $CRITIQUEBENCH_STORE, else ./critiquebench.sqlite).",
    ),
]
FigureOpt = Annotated[Path | None, typer.Option("--figure", help="Also write Figure 2 (PNG) to this path.")]
ReplayOpt = Annotated[
    bool, typer.Option(help="Answer every LLM call from the cache; never contact the endpoint.")
]
ProgressOpt = Annotated[bool, typer.Option(help="Live progress bars on stderr (shown on a terminal only).")]
ConcurrencyOpt = Annotated[
    int | None, typer.Option(help="Runs (and LLM calls) in flight at once, across all workers.")
]
BudgetOpt = Annotated[
    int | None,
    typer.Option(min=1, help="The study's token budget: no new LLM calls once it spent this many (all sessions)."),
]
def _max_tokens(value: str) -> int | str:
    """`--max-tokens`: a positive integer, or "none" for no length field at all (the self-verification code's
    chat calls send none); the study's config checks the range."""
    if value.strip().lower() == "none":
        return "none"
    try:
        return int(value)
    except ValueError:
        raise typer.BadParameter(f'{value!r}: an integer, or "none" for no cap') from None


MaxTokensOpt = Annotated[
    int | None,
    typer.Option(parser=_max_tokens, metavar="N|none", help='Reply length cap in tokens; "none" sends no cap.'),
]


DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print runs, new calls, tokens and cost; call no LLM, store nothing.")
]
PriceInOpt = Annotated[float | None, typer.Option(help="--dry-run: USD per million prompt tokens (default: the "
                                                        "model's in the price table, $CRITIQUEBENCH_PRICES).")]
PriceOutOpt = Annotated[float | None, typer.Option(help="--dry-run: USD per million completion tokens (default: "
                                                         "the model's in the price table).")]
StopRateOpt = Annotated[
    float | None,
    typer.Option(help="--dry-run: the chance a round ends a run, for the expected calls (default 0.25).", min=0,
                 max=1),
]


def print_estimate(estimate: "Estimate", price_in: float | None, price_out: float | None, model: str) -> None:
    """A dry run's estimate on stdout (see `critiquebench.studies.estimate`), priced at --price-in/--price-out,
    else at the model's price in the price table (none there: no cost line)."""
    if price_in is None and price_out is None and (price := model_price(model)) is not None:
        price_in, price_out = price.input, price.output
        typer.echo(f"price of {model}: ${price.input:g} / ${price.output:g} per million tokens ({price.source})")
    for line in estimate.lines(price_in, price_out):
        typer.echo(line)


def model_price(model: str) -> "Price | None":
    """`model`'s price in the price table (`critiquebench.llm.prices`); a bad price file is a one-line exit."""
    from critiquebench.llm.prices import PriceError, load_prices, price_of

    try:
        return price_of(model, load_prices())
    except PriceError as exc:
        raise _fail(str(exc)) from exc
YesOpt = Annotated[
    bool, typer.Option("--yes", help="Run even if the study may make more new LLM calls than "
                                     "$CRITIQUEBENCH_CONFIRM_CALLS (20000) and has no --budget-tokens.")
]
ExecutorOpt = Annotated[
    str, typer.Option("--executor", help="local (threads in this process) or ray (worker processes).")
]
WorkersOpt = Annotated[int, typer.Option("--workers", min=1, help="Ray worker processes (--executor ray).")]
RayAddressOpt = Annotated[
    str | None,
    typer.Option("--ray-address", help="A Ray cluster to run on (default: $RAY_ADDRESS, else a local one)."),
]
@dataclass(frozen=True)
class SessionOptions:
    """The options `run` and `resume` share: the token budget, the figure, where the study is stored, how its
    session runs (replay, progress, executor, workers, Ray cluster) and the big-study confirmation."""

    budget_tokens: int | None = None
    figure: Path | None = None
    replay: bool = False
    progress: bool = True
    store: str | None = None
    executor: str = "local"
    workers: int = 2
    ray_address: str | None = None
    yes: bool = False


_SESSION_OPTIONS = {"budget_tokens": BudgetOpt, "figure": FigureOpt, "replay": ReplayOpt, "progress": ProgressOpt,
                    "store": StoreOpt, "executor": ExecutorOpt, "workers": WorkersOpt, "ray_address": RayAddressOpt,
                    "yes": YesOpt}  # fmt: skip


def session_options(command: Callable[..., None]) -> Callable[..., None]:
    """`command` with the `SessionOptions` as options of its own, after its others (Typer reads the signature),
    handed to it as one `session` argument."""
    shared = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                annotation=_SESSION_OPTIONS[f.name]) for f in fields(SessionOptions)]  # fmt: skip
    own = [p for p in inspect.signature(command).parameters.values() if p.name != "session"]

    @functools.wraps(command)
    def with_options(**options: Any) -> None:
        session = SessionOptions(**{name: options.pop(name) for name in _SESSION_OPTIONS})
        command(session=session, **options)

    with_options.__signature__ = inspect.Signature([*own, *shared])  # type: ignore[attr-defined]
    return with_options


def _store(path: str | None) -> Path | str:
    from critiquebench.store.db import resolve_store

    return resolve_store(path)


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    err.print(f"error: {message}", markup=False)
    return typer.Exit(code)


def _check_outputs(store: Path | str | None, output: Path | None, figure: Path | None, fmt: str | None = None) -> None:
    """Refuse, before any work, an output the command could not write or must not replace (the store it reads,
    any SQLite file, a folder, a suffix naming another format than `fmt`, a figure format matplotlib lacks): one
    line, exit 2 (see `critiquebench.outputs`)."""
    from critiquebench.outputs import OutputError, check_output, check_suffix

    try:
        for path in (output, figure):
            if path is not None:
                check_output(path, [store] if store is not None else [])
        if fmt is not None:
            check_suffix(output, fmt)
        if figure is not None:
            from critiquebench.reports.figures import figure_format

            figure_format(figure)
    except OutputError as exc:
        raise _fail(str(exc)) from None


def _write_figure(db: Any, name: str, table: str, figure: Path) -> None:
    from critiquebench.outputs import OutputError
    from critiquebench.reports.catalog import write_figure

    try:
        err.print(write_figure(db, name, table, figure), markup=False)
    except OutputError as exc:
        raise _fail(str(exc)) from None


def _session(store: Path | str, config: "StudyConfig", progress: bool, replay: bool,
             execution: "Execution", confirmed: bool = False) -> "Session":  # fmt: skip
    """Run (or resume) a stored study with progress bars and Ctrl-C handling, and print its one-line summary;
    errors and an abort become exits."""
    from critiquebench.cli.terminal import live_progress, stop_on_ctrl_c
    from critiquebench.studies.session import EXIT_INTERRUPTED, StudyError, run_session

    try:
        price = model_price(config.model)
        with stop_on_ctrl_c(err.print) as stop, live_progress(progress, err.console, price) as on_progress:
            session = run_session(store, config, replay=replay, execution=execution, stop=stop,
                                  on_progress=on_progress, confirmed=confirmed)  # fmt: skip
    except KeyboardInterrupt:
        err.print(f"aborted; runs in flight stay at their last recorded step: critiquebench resume {config.name}")
        sys.stdout.flush()
        os._exit(EXIT_INTERRUPTED)  # worker threads may still wait on a stopped endpoint; do not join them
    except StudyError as exc:
        raise _fail(str(exc)) from exc
    _print_summary(session)
    for cell in session.left_out:
        err.print(f"  {cell.describe()}", markup=False)
    return session


def execute_study(
    store: Path | str,
    config: "StudyConfig",
    progress: bool,
    replay: bool,
    figure: Path | None,
    execution: "Execution",
    confirmed: bool = False,
) -> None:
    """Run (or resume) a stored study, print Table 1; exit 1 if runs failed, 3 if the token budget stopped runs,
    130 if interrupted."""
    from critiquebench.reports.metrics import table1, table2
    from critiquebench.reports.tables import render
    from critiquebench.store.db import opened
    from critiquebench.studies.define import ReportError
    from critiquebench.studies.runner import planned_runs
    from critiquebench.studies.session import exit_code

    session = _session(store, config, progress, replay, execution, confirmed)
    with opened(store) as db:
        try:
            typer.echo(render(table1(db, config.name, planned_runs), "table"))  # a stopped study: its cells' runs
        except ReportError as exc:  # deleted while it ran (between two runs, when no claim refused the delete)
            raise _fail(f"{exc}: the study was deleted while it ran") from None
        verifier_rows = table2(db, config.name)
        if verifier_rows:  # only studies where an LLM judged answers (llm-llm, intrinsic) have a Table 2
            typer.echo(render(verifier_rows, "table"))
        if figure is not None:
            _write_figure(db, config.name, "figure", figure)
    if code := exit_code([session]):
        raise typer.Exit(code)


def execute_main_job(
    store: Path | str,
    live: "StudyConfig",
    recorded: "list[Recorded]",
    progress: bool,
    replay: bool,
    figure: Path | None,
    execution: "Execution",
    confirmed: bool = False,
) -> None:
    """Replay every recorded file (0 calls), run the live study, print one summary of both (see main_job)."""
    from critiquebench.reports.findings import combined_curve, summary_grids
    from critiquebench.reports.tables import command_text, rich_text, wrapped
    from critiquebench.store.db import default_store_path, opened, store_name
    from critiquebench.studies.main_job import run_main_job
    from critiquebench.studies.session import exit_code

    def run(store: Path | str, config: "StudyConfig", replay: bool, execution: "Execution") -> "Session":
        return _session(store, config, progress, replay, execution, confirmed)

    job = run_main_job(store, live, recorded, replay=replay, execution=execution, run=run, shown=_print_summary)
    for line in job.skipped:
        err.print(line, markup=False)
    with opened(store) as db:
        typer.echo(rich_text(summary_grids(db, job.replayed, live.name)))
        if figure is not None:
            from critiquebench.outputs import OutputError
            from critiquebench.reports.figures import budget_figure

            try:
                path = budget_figure(combined_curve(db, [*job.replayed, live.name]), figure, "recorded and live")
            except OutputError as exc:
                raise _fail(str(exc)) from None
            err.print(f"Figure 2 written to {path}")
    names = " ".join([live.name, *job.replayed])
    where = "" if store == default_store_path() else f" --store {store_name(store)}"
    typer.echo(wrapped("See the runs round by round (a local page; --output DIR writes it as files):"))
    typer.echo(command_text(f"critiquebench view {names}{where}"))
    typer.echo(wrapped("Every table per study: critiquebench report NAME [--table 2|figure]"))
    if code := exit_code(job.sessions):
        raise typer.Exit(code)


def _execution(executor: str, workers: int, ray_address: str | None) -> "Execution":
    from critiquebench.studies.session import Execution, StudyError

    try:
        return Execution(executor, workers, ray_address)
    except StudyError as exc:
        raise _fail(str(exc)) from exc




def _print_summary(session: "Session") -> None:
    s, usage, name = session.summary, session.usage, session.config.name
    err.print(
        f"study {name}: {s.total} runs: {s.done} done now"
        # the study's code listed these apart ("Failed instances: ...", gpt-and-i response_generation.py@b583c3c9:116)
        + (f" ({s.study_failed} where the study's own code failed on a reply)" if s.study_failed else "")
        + f", {s.skipped} done before or elsewhere, "
        f"{s.failed} failed, {s.not_started} not started"
        + (f", {s.unfinished} stopped by the token budget" if s.unfinished else "")
        + f"; LLM calls: {usage.get('calls', 0)} new ({session.tokens} tokens), {usage.get('hits', 0)} from the cache"
        + (f"; {s.copied} runs copied from identical finished runs" if s.copied else "")
    )
    if session.budget is not None:
        limit, spent = session.budget
        more = f"; raise it: critiquebench resume {name} --budget-tokens N" if s.unfinished else ""
        err.print(f"token budget: {spent} of {limit} tokens spent over all runs of the study{more}")
    for run, error in s.errors[:10]:
        err.print(f"  failed {run}: {error}", markup=False)
    if len(s.errors) > 10:
        err.print(f"  ... and {len(s.errors) - 10} more failed runs")
    if not s.ok:
        err.print(f"continue with: critiquebench resume {name}")


def _check_distinct(study: "StudyConfig") -> None:
    """`--check-distinct`: one line per generated set that passes; a set that repeats a problem or shares one with
    its shot pool is a ValueError (`run` prints it as one error line, exit 2, nothing run)."""
    from critiquebench.studies.distinct import check_generated

    checked = check_generated(study)
    for ok, line in checked:
        if not ok:
            raise ValueError(f"check-distinct: {line}")
        err.print(f"check-distinct: {line}", markup=False)


def register(app: typer.Typer) -> None:
    @app.command("run")
    @session_options
    def run_cmd(
        name: Annotated[str, typer.Argument(help="Study name (letters, digits, _ - .).")],
        config: Annotated[
            Path | None, typer.Option(help="Study TOML file; flags override its values.")
        ] = None,
        domains: Annotated[str | None, typer.Option(help="e.g. game24,coloring,blocksworld.")] = None,
        instances: Annotated[
            str | None,
            typer.Option(help="901-1000 | 1,5 | all | gen:N:SEED, or per domain: game24=1-5,coloring=1-5."),
        ] = None,
        schemes: Annotated[str | None, typer.Option(help="e.g. standard,llm-llm,sampling:k=25.")] = None,
        model: Annotated[str | None, typer.Option(help="Model name at the endpoint.")] = None,
        base_url: Annotated[
            str | None, typer.Option(help="OpenAI-compatible endpoint (default: embedded).")
        ] = None,
        dataset: Annotated[
            Path | None, typer.Option(help="Datasets root, or a domain's own file/folder.")
        ] = None,
        trials: Annotated[int | None, typer.Option(help="Repetitions of every (instance, scheme).")] = None,
        temperature: Annotated[float | None, typer.Option()] = None,
        max_tokens: MaxTokensOpt = None,
        concurrency: ConcurrencyOpt = None,
        timeout: Annotated[float | None, typer.Option(help="Seconds per LLM call.")] = None,
        prompts: Annotated[
            str | None, typer.Option(help="Prompt files (TOML/YAML) over the built-in sets, comma-separated.")
        ] = None,
        dry_run: DryRunOpt = False,
        price_in: PriceInOpt = None,
        price_out: PriceOutOpt = None,
        stop_rate: StopRateOpt = None,
        domain_option: DomainOptionOpt = None,
        check_distinct: Annotated[
            bool, typer.Option("--check-distinct", help="Check every gen:N:SEED set holds N distinct problems, none in "
                               "its shot pool (one line each); stop if one does not.")
        ] = False,
        session: SessionOptions = SessionOptions(),  # noqa: B008 (the options after these: session_options)
    ) -> None:
        """Run a study; running it again with the same definition resumes it."""
        from critiquebench.store.db import StoreError, store_exists
        from critiquebench.studies.config import ConfigError
        from critiquebench.studies.define import reading, study_for_run
        from critiquebench.studies.guards import temperature_warnings

        execution = _execution(session.executor, session.workers, session.ray_address)
        path = _store(session.store)
        flags = dict(domains=domains, instances=instances, schemes=schemes, model=model, base_url=base_url,
                     dataset=str(dataset) if dataset else None, trials=trials, temperature=temperature,
                     max_tokens=max_tokens, concurrency=concurrency, timeout=timeout,
                     budget_tokens=session.budget_tokens, prompts=prompts,
                     domain_option=domain_option or None)  # fmt: skip
        try:  # nothing is written until the definition and its data are known to be good (_execute)
            with reading(path) if store_exists(path) else nullcontext() as db:
                request = study_for_run(db, name, config, flags)
            for line in [*request.notes, *temperature_warnings(request.study.schemes, request.study.temperature)]:
                err.print(line, markup=False)
            if check_distinct:
                _check_distinct(request.study)
            if dry_run:  # reads the store's cache and finished runs; calls nothing, writes nothing
                from critiquebench.studies.estimate import DEFAULT_STOP_RATE, estimate_study

                rate = DEFAULT_STOP_RATE if stop_rate is None else stop_rate
                print_estimate(estimate_study(request.study, path, rate), price_in, price_out, request.study.model)
                return
        except typer.Exit:  # a RuntimeError to click, already worded (a bad price file): not "error: 2"
            raise
        except (ConfigError, StoreError, OSError, ValueError, RuntimeError) as exc:  # RunnerError: bad data
            raise _fail(str(exc)) from exc
        figure = session.figure or request.figure
        _check_outputs(path, None, figure)
        if request.recorded:
            execute_main_job(path, request.study, request.recorded, session.progress, session.replay, figure,
                             execution, session.yes)  # fmt: skip
        else:
            execute_study(path, request.study, session.progress, session.replay, figure, execution, session.yes)

    @app.command("resume")
    @session_options
    def resume_cmd(
        name: Annotated[str, typer.Argument(help="A stored study.")],
        base_url: Annotated[
            str | None,
            typer.Option(help="Move the study to this endpoint (a mistyped URL, a new port); its runs are kept."),
        ] = None,
        concurrency: ConcurrencyOpt = None,
        session: SessionOptions = SessionOptions(),  # noqa: B008 (the options after these: session_options)
    ) -> None:
        """Continue a stored study: finished runs stay, unfinished ones continue from their last recorded step."""
        from critiquebench.api import resumable
        from critiquebench.studies.session import StudyError

        execution = _execution(session.executor, session.workers, session.ray_address)
        path = _store(session.store)
        _check_outputs(path, None, session.figure)
        try:
            study = resumable(path, name, base_url=base_url, concurrency=concurrency,
                              budget_tokens=session.budget_tokens)  # fmt: skip
        except StudyError as exc:
            raise _fail(str(exc)) from exc
        execute_study(path, study, session.progress, session.replay, session.figure, execution, session.yes)

    @app.command("report")
    def report_cmd(
        name: Annotated[str | None, typer.Argument(help="A stored study (none with --published).")] = None,
        fmt: Annotated[str, typer.Option("--format", help="table | md | csv | json.")] = "table",
        table: Annotated[str, typer.Option(help=REPORT_HELP)] = "1",
        compare_to: Annotated[
            str | None,
            typer.Option("--compare", help="A second study, side by side (--table compare: its schemes against "
                                           "this study's)."),
        ] = None,
        pairs: Annotated[
            str | None, typer.Option("--pairs", help="--table compare: only these pairs, A:B,C:D (scheme specs).")
        ] = None,
        figure: FigureOpt = None,
        output: Annotated[Path | None, typer.Option(help="Write the report here instead of stdout.")] = None,
        store: StoreOpt = None,
        published: Annotated[
            bool, typer.Option("--published", help="Every number of papers 000 and 002 that recorded data can "
                                                   "check, beside what the data gives, and paper 001's ± against a "
                                                   "Wald interval (no study, no store).")
        ] = False,
        dataset: Annotated[Path | None, typer.Option(help="Datasets root for --published.")] = None,
    ) -> None:
        """Tables (and Figure 2) of a study, computed from the store alone."""
        from critiquebench.reports.catalog import TABLES, report_rows
        from critiquebench.reports.tables import FORMATS, render
        from critiquebench.store.db import StoreError
        from critiquebench.studies.define import ReportError, reading

        if fmt not in FORMATS:
            raise _fail(f"--format must be one of {', '.join(FORMATS)}")
        located = None if published else _store(store)
        _check_outputs(located, output, figure, fmt)
        if published:
            from critiquebench.domains.datasets import default_root
            from critiquebench.reports.published import published_rows

            try:
                rows = published_rows(dataset or default_root())
            except (ValueError, OSError, KeyError) as exc:
                raise _fail(f"--published needs the recorded data: {exc}") from exc
            _emit(render(rows, fmt), output, [])
            return
        if name is None:
            raise _fail("name a study (critiquebench studies lists them), or pass --published")
        if table not in TABLES:
            raise _fail(f"--table must be one of {', '.join(TABLES)}")
        with ExitStack() as held:  # the store is closed when the command ends
            try:
                db = held.enter_context(reading(located))
                rows = report_rows(db, name, table, compare_to, pairs)
            except (ReportError, StoreError) as exc:
                raise _fail(str(exc)) from exc
            _emit(render(rows, fmt), output, [located])
            if figure is not None:
                _write_figure(db, name, table, figure)

    studies_app = typer.Typer(
        rich_markup_mode=None,
        help="List the store's studies (name, domains, schemes, finished/planned runs), or delete one.",
        invoke_without_command=True,
    )
    app.add_typer(studies_app, name="studies")

    @studies_app.callback()
    def studies_cmd(
        ctx: typer.Context,
        as_json: Annotated[bool, typer.Option("--json", help="JSON instead of a table.")] = False,
        store: StoreOpt = None,
    ) -> None:
        """List the store's studies: name, domains, schemes, finished/planned runs."""
        if ctx.invoked_subcommand is not None:
            return
        from critiquebench.reports.export import list_studies
        from critiquebench.reports.tables import Grid, rich_text
        from critiquebench.store.db import StoreError
        from critiquebench.studies.define import reading

        try:
            with reading(_store(store)) as db:
                rows = list_studies(db)
        except StoreError as exc:
            raise _fail(str(exc)) from exc
        if as_json:
            typer.echo(json_text(rows, indent=2))
            return
        body = [
            [r["name"], r["kind"], ",".join(r["domains"]), ",".join(r["schemes"]),
             f"{r['done']}/{'?' if r['total'] is None else r['total']}", str(r["failed"])]
            for r in rows
        ]  # fmt: skip
        headers = ["name", "kind", "domains", "schemes", "done/total", "failed"]
        typer.echo(rich_text([Grid("studies", headers, body)]))

    @studies_app.command("delete")
    def delete_cmd(
        name: Annotated[str, typer.Argument(help="A stored study.")],
        store: StoreOpt = None,
    ) -> None:
        """Delete a study with its runs, rounds and checkpoints; the shared LLM call cache stays."""
        from critiquebench.store.db import StoreError
        from critiquebench.studies.define import ReportError, StudyRunning, delete_study

        path = _store(store)
        try:
            removed = delete_study(path, name)
        except (ReportError, StoreError, StudyRunning) as exc:
            raise _fail(str(exc)) from exc
        err.print(
            f"deleted study {name}: {removed.get('runs', 0)} runs, {removed.get('attempts', 0)} rounds, "
            f"{removed.get('checkpoints', 0)} checkpoints; the LLM call cache is kept"
        )

    @app.command("export")
    def export_cmd(
        name: Annotated[str, typer.Argument(help="A stored study.")],
        output: Annotated[
            Path | None, typer.Option(help="File to write (default: stdout; Parquet needs a file).")
        ] = None,
        table: Annotated[
            str, typer.Option(help="rounds (one row per round of every run), runs (one row per run) or calls (one "
                                  "row per recorded LLM call).")
        ] = "rounds",
        fmt: Annotated[
            str | None,
            typer.Option("--format", help="jsonl | csv | parquet (default: from --output's suffix, else jsonl); "
                                          "with --features: jsonl or csv."),
        ] = None,
        features: Annotated[
            bool, typer.Option("--features", help="One row per attempt with the validator features (planning).")
        ] = False,
        store: StoreOpt = None,
    ) -> None:
        """A study's rounds, runs or LLM calls as a table (JSON lines, CSV or Parquet) with the model, endpoint,
        temperature and scheme parameters each run was made with on every row (or, with --features, the attempt
        dataset). Columns: docs/reports.md, "Export columns"."""
        from critiquebench.llm.prices import PriceError
        from critiquebench.outputs import OutputError
        from critiquebench.reports.records import COLUMNS, ExportError, check_format, format_for, records, write_records
        from critiquebench.store.db import StoreError
        from critiquebench.studies.define import ReportError, reading, study_config

        located = _store(store)
        _check_outputs(located, output, None)
        with ExitStack() as held:  # the store is closed when the command ends
            try:
                db = held.enter_context(reading(located))
                study_config(db, name)
            except (ReportError, StoreError) as exc:
                raise _fail(str(exc)) from exc
            if features:
                _export_features(db, name, output, fmt or "jsonl", located)
                return
            chosen = format_for(fmt, output)
            try:
                check_format(chosen, output)  # before reading anything
                count = write_records(records(db, name, table), COLUMNS[table], chosen, output, sys.stdout,
                                      [located])  # fmt: skip
            except (ExportError, OutputError, PriceError) as exc:  # PriceError: the runs' costs, a bad price file
                raise _fail(str(exc)) from exc
            except OSError as exc:
                raise _fail(f"cannot write {output or 'to standard output'}: {exc.strerror or exc}") from exc
        if output is not None:
            err.print(f"{count} {table} written to {output} ({chosen})")


def _emit(text: str, output: Path | None, stores: list[Any]) -> None:
    """A report's text on stdout, or written to `output` (see `critiquebench.outputs`)."""
    from critiquebench.outputs import OutputError, write_output

    if output is None:
        typer.echo(text)
        return
    try:
        write_output(output, text, stores)
    except OutputError as exc:
        raise _fail(str(exc)) from None


def _export_features(db: Any, name: str, output: Path | None, fmt: str, store: Path | str) -> None:
    """The attempt dataset of the confidence meta-networks (`critiquebench.confidence.features`)."""
    from critiquebench.confidence.features import FeatureError, study_rows, write_rows
    from critiquebench.outputs import OutputError, open_output

    if fmt not in ("jsonl", "csv"):
        raise _fail(f"--format must be jsonl or csv, not {fmt!r}")
    try:
        rows = study_rows(db, name)
    except FeatureError as exc:
        raise _fail(str(exc)) from exc
    if output is None:
        write_rows(rows, sys.stdout, fmt)
        return
    try:
        with open_output(output, [store]) as fp:
            count = write_rows(rows, fp, fmt)
    except OutputError as exc:
        raise _fail(str(exc)) from None
    err.print(f"{count} attempts written to {output}")
