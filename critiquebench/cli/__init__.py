"""The `critiquebench` command line. Each command group lives in its own app-layer module with `register(app)`."""

from __future__ import annotations

import importlib
import logging

import typer

HELP = (
    "Run, resume and compare LLM generate -> verify -> critique loops on problems a machine can check "
    "(Game of 24, graph colouring, PDDL planning), and report them as the papers did."
)
app = typer.Typer(no_args_is_help=True, add_completion=False, help=HELP)

# Modules that add commands to `app`; one line per module keeps the CLI surface greppable.
COMMAND_MODULES: tuple[str, ...] = (
    "critiquebench.cli.score",
    "critiquebench.cli.cache",
    "critiquebench.cli.graph",
    "critiquebench.cli.study",
    "critiquebench.cli.verify",
    "critiquebench.cli.imports",
    "critiquebench.cli.prompt",
)


@app.callback()
def _root(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug details to stderr.")) -> None:
    level = logging.DEBUG if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
