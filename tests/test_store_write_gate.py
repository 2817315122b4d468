"""Threads of one process take turns writing a SQLite store (issue 44 item 1): a write hands SQLite's write lock
to the next thread at once instead of leaving it to poll in SQLite's busy handler, and however a write or a
transaction ends (committed, raised, a COMMIT refused, its connection closed) the next one gets its turn; another
process still waits for its turn through the busy timeout. Real store files, real threads and processes."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from critiquebench.store import db as store_db
from critiquebench.store.db import connect, transaction


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A store with a table of ours (`studies`) and a scratch one; a turn left held would fail the next writer
    with "database is locked" after 10 s instead of SQLite's minute."""
    monkeypatch.setattr(store_db.StoreConnection, "_timeout", 10.0)
    path = tmp_path / "s.sqlite"
    db = connect(path)
    db.execute("CREATE TABLE studies (name TEXT PRIMARY KEY, config TEXT, created_at REAL)")
    db.execute("CREATE TABLE rows (who INTEGER, n INTEGER)")
    db.close()
    yield path


def _threads(target: Callable[[int], None], n: int) -> list[BaseException]:
    """Run `target(i)` for i < n in threads at once; the exceptions they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def run(i: int) -> None:
        try:
            start.wait()
            target(i)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _count(path: Path, sql: str = "SELECT COUNT(*) FROM rows") -> int:
    db = connect(path)
    try:
        return int(db.execute(sql).fetchone()[0])
    finally:
        db.close()


def test_many_threads_writing_one_store_all_succeed(store: Path) -> None:
    """Each thread on its own connection: autocommit statements, transactions, executemany and a script."""

    def write(i: int) -> None:
        db = connect(store)
        try:
            for n in range(20):
                db.execute("INSERT INTO rows VALUES (?, ?)", [i, n])
                with transaction(db):
                    db.execute("INSERT INTO rows VALUES (?, ?)", [i, 100 + n])
                    db.execute("UPDATE rows SET n = n WHERE who = ?", [i])
            db.conn.executemany("INSERT INTO rows VALUES (?, ?)", [(i, 200 + n) for n in range(5)])
            db.conn.executescript(f"BEGIN; INSERT INTO rows VALUES ({i}, 300); COMMIT;")
        finally:
            db.close()

    assert _threads(write, 12) == []
    assert _count(store) == 12 * (20 * 2 + 5 + 1)


def test_one_connection_shared_by_threads(store: Path) -> None:
    """Threads sharing one connection (as a cache given an open store does, a statement at a time)."""
    db = connect(store)
    lock = threading.Lock()

    def write(i: int) -> None:
        for n in range(30):
            with lock:
                db.execute("INSERT INTO rows VALUES (?, ?)", [i, n])

    try:
        assert _threads(write, 6) == []
    finally:
        db.close()
    assert _count(store) == 6 * 30


def test_a_transaction_that_raises_gives_the_next_writer_its_turn(store: Path) -> None:
    db = connect(store)
    with pytest.raises(RuntimeError, match="midway"), transaction(db):
        db.execute("INSERT INTO rows VALUES (1, 1)")
        raise RuntimeError("midway")
    # a statement that fails inside a transaction keeps it open until it is rolled back
    with pytest.raises(Exception, match="no such table"), transaction(db):
        db.execute("INSERT INTO missing VALUES (1)")
    assert _threads(lambda i: connect(store).execute("INSERT INTO rows VALUES (?, 2)", [i]), 4) == []
    assert _count(store) == 4  # the raised transactions' rows were rolled back
    db.close()


def test_a_failed_statement_outside_a_transaction_gives_the_turn_back(store: Path) -> None:
    db = connect(store)
    with pytest.raises(Exception, match="no such table"):
        db.execute("INSERT INTO missing VALUES (1)")
    assert _threads(lambda i: connect(store).execute("INSERT INTO rows VALUES (?, 2)", [i]), 3) == []
    assert _count(store) == 3
    db.close()


def test_a_refused_commit_is_rolled_back_and_the_turn_given_back(store: Path) -> None:
    """A deferred foreign key checked at COMMIT: SQLite refuses the COMMIT and keeps the transaction open;
    `transaction` rolls it back, so neither the row nor the turn to write stays held."""
    db = connect(store)
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("CREATE TABLE child (parent TEXT REFERENCES studies (name) DEFERRABLE INITIALLY DEFERRED)")
    with pytest.raises(Exception, match="FOREIGN KEY"), transaction(db):
        db.execute("INSERT INTO child VALUES ('nobody')")
    assert not db.conn.in_transaction
    assert _threads(lambda i: connect(store).execute("INSERT INTO rows VALUES (?, 3)", [i]), 3) == []
    assert _count(store, "SELECT COUNT(*) FROM child") == 0
    assert _count(store) == 3
    db.close()


def test_a_connection_closed_mid_transaction_gives_the_turn_back(store: Path) -> None:
    db = connect(store)
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO rows VALUES (9, 9)")
    done = threading.Event()
    result: list[BaseException | None] = []

    def waiter() -> None:  # waits for the open transaction's turn, and gets it once the connection is closed
        try:
            other = connect(store)
            other.execute("INSERT INTO rows VALUES (1, 1)")
            other.close()
            result.append(None)
        except BaseException as exc:  # noqa: BLE001
            result.append(exc)
        done.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    db.close()  # from another thread than the waiter's; SQLite rolls the transaction back
    thread.join()
    assert result == [None]
    assert _count(store, "SELECT COUNT(*) FROM rows WHERE who = 9") == 0
    assert _count(store) == 1


def test_reentrant_use_in_one_thread(store: Path) -> None:
    """Savepoints inside a transaction, several connections of one thread one after another, and reads on a
    second connection while the first holds a transaction."""
    first, second = connect(store), connect(store)
    with transaction(first):
        first.execute("SAVEPOINT inner")
        first.execute("INSERT INTO rows VALUES (1, 1)")
        first.execute("ROLLBACK TO inner")
        first.execute("RELEASE inner")
        first.execute("INSERT INTO rows VALUES (1, 2)")
        assert second.execute("SELECT COUNT(*) FROM rows").fetchone()[0] == 0  # a reader sees the last commit
    second.execute("INSERT INTO rows VALUES (2, 1)")
    with transaction(second):
        second.execute("INSERT INTO rows VALUES (2, 2)")
    first.execute("INSERT INTO rows VALUES (1, 3)")
    first.close()
    second.close()
    assert _count(store) == 4


def test_readers_do_not_wait_for_a_writers_turn(store: Path) -> None:
    db = connect(store)
    db.execute("INSERT INTO rows VALUES (0, 0)")
    with transaction(db):
        db.execute("INSERT INTO rows VALUES (1, 1)")
        seen: list[int] = []
        assert _threads(lambda i: seen.append(_count(store)), 3) == []
        assert seen == [1, 1, 1]
    db.close()


_HOLDER = """
import sys
from critiquebench.store.db import connect
db = connect(sys.argv[1])
db.execute("BEGIN IMMEDIATE")
db.execute("INSERT INTO rows VALUES (-1, -1)")
print("holding", flush=True)
sys.stdin.readline()
db.execute("COMMIT")
"""


def test_another_process_still_waits_through_the_busy_timeout(store: Path) -> None:
    """A process holding SQLite's write lock: this process's writers wait (SQLite's busy handler) and all land
    once it commits; nothing of the other process's is lost."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(store)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        started = threading.Barrier(4)

        def write(i: int) -> None:
            db = connect(store)
            started.wait()
            with transaction(db):
                db.execute("INSERT INTO rows VALUES (?, 0)", [i])
            db.close()

        def release(i: int) -> None:
            started.wait()
            assert holder.stdin is not None
            holder.stdin.write("go\n")
            holder.stdin.flush()

        assert _threads(lambda i: (release if i == 3 else write)(i), 4) == []
    finally:
        assert holder.wait() == 0
    assert _count(store) == 4
