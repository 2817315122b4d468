"""Run claims and in-flight call markers: leases that keep two processes from doing the same work twice.

Tables
- `run_claims(thread_id PK, owner, expires_at)`: the process (`owner`) executing a run. A claim is taken before
  a run starts, renewed every `lease_seconds() / 3` while it runs and deleted when it ends. Another process,
  worker or `resume` skips a run whose claim is live; a claim whose lease expired (its owner crashed or was
  killed) is taken over, and the run continues from its last checkpoint.
- `llm_inflight(key PK, owner, expires_at)` (next to the call cache): an LLM call being made. A process that
  misses the cache for a key another process is calling waits for that answer instead of paying for it again.

Both use one statement to take or renew a lease (an upsert whose update only applies when the row is ours or
expired), so the database decides races; the same SQL runs on SQLite and Postgres. A lease held by a process of
this host that no longer exists (killed, crashed) is taken over at once rather than after it expires, so a
`resume` right after a crash does not wait; a pid reused since only delays that to the lease's expiry.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

LEASE_ENV = "CRITIQUEBENCH_LEASE_S"
DEFAULT_LEASE_S = 30.0
CLAIM_TABLES = {"run_claims": "thread_id", "llm_inflight": "key"}

_owner: tuple[int, str] | None = None


def lease_seconds() -> float:
    """How long a claim lives without renewal (`$CRITIQUEBENCH_LEASE_S`, default 30 s)."""
    try:
        return max(0.5, float(os.environ.get(LEASE_ENV) or DEFAULT_LEASE_S))
    except ValueError:
        return DEFAULT_LEASE_S


def process_owner() -> str:
    """This process's owner id (host, pid and a random part, so a reused pid is another owner)."""
    global _owner
    if _owner is None or _owner[0] != os.getpid():  # a forked child is a new owner
        _owner = (os.getpid(), f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}")
    return _owner[1]


CLAIM_SCHEMA = tuple(
    f"CREATE TABLE IF NOT EXISTS {table} ({column} TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL)"
    for table, column in CLAIM_TABLES.items()
)


def take_lease(db: Any, table: str, ident: str, owner: str, seconds: float, unless: str | None = None) -> bool:
    """Take (or renew) the lease on `ident`; False when another owner holds a live one, or when the query
    `unless` (a SELECT of one `?`, given `ident`) finds a row: the work is done, decided in the same statement
    (the call cache's answer to a call, so a reservation needs no second look-up for it)."""
    column = CLAIM_TABLES[table]
    now = time.time()
    if unless is None:
        source, done, args = "VALUES (?, ?, ?)", "", [ident, owner, now + seconds, now]
    else:  # an INSERT ... SELECT with an upsert needs the SELECT's WHERE (SQLite's parsing ambiguity)
        source, done = f"SELECT ?, ?, ? WHERE NOT EXISTS ({unless})", f" AND NOT EXISTS ({unless})"
        args = [ident, owner, now + seconds, ident, now]
    cursor = db.execute(
        f"INSERT INTO {table} ({column}, owner, expires_at) {source} "
        f"ON CONFLICT ({column}) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at "
        f"WHERE {table}.owner = excluded.owner OR {table}.expires_at < ?",
        args,
    )
    if cursor.rowcount > 0:
        return True
    current = holder(db, table, ident)
    if current is None or not _dead_here(current):
        return False
    cursor = db.execute(
        f"UPDATE {table} SET owner = ?, expires_at = ? WHERE {column} = ? AND owner = ?{done}",
        [owner, time.time() + seconds, ident, current, *([ident] if unless else [])],
    )
    if cursor.rowcount > 0:
        log.info("%s %s: took over from %s, which is gone", table, ident, current)
    return cursor.rowcount > 0


