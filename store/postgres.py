"""The store in Postgres: the same tables as the SQLite file, behind the slice of sqlite-utils' API we use.

`PgDatabase` offers `execute(sql, params)` (a cursor with rowcount / fetchone / fetchall / description),
`query(sql, params)` (dict rows) and `conn.close()`, so the store modules run unchanged on either backend.
Statements are written in the SQL both dialects share; the few SQLite-isms they contain are translated here:
`?` placeholders, `INSERT OR IGNORE`, `REAL` (single precision in Postgres, too coarse for timestamps), and
`SUM(<condition>)`, for which a `sum(boolean)` aggregate is created once per database.

Needs the `scale` extra (psycopg). Connections run in autocommit, like the SQLite store's, so every statement
is its own short transaction.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

SCHEMES = ("postgresql://", "postgres://")
_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+", re.IGNORECASE)
_REAL = re.compile(r"\bREAL\b")
_BOOL_SUM = """
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'critiquebench_bool_add') THEN
    CREATE FUNCTION critiquebench_bool_add(bigint, boolean) RETURNS bigint
      AS 'SELECT $1 + $2::int' LANGUAGE SQL IMMUTABLE STRICT;
    CREATE AGGREGATE sum(boolean) (SFUNC = critiquebench_bool_add, STYPE = bigint, INITCOND = '0');
  END IF;
EXCEPTION WHEN duplicate_function OR unique_violation THEN NULL;  -- another process created it first
END $$"""
_ready: set[str] = set()
_ready_lock = threading.Lock()
# per store URL, the `CREATE ... IF NOT EXISTS` statements this process has run there (`ensure_tables`): a study
# opens a connection per run, and each statement is a transaction under a lock every process shares
_ensured: dict[str, set[str]] = {}


class StoreUnavailable(ValueError):
    """The Postgres store cannot be reached or the driver is missing; the message has no credentials."""


def is_postgres(locator: object) -> bool:
    return isinstance(locator, str) and locator.startswith(SCHEMES)


def redact(url: str) -> str:
    """The URL without its password and with every query value (`?password=`, `?sslpassword=`, ...) as ***:
    the user's name, host, port, database and parameter names are kept to tell stores apart."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", f":{parts.port}" if parts.port else ""
    except ValueError:  # a malformed port: keep only what cannot hold a secret
        parts, host, port = urlsplit(url), "?", ""
    netloc = parts.netloc
    if "@" in netloc:
        name = unquote(parts.username or "")
        netloc = f"{name}:***@{host}{port}" if name else f"***@{host}{port}"
    pairs = [(k, "***") for k, _ in parse_qsl(parts.query, keep_blank_values=True)]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(pairs, safe="*"), ""))


def translate(sql: str) -> str:
    """A statement of the store's SQLite dialect in Postgres' (see the module docstring)."""
    if sql.strip().upper() == "BEGIN IMMEDIATE":  # SQLite's "take the write lock now"
        return "BEGIN"
    ignore = bool(_OR_IGNORE.match(sql))
    if ignore:
        sql = _OR_IGNORE.sub("INSERT ", sql)
    sql = _REAL.sub("DOUBLE PRECISION", sql).replace("MAX(0, ", "GREATEST(0, ").replace("%", "%%").replace("?", "%s")
    return f"{sql} ON CONFLICT DO NOTHING" if ignore else sql


_DDL_LOCK = 0x63626464  # any fixed number: the advisory lock our processes take around CREATE statements


def open_connection(url: str) -> Any:
    """A raw psycopg connection (autocommit) to the store at `url`."""
    try:
        import psycopg
    except ImportError as exc:
        raise StoreUnavailable(
            "a postgresql:// store needs the scale extra: pip install 'critiquebench[scale]'"
        ) from exc
    try:
        return psycopg.connect(url, autocommit=True)
    except psycopg.Error as exc:
        # psycopg's message can quote the connection string; name the store by its redacted URL instead
        raise StoreUnavailable(f"cannot connect to the store {redact(url)}: {type(exc).__name__}") from None


class PgDatabase:
    """A Postgres store connection with the calls the store modules make on a sqlite-utils Database."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn = open_connection(url)
        with _ready_lock:
            if url not in _ready:
                self.conn.execute(_BOOL_SUM)
                _ready.add(url)
            self.ensured = _ensured.setdefault(url, set())

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        import psycopg

        if sql.lstrip().upper().startswith("CREATE"):
            # `CREATE ... IF NOT EXISTS` is not atomic in Postgres: two processes creating one table at once can
            # both pass the check and one fails on the catalogue (UniqueViolation, or DuplicateObject on the
            # table's row type). One transaction-scoped lock shared by our processes makes them take turns.
            with self.conn.transaction():
                self.conn.execute("SELECT pg_advisory_xact_lock(%s)", [_DDL_LOCK])
                return self.conn.execute(translate(sql), list(params))
        try:
            return self.conn.execute(translate(sql), list(params))
        except psycopg.errors.UniqueViolation as exc:
            import sqlite3

            # callers handle a lost insert race as SQLite reports it
            raise sqlite3.IntegrityError(str(exc).splitlines()[0]) from exc

    def query(self, sql: str, params: Sequence[Any] = ()) -> Iterator[dict[str, Any]]:
        cursor = self.execute(sql, params)
        names = [d[0] for d in cursor.description]
        for row in cursor.fetchall():
            yield dict(zip(names, row, strict=True))

    def close(self) -> None:
        self.conn.close()

    def __repr__(self) -> str:
        return f"<PgDatabase {redact(self.url)}>"
