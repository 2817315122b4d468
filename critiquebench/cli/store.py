"""`critiquebench store copy SRC DST`: move studies between stores (SQLite files and Postgres databases)."""

import os
import sqlite3
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
    from critiquebench.outputs import new_store_file
    from critiquebench.store.copy import copy_store
    from critiquebench.store.db import store_locator, store_name

    src, dst = store_locator(source), store_locator(destination)
    if isinstance(src, Path) and not src.exists():
        typer.echo(f"error: no store at {src}", err=True)
        raise typer.Exit(2)
    if isinstance(src, Path) and isinstance(dst, Path) and dst.exists() and _same_file(src, dst):
        typer.echo(f"error: {destination} is the store {source} itself (a link to it?): give another store", err=True)
        raise typer.Exit(2)
    staged: Path | None = None
    try:
        if isinstance(dst, Path) and not dst.exists():  # a new file: made beside it, renamed in once complete
            with new_store_file(dst, [src]) as staged:
                report = copy_store(src, staged)
        else:  # into a store (rows already there are kept): its own transactions keep it whole
            report = copy_store(src, dst)
    except sqlite3.Error as exc:  # met while copying (a full disk): name the stores, not the default one
        where = f"cannot write {dst}" if staged is not None else f"cannot copy {source} into {destination}"
        typer.echo(f"error: {where}: {exc}" + ("; nothing was written" if staged is not None else ""), err=True)
        raise typer.Exit(2) from None
    except (ValueError, OSError) as exc:
        message = str(exc) if staged is None else str(exc).replace(str(staged), str(dst))
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(2) from None
    rows = ", ".join(f"{n} {table}" for table, n in report.rows.items())
    typer.echo(f"copied {store_name(src)} -> {store_name(dst)}: {rows}, {report.checkpoints} checkpoints")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def register(app: typer.Typer) -> None:
    app.add_typer(store_app, name="store")
