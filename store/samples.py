"""Recorded samples (`critiquebench import samples`): every answer someone else generated, with our sound verdict.

Table
- `recorded_samples(study, domain, instance_id, sample, line, response, answer, canonical, sound_status,
  sound_valid, reason, label, model, temperature)` keyed by (study, domain, instance_id, sample): one row per
  imported sample. `line` is where it was in the source (its line or row number); `reason` is the sound
  verifier's error sentences (empty when valid); `label` the source's own verdict (1/0, NULL when it gave none).
  The same answers are in the call cache (`llm_calls`) under the keys the study's schemes ask, so the study also
  replays through the graphs; the pass@k and labels reports read this table, which needs no replay.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from critiquebench.store.db import ensure_tables
from critiquebench.store.results import ensure_schema
from critiquebench.store.texts import resolve_rows, stored

SCHEMA = """CREATE TABLE IF NOT EXISTS recorded_samples (
    study TEXT NOT NULL, domain TEXT NOT NULL, instance_id TEXT NOT NULL, sample INTEGER NOT NULL,
    line INTEGER NOT NULL, response TEXT NOT NULL, answer TEXT, canonical TEXT, sound_status TEXT NOT NULL,
    sound_valid INTEGER NOT NULL, reason TEXT, label INTEGER, model TEXT, temperature REAL,
    PRIMARY KEY (study, domain, instance_id, sample))"""
COLUMNS = ("study", "domain", "instance_id", "sample", "line", "response", "answer", "canonical", "sound_status",
           "sound_valid", "reason", "label", "model", "temperature")  # fmt: skip
_INSERT = f"INSERT INTO recorded_samples ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"


def ensure_samples_schema(db: Any) -> None:
    ensure_schema(db)
    ensure_tables(db, [SCHEMA])


def replace_samples(db: Any, study: str, domain: str, rows: Iterable[Mapping[str, Any]]) -> int:
    """The study's samples of `domain` become `rows` (dicts with `COLUMNS` but study and domain); inside the
    caller's transaction. Returns how many were written."""
    db.execute("DELETE FROM recorded_samples WHERE study = ? AND domain = ?", [study, domain])
    values = [[study, domain, *(_stored(db, c, row[c]) for c in COLUMNS[2:])] for row in rows]
    conn = getattr(db, "conn", None)
    if isinstance(conn, sqlite3.Connection):  # one statement for every row (Postgres: a row at a time)
        conn.executemany(_INSERT, values)
    else:
        for row in values:
            db.execute(_INSERT, row)
    return len(values)


def _stored(db: Any, column: str, value: Any) -> Any:
    return stored(db, value) if column in ("response", "answer") else value


def study_samples(db: Any, study: str, columns: tuple[str, ...] = COLUMNS) -> Iterator[dict[str, Any]]:
    """The study's samples in (domain, instance, sample) order, long texts resolved; none from an older store."""
    ensure_samples_schema(db)
    sql = (f"SELECT {', '.join(columns)} FROM recorded_samples WHERE study = ? "
           "ORDER BY domain, instance_id, sample")  # fmt: skip
    cursor = db.execute(sql, [study])
    names = [d[0] for d in cursor.description]
    while batch := cursor.fetchmany(10_000):
        rows = [dict(zip(names, row, strict=True)) for row in batch]
        yield from resolve_rows(db, rows, [c for c in ("response", "answer") if c in names])


def has_samples(db: Any, study: str) -> bool:
    ensure_samples_schema(db)
    return db.execute("SELECT 1 FROM recorded_samples WHERE study = ? LIMIT 1", [study]).fetchone() is not None
