"""The Python API (`import critiquebench as cb`) against the scripted server: define and run a study, resume it,
load runs and rounds as DataFrames, render a report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import critiquebench as cb
import critiquebench.api
from critiquebench.reports.records import ROUND_COLUMNS, RUN_COLUMNS
from tests import forked_cli
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import game24_reply

SCHEMES = ["standard", "sound-first:rounds=3"]


@pytest.fixture
def server() -> ScriptedServer:
    with ScriptedServer(reply=game24_reply) as srv:
        yield srv


def forked_python(forked_env: dict[str, str]) -> str:
    """`forked-python`, which runs `-c SOURCE` as `python -c` does in a process forked from the preloaded CLI
    (tests/forked_cli.py): the API's calls, not a fresh interpreter's imports (~5 s of CPU each), are what these
    tests are about; tests/test_packaging.py runs the README's block in a fresh interpreter of a fresh venv."""
    return str(shutil.which("forked-python", path=forked_env["PATH"]))


def test_python_c_runs_a_study_and_returns_a_dataframe(
    server: ScriptedServer, tmp_path: Path, forked_env: dict[str, str]
) -> None:
    """README's snippet, run by `python -c` as a user runs it (forked from the preloaded CLI)."""
    store = tmp_path / "demo.sqlite"
    code = (
        "import critiquebench as cb; "
        f"cb.run('demo', domains='game24', instances='gen:3:1', schemes='standard,sound-first:rounds=3', "
        f"model='scripted', base_url={server.base_url!r}, store={str(store)!r}); "
        f"df = cb.runs('demo', store={str(store)!r}); "
        "print(type(df).__name__, len(df), df.groupby('scheme')['correct'].mean().to_json())"
    )
    done = forked_cli.run([forked_python(forked_env), "-c", code], forked_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    kind, rows, means = done.stdout.split(" ", 2)
    assert (kind, rows) == ("DataFrame", "6")
    assert set(json.loads(means)) == {"standard", "sound-first:rounds=3"}


def test_run_resume_runs_rounds_and_report(server: ScriptedServer, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    result = cb.run("s", domains=["game24"], instances="gen:3:1", schemes=SCHEMES, model="scripted",
                    base_url=server.base_url, temperature=0.0, store=store)  # fmt: skip
    assert (result.ok, result.total, result.done, result.failed) == (True, 6, 6, 0)
    assert result.new_calls == server.answered > 0
    runs = result.runs()
    assert list(runs.columns) == [c.name for c in RUN_COLUMNS]
    assert set(runs["status"]) == {"done"} and runs["correct"].notna().all()
    assert set(runs["model"]) == {"scripted"} and set(runs["endpoint"]) == {server.base_url}
    assert str(runs["correct"].dtype) == "boolean" and str(runs["rounds"].dtype) == "Int64"
    rounds = cb.rounds("s", store=store)
    assert list(rounds.columns) == [c.name for c in ROUND_COLUMNS]
    assert len(rounds) == int(runs["rounds"].sum())
    # the run's answer is the round it stopped at, whose sound verdict is the run's `correct`
    stopped = rounds[rounds["stopped"]].set_index(["scheme", "instance"])
    for row in runs.itertuples():
        assert stopped.loc[(row.scheme, row.instance), "sound_valid"] == row.correct
    again = cb.resume("s", store=store)  # finished: nothing new
    assert (again.done, again.new_calls) == (6, 0)
    table = cb.report("s", store=store)
    assert "Table 1" in table and "sound-first:rounds=3" in table
    assert json.loads(cb.report("s", store=store, fmt="json"))[0]["total"] == 3
    assert [s["name"] for s in cb.list_studies(store=store)] == ["s"]


def test_errors_are_one_line_study_errors(server: ScriptedServer, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    with pytest.raises(cb.StudyError, match="no schemes"):
        cb.run("s", domains="game24", instances="gen:1:1", model="scripted", base_url=server.base_url, store=store)
    with pytest.raises(cb.StudyError, match="no store at"):
        cb.runs("nope", store=store)
    cb.run("s", domains="game24", instances="gen:1:1", schemes="standard", model="scripted",
           base_url=server.base_url, store=store)  # fmt: skip
    with pytest.raises(cb.StudyError, match="no study named 'nope' in this store; known studies: s"):
        cb.runs("nope", store=store)
    with pytest.raises(cb.StudyError, match="no study named 'nope'"):
        cb.resume("nope", store=store)
    with pytest.raises(cb.StudyError, match="unknown study setting"):
        cb.run("s", domain="game24", store=store)  # a typo, not silently ignored
    config = cb.define("d", domains=["game24"], instances="gen:1:1", schemes="standard")
    assert config.schemes == ("standard",)


@pytest.mark.parametrize("progress", [True, False])
def test_cb_run_shows_the_live_bars_on_a_terminal_unless_silenced(server: ScriptedServer, tmp_path: Path,
                                                                  progress: bool,
                                                                  forked_env: dict[str, str]) -> None:  # fmt: skip
    """What a terminal (or a notebook's cell) shows while `cb.run` works: the command line's bars; none with
    progress=False. `python -c` forked from the preloaded CLI, its output on a pseudo-terminal."""
    from tests.test_live_display import screen_of

    store = tmp_path / "s.sqlite"
    code = (f"import critiquebench as cb; cb.run('p', domains='game24', instances='gen:3:1', schemes='standard', "
            f"model='scripted', base_url={server.base_url!r}, store={str(store)!r}, progress={progress})")  # fmt: skip
    env = {"TERM": "xterm-256color", "PATH": "/usr/bin:/bin", forked_cli.SOCKET_ENV: forked_env[forked_cli.SOCKET_ENV]}
    exit_code, lines = screen_of([forked_python(forked_env), "-c", code], env)
    assert exit_code == 0, "\n".join(lines)
    bars = [line for line in lines if line.startswith("standard ") and "3/3" in line]
    assert len(bars) == (1 if progress else 0), "\n".join(lines)


def test_cb_run_writes_nothing_where_stderr_is_no_terminal(server: ScriptedServer, tmp_path: Path,
                                                           capfd: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    result = cb.run("q", domains="game24", instances="gen:2:1", schemes="standard", model="scripted",
                    base_url=server.base_url, store=tmp_path / "s.sqlite")  # fmt: skip
    assert result.done == 2
    captured = capfd.readouterr()
    assert "━" not in captured.err and "standard" not in captured.err


def test_run_takes_domain_options_as_the_cli_flag_does(server: ScriptedServer, tmp_path: Path) -> None:
    """`domain_options=` (audit: `StudyError: unknown study setting(s)`): flat keys go to every domain declaring
    them, as `--domain-option KEY=VALUE`; nested ones per domain, as a study file's [domain_options.DOMAIN]."""
    store = tmp_path / "o.sqlite"
    result = cb.run("o", domains="game24", instances="gen:2:1", schemes="standard", model="scripted",
                    base_url=server.base_url, store=store, progress=False,
                    domain_options={"reader": "lenient"})  # fmt: skip
    assert result.ok
    assert cb.api.resumable(store, "o").domain_options == {"game24": {"reader": "lenient"}}
    nested = cb.define("n", domains="game24,coloring", instances="gen:2:1", schemes="standard",
                       domain_options={"coloring": {"form": "chat"}, "game24": {"reader": "lenient"}})  # fmt: skip
    assert nested.domain_options == {"coloring": {"form": "chat"}, "game24": {"reader": "lenient"}}
    with pytest.raises(cb.StudyError, match="game24 has no option 'colour'"):
        cb.define("b", domains="game24", instances="gen:2:1", schemes="standard", domain_options={"colour": 1})
