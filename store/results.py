"""Studies, runs and per-round attempts: everything reports are computed from.

Tables
- `studies(name PK, config JSON, created_at)`: a study's full definition, so resume and report need nothing else.
- `runs(thread_id PK, study, domain, scheme, params JSON, instance_id, trial, status, final_round, final_answer,
  correct, rounds, prompt_tokens, completion_tokens, llm_calls, cache_hits, error, updated_at)`: one graph
  thread = one (study, domain, scheme spec, instance, trial). `status` is pending | running | done | failed;
  `correct` is the sound verdict of the answer the scheme output (NULL until done).
  Provenance (`PROVENANCE`, added later, so NULL in rows written before): the `model`, redacted `endpoint`,
  `temperature` and `max_tokens` the run's client had when it last started (`started_at`), the settings of those
  its source did not record (`unrecorded`, comma-separated: a replayed PlanBench run's temperature and cap), and
  the critiquebench `version` and `git_commit` that ran it (see `critiquebench.studies.provenance`).
  `study_failed` is 1 on a done run that ended where the study's own code failed on a reply (`nodes.llm_verifier`):
  scored by its answer, as the study scored that instance, and counted apart, as the study listed it.
  `steps` (added later still) counts the graph steps of an unfinished run stepped without LangGraph whose rows are
  stored (`critiquebench.studies.execute`): a resume steps the run again from its cached calls and writes rows
  only after them; NULL once the run is done, and on runs stepped through LangGraph's checkpoints.
- `attempts(thread_id, round, answer, canonical, sound_status, sound_valid, feedback, llm_verdict, llm_critique,
  stopped, prompt_tokens, completion_tokens, llm_calls, cache_hits)` keyed by (thread_id, round): one row per
  generation round. `llm_verdict` is 1/0 when an LLM verifier judged this answer (NULL otherwise), so Table 2
  compares it with `sound_valid`; `stopped` is 1 on the round whose answer the scheme output. Rows are upserted,
  so a node re-run after a crash overwrites its own row instead of adding one. `study_failed` is 1 on the round
  whose reply the study's own code failed on (the run ended there).
- `round_calls(thread_id, round, node, calls JSON, sound_reason)` keyed by (thread_id, round, node): the cache
  keys (`llm_calls.key`) of the calls each graph node made in that round, in order, and the sound verifier's
  reason (its error sentences), so the viewer shows every call of a run (the critic's prompt too) and why an
  answer is invalid. Stores written before it have none; the viewer then finds the generator's prompt by its
  answer.
- `texts(hash PK, text)`: every text of at least 2,048 characters, once; the text columns above (`RUN_TEXTS`,
  `ROUND_TEXTS`, `sound_reason`) and the call cache hold its reference instead (see `store.texts`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping
from typing import Any

import sqlite_utils

from critiquebench.store.claims import CLAIM_SCHEMA, live_holders
from critiquebench.store.db import ensure_tables, is_readonly, select_rows, table_names, transaction
from critiquebench.store.texts import TEXTS_SCHEMA, resolve_rows, stored

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS studies (name TEXT PRIMARY KEY, config TEXT NOT NULL, created_at REAL NOT NULL)",
    """CREATE TABLE IF NOT EXISTS runs (
            thread_id TEXT PRIMARY KEY, study TEXT NOT NULL, domain TEXT NOT NULL, scheme TEXT NOT NULL,
            params TEXT NOT NULL DEFAULT '{}', instance_id TEXT NOT NULL, trial INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'pending', final_round INTEGER, final_answer TEXT, correct INTEGER,
            rounds INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0, llm_calls INTEGER NOT NULL DEFAULT 0,
            cache_hits INTEGER NOT NULL DEFAULT 0, error TEXT, updated_at REAL NOT NULL DEFAULT 0,
            model TEXT, endpoint TEXT, temperature REAL, max_tokens INTEGER, unrecorded TEXT, started_at REAL,
            version TEXT, git_commit TEXT, study_failed INTEGER)""",
    "CREATE INDEX IF NOT EXISTS runs_by_study ON runs (study, domain, scheme)",
    """CREATE TABLE IF NOT EXISTS attempts (
            thread_id TEXT NOT NULL, round INTEGER NOT NULL, answer TEXT, canonical TEXT,
            sound_status TEXT, sound_valid INTEGER, feedback TEXT, llm_verdict INTEGER, llm_critique TEXT,
            stopped INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0, llm_calls INTEGER NOT NULL DEFAULT 0,
            cache_hits INTEGER NOT NULL DEFAULT 0, study_failed INTEGER, PRIMARY KEY (thread_id, round))""",
    """CREATE TABLE IF NOT EXISTS round_calls (
            thread_id TEXT NOT NULL, round INTEGER NOT NULL, node TEXT NOT NULL, calls TEXT NOT NULL,
            sound_reason TEXT, PRIMARY KEY (thread_id, round, node))""",
    TEXTS_SCHEMA,
)
# The runs columns added after the table's first layout, with their types: `ensure_schema` adds those an older
# store lacks (ALTER TABLE), so a store of any age opens and its old rows read as "not recorded" (NULL).
PROVENANCE = {"model": "TEXT", "endpoint": "TEXT", "temperature": "REAL", "max_tokens": "INTEGER",
              "unrecorded": "TEXT", "started_at": "REAL", "version": "TEXT", "git_commit": "TEXT"}  # fmt: skip
# Columns added later still: `study_failed` (1 where the study's own code failed on a reply of the run, which then
# ended as the study's record of that instance did; see `nodes.llm_verifier`), on the round and on the run.
# `steps`: how far an unfinished run stepped without checkpoints has recorded its rows (see the module docstring).
ADDED = {"runs": {**PROVENANCE, "study_failed": "INTEGER", "steps": "INTEGER"}, "attempts": {"study_failed": "INTEGER"}}
# The columns that may hold a long text (stored once in `texts`, a reference in the row; see `store.texts`).
RUN_TEXTS = ("final_answer", "error")
ROUND_TEXTS = ("answer", "canonical", "feedback", "llm_critique")
# Tables keyed by a run's thread id: a study's rows in them go when the study is deleted. LangGraph's
# checkpoint tables are made by its saver, so they may be missing from a store that never ran a graph.
# (checkpoint_blobs and checkpoint_writes are the Postgres checkpointer's)
_THREAD_TABLES = (
    "attempts", "round_calls", "checkpoints", "writes", "checkpoint_blobs", "checkpoint_writes", "run_memo",
    "run_claims",
)


def ensure_schema(db: sqlite_utils.Database) -> None:
    """Create the tables if missing (idempotent, safe from several processes; read-only stores stay as they are)."""
    ensure_tables(db, (*SCHEMA, *CLAIM_SCHEMA))
    if is_readonly(db):  # a reader finds the missing columns absent from its rows (`row.get`)
        return
    for table, columns in ADDED.items():
        present = {d[0] for d in db.execute(f"SELECT * FROM {table} LIMIT 0").description}
        for name, kind in columns.items():
            if name not in present:
                try:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
                except Exception as exc:  # another process added it between our look and our ALTER
                    if "duplicate" not in str(exc).lower() and "already exists" not in str(exc).lower():
                        raise


class StudyRunning(ValueError):
    """A study cannot be deleted: a process is running it (one line saying so)."""


def delete_study(db: sqlite_utils.Database, name: str) -> dict[str, int]:
    """Remove a study: its definition, runs, rounds, checkpoints and budget, in one transaction. The LLM call
    cache is shared by all studies and stays. Returns the number of rows removed per table."""
    tables = table_names(db)
    # Thread ids are "study/domain/spec/instance/trial" and study names hold no '/': the prefix is exact.
    prefix = f"{name}/"
    removed: dict[str, int] = {}
    db.execute("BEGIN IMMEDIATE")
    try:
        # checked inside the write transaction, so no run can be claimed between the check and the delete
        running = live_holders(db, "run_claims", prefix) if "run_claims" in tables else []
        if running:
            raise StudyRunning(
                f"study {name} is running ({', '.join(running[:3])} holds its runs): stop it (Ctrl-C) or let it "
                f"finish, then delete it"
            )
        for table in _THREAD_TABLES:
            if table in tables:
                removed[table] = db.execute(
                    f"DELETE FROM {table} WHERE substr(thread_id, 1, ?) = ?", [len(prefix), prefix]
                ).rowcount
        for table in ("runs", "verify_results", "budgets", "recorded_samples"):
            if table in tables:
                removed[table] = db.execute(f"DELETE FROM {table} WHERE study = ?", [name]).rowcount
        removed["studies"] = db.execute("DELETE FROM studies WHERE name = ?", [name]).rowcount
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return removed


def save_study(db: sqlite_utils.Database, name: str, config: Mapping[str, Any]) -> None:
    db.execute(
        "INSERT INTO studies (name, config, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT(name) DO UPDATE SET config = excluded.config",
        [name, json.dumps(config, sort_keys=True), time.time()],
    )


def has_runs(db: sqlite_utils.Database, name: str) -> bool:
    """Whether study `name` has a run row (any status): a study without one is only a definition."""
    return db.execute("SELECT 1 FROM runs WHERE study = ? LIMIT 1", [name]).fetchone() is not None


def load_study(db: sqlite_utils.Database, name: str) -> dict[str, Any] | None:
    row = db.execute("SELECT config FROM studies WHERE name = ?", [name]).fetchone()
    return json.loads(row[0]) if row else None


def upsert_run(db: sqlite_utils.Database, thread_id: str, **fields: Any) -> None:
    """Insert or update one run row; only the given fields change.

    An UPDATE is tried first because an INSERT ... ON CONFLICT still checks the NOT NULL columns of the row it
    would insert, so a status-only update of an existing run would fail.
    """
    fields = {**fields, "updated_at": time.time()}
    for name in RUN_TEXTS:
        if name in fields:
            fields[name] = stored(db, fields[name])
    if "params" in fields and not isinstance(fields["params"], str):
        fields["params"] = json.dumps(fields["params"], sort_keys=True)
    sets = ", ".join(f"{c} = ?" for c in fields)
    update = f"UPDATE runs SET {sets} WHERE thread_id = ?"
    if db.execute(update, [*fields.values(), thread_id]).rowcount:
        return
    cols = ", ".join(["thread_id", *fields])
    marks = ", ".join("?" * (len(fields) + 1))
    try:
        db.execute(f"INSERT INTO runs ({cols}) VALUES ({marks})", [thread_id, *fields.values()])
    except sqlite3.IntegrityError:
        # Another writer inserted the row between our UPDATE and INSERT; ours is then an update.
        if not db.execute(update, [*fields.values(), thread_id]).rowcount:
            raise


def upsert_attempt(db: sqlite_utils.Database, thread_id: str, round_: int, **fields: Any) -> None:
    """Insert or replace one round's row (a re-run node overwrites its own row)."""
    for name in ROUND_TEXTS:
        if name in fields:
            fields[name] = stored(db, fields[name])
    cols = ", ".join(["thread_id", "round", *fields])
    marks = ", ".join("?" * (len(fields) + 2))
    updates = ", ".join(f"{c} = excluded.{c}" for c in fields) or "round = excluded.round"
    db.execute(
        f"INSERT INTO attempts ({cols}) VALUES ({marks}) ON CONFLICT(thread_id, round) DO UPDATE SET {updates}",
        [thread_id, round_, *fields.values()],
    )


