"""The LLM call cache: every answered call by key, plus an append-only log of calls, hits and failures.

Tables
- `llm_calls(key PK, model, endpoint, messages JSON, params JSON, sample, response, prompt_tokens,
  completion_tokens, tokens_estimated, latency_s, created_at)`: one row per answered call. Failed calls are
  never stored here, so a resumed run retries them.
- `llm_events(ts, key, model, kind, error, prompt_tokens, completion_tokens)`: kind is 'call' (the endpoint
  answered), 'hit' (answered from this table) or 'failed' (all retries failed; `error` holds the text).
- `texts(hash PK, text)`: a response or message content of at least 2,048 characters is stored there once and
  `llm_calls` holds its reference (see `store.texts`): a feedback loop's prompts repeat every earlier answer.
- `llm_inflight(key PK, owner, expires_at)`: calls being made right now, so another process asking the same
  call waits for its answer instead of paying for it (see `store.claims`).

The key is a sha256 over canonical JSON of (model, endpoint identity, messages, sampling params, sample
index), so the same prompt drawn as sample 0..k-1 gives k entries shared by every scheme asking for k samples.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from typing import IO, Any

import sqlite_utils

from critiquebench.store.claims import CLAIM_SCHEMA, drop_lease, process_owner, take_lease
from critiquebench.store.db import connect, ensure_tables, table_names
from critiquebench.store.postgres import is_postgres
from critiquebench.store.texts import TEXTS_SCHEMA, parse_messages, resolve_rows, stored, stored_messages

log = logging.getLogger(__name__)

Messages = Sequence[Mapping[str, str]]
_TOTAL_KEYS = ("calls", "hits", "failed", "prompt_tokens", "completion_tokens")
_DIFF_LINES, _DIFF_CHARS = 40, 3000  # enough to spot the change without flooding the terminal


def sampling_params(
    temperature: float = 0.0,
    max_tokens: int | None = 512,
    stop: Iterable[str] = (),
    top_p: float | None = None,
) -> dict[str, Any]:
    """The sampling parameters that enter a cache key, normalised (defaults match `LLMSettings`)."""
    return {
        "temperature": float(temperature),
        "max_tokens": None if max_tokens is None else int(max_tokens),
        "stop": [str(s) for s in stop],
        "top_p": None if top_p is None else float(top_p),
    }


def normalise_messages(messages: Messages) -> list[dict[str, str]]:
    """Messages as plain `{"role", "content", ...}` string dicts; rejects anything else with a clear error."""
    out = []
    for i, message in enumerate(messages):
        if "role" not in message or "content" not in message:
            raise ValueError(f"message {i} needs 'role' and 'content', got keys {sorted(message)}")
        out.append({str(k): str(v) for k, v in message.items()})
    return out


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # NUL (Postgres text) and lone UTF-16 surrogates (UTF-8)


def storable_text(text: str) -> tuple[str, int]:
    """`text` with every character no store can hold (lone surrogates, NUL) replaced by U+FFFD, and how many
    were replaced. A well-formed pair never reaches here: JSON decoding joins it into one character."""
    replaced = _UNSTORABLE.subn("\ufffd", text)
    return replaced if replaced[1] else (text, 0)


def cache_key(model: str, endpoint: str, messages: Messages, params: Mapping[str, Any], sample: int) -> str:
    payload = {
        "model": model,
        "endpoint": endpoint,
        "messages": normalise_messages(messages),
        "params": dict(params),
        "sample": int(sample),
    }
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CallRecord:
    key: str
    model: str
    endpoint: str
    messages: list[dict[str, str]]
    params: dict[str, Any]
    sample: int
    response: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False
    latency_s: float = 0.0
    created_at: float = 0.0


@dataclass(frozen=True)
class CachedAnswer:
    """What a cache hit gives its caller: a `CallRecord` without what keyed it (`CallCache.answer`)."""

    key: str
    response: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False
    latency_s: float = 0.0


_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS llm_calls (
        key TEXT PRIMARY KEY, model TEXT NOT NULL, endpoint TEXT NOT NULL, messages TEXT NOT NULL,
        params TEXT NOT NULL, sample INTEGER NOT NULL, response TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
        tokens_estimated INTEGER NOT NULL DEFAULT 0, latency_s REAL NOT NULL DEFAULT 0,
        created_at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS llm_calls_by_model ON llm_calls (model, endpoint)",
    """CREATE TABLE IF NOT EXISTS llm_events (
        ts REAL NOT NULL, key TEXT NOT NULL, model TEXT NOT NULL, kind TEXT NOT NULL, error TEXT,
        prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0)""",
    TEXTS_SCHEMA,
)
_CALL_COLUMNS = [f.name for f in fields(CallRecord)]
_INSERT_CALL = "INSERT OR IGNORE INTO llm_calls ({}) VALUES ({})".format(
    ", ".join(_CALL_COLUMNS), ", ".join("?" * len(_CALL_COLUMNS))
)

_SELECT_ANSWER = (
    "SELECT response, prompt_tokens, completion_tokens, tokens_estimated, latency_s FROM llm_calls WHERE key = ?"
)
_ANSWERED = "SELECT 1 FROM llm_calls WHERE key = ?"
_INSERT_EVENT = (
    "INSERT INTO llm_events (ts, key, model, kind, error, prompt_tokens, completion_tokens) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _call_values(db: Any, record: CallRecord) -> list[Any]:
    """The `llm_calls` row of a record, in `_CALL_COLUMNS` order, its long texts stored first (`store.texts`)."""
    row = {f.name: getattr(record, f.name) for f in fields(CallRecord)}  # asdict would deep-copy messages
    row["response"] = stored(db, record.response)
    row["messages"] = json.dumps(stored_messages(db, record.messages), ensure_ascii=False)
    row["params"] = json.dumps(record.params, sort_keys=True)
    row["tokens_estimated"] = int(record.tokens_estimated)
    row["created_at"] = record.created_at or time.time()
    return list(row.values())


class CallCache:
    """Thread-safe access to the cache tables of one store (a path or an open sqlite-utils database).

    On a SQLite file it opened itself, the calls a study makes for every LLM call (look-up, in-flight marker,
    answer) each take a connection of a small pool, one per thread using it at that moment: with one shared
    connection behind a lock, a thread whose write waits in SQLite's busy handler (another process, e.g.
    another Ray worker, holds the write lock) held every other thread's look-ups up too. Elsewhere (Postgres, a
    read-only store, a connection it was given) one connection serves all threads, a statement at a time.
    """

    def __init__(self, store: str | os.PathLike[str] | sqlite_utils.Database | Any, readonly: bool = False) -> None:
        # a locator (file path or postgresql:// URL), or an open store connection from `store.db.connect`
        self._owned = isinstance(store, str | os.PathLike)  # a connection it opened is its own to close
        self.db = connect(store, readonly=readonly) if self._owned else store
        # the lock keeps each statement's cursor on the shared connection to itself, and guards the pool
        self._lock = threading.Lock()
        self._locator = store if self._owned and not readonly and not is_postgres(store) else None
        self._idle: list[Any] = []  # pooled connections not in use
        self._closed = False
        self._held = threading.local()  # a thread's events kept for its caller to write (`holding_events`)
        with self._lock:
            ensure_tables(self.db, (*_SCHEMA, *CLAIM_SCHEMA))

    def close(self) -> None:
        """Close the connections the cache opened (one it was given stays its opener's to close)."""
        with self._lock:
            idle, self._idle, self._closed = self._idle, [], True
        for db in idle:
            db.close()
        if self._owned:
            self.db.close()

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """A connection for a few statements of this thread: a pooled one of its own, or the shared one
        under the lock."""
        if self._locator is None:
            with self._lock:
                yield self.db
            return
        with self._lock:
            db = self._idle.pop() if self._idle else None
        if db is None:
            db = connect(self._locator)
        try:
            yield db
        finally:
            with self._lock:
                keep = not self._closed
                if keep:
                    self._idle.append(db)
            if not keep:
                db.close()

    def __enter__(self) -> CallCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[CallRecord]:
        with self._connection() as db:
            cursor = db.execute(sql, list(args))
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            resolve_rows(db, rows, ["response"])
            for row, messages in zip(rows, parse_messages(db, [row["messages"] for row in rows]), strict=True):
                row["messages"] = messages
        return [_record(row) for row in rows]

    def get(self, key: str) -> CallRecord | None:
        rows = self._rows("SELECT * FROM llm_calls WHERE key = ?", [key])
        return rows[0] if rows else None

    def answer(self, key: str) -> CachedAnswer | None:
        """The stored answer to call `key` without its messages, which a cache hit does not use: `get` reads
        and parses them (a long prompt is a second look-up, in `texts`), a third of a replayed call's cost."""
        with self._connection() as db:
            row = db.execute(_SELECT_ANSWER, [key]).fetchone()
            if row is None:
                return None
            response = resolve_rows(db, [{"response": row[0]}], ["response"])[0]["response"]
        return CachedAnswer(key, str(response), int(row[1] or 0), int(row[2] or 0), bool(row[3]),
                            float(row[4] or 0.0))  # fmt: skip

    def count(self) -> int:
        """How many answers the cache holds."""
        return int(self.db.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0])

    def put(self, record: CallRecord) -> bool:
        """Store an answered call; returns False when the key was already there (the first answer is kept)."""
        with self._connection() as db:
            return db.execute(_INSERT_CALL, _call_values(db, record)).rowcount > 0

    def answered(self, record: CallRecord, note: str | None = None) -> None:
        """Store a call this process just made, log its 'call' event, then drop its in-flight marker (so a
        process waiting on the marker finds the answer once the marker is gone).

        Three statements, each its own transaction: in one transaction SQLite's write lock would stay held while
        this thread waits for the GIL between them, and every other process writing the store (Ray's other
        workers) would sleep in SQLite's busy handler meanwhile (a long text's `texts` row goes in before the
        call that refers to it, see `store.texts`). `note` goes into the event's `error` column (what
        was changed for the answer to be storable, see `storable_text`)."""
        event = [time.time(), record.key, record.model, "call", note, record.prompt_tokens, record.completion_tokens]
        with self._connection() as db:
            db.execute(_INSERT_CALL, _call_values(db, record))
            db.execute(_INSERT_EVENT, event)
            drop_lease(db, "llm_inflight", record.key, process_owner())

    def reserve(self, key: str, seconds: float) -> bool:
        """Mark `key` as being called by this process for `seconds` (renewable); False when another process
        is calling it, or when the cache holds its answer (decided in the one statement that reserves: a call
        answered between a look-up and the reservation is never made again)."""
        with self._connection() as db:
            return take_lease(db, "llm_inflight", key, process_owner(), seconds, unless=_ANSWERED)

    def unreserve(self, key: str) -> None:
        with self._connection() as db:
            drop_lease(db, "llm_inflight", key, process_owner())

    def put_recorded(
        self,
        model: str,
        endpoint_id: str,
        messages: Messages,
        response: str,
        sample: int = 0,
        params: Mapping[str, Any] | None = None,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
    ) -> str:
        """Store an answer recorded elsewhere (e.g. a published study) under the key a live call would use.

        `params` must match the sampling parameters of the settings that will replay it (see
        `sampling_params`). Returns the key.
        """
        params = dict(params) if params is not None else sampling_params()
        key = cache_key(model, endpoint_id, messages, params, sample)
        estimated = not (prompt_tokens or completion_tokens)
        if estimated:
            prompt_tokens = sum(len(m["content"]) for m in messages) // 4
            completion_tokens = len(response) // 4
        self.put(
            CallRecord(
                key,
                model,
                endpoint_id,
                normalise_messages(messages),
                params,
                sample,
                response,
                prompt_tokens,
                completion_tokens,
                estimated,
            )
        )
        return key

    def log_event(
        self,
        key: str,
        model: str,
        kind: str,
        error: str | None = None,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
    ) -> None:
        if kind not in ("call", "hit", "failed"):
            raise ValueError(f"unknown event kind {kind!r}")
        event = [time.time(), key, model, kind, error, prompt_tokens, completion_tokens]
        held: list[list[Any]] | None = getattr(self._held, "events", None)
        if held is not None:
            held.append(event)
            return
        with self._connection() as db:
            db.execute(_INSERT_EVENT, event)

    @contextmanager
    def holding_events(self) -> Iterator[list[list[Any]]]:
        """Within the block, this thread's events (`log_event`: hits, failures) go into the list it yields
        instead of a commit each, for the caller to write with its own rows (`write_events`): a replayed run
        writes its hits in the one transaction that records it, so a run killed midway leaves no events of
        calls it will make again when resumed."""
        outer = getattr(self._held, "events", None)
        held: list[list[Any]] = []
        self._held.events = held
        try:
            yield held
        finally:
            self._held.events = outer

    def recorded(self, model: str, endpoint: str) -> list[CallRecord]:
        """Every answered call for one model at one endpoint (used to explain replay misses)."""
        return self._rows("SELECT * FROM llm_calls WHERE model = ? AND endpoint = ?", [model, endpoint])

    def identities(self) -> list[tuple[str, str, int]]:
        """(model, endpoint, number of recorded calls) for everything in the cache."""
        with self._lock:
            rows = self.db.execute(
                "SELECT model, endpoint, COUNT(*) FROM llm_calls GROUP BY model, endpoint "
                "ORDER BY model, endpoint"
            ).fetchall()
        return [(str(m), str(e), int(n)) for m, e, n in rows]

    def explain_miss(
        self, model: str, endpoint: str, messages: Messages, params: Mapping[str, Any], sample: int
    ) -> str:
        """Why a call is not cached, shown against the recorded call sharing the longest message prefix."""
        msgs = normalise_messages(messages)
        recorded = self.recorded(model, endpoint)
        if not recorded:
            known = ", ".join(f"{m} @ {e} ({n})" for m, e, n in self.identities()[:10]) or "none"
            return (
                f"replay: no recorded calls for model {model!r} at endpoint {endpoint!r}; "
                f"recorded model @ endpoint (calls): {known}"
            )
        return _explain(recorded, msgs, dict(params), sample)

    def stats(self) -> dict[str, Any]:
        """Counts and spent tokens: `{"total": {...}, "by_model": {model: {...}}}`.

        Each has calls, hits, failed, prompt_tokens and completion_tokens (tokens actually spent, i.e. of
        'call' events) and `recorded` (answers stored, including imported ones).
        """
        with self._lock:
            events = self.db.execute(
                "SELECT model, SUM(kind = 'call'), SUM(kind = 'hit'), SUM(kind = 'failed'), "
                "SUM(CASE WHEN kind = 'call' THEN prompt_tokens ELSE 0 END), "
                "SUM(CASE WHEN kind = 'call' THEN completion_tokens ELSE 0 END) "
                "FROM llm_events GROUP BY model"
            ).fetchall()
            stored = self.db.execute("SELECT model, COUNT(*) FROM llm_calls GROUP BY model").fetchall()
        by_model: dict[str, dict[str, int]] = {}
        for model, *counts in events:
            by_model[model] = dict(zip(_TOTAL_KEYS, (int(c or 0) for c in counts), strict=True))
        for model, count in stored:
            by_model.setdefault(model, dict.fromkeys(_TOTAL_KEYS, 0))["recorded"] = int(count)
        for counts in by_model.values():
            counts.setdefault("recorded", 0)
        total = {k: sum(m[k] for m in by_model.values()) for k in (*_TOTAL_KEYS, "recorded")}
        return {"total": total, "by_model": dict(sorted(by_model.items()))}

    def iter_records(self) -> Iterator[CallRecord]:
        yield from self._rows("SELECT * FROM llm_calls ORDER BY created_at, key")

    def export(self, fp: IO[str]) -> int:
        """Write every answered call as one JSON object per line; returns the number written."""
        n = 0
        for record in self.iter_records():
            fp.write(json.dumps(asdict(record), ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
        return n

    def import_jsonl(self, fp: IO[str]) -> tuple[int, int]:
        """Merge an export (or another cache's export) into this cache; returns (added, already present).

        Keys are recomputed from each line's content, so an edited or foreign line cannot shadow another call.
        """
        added = present = 0
        for lineno, line in enumerate(fp, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                record = _record({**data, "key": ""})
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"line {lineno}: not a recorded call ({exc})") from exc
            key = cache_key(record.model, record.endpoint, record.messages, record.params, record.sample)
            if data.get("key") not in (None, key):
                log.warning(
                    "line %d: key does not match its content; stored under the recomputed key", lineno
                )
            if self.put(CallRecord(**{**asdict(record), "key": key})):
                added += 1
            else:
                present += 1
        return added, present


def write_events(db: Any, events: Iterable[Sequence[Any]]) -> None:
    """Write events kept by `CallCache.holding_events`, on `db` (inside the caller's transaction)."""
    for event in events:
        db.execute(_INSERT_EVENT, list(event))


def has_call(db: Any, key: str) -> bool:
    """Whether the store's cache (opened as `db`, read-only or not) holds an answer for `key`."""
    if "llm_calls" not in table_names(db):
        return False
    return db.execute("SELECT 1 FROM llm_calls WHERE key = ?", [key]).fetchone() is not None


def _record(row: Mapping[str, Any]) -> CallRecord:
    def _json(value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value

    return CallRecord(
        key=str(row["key"]),
        model=str(row["model"]),
        endpoint=str(row["endpoint"]),
        messages=normalise_messages(_json(row["messages"])),
        params=dict(_json(row["params"])),
        sample=int(row["sample"]),
        response=str(row["response"]),
        prompt_tokens=int(row.get("prompt_tokens") or 0),
        completion_tokens=int(row.get("completion_tokens") or 0),
        tokens_estimated=bool(row.get("tokens_estimated")),
        latency_s=float(row.get("latency_s") or 0.0),
        created_at=float(row.get("created_at") or 0.0),
    )


def _common_prefix(a: Sequence[Mapping[str, str]], b: Sequence[Mapping[str, str]]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _explain(
    recorded: list[CallRecord], msgs: list[dict[str, str]], params: dict[str, Any], sample: int
) -> str:
    best = max(recorded, key=lambda r: (_common_prefix(r.messages, msgs), -abs(len(r.messages) - len(msgs))))
    n = _common_prefix(best.messages, msgs)
    head = (
        f"replay: call not recorded (sample {sample}); "
        f"closest recorded call {best.key[:12]} shares {n} message(s)"
    )
    if n == len(msgs) == len(best.messages):
        samples = sorted({r.sample for r in recorded if r.messages == msgs and r.params == params})
        return (
            f"{head}: the messages match, but recorded with sample {best.sample}, params {best.params}; "
            f"this call: sample {sample}, params {params}; samples recorded with these params: {samples}"
        )
    if n == len(best.messages):
        return f"{head}; the recorded call ends there, this call adds message {n} ({msgs[n]['role']})"
    if n == len(msgs):
        return f"{head}; this call ends there, the recorded call has message {n} ({best.messages[n]['role']})"
    old, new = best.messages[n], msgs[n]
    lines = [
        f"{head}; first difference at message {n} (recorded role {old['role']}, this call {new['role']}):"
    ]
    diff = difflib.unified_diff(
        old["content"].splitlines(), new["content"].splitlines(), "recorded", "this call", lineterm="", n=1
    )
    lines.extend(itertools.islice(diff, _DIFF_LINES))
    text = "\n".join(lines)
    return text if len(text) <= _DIFF_CHARS else text[:_DIFF_CHARS] + "\n... (diff truncated)"
