"""Option values the CLI turns into their types without Pydantic (critiquebench/cli/coercion.py) come out as
Typer's own adapters make them: the same value of the same type, or the same error message."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param
from typer.main import get_command

import critiquebench.cli  # noqa: F401  (installs the plain cases)
from critiquebench.cli.coercion import installed
from critiquebench.cli.study import MaxTokensOpt
from tests import forked_cli


def _command() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def probe(
        name: Annotated[str, typer.Argument()],
        text: Annotated[str | None, typer.Option()] = None,
        count: Annotated[int | None, typer.Option()] = None,
        workers: Annotated[int, typer.Option(min=1)] = 2,
        share: Annotated[float | None, typer.Option()] = None,
        rate: Annotated[float | None, typer.Option(min=0, max=1)] = None,
        where: Annotated[Path | None, typer.Option()] = None,
        items: Annotated[list[str] | None, typer.Option()] = None,
        max_tokens: MaxTokensOpt = None,
        flag: Annotated[bool, typer.Option()] = False,
    ) -> None:
        """A command with one option of each kind the CLI has."""

    @app.command()
    def other() -> None:
        """A second command, so that `probe` keeps its name."""

    return app


VALUES: dict[str, list[Any]] = {
    "name": ["abc", "", " 1 ", "ü", "-"],
    "text": ["abc", "", "none"],
    "count": ["0", "7", "007", "42", 5, " 3", "-3", "+3", "3.0", "abc", "1_000", "", "٣"],
    "workers": ["0", "1", 2, 0, "-1", "x"],
    "share": ["0.5", "1", "1.", ".5", "-0.5", "1e3", "nan", "abc", 0.25, "0.1000000000000000055511151231257827"],
    "rate": ["0.5", "2", 0.5],
    "where": ["x.txt", ".", "", "/"],
    "items": [(), ("a", "b"), ["c"]],
    "max_tokens": ["64", "none", " None ", "abc", "0"],
    "flag": ["true", "0", "no", "maybe"],
}


def _outcome(runtime: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        found = runtime.coerce(value, param=param, ctx=ctx)
    except BadParameter as exc:
        return "error", exc.format_message()
    return type(found).__name__, repr(found)


@pytest.mark.parametrize("option", sorted(VALUES))
def test_a_plain_value_comes_out_as_typer_s_adapter_makes_it(option: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    assert installed()
    monkeypatch.chdir(tmp_path)
    command = get_command(_command())
    probe = command.commands["probe"]  # type: ignore[attr-defined]
    ctx = probe.make_context("probe", ["x"])
    param = next(p for p in probe.params if p.name == option)
    for value in VALUES[option]:
        plain = _outcome(param.get_runtime_param(), value, param, ctx)
        typer_s = _outcome(build_runtime_param(param.type_descriptor), value, param, ctx)
        assert plain == typer_s, (option, value)


# That a study with nothing to do never imports Pydantic is asserted by the one study whose fresh processes
# tests/test_cli_imports.py runs (test_a_study_with_no_planning_domain_loads_no_planning_module), with the same
# options: a second pair of fresh interpreters running a study cost 6 s of CPU.


def test_a_bad_value_gets_typer_s_error_line(tmp_path: Path, forked_light_env: dict[str, str]) -> None:
    # the command in its own process, forked from one that imported the CLI (tests/forked_cli.py)
    done = forked_cli.run(["critiquebench", "run", "x", "--trials", "abc", "--store", str(tmp_path / "s.sqlite")],
                          forked_light_env, timeout=120)  # fmt: skip
    assert done.returncode == 2
    assert "Invalid value for '--trials'" in done.stderr
    assert not (tmp_path / "s.sqlite").exists()
