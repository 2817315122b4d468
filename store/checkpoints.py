"""Graph checkpoints in the store: one LangGraph saver per connection (never shared by threads).

In a SQLite store the SqliteSaver's tables (`checkpoints`, `writes`) live beside studies/runs/attempts and the
LLM call cache, so one file holds a whole study and can be copied, resumed or reported anywhere. In a Postgres
store LangGraph's PostgresSaver keeps them (its `checkpoints`, `checkpoint_blobs`, `checkpoint_writes` tables).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from critiquebench.store.db import connect_raw
from critiquebench.store.postgres import is_postgres, open_connection
from critiquebench.store.texts import TEXTS_SCHEMA, TextDedupSerializer

_SETUP_LOCK = 0x63626368  # any fixed number: the advisory lock our processes take around the saver's setup
_CONCURRENTLY = re.compile(r"\bCONCURRENTLY\s+", re.IGNORECASE)
_pg_ready: set[str] = set()
# (device, inode) of the store files whose saver tables this process has made: a run's saver skips the setup
# statements (CREATE IF NOT EXISTS, a migrating ALTER) the first one ran; a file made anew is set up again.
_sqlite_ready: set[tuple[int, int]] = set()
_pg_lock = threading.Lock()


@contextmanager
def open_saver(path: str | os.PathLike[str]) -> Iterator[Any]:
    """A saver on its own connection to the store at `path`; use it from one thread, close it after."""
    if is_postgres(path):
        with _postgres_saver(str(path)) as saver:
            yield saver
        return
    conn = connect_raw(path)
    # The saver commits after each of its calls; in autocommit mode every row of a task's writes would be a
    # transaction of its own (a WAL commit each), and a kill midway would keep some of them: LangGraph counts a
    # task with any stored write as done and resumes without the rest. Implicit transactions make each call one.
    conn.isolation_level = "DEFERRED"
    try:
        saver = SqliteSaver(conn)
        saver.serde = TextDedupSerializer(saver.serde, conn)  # each long answer stored once (store.texts)
        stat = os.stat(path)
        if (stat.st_dev, stat.st_ino) in _sqlite_ready:
            saver.is_setup = True
        else:
            saver.setup()
            conn.execute(TEXTS_SCHEMA)
            conn.commit()
            _sqlite_ready.add((stat.st_dev, stat.st_ino))
        yield saver
    finally:
        conn.close()


@contextmanager
def _postgres_saver(url: str) -> Iterator[Any]:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    conn = open_connection(url)
    conn.row_factory = dict_row  # what PostgresSaver expects of the connection it is given
    try:
        saver = PostgresSaver(conn)
        # Our connections autocommit, so in pipeline mode a checkpoint's statements (and a task's writes) would
        # be stored one by one, and a kill in between could leave a task with part of its update: LangGraph
        # would count it as done and resume without the rest. Without pipelines each is one transaction.
        saver.supports_pipeline = False
        saver.MIGRATIONS = _plain_index_builds(saver.MIGRATIONS)
        with _pg_lock:  # its migrations are not safe to run from several threads or processes at once
            if url not in _pg_ready:
                conn.execute("SELECT pg_advisory_lock(%s)", [_SETUP_LOCK])
                try:
                    saver.setup()
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", [_SETUP_LOCK])
                _pg_ready.add(url)
        yield saver
    finally:
        conn.close()


def _plain_index_builds(migrations: Sequence[str]) -> list[str]:
    """LangGraph's Postgres migrations with `CREATE INDEX CONCURRENTLY` as a plain `CREATE INDEX`.

    A concurrent build waits for every transaction open in the database to end, and the other processes opening
    the store (Ray workers starting together) wait for the set-up lock inside one: they wait for the build,
    which waits for them, and Postgres fails one with a deadlock. The set-up runs once per store, on tables it
    has just created, so a plain build holds nothing up for long (on a big table a later migration would
    block writes while it builds).
    """
    return [_CONCURRENTLY.sub("", sql) for sql in migrations]


def checkpoint_bytes(path: str | os.PathLike[str], thread_id: str | None = None) -> int:
    """Bytes of stored checkpoints and pending writes (of one thread, or all)."""
    conn = connect_raw(path)
    try:
        where, args = ("WHERE thread_id = ?", [thread_id]) if thread_id is not None else ("", [])
        total = 0
        for table, cols in (("checkpoints", "checkpoint, metadata"), ("writes", "value")):
            exists = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", [table]
            ).fetchone()
            if not exists:
                continue
            sizes = " + ".join(f"COALESCE(LENGTH({c.strip()}), 0)" for c in cols.split(","))
            total += conn.execute(f"SELECT COALESCE(SUM({sizes}), 0) FROM {table} {where}", args).fetchone()[
                0
            ]
        return int(total)
    finally:
        conn.close()
