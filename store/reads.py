"""Named read queries over studies, runs and attempts: what reports, exports, estimates and the viewer read.

Every query the app layer needs is a function here, so the SQL (in the dialect both backends share; see
`store.postgres`) lives in `store/` only. Rows come back as dicts keyed by column name.

Long texts are stored once (`store.texts`): every query gives them back whole (or cut, where it says so),
whichever layout wrote the row.

`study_rounds` is the one join of a study's runs with their rounds: each row holds the run's identity
(`RUN_KEYS`) and the round's columns (`attempts`), filtered as asked.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator
from typing import Any

from critiquebench.store.db import Store, select_rows, table_names
from critiquebench.store.results import ROUND_TEXTS, RUN_TEXTS
from critiquebench.store.texts import parse_messages, reference, resolve_rows, resolve_tuples

# The run columns a round row carries beside the attempt's own (`thread_id` is the attempt's).
RUN_KEYS = ("study", "domain", "scheme", "params", "instance_id", "trial", "status", "correct", "final_round")
_CHUNK = 500  # values per IN (...) lookup (SQLite allows 999 parameters in older builds)


def _resolved(db: Store, rows: Iterable[dict[str, Any]], columns: Iterable[str],
              chars: int | None = None) -> Iterator[dict[str, Any]]:  # fmt: skip
    """`rows` with their long texts (`store.texts`) in place, looked up a chunk of rows at a time."""
    columns, it = tuple(columns), iter(rows)
    while chunk := list(itertools.islice(it, _CHUNK)):
        yield from resolve_rows(db, chunk, columns, chars)


def study_names(db: Store) -> list[str]:
    return [str(r[0]) for r in db.execute("SELECT name FROM studies ORDER BY name").fetchall()]


def study_configs(db: Store) -> list[tuple[str, dict[str, Any]]]:
    """(name, definition) of every study, by name."""
    return [(name, json.loads(raw)) for name, raw in
            db.execute("SELECT name, config FROM studies ORDER BY name").fetchall()]  # fmt: skip


def run_counts(db: Store) -> dict[str, tuple[int, int]]:
    """Per study: (runs done, runs failed)."""
    rows = db.execute("SELECT study, SUM(status = 'done'), SUM(status = 'failed') FROM runs GROUP BY study")
    return {row[0]: (row[1] or 0, row[2] or 0) for row in rows.fetchall()}


def study_progress(db: Store, study: str) -> dict[str, Any]:
    """When `study` was defined (`created_at`), when a run of it last changed (`last_update`; epoch seconds,
    None before its first run), and its runs by status."""
    created = db.execute("SELECT created_at FROM studies WHERE name = ?", [study]).fetchone()
    rows = db.execute("SELECT status, COUNT(*), MAX(updated_at) FROM runs WHERE study = ? GROUP BY status",
                      [study]).fetchall()  # fmt: skip
    return {"created_at": created[0] if created else None,
            "last_update": max((r[2] for r in rows if r[2]), default=None),
            "statuses": {r[0]: r[1] for r in rows}}  # fmt: skip


def _run_facts(db: Store) -> str:
    """The `runs` columns but final_answer, for readers that never look at it (a long answer is costly to read):
    those this store has (one written before `store.results.PROVENANCE` lacks those)."""
    present = [d[0] for d in db.execute("SELECT * FROM runs LIMIT 0").description]
    return ", ".join(c for c in present if c != "final_answer")


def study_created_at(db: Store, study: str) -> float:
    """When study `study` was first defined (Unix time; 0.0 when it is not stored)."""
    if "studies" not in table_names(db):
        return 0.0
    row = next(iter(db.query("SELECT created_at FROM studies WHERE name = ?", [study])), None)
    return float(row["created_at"] or 0.0) if row else 0.0


def study_runs(db: Store, study: str, *, done_only: bool = False, answers: bool = True) -> list[dict[str, Any]]:
    """The `runs` rows of `study` by thread id (only finished ones with `done_only`; without `final_answer`
    unless `answers`); none from a store that has no runs table yet."""
    if "runs" not in table_names(db):
        return []
    status = " AND status = 'done'" if done_only else ""
    columns = "*" if answers else _run_facts(db)
    rows = select_rows(db, f"SELECT {columns} FROM runs WHERE study = ?{status} ORDER BY thread_id", [study])
    return resolve_rows(db, rows, RUN_TEXTS)


def study_rounds(
    db: Store,
    study: str,
    *,
    done_only: bool = False,
    judged: bool = False,
    stopped_only: bool = False,
    answered: bool = False,
    domain: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Every round of every run of `study`, in run and round order: `done_only` runs that finished, `judged`
    rounds both the LLM and the sound verifier judged, `stopped_only` the round each run stopped on,
    `answered` rounds with an answer, `domain` one domain's runs."""
    where, args = ["r.study = ?"], [study]
    if done_only:
        where.append("r.status = 'done'")
    if judged:
        where.append("a.llm_verdict IS NOT NULL AND a.sound_valid IS NOT NULL")
    if stopped_only:
        where.append("a.stopped = 1")
    if answered:
        where.append("a.answer IS NOT NULL")
    if domain is not None:
        where.append("r.domain = ?")
        args.append(domain)
    run = ", ".join(f"r.{k}" for k in RUN_KEYS)
    yield from _resolved(db, db.query(
        f"SELECT {run}, a.* FROM attempts a JOIN runs r ON r.thread_id = a.thread_id "
        f"WHERE {' AND '.join(where)} ORDER BY r.thread_id, a.round",
        args,
    ), ROUND_TEXTS)


