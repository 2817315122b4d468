"""Copying a whole store (study definitions, runs, rounds, LLM call cache, graph checkpoints) to another store.

Either side is a SQLite file or a Postgres URL, so a study started on a laptop can finish on a cluster and be
reported anywhere. Rows already in the destination are kept (primary keys decide; the call-event log, which
has none, skips events already there). Checkpoints are copied through LangGraph's saver interface, oldest
first, so each backend stores them in its own layout. Long texts (`store.texts`) are copied once, with the
`texts` table; an older store's inline long texts become references in the copy. Live run claims and in-flight
call markers are not copied: they belong to processes of the source.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from critiquebench.store.checkpoints import open_saver
from critiquebench.store.db import Locator, opened
from critiquebench.store.postgres import is_postgres
from critiquebench.store.results import ROUND_TEXTS, RUN_TEXTS
from critiquebench.store.samples import SCHEMA as SAMPLES_SCHEMA
from critiquebench.store.texts import kept, kept_messages
from critiquebench.store.verify import SCHEMA as VERIFY_SCHEMA

log = logging.getLogger(__name__)

# Tables of our own, in an order that keeps every study's definition ahead of its runs.
TABLES = ("texts", "studies", "runs", "attempts", "round_calls", "llm_calls", "llm_events", "verify_results",
          "recorded_samples")  # fmt: skip
# The columns that may hold a long text, kept as references in the copy (message lists: `_MESSAGES`).
_TEXTS = {"runs": RUN_TEXTS, "attempts": ROUND_TEXTS, "round_calls": ("sound_reason",), "llm_calls": ("response",),
          "recorded_samples": ("response", "answer")}  # fmt: skip
_MESSAGES = {"llm_calls": "messages"}
_NO_KEY = {"llm_events": ("ts", "key", "kind")}  # no primary key: these columns identify an event
_BATCH = 500


@dataclass
class CopyReport:
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows added
    checkpoints: int = 0
    writes: int = 0


def _tables(db: Any, locator: Locator) -> set[str]:
    if is_postgres(locator):
        sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
    return {str(r[0]) for r in db.execute(sql).fetchall()}


def _ensure_destination(db: Any, schema: Iterable[str]) -> None:
    from critiquebench.store.cache import CallCache
    from critiquebench.store.results import ensure_schema

    ensure_schema(db)
    CallCache(db)  # creates the cache tables
    for sql in schema:
        db.execute(sql)


def _copy_table(src: Any, dst: Any, table: str) -> int:
    cursor = src.execute(f"SELECT * FROM {table}")
    columns = [d[0] for d in cursor.description]
    names, marks = ", ".join(columns), ", ".join("?" * len(columns))
    if table in _NO_KEY:
        ident = _NO_KEY[table]
        where = " AND ".join(f"{c} = ?" for c in ident)
        exists = f"SELECT 1 FROM {table} WHERE {where}"
        sql = f"INSERT INTO {table} ({names}) SELECT {marks} WHERE NOT EXISTS ({exists})"
        extra: Callable[[dict[str, Any]], list[Any]] = lambda row: [row[c] for c in ident]  # noqa: E731
    else:
        sql = f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})"
        extra = lambda row: []  # noqa: E731
    texts = [columns.index(c) for c in _TEXTS.get(table, ()) if c in columns]
    messages = columns.index(_MESSAGES[table]) if table in _MESSAGES else None
    added = 0
    while rows := cursor.fetchmany(_BATCH if table != "texts" else 16):  # a text may be megabytes
        for row in rows:
            values = list(row)
            for i in texts:
                values[i] = kept(dst, values[i])
            if messages is not None:
                values[messages] = kept_messages(dst, values[messages])
            added += max(0, dst.execute(sql, values + extra(dict(zip(columns, values, strict=True)))).rowcount)
    return added


def _copy_checkpoints(source: Locator, destination: Locator, report: CopyReport) -> None:
    with open_saver(source) as src, open_saver(destination) as dst:
        for snapshot in reversed(list(src.list(None))):  # list() is newest first; parents go in first
            conf = snapshot.config["configurable"]
            parent = (snapshot.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            target: dict[str, Any] = {"thread_id": conf["thread_id"]}
            target["checkpoint_ns"] = conf.get("checkpoint_ns", "")
            if parent:
                target["checkpoint_id"] = parent
            versions = dict(snapshot.checkpoint.get("channel_versions", {}))  # all values: the copy has none yet
            dst.put({"configurable": target}, snapshot.checkpoint, snapshot.metadata, versions)
            report.checkpoints += 1
            by_task: dict[str, list[tuple[str, Any]]] = defaultdict(list)
            for task_id, channel, value in snapshot.pending_writes or ():
                by_task[task_id].append((channel, value))
            for task_id, writes in by_task.items():
                dst.put_writes(snapshot.config, writes, task_id)
                report.writes += len(writes)


def copy_store(source: Locator, destination: Locator, schema: Iterable[str] = ()) -> CopyReport:
    """Copy everything of `source` into `destination` (created if missing); returns what was added.

    `schema`: CREATE TABLE IF NOT EXISTS statements of the app's own tables beyond the store's (e.g. the
    verification studies' `verify_results`), so the destination has them before their rows are copied."""
    if str(source) == str(destination):
        raise ValueError("source and destination are the same store")
    report = CopyReport()
    with opened(source) as src, opened(destination) as dst:
        present = _tables(src, source)
        _ensure_destination(dst, [*schema, VERIFY_SCHEMA, SAMPLES_SCHEMA])
        for table in TABLES:
            if table in present:
                report.rows[table] = _copy_table(src, dst, table)
    _copy_checkpoints(source, destination, report)
    return report
