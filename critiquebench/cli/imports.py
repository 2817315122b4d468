"""`critiquebench import planbench FILE --study NAME`: recorded studies as cache entries plus a replayable study."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import_app = typer.Typer(no_args_is_help=True, help=__doc__)


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
                     "planbench-head, planbench-whole-nostar, planbench-translation) or 'sound' for ours "
                     "(default: the reader that produced the file's labels)."),
    ] = None,
) -> None:
    """Import a PlanBench results file (any task, model, domain); `critiquebench resume NAME --replay` replays it.

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
    config, last = done.config, done.config.domains[-1]
    style = done.options.get("prompt_style")
    reader = done.options.get("reading")
    how = f" (PlanBench's {style} prompt" + (f", reading {reader}" if reader else "")
    typer.echo(
        f"imported {done.added} recorded call(s) as model {config.model!r}; study {study!r}: "
        f"{config.schemes[0]} on {len(config.instances[last].split(','))} {last} "
        f"instance(s){how + ')' if style else ''}. Replay it with: critiquebench resume {study} --replay"
    )
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


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