def run_status(db: sqlite_utils.Database, thread_id: str) -> str | None:
    """A run's status (pending, running, done, failed), or None when it has no row yet."""
    row = db.execute("SELECT status FROM runs WHERE thread_id = ?", [thread_id]).fetchone()
    return None if row is None else str(row[0])


def has_checkpoint(db: Any, thread_id: str) -> bool:
    """Whether the run has a LangGraph checkpoint (false before the saver made its table)."""
    try:
        return db.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1", [thread_id]).fetchone() is not None
    except Exception:  # noqa: BLE001 - no saver table yet: sqlite3's or psycopg's error
        if not isinstance(db, sqlite_utils.Database):
            db.execute("ROLLBACK")  # a failed statement aborts a Postgres transaction
        return False


def recorded_steps(db: sqlite_utils.Database, thread_id: str) -> int:
    """How many graph steps of an unfinished run stepped without checkpoints have their rows stored (`steps`)."""
    row = db.execute("SELECT steps FROM runs WHERE thread_id = ?", [thread_id]).fetchone()
    return int(row[0] or 0) if row else 0


def set_recorded_steps(db: sqlite_utils.Database, thread_id: str, steps: int | None) -> None:
    """Record that a run's first `steps` graph steps have their rows stored (None: none; in the step's transaction)."""
    db.execute("UPDATE runs SET steps = ? WHERE thread_id = ?", [steps, thread_id])


