"""`critiquebench import planbench FILE --study NAME`: recorded studies as cache entries plus a replayable study."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from critiquebench.importers.planbench import ImportError_, import_planbench
from critiquebench.store.db import default_store_path
from critiquebench.studies.config import ConfigError

import_app = typer.Typer(no_args_is_help=True, help=__doc__)


@import_app.command("planbench")
def planbench(
    file: Annotated[Path, typer.Argument(help="A PlanBench results JSON (plan generation or backprompting).")],
    study: Annotated[str, typer.Option("--study", help="Name of the study to define.")],
    store: Annotated[Path | None, typer.Option("--store", help="Store file (default: $CRITIQUEBENCH_STORE).")] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(help="PlanBench domain folder with instances/ (default: beside the file's reference/ folder)."),
    ] = None,
) -> None:
    """Import a PlanBench GPT-4 results file; then `critiquebench run NAME --replay` replays it offline."""
    try:
        config, added = import_planbench(file, store or default_store_path(), study, dataset)
    except (ImportError_, ConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(
        f"imported {added} recorded call(s) as model {config.model!r}; study {study!r}: "
        f"{config.schemes[0]} on {len(config.instances[config.domains[0]].split(','))} {config.domains[0]} "
        f"instance(s). Replay it with: critiquebench resume {study} --replay"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
