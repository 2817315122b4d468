"""`critiquebench cache stats|export|import`: inspect the LLM call cache, or hand it on for replay."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from critiquebench.outputs import json_text

if TYPE_CHECKING:
    from critiquebench.store.cache import CallCache

cache_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help=__doc__)
_STORE_HELP = "Store file or postgresql:// URL (default: $CRITIQUEBENCH_STORE or ./critiquebench.sqlite)."
StoreOption = Annotated[str | None, typer.Option("--store", help=_STORE_HELP)]


def _open(store: str | None, readonly: bool = True) -> "CallCache":
    """The store's cache, for a `with` block that closes it; read-only unless importing (a reading command never
    creates or changes a store)."""
    from critiquebench.store.cache import CallCache
    from critiquebench.store.db import StoreError, resolve_store

    try:
        return CallCache(resolve_store(store), readonly=readonly)
    except StoreError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


@cache_app.command("stats")
def stats(
    store: StoreOption = None, as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False
) -> None:
    """Calls made, cache hits, failures and tokens spent, per model and in total."""
    from critiquebench.reports.tables import Grid, rich_text

    with _open(store) as cache:
        result = cache.stats()
    if as_json:
        # Totals at the top level (what scripts read: calls, hits, failed, tokens), the split by model beside.
        typer.echo(json_text({**result["total"], "by_model": result["by_model"]}, indent=2, sort_keys=True))
        return
    columns = ("recorded", "calls", "hits", "failed", "prompt_tokens", "completion_tokens")
    rows = [[model, *(str(counts[c]) for c in columns)] for model, counts in result["by_model"].items()]
    rows.append(["total", *(str(result["total"][c]) for c in columns)])
    headers = ["model", *(column.replace("_", " ") for column in columns)]
    typer.echo(rich_text([Grid("LLM call cache", headers, rows)]).rstrip("\n"))


@cache_app.command("export")
def export(
    store: StoreOption = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="JSONL file (default: stdout).")
    ] = None,
) -> None:
    """Write every recorded call as JSON lines, for `cache import` elsewhere (no API keys are in it)."""
    from critiquebench.outputs import OutputError, check_output, open_output
    from critiquebench.store.db import resolve_store

    stores = [resolve_store(store)]
    try:
        if output is not None:
            check_output(output, stores)  # before the store is opened: an output never replaces it
        with _open(store) as cache:
            if output is None:
                count = cache.export(sys.stdout)
            else:
                with open_output(output, stores) as fp:
                    count = cache.export(fp)
    except OutputError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"exported {count} recorded calls", err=True)


@cache_app.command("import")
def import_(
    source: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="A JSONL file from `cache export`.")
    ],
    store: StoreOption = None,
) -> None:
    """Merge recorded calls into the store, so runs can replay them with no LLM."""
    try:
        with _open(store, readonly=False) as cache, source.open(encoding="utf-8") as fp:
            added, present = cache.import_jsonl(fp)
    except ValueError as exc:
        typer.echo(f"error: {source}: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"added {added} recorded calls ({present} already present)", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(cache_app, name="cache")