def round_usage(db: sqlite_utils.Database, thread_id: str, round_: int, columns: tuple[str, ...]) -> dict[str, int]:
    """The usage `columns` (e.g. prompt_tokens, llm_calls) of one round's row; empty when it has none."""
    row = db.execute(f"SELECT {', '.join(columns)} FROM attempts WHERE thread_id = ? AND round = ?",
                     [thread_id, round_]).fetchone()  # fmt: skip
    return {} if row is None else {k: int(v or 0) for k, v in zip(columns, row, strict=True)}


def forget_rounds(db: sqlite_utils.Database, thread_id: str) -> None:
    """Delete a run's rounds and their calls, and its count of steps recorded: it runs again from the start."""
    with transaction(db):
        db.execute("DELETE FROM attempts WHERE thread_id = ?", [thread_id])
        db.execute("DELETE FROM round_calls WHERE thread_id = ?", [thread_id])
        set_recorded_steps(db, thread_id, None)


def run_row(db: sqlite_utils.Database, thread_id: str) -> dict[str, Any] | None:
    """A run's `runs` row, or None."""
    rows = resolve_rows(db, select_rows(db, "SELECT * FROM runs WHERE thread_id = ?", [thread_id]), RUN_TEXTS)
    return rows[0] if rows else None


def upsert_round_calls(
    db: sqlite_utils.Database, thread_id: str, round_: int, node: str, keys: list[str], sound_reason: str | None
) -> None:
    """Record the calls one node step made in a round (and the sound reason it found); a re-run step
    (its calls now cache hits with the same keys) overwrites its own row."""
    db.execute(
        "INSERT INTO round_calls (thread_id, round, node, calls, sound_reason) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(thread_id, round, node) DO UPDATE SET calls = excluded.calls, "
        "sound_reason = excluded.sound_reason",
        [thread_id, round_, node, json.dumps(keys), stored(db, sound_reason)],
    )


def attempts(db: sqlite_utils.Database, thread_id: str) -> list[dict[str, Any]]:
    """A run's rounds in order."""
    return resolve_rows(db, select_rows(db, "SELECT * FROM attempts WHERE thread_id = ? ORDER BY round", [thread_id]),
                        ROUND_TEXTS)


def run_outcomes(db: sqlite_utils.Database, study: str) -> list[tuple[str, str, int | None]]:
    """(domain, instance id, correct) of every run of `study`."""
    sql = "SELECT domain, instance_id, correct FROM runs WHERE study = ?"
    return [(r[0], r[1], r[2]) for r in db.execute(sql, [study]).fetchall()]
