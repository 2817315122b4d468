"""`critiquebench import planbench FILE --study NAME`: recorded studies as cache entries plus a replayable study."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from critiquebench.domains.planning.strips import PlanningError
from critiquebench.importers.planbench import ImportError_, import_planbench
from critiquebench.store.db import resolve_store
from critiquebench.studies.config import ConfigError

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
) -> None:
    """Import a PlanBench results file (any task, model, domain); `critiquebench resume NAME --replay` replays it.

    Importing another task file into the same study adds that task, and `report NAME` lays the tasks out as
    PlanBench's results table."""
    try:
        config, added = import_planbench(file, resolve_store(store), study, dataset, instances=instances)
    except (ImportError_, ConfigError, PlanningError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    last = config.domains[-1]
    typer.echo(
        f"imported {added} recorded call(s) as model {config.model!r}; study {study!r}: "
        f"{config.schemes[0]} on {len(config.instances[last].split(','))} {last} "
        f"instance(s). Replay it with: critiquebench resume {study} --replay"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