def final_judged_rounds(db: Store, study: str) -> Iterator[dict[str, Any]]:
    """Of each finished run of `study`: its last round an LLM verifier judged (and the sound one too)."""
    run = ", ".join(f"r.{k}" for k in RUN_KEYS)
    yield from _resolved(db, db.query(
        f"SELECT {run}, a.* FROM runs r JOIN attempts a ON a.thread_id = r.thread_id "
        "WHERE r.study = ? AND r.status = 'done' AND a.llm_verdict IS NOT NULL AND a.sound_valid IS NOT NULL "
        "AND a.round = (SELECT MAX(b.round) FROM attempts b WHERE b.thread_id = r.thread_id "
        "AND b.llm_verdict IS NOT NULL) ORDER BY r.thread_id",
        [study],
    ), ROUND_TEXTS)


def run_flags(db: Store, study: str) -> dict[str, tuple[int, int, int, int]]:
    """Per run of `study` (thread id): (a false positive: some round the LLM called valid was invalid; a false
    negative: some round the LLM called invalid was valid; worse: a valid answer followed by an invalid one;
    stopped by the critic: it stopped on a round the LLM called valid), each 0 or 1 (see
    `critiquebench.viewer.data`)."""
    sql = """
SELECT a.thread_id,
       MAX(a.llm_verdict = 1 AND a.sound_valid = 0),
       MAX(a.llm_verdict = 0 AND a.sound_valid = 1),
       MAX(a.sound_valid = 1 AND EXISTS (SELECT 1 FROM attempts b WHERE b.thread_id = a.thread_id
                                         AND b.round = a.round + 1 AND b.sound_valid = 0)),
       MAX(a.stopped = 1 AND a.llm_verdict = 1)
FROM attempts a JOIN runs r ON r.thread_id = a.thread_id WHERE r.study = ? GROUP BY a.thread_id
"""
    return {tid: tuple(int(f or 0) for f in rest) for tid, *rest in db.execute(sql, [study])}  # type: ignore[misc]


def runs_with_ids(db: Store, study: str, chars: int | None = None) -> Iterator[dict[str, Any]]:
    """The `runs` rows of `study` with their SQLite row id as `id` (the viewer's address of a run); with
    `chars`, `final_answer` and `error` hold only their first `chars` characters (a list of 10,000 runs
    need not read every long answer whole)."""
    if chars is None:
        yield from _resolved(db, db.query("SELECT rowid AS id, * FROM runs WHERE study = ? ORDER BY domain, scheme, "
                                          "instance_id, trial", [study]), RUN_TEXTS)  # fmt: skip
        return
    n = int(chars)
    yield from _resolved(db, db.query(
        "SELECT rowid AS id, thread_id, study, domain, scheme, params, instance_id, trial, status, final_round, "
        f"correct, rounds, prompt_tokens, completion_tokens, llm_calls, cache_hits, substr(final_answer, 1, {n}) "
        f"AS final_answer, substr(error, 1, {n}) AS error FROM runs WHERE study = ? "
        "ORDER BY domain, scheme, instance_id, trial",
        [study],
    ), RUN_TEXTS, n)


