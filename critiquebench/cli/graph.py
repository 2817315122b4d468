"""`critiquebench schemes` (the schemes and their parameters), `critiquebench graph` (draw a scheme's graph)
and `critiquebench critics` (list critic plug-ins)."""

import json
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command("schemes")(schemes)
    app.command("graph")(graph)
    app.command("critics")(critics)


def schemes(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON list instead of a table.")] = False,
) -> None:
    """List the schemes and their parameters (type, default, allowed values); set them as NAME:KEY=VALUE,..."""
    from critiquebench.graphs import PLUGIN_ERRORS, available_schemes
    from critiquebench.graphs.params import text
    from critiquebench.reports.tables import wrapped

    described = [scheme.describe() for scheme in available_schemes()]
    broken = [{"name": name, "source": source, "error": error} for name, (source, error) in PLUGIN_ERRORS.items()]
    if as_json:
        typer.echo(json.dumps(described + broken, indent=2))
        return
    for scheme in described:  # folded to the terminal's width (80 columns into a file or pipe)
        plugin = "" if scheme["source"] == "built-in" else f" [plug-in: {scheme['source']}]"
        doc = scheme["doc"].partition(": ")[2] or scheme["doc"]
        typer.echo(wrapped(f"{scheme['name']}{plugin}: {doc}", indent="    "))
        for p in scheme["params"]:
            kind = p["type"]
            if p["choices"]:
                kind += ", one of " + "|".join(map(text, p["choices"])) + ("|none" if p["nullable"] else "")
            if p["minimum"] is not None:
                kind += f", {text(p['minimum'])}..{text(p['maximum'])}"
            typer.echo(wrapped(f"    {p['name'] + '=' + text(p['default']):<22} {kind}: {p['help']}", indent=" " * 8))
    for scheme in broken:  # listed, so a user sees why a scheme they installed is missing
        typer.echo(wrapped(f"{scheme['name']} [plug-in: {scheme['source']}]: cannot be used: {scheme['error']}",
                           indent="    "))  # fmt: skip
    typer.echo(wrapped("Set parameters as NAME:KEY=VALUE,... (e.g. sampling:k=25); critics: `critiquebench critics`."))


def graph(
    scheme: Annotated[str, typer.Argument(help='A scheme spec, e.g. "llm-llm" or "sampling:k=25".')],
    fmt: Annotated[str, typer.Option("--format", "-f", help="mermaid | ascii | png (png needs --output).")] = (
        "mermaid"
    ),
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here, not to stdout.")] = None,
) -> None:
    """Draw a scheme's LangGraph graph (no network: PNG is rendered locally with matplotlib)."""
    from critiquebench.graphs.draw import draw

    if fmt == "png" and output is None:
        raise typer.BadParameter("png output is binary: give --output FILE.png", param_hint="--format")
    try:
        picture = draw(scheme, fmt)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="SCHEME / --format") from None
    if output is None:
        typer.echo(picture.rstrip("\n") if isinstance(picture, str) else picture)
        return
    from critiquebench.outputs import OutputError, check_output, check_suffix, write_output

    try:
        check_output(output)  # a store or SQLite file is refused as such, before its suffix is looked at
        check_suffix(output, fmt)
        write_output(output, picture if isinstance(picture, bytes) or picture.endswith("\n") else picture + "\n")
    except OutputError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def critics(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON list instead of a table.")] = False,
) -> None:
    """List the critics a scheme can use (critic=NAME): built-in ones and installed plug-ins."""
    from critiquebench.nodes.critics import ENTRY_POINT_GROUP, available_critics
    from critiquebench.reports.tables import Grid, rich_text

    infos = available_critics()
    if as_json:
        typer.echo(json.dumps([{"name": i.name, "source": i.source, "doc": i.doc} for i in infos], indent=2))
        return
    rows = [[info.name, info.source, info.doc] for info in infos]
    title = f"critics (plug-ins: entry-point group {ENTRY_POINT_GROUP})"
    typer.echo(rich_text([Grid(title, ["name", "source", "description"], rows)]).rstrip("\n"))