def _dead_here(owner: str) -> bool:
    """Whether `owner` (from `process_owner`) was a process of this host that has exited."""
    try:
        host, pid_text, _ = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    if host != socket.gethostname() or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, but another user's
        return False
    return _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether `pid` has exited but is not yet reaped by its parent (Linux's /proc; elsewhere: not known).

    A SIGKILLed worker stays a zombie until its parent (Ray's raylet, a shell) collects it, and `kill(pid, 0)`
    still succeeds on it: without this its runs would wait for the lease to expire.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # the command name (field 2) is in parentheses and may hold spaces: the state follows the last ')'
    state = stat.rpartition(")")[2].split()[:1]
    return state in (["Z"], ["X"])


def renew_lease(db: Any, table: str, ident: str, owner: str, seconds: float) -> bool:
    """Extend a lease this owner still holds (never re-creates a released one); False when it was lost."""
    cursor = db.execute(
        f"UPDATE {table} SET expires_at = ? WHERE {CLAIM_TABLES[table]} = ? AND owner = ?",
        [time.time() + seconds, ident, owner],
    )
    return cursor.rowcount > 0


def drop_lease(db: Any, table: str, ident: str, owner: str) -> None:
    db.execute(f"DELETE FROM {table} WHERE {CLAIM_TABLES[table]} = ? AND owner = ?", [ident, owner])


def holder(db: Any, table: str, ident: str) -> str | None:
    """The owner of a live lease on `ident`, or None."""
    row = db.execute(
        f"SELECT owner FROM {table} WHERE {CLAIM_TABLES[table]} = ? AND expires_at >= ?", [ident, time.time()]
    ).fetchone()
    return None if row is None else str(row[0])


def held_elsewhere(db: Any, table: str, ident: str) -> str | None:
    """The owner of a live lease on `ident` held by another process that still exists, else None (no lease, an
    expired one, this process's own, or one whose owner is gone): what `take_lease` would refuse, without
    taking it."""
    current = holder(db, table, ident)
    if current is None or current == process_owner() or _dead_here(current):
        return None
    return current


def live_holders(db: Any, table: str, prefix: str) -> list[str]:
    """The owners holding live leases on idents that start with `prefix` (a study's runs: "NAME/"), leaving
    out owners of this host that have exited (their leases are stale, not live)."""
    rows = db.execute(
        f"SELECT DISTINCT owner FROM {table} WHERE substr({CLAIM_TABLES[table]}, 1, ?) = ? AND expires_at >= ?",
        [len(prefix), prefix, time.time()],
    ).fetchall()
    return [str(row[0]) for row in rows if not _dead_here(str(row[0]))]


def drop_stale(db: Any, table: str, prefix: str) -> int:
    """Delete the leases on idents that start with `prefix` whose owner let them expire or, on this host, has
    exited; returns how many. For leases keyed by their owner (a session's), which no other process ever takes
    over: without this, each killed process left its row behind for good."""
    column = CLAIM_TABLES[table]
    rows = db.execute(
        f"SELECT {column}, owner, expires_at FROM {table} WHERE substr({column}, 1, ?) = ?", [len(prefix), prefix]
    ).fetchall()
    now, dropped = time.time(), 0
    for ident, owner, expires_at in rows:
        if expires_at < now or _dead_here(str(owner)):
            db.execute(
                f"DELETE FROM {table} WHERE {column} = ? AND owner = ? AND expires_at = ?", [ident, owner, expires_at]
            )
            dropped += 1
    return dropped


class Leases:
    """The run claims this process holds on one store, renewed by a daemon thread while they are held.

    `connect` opens a connection of the renewing thread's own (connections are not shared across threads).
    """

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def claim(self, db: Any, thread_id: str) -> bool:
        """Claim a run for this process; False when another process holds it."""
        if not take_lease(db, "run_claims", thread_id, process_owner(), lease_seconds()):
            return False
        with self._lock:
            self._held.add(thread_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._renew, name="claim-renewer", daemon=True)
                self._thread.start()
        return True

    def release(self, db: Any, thread_id: str) -> None:
        """Give up a claim this process holds; a claim given up already (a replayed run's is, in the
        transaction that records it) costs no statement."""
        with self._lock:
            if thread_id not in self._held:
                return
            self._held.discard(thread_id)
        drop_lease(db, "run_claims", thread_id, process_owner())

    def release_all(self) -> None:
        """Let other processes take over at once (an abort), instead of after the lease expires."""
        with self._lock:
            held, self._held = list(self._held), set()
        if not held:
            return
        db = None
        try:
            db = self._connect()
            for tid in held:
                drop_lease(db, "run_claims", tid, process_owner())
        except Exception:  # noqa: BLE001 - best effort: the leases expire anyway
            log.debug("could not release claims", exc_info=True)
        finally:
            if db is not None:
                db.close()

    def _renew(self) -> None:
        """Renew the held claims every third of a lease. Ends (closing its connection) once none is held, so a
        finished study leaves no thread or connection behind; the next claim starts a new renewer."""
        db = None
        try:
            while True:
                lease = lease_seconds()
                time.sleep(lease / 3)
                with self._lock:
                    held = list(self._held)
                    if not held:
                        self._thread = None
                        return
                try:
                    db = db or self._connect()
                    for tid in held:
                        with self._lock:
                            if tid not in self._held:  # released meanwhile: renewing would re-create it
                                continue
                        if not renew_lease(db, "run_claims", tid, process_owner(), lease) and tid in self._held:
                            log.warning("run %s: claim lost to another process", tid)
                except Exception:  # noqa: BLE001 - a store hiccup must not kill the renewer; retry next period
                    log.warning("could not renew run claims", exc_info=log.isEnabledFor(logging.DEBUG))
                    with contextlib.suppress(Exception):  # a broken connection may fail to close, too
                        db.close()
                    db = None
        finally:
            if db is not None:
                db.close()


_leases: dict[str, Leases] = {}
_leases_lock = threading.Lock()


def leases_for(locator: str, connect: Callable[[], Any]) -> Leases:
    """The process-wide `Leases` of one store (by its locator)."""
    with _leases_lock:
        if locator not in _leases:
            _leases[locator] = Leases(connect)
        return _leases[locator]


def release_all_claims() -> None:
    """Release every claim this process holds (before an abort exits without unwinding)."""
    with _leases_lock:
        leases = list(_leases.values())
    for each in leases:
        each.release_all()