def round_texts(db: Store, study: str, chars: int) -> Iterator[tuple[Any, ...]]:
    """(run row id, error, answer, canonical, LLM critique, feedback) of every round of `study` (a run without
    rounds once, with None texts), each text cut to its first `chars` characters: what the viewer searches."""
    n = int(chars)
    cursor = db.execute(
        f"SELECT r.rowid, substr(r.error, 1, {n}), substr(a.answer, 1, {n}), substr(a.canonical, 1, {n}), "
        f"substr(a.llm_critique, 1, {n}), substr(a.feedback, 1, {n}) FROM runs r "
        "LEFT JOIN attempts a ON a.thread_id = r.thread_id WHERE r.study = ?",
        [study],
    )
    while rows := cursor.fetchmany(_CHUNK):
        yield from resolve_tuples(db, rows, range(1, 6), n)


def run_by_id(db: Store, rowid: int) -> dict[str, Any] | None:
    rows = resolve_rows(db, select_rows(db, "SELECT rowid AS id, * FROM runs WHERE rowid = ?", [rowid]), RUN_TEXTS)
    return rows[0] if rows else None


def run_rounds(db: Store, thread_id: str) -> list[dict[str, Any]]:
    """A run's rounds in order."""
    return resolve_rows(db, select_rows(db, "SELECT * FROM attempts WHERE thread_id = ? ORDER BY round", [thread_id]),
                        ROUND_TEXTS)


