"""A study on a real local Postgres store, and `store copy` SQLite -> Postgres -> SQLite round trips."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from critiquebench.store.db import connect
from critiquebench.studies.execute import CHECKPOINTS_ENV
from tests.pg_server import fresh_database
from tests.scripted_server import ScriptedServer
from tests.test_scale_claims import numbers
from tests.test_study_cli import CLI, ROOT, game24_reply, invoke, run_args

SCHEMES = "standard,llm-llm:rounds=3,sampling:k=3"


def with_password(url: str) -> str:
    """The same URL with a password (the test server trusts loopback, so any password connects)."""
    return url.replace("postgresql://cb@", "postgresql://cb:s3cret-pw@")


def test_a_study_runs_on_postgres_and_round_trips_through_store_copy(
    postgres_server: str, pg_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = with_password(pg_store)
    with ScriptedServer(reply=game24_reply) as server:
        done = subprocess.run([str(CLI), *run_args("p", url, server, "901-904", SCHEMES)],  # type: ignore[arg-type]
                              cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert "s3cret-pw" not in done.stdout + done.stderr
        on_postgres = server.answered
        assert on_postgres > 0
        # the same study on SQLite gives the same report; its runs checkpointed by LangGraph (the Postgres one's
        # are not, the default), so the copies below carry checkpoints too
        local = tmp_path / "local.sqlite"
        monkeypatch.setenv(CHECKPOINTS_ENV, "1")
        invoke(*run_args("p", local, server, "901-904", SCHEMES))
        assert numbers(url, "p") == numbers(local, "p")  # type: ignore[arg-type]

        # SQLite -> a fresh Postgres database -> a fresh SQLite file: same report, resume makes no call
        middle = with_password(fresh_database(postgres_server))
        back = tmp_path / "back.sqlite"
        out = invoke("store", "copy", str(local), middle).stdout
        assert "s3cret-pw" not in out and "cb:***@" in out
        invoke("store", "copy", middle, str(back))
        answered = server.answered
        for store in (middle, str(back)):
            assert numbers(store, "p") == numbers(local, "p")  # type: ignore[arg-type]
            resumed = invoke("resume", "p", "--store", store)
            assert "0 new" in resumed.stderr, resumed.stderr
        assert server.answered == answered
    checkpoints = connect(back).execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    assert checkpoints == connect(local).execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] > 0


def test_an_unreachable_postgres_store_is_one_error_line_without_the_password() -> None:
    url = "postgresql://cb:s3cret-pw@127.0.0.1:9/nowhere"
    for args in (["report", "x", "--store", url], ["store", "copy", url, "/tmp/never.sqlite"]):
        done = subprocess.run([str(CLI), *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
        assert "s3cret-pw" not in done.stderr + done.stdout and "127.0.0.1:9" in done.stderr


OPEN_SAVER = """
import sys
from critiquebench.store.checkpoints import open_saver

with open_saver(sys.argv[1]):
    pass
"""


def test_processes_opening_a_fresh_postgres_store_at_once_do_not_deadlock(pg_store: str, tmp_path: Path) -> None:
    """Ray workers open the checkpointer of a fresh store together: one sets its tables up under an advisory lock,
    the others wait for that lock inside a statement. LangGraph builds the indexes with CREATE INDEX CONCURRENTLY,
    which waits for every open transaction, the waiting ones too: Postgres broke the cycle by failing one."""
    import psycopg

    script = tmp_path / "open_saver.py"
    script.write_text(OPEN_SAVER)
    blocker = psycopg.connect(pg_store, autocommit=True)
    # hold the set-up still once it holds the lock, at its first read (the table is its first migration)
    blocker.execute("CREATE TABLE checkpoint_migrations (v INTEGER PRIMARY KEY)")
    blocker.execute("BEGIN")
    blocker.execute("LOCK TABLE checkpoint_migrations IN ACCESS EXCLUSIVE MODE")

    def advisory(granted: bool) -> int:
        query = "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted = %s"
        with psycopg.connect(pg_store, autocommit=True) as conn:
            return int(conn.execute(query, [granted]).fetchone()[0])  # type: ignore[index]

    def start() -> subprocess.Popen[str]:
        args = [str(ROOT / ".venv" / "bin" / "python"), str(script), pg_store]
        return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait_for(condition: Callable[[], bool], procs: list[subprocess.Popen[str]]) -> None:
        while not condition():
            assert all(p.poll() is None for p in procs), [p.communicate()[1][-2000:] for p in procs]
            time.sleep(0.05)

    first = start()
    wait_for(lambda: advisory(granted=True) == 1, [first])  # it sets up, held at the locked table
    second = start()
    wait_for(lambda: advisory(granted=False) == 1, [first, second])  # it waits for the set-up lock
    blocker.execute("COMMIT")
    blocker.close()
    for proc in (first, second):
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]


def test_connections_creating_the_same_tables_at_once_all_succeed(pg_store: str) -> None:
    """`CREATE TABLE IF NOT EXISTS` races in Postgres (a worker once failed with 'type "run_memo" already exists'):
    eight connections creating the same fresh tables at the same moment must all succeed."""
    import threading

    from critiquebench.store.postgres import PgDatabase

    dbs = [PgDatabase(pg_store) for _ in range(8)]
    barrier = threading.Barrier(len(dbs))
    errors: list[BaseException] = []

    def create(db: PgDatabase) -> None:
        try:
            for i in range(15):
                barrier.wait(timeout=30)
                db.execute(f"CREATE TABLE IF NOT EXISTS race_{i} (k TEXT PRIMARY KEY, v TEXT)")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=create, args=(db,)) for db in dbs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for db in dbs:
        db.close()
    assert not errors, [f"{type(e).__name__}: {e}" for e in errors]
