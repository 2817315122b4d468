"""`critiquebench store copy SRC DST`: move studies between stores (SQLite files and Postgres databases)."""

from pathlib import Path
from typing import Annotated

import typer

store_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help=__doc__)


@store_app.command("copy")
def copy_cmd(
    source: Annotated[str, typer.Argument(help="Store file or postgresql:// URL to copy from.")],
    destination: Annotated[str, typer.Argument(help="Store file or postgresql:// URL to copy into.")],
) -> None:
    """Copy every study definition, run, round, cached LLM call and graph checkpoint into another store."""
    from critiquebench.store.copy import copy_store
    from critiquebench.store.db import store_locator, store_name

    src, dst = store_locator(source), store_locator(destination)
    if isinstance(src, Path) and not src.exists():
        typer.echo(f"error: no store at {src}", err=True)
        raise typer.Exit(2)
    try:
        report = copy_store(src, dst)
    except (ValueError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    rows = ", ".join(f"{n} {table}" for table, n in report.rows.items())
    typer.echo(f"copied {store_name(src)} -> {store_name(dst)}: {rows}, {report.checkpoints} checkpoints")


def register(app: typer.Typer) -> None:
    app.add_typer(store_app, name="store")