def calls_answered_with(db: Store, responses: Iterable[str]) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """(response, messages) of the cached calls whose response is one of `responses`."""
    # a long response is stored as its reference, or inline by a store written before `store.texts`
    wanted = list(dict.fromkeys(v for text in responses for v in dict.fromkeys((reference(text), text))))
    for i in range(0, len(wanted), _CHUNK):
        chunk = wanted[i : i + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        yield from _calls(db, db.execute(f"SELECT response, messages FROM llm_calls WHERE response IN ({marks})",
                                         chunk).fetchall(), 0, 1)  # fmt: skip


def _calls(db: Store, rows: list[tuple[Any, ...]], response: int, messages: int) -> list[tuple[Any, ...]]:
    """Cached calls' rows with the response (at index `response`) whole and the messages JSON (at `messages`)
    parsed, each content whole."""
    rows = resolve_tuples(db, rows, [response])
    parsed = parse_messages(db, [str(row[messages]) for row in rows])
    return [(*row[:messages], found, *row[messages + 1 :]) for row, found in zip(rows, parsed, strict=True)]


def round_calls(db: Store, thread_id: str) -> list[tuple[int, str, str, str | None]]:
    """(round, node, calls JSON, sound reason) of a run's node steps, in round and recording order; none from a
    store written before `round_calls` existed."""
    if "round_calls" not in table_names(db):
        return []
    rows = db.execute("SELECT round, node, calls, sound_reason FROM round_calls WHERE thread_id = ? "
                      "ORDER BY round, rowid", [thread_id]).fetchall()  # fmt: skip
    return resolve_tuples(db, rows, [3])


def step_recorded(db: Store, thread_id: str, round_: int, node: str) -> bool:
    """Whether a run's `node` step of `round_` has its `round_calls` row (written in the step's transaction)."""
    sql = "SELECT 1 FROM round_calls WHERE thread_id = ? AND round = ? AND node = ?"
    return db.execute(sql, [thread_id, round_, node]).fetchone() is not None


def calls_by_key(db: Store, keys: Iterable[str]) -> Iterator[tuple[str, list[dict[str, str]], str]]:
    """(key, messages, response) of the cached calls with these keys."""
    wanted = list(dict.fromkeys(keys))
    for i in range(0, len(wanted), _CHUNK):
        chunk = wanted[i : i + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        rows = db.execute(f"SELECT key, messages, response FROM llm_calls WHERE key IN ({marks})", chunk).fetchall()
        yield from _calls(db, rows, 2, 1)


def call_timings(db: Store, keys: Iterable[str]) -> dict[str, tuple[float | None, int, int]]:
    """key -> (seconds the call took when it was made, prompt tokens, completion tokens) of the cached calls with
    these keys (a replayed call keeps the seconds of the call that was recorded). Seconds are None where none
    were measured: calls imported from others' records (PlanBench's, recorded samples) are stored with 0."""
    return {
        key: (float(f["latency_s"]) if f["latency_s"] and f["latency_s"] > 0 else None,
              int(f["prompt_tokens"] or 0), int(f["completion_tokens"] or 0))
        for key, f in call_facts(db, keys).items()
    }  # fmt: skip


def study_call_keys(db: Store, study: str) -> dict[str, list[str]]:
    """thread id -> the cache keys of every call its rounds recorded (`round_calls`), in order; empty for a
    store written before `round_calls` existed."""
    if "round_calls" not in table_names(db):
        return {}
    rows = db.execute("SELECT c.thread_id, c.calls FROM round_calls c JOIN runs r ON r.thread_id = c.thread_id "
                      "WHERE r.study = ? ORDER BY c.thread_id, c.round, c.rowid", [study]).fetchall()  # fmt: skip
    out: dict[str, list[str]] = {}
    for thread_id, calls in rows:
        out.setdefault(thread_id, []).extend(json.loads(calls))
    return out


def unrecorded_answers(db: Store, study: str) -> list[str]:
    """The answers of `study`'s rounds whose generator call is not in `round_calls` (stores written before it)."""
    if "round_calls" not in table_names(db):
        return [r["answer"] for r in study_rounds(db, study, answered=True)]
    sql = ("SELECT a.answer FROM attempts a JOIN runs r ON r.thread_id = a.thread_id WHERE r.study = ? "
           "AND a.answer IS NOT NULL AND NOT EXISTS (SELECT 1 FROM round_calls c WHERE c.thread_id = a.thread_id "
           "AND c.round = a.round AND c.node = 'generator')")  # fmt: skip
    return [str(r[0]) for r in resolve_tuples(db, db.execute(sql, [study]).fetchall(), [0])]


def study_steps(db: Store, study: str) -> list[tuple[str, int, str, list[str], str | None]]:
    """(thread id, round, node, call keys, sound reason) of every recorded node step of `study`'s runs, in run,
    round and recording order; none from a store written before `round_calls` existed."""
    if "round_calls" not in table_names(db):
        return []
    rows = db.execute("SELECT c.thread_id, c.round, c.node, c.calls, c.sound_reason FROM round_calls c "
                      "JOIN runs r ON r.thread_id = c.thread_id WHERE r.study = ? "
                      "ORDER BY c.thread_id, c.round, c.rowid", [study]).fetchall()  # fmt: skip
    return [(t, n, node, json.loads(calls), reason) for t, n, node, calls, reason in resolve_tuples(db, rows, [4])]


# what an export says of each call, besides its texts
_CALL_FACTS = ("key", "model", "endpoint", "params", "prompt_tokens", "completion_tokens", "tokens_estimated",
               "latency_s", "created_at")  # fmt: skip


def call_facts(db: Store, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Per cache key: the cached call's model, endpoint identity, sampling params (parsed), tokens, latency and
    time; keys no longer cached (or a store without a cache) are absent."""
    if "llm_calls" not in table_names(db):
        return {}
    wanted, out = list(dict.fromkeys(keys)), {}
    for i in range(0, len(wanted), _CHUNK):
        chunk = wanted[i : i + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        for row in db.query(f"SELECT {', '.join(_CALL_FACTS)} FROM llm_calls WHERE key IN ({marks})", chunk):
            row["params"] = json.loads(row["params"] or "{}")
            out[row["key"]] = row
    return out
