"""A run never fails for a cause outside its own answer: an error of the interpreter itself (python/cpython#106905's
`SystemError` in the sound check, here raised by tests/toy_domain.py's FlakySums) makes the run go once more;
if it comes again, the run is failed as the process's, says so, and `resume` runs it again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from critiquebench.studies.execute import PROCESS_ERROR_PREFIX
from tests.scripted_server import ScriptedServer
from tests.test_contract import sums_reply
from tests.test_study_cli import invoke, report
from tests.toy_domain import FlakySums

FLAKY = "tests.toy_domain:make_flaky_sums"


def _run(store: Path, server: ScriptedServer, *extra: str, command: str = "run", check: int = 0,
         schemes: str = "standard,sound-first:rounds=3") -> str:
    args = ["--domains", FLAKY, "--instances", "gen:2:1", "--schemes", schemes,
            "--model", "scripted", "--base-url", server.base_url] if command == "run" else []  # fmt: skip
    result = invoke(command, "flaky", *args, "--store", str(store), *extra, check=check)
    return result.stdout + result.stderr


def test_a_process_error_once_is_retried_and_the_run_is_the_models(tmp_path: Path) -> None:
    store = tmp_path / "flaky.sqlite"
    with ScriptedServer(reply=sums_reply) as server:
        FlakySums.faults = {"s1-0": 1, "s1-1": 1}  # once each: the first run of each instance meets it
        _run(store, server)
    assert FlakySums.faults == {"s1-0": 0, "s1-1": 0}
    rows = {r["scheme"]: r for r in report("flaky", store)}
    assert (rows["standard"]["correct"], rows["standard"]["total"]) == (0, 2)
    assert rows["sound-first:rounds=3"]["correct"] == 2
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM runs WHERE status != 'done'").fetchone()[0] == 0


def test_a_process_error_twice_fails_the_run_as_the_process_and_resume_runs_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = tmp_path / "flaky.sqlite"
    with ScriptedServer(reply=sums_reply) as server:
        FlakySums.faults = {"s1-0": 2}  # the retry meets it too
        out = _run(store, server, check=1, schemes="standard")
        assert "running it again" in caplog.text and PROCESS_ERROR_PREFIX in out
        with sqlite3.connect(store) as db:
            failed = db.execute("SELECT instance_id, error FROM runs WHERE status = 'failed'").fetchall()
        assert len(failed) == 1 and failed[0][0] == "s1-0"
        assert failed[0][1].startswith(PROCESS_ERROR_PREFIX) and "SystemError" in failed[0][1]
        _run(store, server, command="resume")
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM runs WHERE status != 'done'").fetchone()[0] == 0
