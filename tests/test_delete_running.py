"""`studies delete` while `run` is running the study (issue 35 item 5): refused in one line while a live process
holds its runs' claims, so the run finishes with its report; once that process is gone (here: killed, its claims
left behind), the delete goes through. Each `run` is a real process of its own, forked from the preloaded CLI
(tests/forked_process.py), killed by its own pid."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

from tests.forked_process import ForkServer
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import ROOT, game24_reply, invoke, run_args


def live_claims(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=10)) as conn:
            sql = "SELECT COUNT(*) FROM run_claims WHERE thread_id LIKE 's/%' AND expires_at >= ?"
            return int(conn.execute(sql, [time.time()]).fetchone()[0])
    except sqlite3.Error:  # not made yet
        return 0


def test_deleting_a_running_study_is_refused_in_one_line_until_its_process_is_gone(
    tmp_path: Path, fork_server: ForkServer
) -> None:
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=game24_reply, latency=0.5) as server:
        command = [*run_args("s", store, server, instances="gen:8:1", schemes="standard,llm-llm:rounds=3"),
                   "--no-progress"]  # fmt: skip
        running = fork_server.popen(command, cwd=ROOT)
        try:
            deadline = time.monotonic() + 120
            while live_claims(store) == 0:
                assert running.poll() is None and time.monotonic() < deadline, running.communicate()
                time.sleep(0.1)
            refused = invoke("studies", "delete", "s", "--store", str(store), check=2)
            lines = refused.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: study s is running ("), lines
            assert lines[0].endswith("stop it (Ctrl-C) or let it finish, then delete it")
            assert running.poll() is None  # untouched by the refused delete
            running.send_signal(signal.SIGKILL)
            running.wait(30)
        finally:
            if running.poll() is None:
                running.kill()
                running.wait(30)
    assert live_claims(store) > 0  # the killed process left its claims: they no longer count as running
    gone = invoke("studies", "delete", "s", "--store", str(store))
    assert gone.stderr.startswith("deleted study s: ")
    assert "no study named 's'" in invoke("report", "s", "--store", str(store), check=2).stderr


def study_defined(store: Path) -> bool:
    if not store.exists():
        return False
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=10)) as conn:
            return conn.execute("SELECT COUNT(*) FROM studies WHERE name = 's'").fetchone()[0] > 0
    except sqlite3.Error:  # not made yet
        return False


def test_a_delete_at_the_start_of_a_run_is_refused(tmp_path: Path, fork_server: ForkServer) -> None:
    """Issue 45 item 6: a delete that landed after `run` stored the study but before its first run's claim went
    through (1 of 3 timed trials in the audit); the run paid for every call and left 16 runs with no study. The
    run now holds a claim from its first statement: here the delete comes as soon as the definition is stored,
    while the endpoint check (a `GET /models` the server holds until the delete is answered) keeps every run from
    starting; on the code before, the delete went through and the run ended "deleted while it ran", rc 2."""
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        server.models_gate = threading.Event()
        command = [*run_args("s", store, server, instances="gen:2:1", schemes="standard"), "--no-progress"]
        running = fork_server.popen(command, cwd=ROOT)
        try:
            deadline = time.monotonic() + 120
            while not study_defined(store):
                assert running.poll() is None and time.monotonic() < deadline, running.communicate()
                time.sleep(0.02)
            refused = invoke("studies", "delete", "s", "--store", str(store), check=2)
            assert refused.stderr.startswith("error: study s is running ("), refused.stderr
            assert server.answered == 0  # the endpoint check is held: no run has started
            server.models_gate.set()
            out, err = running.communicate(timeout=120)
        finally:
            server.models_gate.set()
            if running.poll() is None:
                running.kill()
                running.wait(30)
    assert running.returncode == 0, err[-2000:]
    with closing(sqlite3.connect(store)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs WHERE study = 's' AND status = 'done'").fetchone()[0] == 2
        assert conn.execute("SELECT COUNT(*) FROM run_claims").fetchone()[0] == 0  # the session's claim released
    gone = invoke("studies", "delete", "s", "--store", str(store))  # the run over: the delete goes through
    assert gone.stderr.startswith("deleted study s: ")


def test_a_killed_runs_session_claim_is_swept_by_the_next_session(tmp_path: Path, fork_server: ForkServer) -> None:
    """Probe B1 of the reliability re-run (rel48): after six `kill -9`s and a resume, the store kept one expired
    session claim per killed process for good (a session's key names its owner, so no process ever took it
    over), and B2 one in-flight marker of an answered call. The next session of the study now deletes both; the
    killed process's run claims are taken over."""
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=game24_reply, latency=0.3) as server:
        command = [*run_args("s", store, server, instances="gen:4:1", schemes="standard"), "--no-progress"]
        running = fork_server.popen(command, cwd=ROOT)
        deadline = time.monotonic() + 120
        while server.answered < 1:
            assert running.poll() is None and time.monotonic() < deadline, running.communicate()
            time.sleep(0.02)
        running.send_signal(signal.SIGKILL)
        running.communicate(timeout=60)
        with closing(sqlite3.connect(store, timeout=30)) as conn:
            owners = conn.execute("SELECT owner FROM run_claims WHERE thread_id LIKE 's/session:%'").fetchall()
            assert len(owners) == 1  # the killed process's session claim
            # probe B2: a kill between storing a call's answer and dropping its in-flight marker (two statements)
            # leaves the marker of an answered call; here the killed process's own owner marks one such call (the
            # kill itself may have left one: its four calls are answered at once, and a marker outlives its answer
            # by a statement)
            conn.execute("INSERT OR IGNORE INTO llm_inflight SELECT key, ?, ? FROM llm_calls LIMIT 1",
                         [owners[0][0], time.time() + 600])  # fmt: skip
            conn.commit()
        server.latency = 0.0  # only the killed process's calls had to be in flight at the kill
        invoke("resume", "s", "--store", str(store))
    with closing(sqlite3.connect(store)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM run_claims").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM llm_inflight").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM runs WHERE study = 's' AND status = 'done'").fetchone()[0] == 4
