"""What a main job's last import of a recorded file was made from (`critiquebench.studies.main_job`): a study, the
digest of its source (file bytes, version, datasets folder), the stored definition's digest, the recorded answers
it stored, and the runs of that definition once its replay had finished every one (NULL before)."""

from __future__ import annotations

from typing import Any

from critiquebench.store.db import ensure_tables, select_rows

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS recorded_imports (study TEXT PRIMARY KEY, source TEXT NOT NULL, "
    "definition TEXT NOT NULL, calls INTEGER NOT NULL, finished INTEGER)",
)


def recorded_import(db: Any, study: str) -> dict[str, Any] | None:
    """The row of `study`'s last import by a main job, if any."""
    ensure_tables(db, SCHEMA)
    rows = select_rows(db, "SELECT * FROM recorded_imports WHERE study = ?", [study])
    return rows[0] if rows else None


def recorded_calls(db: Any, model: str, endpoint: str) -> int:
    """How many answers the call cache holds for `model` at `endpoint` (a recording's are under its own)."""
    return int(db.execute("SELECT count(*) FROM llm_calls WHERE model = ? AND endpoint = ?", [model, endpoint])
               .fetchone()[0])  # fmt: skip


def remember_import(db: Any, study: str, source: str, definition: str, calls: int) -> None:
    """`study` was imported from `source` as `definition` with `calls` answers; its replay is not finished."""
    ensure_tables(db, SCHEMA)
    db.execute(
        "INSERT INTO recorded_imports (study, source, definition, calls) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(study) DO UPDATE SET source = excluded.source, definition = excluded.definition, "
        "calls = excluded.calls, finished = NULL",
        [study, source, definition, calls],
    )


def remember_finished(db: Any, study: str, definition: str, runs: int) -> None:
    """Every one of the `runs` runs of `study`'s replay under `definition` is done."""
    ensure_tables(db, SCHEMA)
    db.execute("UPDATE recorded_imports SET finished = ? WHERE study = ? AND definition = ?",
               [runs, study, definition])  # fmt: skip
