"""Long texts stored once: every text of at least `MIN_CHARS` characters, wherever the store keeps it, is a row
of the `texts` table keyed by its SHA-256 (issue 26 item 10: a 5 MB answer was stored in the call cache's
response and in every later prompt quoting it, in its round's row, in its run's row and in a dozen graph
checkpoints: 30 MB of answers grew a store to 336 MB).

Two ways in:
- Columns (`stored` / `resolve_rows`): the call cache's response and message contents, a round's answer,
  parsed answer, feedback and critique, a run's final answer and error hold the reference `REF + hash` in place
  of a long text, in SQLite and Postgres alike. The text is inserted before the row that refers to it (a kill in
  between leaves a text no row names, never a reference without its text). Any value that starts with `REF` is
  stored as a reference, so a stored value that starts with it is always one: an answer that looks like a
  reference is kept as a text of its own. Rows written before (the text inline) read as they are: a store keeps
  both layouts and every read takes either (`store copy` rewrites an old store's texts as references). Deleting
  a study leaves its texts: the call cache, which stays too, refers to most of them, and a checkpoint's
  references sit inside LangGraph's serialized blobs, where no query can count them.
- Graph checkpoints (`TextDedupSerializer`, SQLite stores): the run's state holds its answers, critiques and
  feedback (`attempt`, `past`), and LangGraph writes the whole state at every step plus each step's update. The
  saver's serializer is wrapped: every long string in what it serializes becomes a `{"__cb_text__": hash}`
  marker, inserted on the saver's own connection in the checkpoint's transaction. Postgres checkpoints are left
  as they are: LangGraph's PostgresSaver already stores each channel value once per version.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

log = logging.getLogger(__name__)

TEXTS_SCHEMA = "CREATE TABLE IF NOT EXISTS texts (hash TEXT PRIMARY KEY, text TEXT NOT NULL)"
MIN_CHARS = 2048  # shorter strings cost less than their marker and a look-up
MARKER = "__cb_text__"
# A column's reference to a text: a control character no answer starts with by accident (JSON writes it as
# \u001e, so a message list holding one is found without parsing it), then the text's SHA-256.
REF = "\x1ecb-text:"
_REF_IN_JSON = json.dumps(REF)[1:-1]
_REF_LEN = len(REF) + 64
_CHUNK = 500  # hashes per look-up (SQLite allows 999 parameters in older builds)
# Texts read lately, by hash (a hash names one text in every store, so any store's read fills it): a transcript,
# an export or a resume reads the same long answer in its round, its run and every later prompt.
_RECENT_CHARS = 64_000_000
_recent: OrderedDict[str, str] = OrderedDict()
_recent_chars = 0
_recent_lock = threading.Lock()


def digest(text: str) -> str:
    """The key of `text` in the `texts` table."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _by_reference(text: str) -> bool:
    return len(text) >= MIN_CHARS or text.startswith(REF)


def reference(text: str) -> str:
    """The value a column holds for `text` (its reference, or the text itself when short), storing nothing:
    what a look-up by text compares with."""
    return REF + digest(text) if _by_reference(text) else text


def stored(db: Any, text: Any) -> Any:
    """The value to put in a text column for `text`: a long text goes into `texts` (once) and its reference
    comes back; anything else (a short text, None, a number) as it is. `db` is any open store (or a sqlite3
    connection); call it before writing the row that holds the value."""
    if not isinstance(text, str) or not _by_reference(text):
        return text
    text = str(text)  # a str subclass (langchain's TextAccessor) as a plain one
    key = digest(text)
    db.execute("INSERT OR IGNORE INTO texts (hash, text) VALUES (?, ?)", [key, text])
    _remember(key, text)
    return REF + key


