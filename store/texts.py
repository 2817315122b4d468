"""Long texts in a SQLite store's graph checkpoints, stored once.

A run's state holds its answers, critiques and feedback (`attempt`, `past`), and LangGraph writes the whole
state at every step (a checkpoint) plus each step's update (pending writes): a 5 MB answer was stored a dozen
times (issue 26 item 10: 30 MB of answers grew a store to 336 MB). `TextDedupSerializer` wraps the saver's
serializer: every string of at least `MIN_CHARS` in what it serializes goes into the `texts` table once, keyed by
its SHA-256, and a small `{"__cb_text__": hash}` marker takes its place; reading puts the text back.

The text is inserted on the saver's own connection before the checkpoint or write that refers to it, in the same
transaction (the saver commits both together), so a kill never leaves a marker without its text. Postgres
stores are left as they are: LangGraph's PostgresSaver already stores each channel value once per version.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Any

TEXTS_SCHEMA = "CREATE TABLE IF NOT EXISTS texts (hash TEXT PRIMARY KEY, text TEXT NOT NULL)"
MIN_CHARS = 2048  # shorter strings cost less than their marker and a look-up
MARKER = "__cb_text__"


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
            digest = hashlib.sha256(obj.encode("utf-8", "surrogatepass")).hexdigest()
            if digest not in self._known:
                self.conn.execute("INSERT OR IGNORE INTO texts (hash, text) VALUES (?, ?)", [digest, obj])
                self._known[digest] = obj
            return {MARKER: digest}
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

    def _text(self, digest: str) -> str:
        text = self._known.get(digest)
        if text is None:
            row = self.conn.execute("SELECT text FROM texts WHERE hash = ?", [digest]).fetchone()
            if row is None:
                raise LookupError(f"checkpoint text {digest[:12]} is missing from the store's texts table")
            text = self._known[digest] = str(row[0])
        return text
