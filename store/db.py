"""Opening the store that holds a user's studies, checkpoints and LLM call cache.

A store is a SQLite file (the zero-configuration default) or a Postgres database given by a
`postgresql://user:password@host:port/db` URL (the `scale` extra; see `store.postgres`). Both hold the same
tables; `connect` returns an object with the same `execute` / `query` calls for either.

Commands that only read (report, studies, export, cache stats) open the store read-only: they never create a
missing store, never write to an existing one, and work on read-only media. Every way a path can fail to be a
store (a directory, random bytes, a truncated copy, an unwritable place) surfaces as one `StoreError` naming
the path.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import sqlite_utils

from critiquebench.store.postgres import PgDatabase, StoreUnavailable, is_postgres, redact

Locator = str | os.PathLike[str]  # a SQLite file path, or a postgresql:// URL

STORE_ENV = "CRITIQUEBENCH_STORE"
DEFAULT_STORE = "critiquebench.sqlite"


class Store(Protocol):
    """An open store, SQLite (a sqlite-utils Database) or Postgres (`PgDatabase`): statements in the dialect
    both share (see `store.postgres`). The app layer never writes SQL itself: it calls the named queries of
    `store/` (results, reads, memo, budgets, verify, cache, claims), which take a `Store`."""

    def execute(self, sql: str, params: Any = ...) -> Any: ...

    def query(self, sql: str, params: Any = ...) -> Any: ...

    def close(self) -> None: ...


class ReadOnlyConnection(sqlite3.Connection):
    """A connection opened by a reading command (`connect(..., readonly=True)`)."""


class _WriteGate:
    """The turn to write one store file among the threads of this process (`StoreConnection`).

    SQLite lets one connection write at a time and makes the others wait in its busy handler, which polls with
    sleeps of 1 to 20 ms (more per call than the statements cost: about 20 sleeps per LLM call of a 32-run
    study, benchmarks/bench_scale.py). Threads of one process take this gate first and hand it on at once when
    the write ends; other processes still wait through the busy timeout. Reentrant (one thread writing through
    several connections of the file keeps its turn), and released by whichever thread ends the transaction.
    Waiting for it is bounded as SQLite's busy timeout bounds a wait: then "database is locked", as SQLite says.
    """

    __slots__ = ("_cond", "_depth", "_owner")

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0

    def acquire(self, timeout: float) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return
            if self._owner is not None and not self._cond.wait_for(lambda: self._owner is None, timeout):
                raise sqlite3.OperationalError("database is locked")
            self._owner, self._depth = me, 1

    def release(self) -> None:
        with self._cond:
            self._depth -= 1
            if self._depth <= 0:
                self._owner, self._depth = None, 0
                self._cond.notify()


_gates: dict[tuple[int, int], _WriteGate] = {}
_gates_lock = threading.Lock()


def _gate(path: Path) -> _WriteGate | None:
    """The write gate of the store file at `path` (by device and inode: one gate however the path is spelt)."""
    try:
        stat_ = path.stat()
    except OSError:
        return None
    with _gates_lock:
        return _gates.setdefault((stat_.st_dev, stat_.st_ino), _WriteGate())


def _gates_after_fork() -> None:
    """A forked child starts with every gate free: the threads holding them in the parent are not in it."""
    for gate in _gates.values():
        gate._reset()


os.register_at_fork(after_in_child=_gates_after_fork)

# statements that need no turn outside a transaction: reads, and settings (sqlite-utils sets one as it opens a
# store, which would otherwise wait for a writer's transaction to end)
_UNGATED = ("SELECT", "select", "PRAGMA", "pragma")


class StoreConnection(sqlite3.Connection):
    """A connection that writes: it remembers the `CREATE ... IF NOT EXISTS` statements it has run
    (`ensure_tables`), so a replay that asks for a table before each of its runs runs each statement once.

    Its writes take the store file's `_WriteGate` first: a statement outside a transaction for its duration, a
    transaction (BEGIN .. COMMIT/ROLLBACK, a SAVEPOINT, a script that leaves one open) from its first statement
    until the connection is out of it again, however it ends (a failed COMMIT keeps it until the ROLLBACK, an
    error SQLite rolls back on ends it at once, `close` ends it). Reads and PRAGMAs outside a transaction need no
    turn (WAL readers run beside the writer). A connection in Python's implicit-transaction mode (an isolation level
    other than None: the LangGraph saver's, which writes through cursors) does not use the gate."""

    ensured: set[str]
    gate: _WriteGate | None
    _held: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ensured = set()
        self.gate = None  # set by `connect_raw` once the file is there
        self._held = False  # this connection's open transaction holds the gate

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        gate = self.gate
        if gate is None or (not self._held and sql.lstrip().startswith(_UNGATED)):
            return super().execute(sql, *args)
        return self._write(gate, super().execute, sql, *args)

    def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        gate = self.gate
        if gate is None:
            return super().executemany(sql, *args)
        return self._write(gate, super().executemany, sql, *args)

    def executescript(self, script: str) -> sqlite3.Cursor:  # type: ignore[override]
        gate = self.gate
        if gate is None:
            return super().executescript(script)
        return self._write(gate, super().executescript, script)

    def _write(self, gate: _WriteGate, run: Any, *args: Any) -> sqlite3.Cursor:
        """`run(*args)` in this process's turn to write: taken unless this connection's transaction holds it
        (or one begun without the gate does: SQLite's lock is already this connection's), kept while a
        transaction is open after it, given back when none is."""
        if self.isolation_level is not None:
            return run(*args)
        if not self._held:
            if self.in_transaction:
                return run(*args)
            gate.acquire(self._timeout)
            self._held = True
        try:
            return run(*args)
        finally:
            if not self.in_transaction:
                self._held = False
                gate.release()

    _timeout = 60.0  # seconds a write waits for its turn: the busy timeout (`connect_raw`)

    def close(self) -> None:
        """Close; an open transaction is rolled back by SQLite, and its turn to write is given back."""
        try:
            super().close()
        finally:
            if self._held and self.gate is not None:
                self._held = False
                self.gate.release()