def stored_messages(db: Any, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A message list with each long `content` stored (see `stored`)."""
    if not any(isinstance(m.get("content"), str) and _by_reference(m["content"]) for m in messages):
        return list(messages)  # the common case: short messages, nothing to store
    return [{**m, "content": stored(db, m["content"])} if "content" in m else dict(m) for m in messages]


def _ref(value: Any) -> str | None:
    """The hash a column value refers to, or None when the value is the text itself."""
    if isinstance(value, str) and len(value) == _REF_LEN and value.startswith(REF):
        return value[len(REF):]
    return None


def _remember(key: str, text: str) -> None:
    global _recent_chars
    if len(text) > _RECENT_CHARS // 4:
        return
    with _recent_lock:
        if key in _recent:
            _recent.move_to_end(key)
            return
        _recent[key] = text
        _recent_chars += len(text)
        while _recent_chars > _RECENT_CHARS:
            _, old = _recent.popitem(last=False)
            _recent_chars -= len(old)


def fetch(db: Any, keys: Iterable[str], chars: int | None = None) -> dict[str, str]:
    """hash -> text (its first `chars` characters if given) of the `texts` rows with these hashes."""
    found: dict[str, str] = {}
    missing = []
    for key in dict.fromkeys(keys):
        with _recent_lock:
            text = _recent.get(key)
        if text is None:
            missing.append(key)
        else:
            found[key] = text if chars is None else text[:chars]
    column = "text" if chars is None else f"substr(text, 1, {int(chars)})"
    for i in range(0, len(missing), _CHUNK):
        chunk = missing[i : i + _CHUNK]
        sql = f"SELECT hash, {column} FROM texts WHERE hash IN ({', '.join('?' * len(chunk))})"
        for key, text in db.execute(sql, chunk).fetchall():
            found[str(key)] = str(text)
            if chars is None:
                _remember(str(key), str(text))
    if lost := [key for key in missing if key not in found]:
        log.warning("%d text(s) missing from the store's texts table (e.g. %s): shown as references",
                    len(lost), lost[0][:12])  # fmt: skip
    return found


def resolve(db: Any, value: Any, chars: int | None = None) -> Any:
    """A column value as the text it stands for (see `resolve_rows`)."""
    key = _ref(value)
    return value if key is None else fetch(db, [key], chars).get(key, value)


def resolve_rows(db: Any, rows: list[dict[str, Any]], columns: Iterable[str],
                 chars: int | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """`rows` (changed in place, and returned) with every reference in `columns` replaced by its text (its first
    `chars` characters if given), in one look-up for all of them; inline texts (any store's older rows) stay."""
    columns = tuple(columns)
    keys = [key for row in rows for c in columns if (key := _ref(row.get(c))) is not None]
    if not keys:
        return rows
    found = fetch(db, keys, chars)
    for row in rows:
        for c in columns:
            key = _ref(row.get(c))
            if key is not None and key in found:
                row[c] = found[key]
    return rows


def resolve_tuples(db: Any, rows: Iterable[Sequence[Any]], positions: Iterable[int],
                   chars: int | None = None) -> list[tuple[Any, ...]]:  # fmt: skip
    """`resolve_rows` for rows as tuples: the values at `positions` resolved."""
    positions = tuple(positions)
    dicts = [dict(enumerate(row)) for row in rows]
    resolve_rows(db, dicts, positions, chars)
    return [tuple(row.values()) for row in dicts]


def parse_messages(db: Any, raws: Sequence[str]) -> list[Any]:
    """Message lists stored as JSON (the call cache's `messages`), parsed, each referenced content as its text
    (one look-up for all of them). Parsed here, not given back as JSON: a long prompt is not encoded again only
    for its reader to decode it."""
    parsed = [json.loads(raw) for raw in raws]
    if any(_REF_IN_JSON in raw for raw in raws):
        contents = [m for messages in parsed if isinstance(messages, list) for m in messages if isinstance(m, dict)]
        resolve_rows(db, contents, ["content"])
    return parsed


class TextDedupSerializer:
    """A LangGraph serializer (`dumps_typed` / `loads_typed`) storing long strings once in `texts`."""

    def __init__(self, inner: Any, conn: sqlite3.Connection) -> None:
        self.inner, self.conn = inner, conn
        self._known: dict[str, str] = {}  # hash -> text, of this connection (a run's saver lives for one run)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.inner.dumps_typed(self._out(obj))

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self._in(self.inner.loads_typed(data))

    def _out(self, obj: Any) -> Any:
        if isinstance(obj, str) and len(obj) >= MIN_CHARS:  # str subclasses too (langchain's TextAccessor)
            obj = str(obj)
            key = digest(obj)
            if key not in self._known:
                self.conn.execute("INSERT OR IGNORE INTO texts (hash, text) VALUES (?, ?)", [key, obj])
                self._known[key] = obj
            return {MARKER: key}
        if type(obj) is dict:
            return {k: self._out(v) for k, v in obj.items()}
        if type(obj) in (list, tuple):
            return type(obj)(self._out(v) for v in obj)
        return obj

    def _in(self, obj: Any) -> Any:
        if type(obj) is dict:
            if len(obj) == 1 and MARKER in obj:
                return self._text(str(obj[MARKER]))
            return {k: self._in(v) for k, v in obj.items()}
        if type(obj) in (list, tuple):
            return type(obj)(self._in(v) for v in obj)
        return obj

    def _text(self, key: str) -> str:
        text = self._known.get(key)
        if text is None:
            row = self.conn.execute("SELECT text FROM texts WHERE hash = ?", [key]).fetchone()
            if row is None:
                raise LookupError(f"checkpoint text {key[:12]} is missing from the store's texts table")
            text = self._known[key] = str(row[0])
        return text


def kept(db: Any, value: Any) -> Any:
    """A column value copied from another store (`store copy`): a reference stays one (its text is copied with the
    `texts` table), an inline long text (an older store's row) becomes a reference."""
    return value if _ref(value) is not None else stored(db, value)


def kept_messages(db: Any, raw: str) -> str:
    """`kept` for the contents of a message list as JSON."""
    messages = json.loads(raw)
    if not any(isinstance(m, dict) and isinstance(m.get("content"), str) and _ref(m["content"]) is None
               and _by_reference(m["content"]) for m in messages):  # fmt: skip
        return raw
    return json.dumps([{**m, "content": kept(db, m["content"])} if isinstance(m, dict) and "content" in m else m
                       for m in messages], ensure_ascii=False)  # fmt: skip
