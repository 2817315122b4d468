"""Graph checkpoints in the store file: one LangGraph SqliteSaver per connection (never shared by threads).

The saver's tables (`checkpoints`, `writes`) live beside studies/runs/attempts and the LLM call cache, so one
file holds a whole study and can be copied, resumed or reported anywhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from critiquebench.store.db import connect_raw
from langgraph.checkpoint.sqlite import SqliteSaver


@contextmanager
def open_saver(path: str | os.PathLike[str]) -> Iterator[SqliteSaver]:
    """A saver on its own connection to the store at `path`; use it from one thread, close it after."""
    conn = connect_raw(path)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        yield saver
    finally:
        conn.close()


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
