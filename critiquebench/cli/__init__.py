"""The `critiquebench` command line. Each command group lives in its own app-layer module with `register(app)`.

Command modules import at their top only typer and the standard library: what a command needs is imported in its
body, so `critiquebench --help` (and every command) loads only what it uses (tests/test_cli_imports.py)."""

import importlib
import logging
import sqlite3
import sys

import typer

from critiquebench.cli.coercion import install as _plain_values_first

HELP = (
    "Run, resume and compare LLM generate -> verify -> critique loops on problems a machine can check "
    "(Game of 24, graph colouring, PDDL planning), and report them as the papers did."
)
# rich_markup_mode=None on every Typer of the CLI: click's plain help and usage errors. Typer's rich help imports
# rich, Markdown and Pygments first, which doubled what `critiquebench --help` cost (benchmarks/bench_setup.py).
app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, add_completion=False, help=HELP)
_plain_values_first()  # option values Typer would give to Pydantic, when they need none (cli/coercion.py)

# Modules that add commands to `app`; one line per module keeps the CLI surface greppable.
COMMAND_MODULES: tuple[str, ...] = (
    "critiquebench.cli.score",
    "critiquebench.cli.cache",
    "critiquebench.cli.graph",
    "critiquebench.cli.study",
    "critiquebench.cli.verify",
    "critiquebench.cli.imports",
    "critiquebench.cli.prompt",
    "critiquebench.cli.confidence",
    "critiquebench.cli.view",
    "critiquebench.cli.store",
)


def _print_version(wanted: bool) -> None:
    """`--version`: the installed distribution's version, read from its metadata (no other import)."""
    if not wanted:
        return
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("critiquebench")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from critiquebench import __version__ as found
    typer.echo(f"critiquebench {found}")
    raise typer.Exit()


@app.callback()
def _root(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug details to stderr."),
    version: bool = typer.Option(
        False, "--version", "-V", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    from critiquebench.llm.urls import install_log_redaction

    level = logging.DEBUG if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    install_log_redaction()  # httpx logs every request's full URL (with its userinfo and query) at INFO


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    """The console script: any store problem a command meets ends in one `error:` line (exit 2), never a
    traceback. Each command turns the errors it expects into such a line itself; this is the last guard."""
    args, cli = sys.argv[1:], app
    if args in ([], ["--help"]):  # the list of commands: their names and help, not their options
        _commands_listed_only(app)
    else:  # the root's options are flags: after --verbose alone, the next word names the command
        words = [arg for arg in args if arg not in ("-v", "--verbose")]
        cli = _with_only(app, words[0]) if words and not words[0].startswith("-") else app
    try:
        cli()
    except (ValueError, sqlite3.Error) as exc:  # StoreError and StoreUnavailable are ValueErrors
        from critiquebench.store.db import StoreError, describe
        from critiquebench.store.postgres import StoreUnavailable

        if isinstance(exc, StoreError | StoreUnavailable):  # never with a store URL's password
            _exit_error(str(exc))
        if not isinstance(exc, sqlite3.Error):
            raise
        # e.g. a store damaged past its first page, found while reading it
        logging.getLogger(__name__).debug("store error", exc_info=True)
        _exit_error(describe(_store_arg(), exc))


def _listed(*args: object, **kwargs: object) -> None:
    """The stand-in callback of a command while only the list of commands is shown (never called)."""


def _commands_listed_only(group: typer.Typer) -> None:
    """Give `group`'s commands (and its sub-groups') stand-in callbacks with their names and help, for a help
    page that lists them: Typer builds every command's options from its function's signature before click shows
    any help, which was a third of `critiquebench --help`'s CPU (benchmarks/bench_setup.py)."""
    import inspect

    from typer.main import get_command_name

    for info in group.registered_commands:
        callback = info.callback
        if callback is None:
            continue
        info.name = info.name or get_command_name(callback.__name__)
        info.help = info.help if info.help is not None else inspect.getdoc(callback)
        info.callback = _listed
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _commands_listed_only(sub.typer_instance)


def _with_only(group: typer.Typer, name: str | None) -> typer.Typer:
    """`group` with its command (or sub-group) `name` alone, `group` itself when it has no such command (click
    then names the unknown command and suggests one). Typer builds every command's options from its function's
    signature before it runs any, a sixth of the CPU of a study with nothing to do (benchmarks/bench_setup.py).
    A copy: `group` keeps all its commands for whoever calls it next in this process."""
    import copy

    from typer.main import get_command_name

    commands = [info for info in group.registered_commands
                if info.callback is not None and (info.name or get_command_name(info.callback.__name__)) == name]
    groups = [info for info in group.registered_groups if isinstance(info.name, str) and info.name == name]
    if len(commands) + len(groups) != 1 or group.registered_callback is None:  # (no callback: Typer would run a
        return group  # lone command without its name)
    alone = copy.copy(group)
    alone.registered_commands, alone.registered_groups = commands, groups
    return alone


def _store_arg() -> str:
    """The --store the user gave (for naming the file in an error), else the default store."""
    from critiquebench.store.db import default_store_path, store_name

    args = sys.argv[1:]
    for i, arg in enumerate(args):
        if arg == "--store" and i + 1 < len(args):
            return store_name(args[i + 1])
        if arg.startswith("--store="):
            return store_name(arg.split("=", 1)[1])
    return store_name(default_store_path())


def _exit_error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


if __name__ == "__main__":
    main()
