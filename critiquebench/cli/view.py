"""`critiquebench view [NAME ...]`: the store's studies in a browser (read-only), served or written as files."""

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("view")
    def view_cmd(
        names: Annotated[list[str] | None, typer.Argument(help="Studies to show (default: all).")] = None,
        output: Annotated[
            Path | None, typer.Option(help="Write static files here (open DIR/index.html from disk); no server.")
        ] = None,
        port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (default: a free one).", min=0, max=65535)] = 0,
        store: Annotated[
            str | None, typer.Option("--store", help="Store file (default: $CRITIQUEBENCH_STORE).")
        ] = None,
    ) -> None:
        """Tables, Figure 2, runs and round-by-round transcripts of studies, in a local web page."""
        from critiquebench.outputs import OutputError
        from critiquebench.store.db import StoreError, resolve_store, store_name
        from critiquebench.viewer.data import StoreMissing
        from critiquebench.viewer.site import ViewerServer, export_static

        located = resolve_store(store)
        if isinstance(located, str):  # a postgresql:// URL: named without its password
            typer.echo(
                f"error: view reads a SQLite store, not {store_name(located)}: copy it to a file first "
                "(critiquebench store copy URL FILE)",
                err=True,
            )
            raise typer.Exit(2)
        path = located
        chosen = list(names or [])
        try:
            if output is not None:
                count, skipped = export_static(path, chosen, output)
                _warn_skipped(skipped)
                typer.echo(f"{count} files written; open {(output / 'index.html').resolve().as_uri()}")
                return
            server = ViewerServer(path, chosen, port)
        except (StoreMissing, LookupError, OSError, StoreError, OutputError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        _warn_skipped(server.skipped)
        # the address holds a per-launch token: only who can read this line can read the studies
        typer.echo(f"critiquebench viewer on {server.url} (read-only; Ctrl-C stops it)", err=False)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()


def _warn_skipped(names: list[str]) -> None:
    if names:
        shown = ", ".join(repr(n) for n in names)
        typer.echo(f"warning: left out {len(names)} stud{'y' if len(names) == 1 else 'ies'} of the store whose name "
                   f"is not a valid study name (letters, digits, '_', '.', '-'): {shown}", err=True)  # fmt: skip
