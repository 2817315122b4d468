"""`critiquebench import planbench | samples`: recorded studies as cache entries plus a replayable study."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from critiquebench.cli.domain_options import DomainOptionOpt, domain_options

import_app = typer.Typer(no_args_is_help=True, help=__doc__)

ReplayNowOpt = Annotated[
    bool,
    typer.Option("--replay", help="Replay the study once imported, in this process: what `critiquebench resume "
                 "STUDY --replay` does after it, without a second start (its table, summary and exit code)."),
]
ProgressNowOpt = Annotated[bool, typer.Option(help="With --replay: live progress bars on stderr (on a terminal).")]


def replay_now(store: Path | str, study: str, progress: bool) -> None:
    """`critiquebench resume STUDY --replay`, run by the command that imported the study."""
    from critiquebench.api import resumable
    from critiquebench.cli.study import _execution, _fail, execute_study
    from critiquebench.studies.session import StudyError

    try:
        config = resumable(store, study)
    except StudyError as exc:
        raise _fail(str(exc)) from exc
    execute_study(store, config, progress, True, None, _execution("local", 2, None))


@import_app.command("planbench")
def planbench(
    file: Annotated[Path, typer.Argument(help="A PlanBench results JSON (plan generation or backprompting).")],
    study: Annotated[str, typer.Option("--study", help="Name of the study to define.")],
    store: Annotated[str | None, typer.Option("--store", help="Store file or URL (default: $CRITIQUEBENCH_STORE).")] = None,  # noqa: E501
    dataset: Annotated[
        Path | None,
        typer.Option(help="PlanBench domain folder with instances/ (default: DOMAIN/ found above the file)."),
    ] = None,
    instances: Annotated[
        Path | None,
        typer.Option(help="Folder of the problems the file's instance ids refer to (default: the task's folder "
                     "in the dataset; generated/ for t5)."),
    ] = None,
    planbench: Annotated[
        Path | None,
        typer.Option(help="A PlanBench checkout (karthikv792/LLMs-Planning, either layout): the file's domain "
                     "config, instances and example plans are taken from it."),
    ] = None,
    reading: Annotated[
        str | None,
        typer.Option(help="How answers are read: one of PlanBench's readers (planbench, planbench-whole, "
                     "planbench-head, planbench-whole-nostar, planbench-translation; t7 states: planbench-state, "
                     "planbench-state-commas) or 'sound' for ours (default: the reader that produced the file's "
                     "labels)."),
    ] = None,
    replay: ReplayNowOpt = False,
    progress: ProgressNowOpt = True,
) -> None:
    """Import a PlanBench results file (any task, model, domain); `critiquebench resume NAME --replay` replays it
    (or `--replay` here, in the same process).

    Importing another task file into the same study adds that task, and `report NAME` lays the tasks out as
    PlanBench's results table."""
    from critiquebench.domains.planning.strips import PlanningError
    from critiquebench.importers.planbench import ImportError_, import_planbench
    from critiquebench.store.db import resolve_store
    from critiquebench.studies.config import ConfigError

    try:
        done = import_planbench(
            file, resolve_store(store), study, dataset, instances=instances, planbench=planbench, reading=reading
        )
    except (ImportError_, ConfigError, PlanningError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    from critiquebench.reports.metrics import shown_domain

    config, last = done.config, done.config.domains[-1]
    style = done.options.get("prompt_style")
    reader = done.options.get("reading")
    how = f" (PlanBench's {style} prompt" + (f", reading {reader}" if reader else "")
    typer.echo(
        f"imported {done.added} recorded call(s) as model {config.model!r}; study {study!r}: "
        f"{config.schemes[0]} on {len(config.instances[last].split(','))} {shown_domain(last)} "
        f"instance(s){how + ')' if style else ''}. "
        + ("Replaying it:" if replay else f"Replay it with: critiquebench resume {study} --replay")
    )
    if "state_reading" in done.options:
        typer.echo(f"t7 answers are read as PlanBench's code read them ({done.options['state_reading']}); where our "
                   "own reading judges otherwise, its verdict is the last sentence of the run's sound_reason")
    if "example" in done.options:
        typer.echo(
            f"every recorded prompt shows instance {done.options['example']} as its one-shot example (whatever the "
            "file's example_instance_ids say): replayed as sent"
        )
    if "recorded_feedback" in done.options:
        typer.echo(
            "PlanBench's PDDL backprompting protocol: each query sent the first prompt"
            + ("" if done.options.get("system") is False else " after its system message")
            + " and only the last answer and its feedback (a window of one exchange); the feedback is replayed as "
            "recorded, since its wording (full_validator) is not published: the study replays these answers only"
        )
    if done.unanswered:
        shown = ", ".join(map(str, done.unanswered[:5])) + (", ..." if len(done.unanswered) > 5 else "")
        typer.echo(f"skipped {len(done.unanswered)} instance(s) with no recorded answer, as PlanBench does: {shown}")
    if replay:
        replay_now(resolve_store(store), study, progress)


@import_app.command("samples")
def samples(
    file: Annotated[Path, typer.Argument(help="Samples as JSON lines, CSV or Parquet (by suffix): instance and "
                                              "response per row; optional sample, messages or prompt, label, "
                                              "model, temperature.")],
    domain: Annotated[str, typer.Option("--domain", "-d", help="game24, coloring, blocksworld, ... or a folder.")],
    study: Annotated[str, typer.Option("--study", help="Name of the study to define.")],
    k: Annotated[
        str | None,
        typer.Option("--k", help="The k of sampling:k=K and self-consistency:k=K, e.g. 1,5,15,100 (default: "
                                 "every k up to the most samples an instance has)."),
    ] = None,
    dataset: Annotated[Path | None, typer.Option(help="Datasets root or the domain's own data.")] = None,
    schemes: Annotated[
        str | None, typer.Option(help="More schemes (e.g. llm-llm): they need new LLM calls, so --base-url.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="An endpoint for the calls the recorded samples do not answer.")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="The study's model, over the file's `model` (the endpoint's name for it).")
    ] = None,
    vote: Annotated[
        str, typer.Option(help="What self-consistency counts: answer (canonical answers) or text (reply texts).")
    ] = "answer",
    store: Annotated[str | None, typer.Option("--store", help="Store file or URL (default: $CRITIQUEBENCH_STORE).")] = None,  # noqa: E501
    domain_option: DomainOptionOpt = None,
) -> None:
    """Import anyone's recorded samples (k answers per instance) as a study: standard, sampling:k=K and
    self-consistency:k=K replay them with 0 LLM calls; `report NAME --table pass-at-k` and `--table labels`."""
    from critiquebench.importers.samples import SamplesError, import_samples
    from critiquebench.store.db import resolve_store
    from critiquebench.studies.config import ConfigError, split_list, split_schemes

    options = domain_options(domain, domain_option)
    try:
        ks = [int(v) for v in split_list(k)] if k else None
    except ValueError:
        typer.echo(f"error: --k {k}: a comma-separated list of integers, e.g. 1,5,15,100", err=True)
        raise typer.Exit(2) from None
    try:
        done = import_samples(file, resolve_store(store), study, domain, options=options, dataset=dataset, ks=ks,
                              schemes=split_schemes(schemes or ""), base_url=base_url, model=model,
                              vote=vote)  # fmt: skip
    except (SamplesError, ConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for bad in done.bad[:20]:
        typer.echo(f"skipped {bad.describe()}", err=True)
    if len(done.bad) > 20:
        typer.echo(f"skipped {len(done.bad) - 20} more line(s)", err=True)
    for line in (*done.notes, *done.left_out):
        typer.echo(line, err=True)
    labelled = f", {done.labelled} with the source's label" if done.labelled else ""
    typer.echo(
        f"imported {done.samples} sample(s) of {done.instances} instance(s) as model {done.config.model!r} "
        f"({done.valid} valid by our sound verifier{labelled}); study {study!r}: {len(done.config.schemes)} "
        f"scheme(s), {', '.join(done.config.schemes[:3])}{', ...' if len(done.config.schemes) > 3 else ''}.\n"
        f"Report it (no LLM calls): critiquebench report {study} --table pass-at-k"
        + (" (--table labels: the source's verdicts beside ours)" if done.labelled else "")
        + (f"\nReplay its schemes through the graphs: critiquebench resume {study} --replay" if done.config.replay
           else f"\nRun it (the schemes the samples do not answer call {base_url}): critiquebench resume {study}")
    )
    if done.bad:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
