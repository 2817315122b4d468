"""Verification-only studies' results: one row per judged answer (`critiquebench.studies.verification`).

Table
- `verify_results(study, domain, instance_id, kind, idx, source, candidate, sound_status, sound_valid, llm_verdict,
  llm_parsed, critique, quality, quality_details, prompt_tokens, completion_tokens, cached, error,
  evaluation_correct)` keyed by (study, domain, instance_id, kind, idx). A row with an `error` is judged again
  by the next run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from critiquebench.store.db import ensure_tables
from critiquebench.store.results import ensure_schema

SCHEMA = """CREATE TABLE IF NOT EXISTS verify_results (
    study TEXT NOT NULL, domain TEXT NOT NULL, instance_id TEXT NOT NULL, kind TEXT NOT NULL,
    idx INTEGER NOT NULL, source TEXT NOT NULL, candidate TEXT, sound_status TEXT, sound_valid INTEGER,
    llm_verdict INTEGER, llm_parsed INTEGER, critique TEXT, quality TEXT, quality_details TEXT,
    prompt_tokens INTEGER DEFAULT 0, completion_tokens INTEGER DEFAULT 0, cached INTEGER DEFAULT 0,
    error TEXT, evaluation_correct INTEGER,
    PRIMARY KEY (study, domain, instance_id, kind, idx))"""
KEY = ("study", "domain", "instance_id", "kind", "idx")


def ensure_verify_schema(db: Any) -> None:
    ensure_schema(db)
    ensure_tables(db, [SCHEMA])
    columns = [d[0] for d in db.execute("SELECT * FROM verify_results LIMIT 0").description]
    if "evaluation_correct" not in columns:  # stores made before the column
        db.execute("ALTER TABLE verify_results ADD COLUMN evaluation_correct INTEGER")


def judged_keys(db: Any, study: str) -> set[tuple[str, str, str, int]]:
    """(domain, instance_id, kind, idx) of every answer of `study` judged without an error."""
    sql = "SELECT domain, instance_id, kind, idx FROM verify_results WHERE study = ? AND error IS NULL"
    return {tuple(r) for r in db.execute(sql, [study]).fetchall()}  # type: ignore[misc]


def save_verify_result(db: Any, row: Mapping[str, Any]) -> None:
    """Insert or replace one judged answer (`row` holds the key columns and any others)."""
    cols = list(row)
    updates = ", ".join(f"{c} = excluded.{c}" for c in cols if c not in KEY) or "idx = excluded.idx"
    db.execute(
        f"INSERT INTO verify_results ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
        f"ON CONFLICT({', '.join(KEY)}) DO UPDATE SET {updates}",
        list(row.values()),
    )


def verify_counts(db: Any, study: str) -> tuple[int, int]:
    """(judged, failed) answers of a verification-only study."""
    ensure_verify_schema(db)
    row = db.execute(
        "SELECT SUM(error IS NULL), SUM(error IS NOT NULL) FROM verify_results WHERE study = ?", [study]
    ).fetchone()
    return (row[0] or 0, row[1] or 0)


def verify_rows(db: Any, study: str) -> Iterator[dict[str, Any]]:
    """The judged answers of `study` (without the failed ones)."""
    ensure_verify_schema(db)
    yield from db.query("SELECT * FROM verify_results WHERE study = ? AND error IS NULL", [study])
