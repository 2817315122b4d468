"""`--domain-option KEY=VALUE`, the one flag every command that takes a domain shares (`domains.options`)."""

from typing import Annotated, Any

import typer

DomainOptionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--domain-option",
        help="A domain option as in a study file's [domain_options] (repeatable): KEY=VALUE, or DOMAIN.KEY=VALUE "
        "for one of several domains; e.g. reader=lenient for game24.",
    ),
]


def domain_options(domain: str, given: list[str] | None) -> dict[str, Any]:
    """The typed options the flags give `domain`; a bad flag is one `error:` line (exit 2)."""
    from critiquebench.domains.options import options_for

    try:
        return options_for(domain, given or [])
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