class StoreError(ValueError):
    """The store path cannot be used as a store; the message names the path and what to do."""


def default_store_path() -> Path | str:
    """`$CRITIQUEBENCH_STORE`, else `critiquebench.sqlite` in the working directory."""
    return store_locator(os.environ.get(STORE_ENV) or DEFAULT_STORE)


def resolve_store(value: Locator | None) -> Path | str:
    """The store a command uses: `--store` if given, else the default."""
    return default_store_path() if value is None else store_locator(value)


def store_locator(value: Locator) -> Path | str:
    """A Postgres URL as given (a Path would fold its `//`), anything else as a file path."""
    return value if is_postgres(value) else Path(value)


def store_exists(locator: Locator) -> bool:
    """Whether there is a store to read (a Postgres store is its server's to answer: assumed present)."""
    if is_postgres(locator):
        return True
    path = Path(locator)
    return path.exists() or path.is_symlink()


def store_name(locator: Locator) -> str:
    """The store's name for messages and logs: a Postgres URL without its password."""
    return redact(locator) if isinstance(locator, str) and is_postgres(locator) else str(locator)


def describe(path: str | os.PathLike[str], exc: sqlite3.Error) -> str:
    """One line saying why SQLite could not use `path` as a store."""
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return f"store {path} is damaged or not a critiquebench store ({text})"
    if "readonly" in text or "read-only" in text:
        return f"store {path} cannot be written ({text}); reading commands (report, studies, export) still work"
    return f"store {path} cannot be opened ({text})"


# Tables any critiquebench store holds one of (LangGraph's saver adds `checkpoints` and `writes`): a SQLite file
# with tables but none of these belongs to another program.
OUR_TABLES = frozenset({
    "studies", "runs", "attempts", "budgets", "run_memo", "run_claims", "statements", "verify_results",
    "llm_calls", "llm_events", "llm_inflight", "checkpoints", "writes",
})  # fmt: skip


_FULL = ("database or disk is full", "disk i/o error", "no space left on device", "file too large",
         "disk quota exceeded", "could not extend file", "could not write to file")  # SQLite, OS, Postgres


