"""Which finished run had which identity, so an identical run copies its rows (`critiquebench.studies.reuse`).

Table
- `run_memo(key, thread_id)`: `key` is a run's identity hash; `thread_id` a run that finished with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from critiquebench.store.db import Store, ensure_tables, select_rows
from critiquebench.store.results import PROVENANCE, RUN_TEXTS, upsert_run
from critiquebench.store.texts import resolve_rows

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS run_memo (key TEXT NOT NULL, thread_id TEXT NOT NULL, PRIMARY KEY (key, thread_id))",
)
ATTEMPT_COLUMNS = ("answer", "canonical", "sound_status", "sound_valid", "feedback", "llm_verdict", "llm_critique",
                   "stopped", "prompt_tokens", "completion_tokens", "llm_calls", "study_failed")  # fmt: skip
RUN_RESULTS = ("final_round", "final_answer", "correct", "rounds", "prompt_tokens", "completion_tokens",
               "llm_calls", "study_failed")  # fmt: skip
_CHUNK = 500  # keys per lookup (SQLite allows 999 parameters in older builds)


def finished_with(db: Store, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per identity key: the `runs` row of a finished run with that identity (keys none has are absent)."""
    ensure_tables(db, SCHEMA)
    found: dict[str, dict[str, Any]] = {}
    keys = list(dict.fromkeys(keys))
    for i in range(0, len(keys), _CHUNK):
        chunk = keys[i : i + _CHUNK]
        for row in select_rows(
            db,
            "SELECT m.key, r.* FROM run_memo m JOIN runs r ON r.thread_id = m.thread_id "
            f"WHERE r.status = 'done' AND m.key IN ({', '.join('?' * len(chunk))})",
            chunk,
        ):
            found.setdefault(row.pop("key"), row)
    resolve_rows(db, list(found.values()), RUN_TEXTS)
    return found


def copy_run(db: Store, key: str, source: dict[str, Any], thread_id: str, ident: dict[str, Any]) -> dict[str, Any]:
    """Give run `thread_id` (identity columns `ident`) the rounds and results of the finished run `source`
    (its `runs` row); every call of the copy counts as a cache hit, as a replay would count it. Returns the
    copy's results. Call it inside `transaction`."""
    cols = ", ".join(ATTEMPT_COLUMNS)
    db.execute("DELETE FROM attempts WHERE thread_id = ?", [thread_id])
    db.execute(
        f"INSERT INTO attempts (thread_id, round, {cols}, cache_hits) "
        f"SELECT ?, round, {cols}, llm_calls FROM attempts WHERE thread_id = ?",
        [thread_id, source["thread_id"]],
    )
    db.execute("DELETE FROM round_calls WHERE thread_id = ?", [thread_id])
    db.execute(  # the same calls (now cache hits) and sound reasons, for the viewer's transcript
        "INSERT INTO round_calls (thread_id, round, node, calls, sound_reason) "
        "SELECT ?, round, node, calls, sound_reason FROM round_calls WHERE thread_id = ?",
        [thread_id, source["thread_id"]],
    )
    results = {k: source.get(k) for k in RUN_RESULTS}
    # the copy's answers were made where and with what the source's were
    results.update({k: source[k] for k in PROVENANCE if source.get(k) is not None})
    upsert_run(db, thread_id, **ident, status="done", error=None, cache_hits=source["llm_calls"], **results)
    db.execute("INSERT OR IGNORE INTO run_memo (key, thread_id) VALUES (?, ?)", [key, thread_id])
    return results


def remember(db: Store, key: str, thread_id: str) -> None:
    """Record that `thread_id` finished with identity `key`."""
    ensure_tables(db, SCHEMA)
    db.execute("INSERT OR IGNORE INTO run_memo (key, thread_id) VALUES (?, ?)", [key, thread_id])
