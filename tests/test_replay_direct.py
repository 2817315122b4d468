"""A replay (every call from the cache) steps the schemes' nodes without LangGraph or checkpoints
(`graphs.direct`): the same rows as the live run it replays, and a replay killed midway keeps every run it
finished and resumes the rest."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from critiquebench.store.db import connect
from tests.scripted_server import ScriptedServer
from tests.test_replay_planbench import ONE_SHOT, cli, new_calls
from tests.test_reuse import rows, run
from tests.test_study_cli import game24_reply, run_args

SCHEMES = "standard,sound-first:rounds=3,sampling:k=3,self-consistency:k=3,llm-llm:rounds=2"


def test_a_replay_of_recorded_calls_gives_the_live_runs_rows_without_checkpoints(tmp_path: Path) -> None:
    live, other = tmp_path / "live.sqlite", tmp_path / "replay.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        run(*run_args("s", live, server, "901-904", SCHEMES))
        calls = tmp_path / "calls.jsonl"
        run("cache", "export", "--store", str(live), "--output", str(calls))
        run("cache", "import", str(calls), "--store", str(other))
        asked = server.requests
        run(*run_args("s", other, server, "901-904", SCHEMES), "--replay")
        assert server.requests == asked  # nothing was asked of the endpoint
    for table in ("runs", "attempts", "round_calls"):
        assert rows(other, "s", table) == rows(live, "s", table)
    db = connect(other, readonly=True)
    assert "checkpoints" not in db.table_names() or not db.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]


def _done(store: Path) -> int:
    try:
        with sqlite3.connect(store, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM runs WHERE status = 'done'").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet, or busy
        return 0


def test_a_replay_killed_midway_keeps_its_finished_runs_and_resumes_the_rest(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    cli("import", "planbench", str(ONE_SHOT), "--study", "os", "--store", str(store))
    replay = subprocess.Popen(
        [sys.executable, "-m", "critiquebench.cli", "resume", "os", "--store", str(store), "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        while _done(store) == 0 and replay.poll() is None:
            time.sleep(0.005)
        os.killpg(replay.pid, signal.SIGKILL)  # no clean-up of any kind: as a power cut
    finally:
        replay.wait()
    with sqlite3.connect(store) as db:
        finished = dict(db.execute("SELECT thread_id, updated_at FROM runs WHERE status = 'done'").fetchall())
        # a finished run has all its rows; one killed midway has none (its transaction never committed)
        rounds = dict(db.execute("SELECT thread_id, COUNT(*) FROM attempts GROUP BY thread_id").fetchall())
    assert 0 < len(finished) < 500, "the kill came before the first or after the last run: nothing was shown"
    assert set(rounds) == set(finished) and set(rounds.values()) == {1}
    cli("resume", "os", "--store", str(store), "--no-progress")
    with sqlite3.connect(store) as db:
        after = dict(db.execute("SELECT thread_id, updated_at FROM runs WHERE status = 'done'").fetchall())
        correct = db.execute("SELECT SUM(correct) FROM runs").fetchone()[0]
    assert len(after) == 500 and correct == 157 and new_calls(store) == 0
    assert {t: after[t] for t in finished} == finished  # the runs finished before the kill were not run again