def full_store(exc: BaseException) -> str | None:
    """The reason when `exc` (or an exception it came from) says the store's disk is full or a file size limit
    was hit, else None. No run can go on then: the study stops, and a resume continues once there is room."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            return os.strerror(current.errno)
        text = str(current).lower()
        reason = next((word for word in _FULL if word in text), None)
        if reason is not None:
            return reason
        current = current.__cause__ or current.__context__
    return None


def _check_path(path: Path, must_exist: bool) -> None:
    if path.is_dir():
        raise StoreError(f"store {path} is a directory: give a file, e.g. --store {path / DEFAULT_STORE}")
    if must_exist and not path.exists():
        raise StoreError(f"no store at {path}: run a study first, or pass --store PATH")
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # missing (created by a writing command) or unreadable (SQLite says why)
    if not stat.S_ISREG(mode):  # a FIFO would block the open for ever; a device is not a store either
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise StoreError(f"store {path} is {kind}, not a file: give a SQLite file, e.g. --store {DEFAULT_STORE}")


def _check_ours(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse, before anything is written, a SQLite file with tables of which none is a critiquebench one."""
    try:
        tables = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error:
        return  # a damaged file: the next statement names what is wrong
    if tables and not tables & OUR_TABLES:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreError(
            f"store {path} is another program's SQLite file (tables {shown}), not a critiquebench store: it is "
            "left untouched; give a new file or a store critiquebench made"
        )


def connect_raw(path: str | os.PathLike[str], *, readonly: bool = False) -> sqlite3.Connection:
    """A connection tuned for several writers (threads or processes) on one file, or a read-only one.

    WAL lets readers run beside a writer; the busy timeout makes a second writer wait instead of failing with
    "database is locked"; autocommit (isolation_level=None) keeps transactions as short as each statement.
    """
    path = Path(path)
    _check_path(path, must_exist=readonly)
    if readonly:
        return _connect_readonly(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=60.0, isolation_level=None, check_same_thread=False,
                               factory=StoreConnection)  # fmt: skip
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"store {path} cannot be created or opened ({exc})") from None
    try:
        _check_ours(conn, path)
    except StoreError:
        conn.close()
        raise
    try:
        _enter_wal(conn)
        conn.execute("PRAGMA busy_timeout=60000")
        conn.execute("PRAGMA synchronous=NORMAL")
        # reads from the file's mapping, not read() into the page cache: every commit of another connection
        # (the call cache's, a second process) empties this one's page cache, and a replayed run's look-ups then
        # read their pages again (GPT-4's 500 one-shot answers replayed: about 5% less CPU). Writes still go
        # through the WAL file as before.
        conn.execute("PRAGMA mmap_size=268435456")
        conn.gate = _gate(path)
    except sqlite3.Error as exc:
        conn.close()
        if not _writable(path):
            raise StoreError(
                f"store {path} is on a read-only place ({exc}): reading commands (report, studies, export) "
                "work there; copy the file somewhere writable to run or resume"
            ) from None
        raise StoreError(describe(path, exc)) from None
    return conn


_WAL_WAIT = 60.0  # seconds, as long as any other statement waits for a lock (the busy timeout)


def _enter_wal(conn: sqlite3.Connection) -> None:
    """Put the store in WAL mode, waiting for other processes opening it at the same moment.

    Switching a file to WAL needs it alone, and SQLite answers "database is locked" at once, without its busy
    timeout, when another connection holds it in that instant (seen in CI: four processes creating one new
    cache, about one time in forty). The mode persists in the file, so only the first opening switches it."""
    deadline = time.monotonic() + _WAL_WAIT
    delay = 0.005
    while True:
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if ("locked" not in text and "busy" not in text) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


