"""A study run from Python, without the CLI: `critiquebench.studies.session` against the scripted server."""

from __future__ import annotations

from pathlib import Path

import pytest

from critiquebench.reports.catalog import report_rows
from critiquebench.store.db import opened
from critiquebench.studies.config import build_config
from critiquebench.studies.define import stored_study
from critiquebench.studies.session import Execution, StudyError, exit_code, run_session
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import DATASETS, game24_reply


def test_a_study_runs_resumes_and_reports_without_a_terminal(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        flags = dict(domains="game24", instances="901-903", schemes="standard,sound-first:rounds=2", model="scripted",
                     base_url=server.base_url, dataset=str(DATASETS))  # fmt: skip
        config = build_config("py", {}, flags)
        first = run_session(store, config)
        assert (first.summary.total, first.summary.done, first.summary.failed) == (6, 6, 0)
        assert first.usage["calls"] == server.requests > 0 and exit_code([first]) == 0
        with opened(store, readonly=True) as db:
            again = stored_study(db, "py", concurrency=1)
            rows = report_rows(db, "py", "1")
        assert again.concurrency == 1 and again.identity() == config.identity()
        assert {r.scheme for r in rows} == {"standard", "sound-first:rounds=2"} and sum(r.total for r in rows) == 6
        second = run_session(store, again)  # nothing left to do: no endpoint needed, nothing called
        assert second.summary.skipped == 6 and second.usage == {} and server.requests == first.usage["calls"]


def test_a_study_that_cannot_run_raises_one_line(tmp_path: Path) -> None:
    flags = dict(domains="game24", instances="901", schemes="standard", model="m", base_url="http://127.0.0.1:9/v1",
                 dataset=str(tmp_path))  # no 24.csv there  # fmt: skip
    config = build_config("bad", {}, flags)
    with pytest.raises(StudyError) as caught:
        run_session(tmp_path / "s.sqlite", config)
    assert "\n" not in str(caught.value) and "game24" in str(caught.value)
    with pytest.raises(StudyError, match="--executor must be one of local, ray"):
        Execution("threads")
