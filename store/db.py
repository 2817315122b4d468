"""Opening the one SQLite store file that holds a user's studies, checkpoints and LLM call cache."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import sqlite_utils

STORE_ENV = "CRITIQUEBENCH_STORE"
DEFAULT_STORE = "critiquebench.sqlite"


def default_store_path() -> Path:
    """`$CRITIQUEBENCH_STORE`, else `critiquebench.sqlite` in the working directory."""
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE)


def connect_raw(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A connection tuned for several writers (threads or processes) on one file.

    WAL lets readers run beside a writer; the busy timeout makes a second writer wait instead of failing with
    "database is locked"; autocommit (isolation_level=None) keeps transactions as short as each statement.
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=60.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=60000")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def connect(path: str | os.PathLike[str] | None = None) -> sqlite_utils.Database:
    """The store at `path` (default: `default_store_path()`) as a sqlite-utils database."""
    return sqlite_utils.Database(connect_raw(path if path is not None else default_store_path()))