def _writable(path: Path) -> bool:
    """Whether SQLite can write the store and its -wal/-shm files beside it (False on read-only media)."""
    folder = path.parent if str(path.parent) else Path(".")
    return os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """A reader that writes nothing, not even SQLite's -wal/-shm files.

    With no -wal file beside the store, no writer has it open and every page is in the main file: read it
    `immutable=1` (no lock files; works on read-only media). With a -wal file, a study is writing (or was
    killed): `mode=ro` sees its latest pages, and falls back to `immutable=1` where the WAL index cannot be
    opened (read-only media)."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    live = Path(f"{path}-wal").exists()
    last: sqlite3.Error | None = None
    for suffix in ("", "&immutable=1") if live else ("&immutable=1",):
        try:
            conn = sqlite3.connect(uri + suffix, uri=True, timeout=60.0, isolation_level=None,
                                   check_same_thread=False, factory=ReadOnlyConnection)  # fmt: skip
        except sqlite3.Error as exc:
            last = exc
            continue
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            _check_ours(conn, path)
            return conn
        except StoreError:
            conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            conn.close()
            last = exc
            if "not a database" in str(exc) or "malformed" in str(exc):
                break
    assert last is not None
    raise StoreError(describe(path, last)) from None


def connect(path: Locator | None = None, *, readonly: bool = False) -> Any:
    """The store at `path` (default: `default_store_path()`): a sqlite-utils database, or a `PgDatabase`
    (a Postgres store is opened read-write: its server, not the client, decides what a role may change)."""
    locator = path if path is not None else default_store_path()
    if is_postgres(locator):
        try:
            return PgDatabase(str(locator))
        except StoreUnavailable as exc:
            raise StoreError(str(exc)) from None
    return _database(connect_raw(locator, readonly=readonly))


def _database(conn: sqlite3.Connection) -> sqlite_utils.Database:
    """sqlite-utils over `conn`, without its plug-ins: the store's SQL uses no function a plug-in registers, and
    finding them scanned every installed distribution's entry points, 40 ms of every command
    (benchmarks/bench_setup.py)."""
    return sqlite_utils.Database(conn, execute_plugins=False)


@contextmanager
def opened(path: Locator | None = None, *, readonly: bool = False) -> Iterator[Any]:
    """`connect`'s store for a `with` block, closed when the block ends however it ends: a command holds no
    file handle, WAL lock or Postgres session past its end."""
    db = connect(path, readonly=readonly)
    try:
        yield db
    finally:
        db.close()


@contextmanager
def transaction(db: Store) -> Iterator[Store]:
    """One write transaction around the block (taken at once: SQLite's BEGIN IMMEDIATE), rolled back if the
    block raises."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    try:
        db.execute("COMMIT")
    except BaseException:
        # a COMMIT SQLite refused (e.g. busy) leaves the transaction open, holding the store's write lock
        conn = getattr(db, "conn", None)
        if isinstance(conn, sqlite3.Connection) and conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def query_only(path: str | os.PathLike[str], live: bool = True) -> sqlite_utils.Database:
    """A SQLite store opened so that no statement can write to it (the viewer's). `live`: `mode=ro` without
    `immutable`, for a served viewer, which outlives the moment it opened the store and sees studies that run
    meanwhile; else as every reading command opens it (`connect_raw(readonly=True)`: not even -wal/-shm files).
    It is a `ReadOnlyConnection`, so reading a store of an older layout finds its missing tables empty
    (`ensure_tables`) instead of failing to create them. A path that is no store fails as `connect_raw` says."""
    path = Path(path)
    if not live:
        return _database(connect_raw(path, readonly=True))
    _check_path(path, must_exist=True)
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False,
                               factory=ReadOnlyConnection)  # fmt: skip
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise StoreError(describe(path, exc)) from None
    try:
        _check_ours(conn, path)
    except StoreError:
        conn.close()
        raise
    return _database(conn)


def select_rows(db: Store, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """The rows of a SELECT as dicts, from either store. sqlite-utils' `query` wraps each statement in a
    savepoint (to refuse one that returns no rows): three statements for one, which a replay of 500 runs paid
    3,000 times; our reads are all SELECTs."""
    if isinstance(db, sqlite_utils.Database):
        cursor = db.conn.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    return list(db.query(sql, params))


def table_names(db: Any) -> set[str]:
    """The tables of an open store (SQLite or Postgres)."""
    if isinstance(db, PgDatabase):
        sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
    return {str(row[0]) for row in db.execute(sql).fetchall()}


def is_readonly(db: sqlite_utils.Database | sqlite3.Connection) -> bool:
    return isinstance(db.conn if isinstance(db, sqlite_utils.Database) else db, ReadOnlyConnection)


def ensure_tables(db: sqlite_utils.Database | sqlite3.Connection, statements: Iterable[str]) -> None:
    """Run `CREATE TABLE/INDEX IF NOT EXISTS` statements; on a read-only store, missing tables are made as
    empty TEMP tables instead, so reading a store that lacks them (e.g. a cache-only one) finds nothing."""
    conn = db.conn if isinstance(db, sqlite_utils.Database) else db
    if not is_readonly(conn):
        # a StoreConnection's own statements, a Postgres store's of this process (`PgDatabase.ensured`)
        done = getattr(conn, "ensured", None)
        done = set() if done is None else done
        for sql in statements:
            if sql not in done:
                conn.execute(sql)
                done.add(sql)
        return
    present = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for sql in statements:
        words = sql.split()
        if words[1].upper() != "TABLE":
            continue  # indexes only speed up reads of tables that exist
        name = words[5].split("(")[0]  # CREATE TABLE IF NOT EXISTS name (...
        if name not in present:
            conn.execute("CREATE TEMP " + sql.split(None, 1)[1])
