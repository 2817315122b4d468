"""Option values the CLI turns into their types without Pydantic (critiquebench/cli/coercion.py) come out as
Typer's own adapters make them: the same value of the same type, or the same error message."""

from __future__ import annotations

import subprocess
import sys
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


def test_a_study_with_nothing_to_do_never_imports_pydantic(tmp_path: Path) -> None:
    """Typer's adapters import Pydantic; `critiquebench run` with plain values needs none of it (the bench_setup
    case, and `--max-tokens`/`--dataset` of bench_reuse)."""
    from tests.scripted_server import ScriptedServer

    code = ("import sys; sys.argv = ['critiquebench', *sys.argv[1:]]\nfrom critiquebench.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nprint('pydantic' in sys.modules)")  # fmt: skip
    with ScriptedServer(reply="(4 + 4) * (10 - 7) = 24\n[ANSWER END]") as server:
        args = ["run", "idle", "--domains", "game24", "--instances", "gen:2:1", "--schemes", "standard",
                "--model", "scripted", "--base-url", server.base_url, "--store", str(tmp_path / "s.sqlite"),
                "--no-progress", "--max-tokens", "64", "--dataset", str(tmp_path), "--concurrency", "4"]  # fmt: skip
        for _ in range(2):  # its runs, then nothing to do
            done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr
            assert "Table 1" in done.stdout
        assert done.stdout.splitlines()[-1] == "False"
        assert server.requests > 0


def test_a_bad_value_gets_typer_s_error_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import sys; sys.argv = ['critiquebench', *sys.argv[1:]]\n"
                           "from critiquebench.cli import main; main()", "run", "x", "--trials", "abc", "--store",
                           str(tmp_path / "s.sqlite")], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2
    assert "Invalid value for '--trials'" in done.stderr
    assert not (tmp_path / "s.sqlite").exists()
