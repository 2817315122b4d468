"""Stores that are not ours (issue 26 item 8): a FIFO given as the store, and another program's SQLite file, are
refused with one line by every command, before anything is written (a FIFO used to block every command for
good; a foreign file got critiquebench's tables written into it)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests import forked_cli
from tests.scripted_server import ScriptedServer

PROJECT = Path(__file__).resolve().parents[1]


def critiquebench(forked: dict[str, str], *args: str, url: str) -> subprocess.CompletedProcess[str]:
    """The command in its own process, forked from one that imported the CLI (`forked_light_env`)."""
    env = {**forked, "OPENAI_BASE_URL": url, "NO_COLOR": "1"}
    return forked_cli.run(["critiquebench", *args], env, cwd=PROJECT, timeout=60)


COMMANDS = (
    ("run", "s", "--domains", "game24", "--instances", "gen:1:1", "--schemes", "standard", "--model", "fake"),
    ("studies",),
    ("report", "s"),
    ("cache", "stats"),
    ("store", "copy"),
)


def foreign_sqlite(path: Path) -> None:
    """A browser history file, as another program keeps it."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
        conn.execute("INSERT INTO moz_places (url) VALUES ('https://example.org/')")
    conn.close()


@pytest.mark.parametrize("kind", ["fifo", "foreign"])
def test_a_store_that_is_not_ours_is_refused_with_one_line_and_left_untouched(
    kind: str, tmp_path: Path, forked_light_env: dict[str, str]
) -> None:
    store = tmp_path / "store.sqlite"
    if kind == "fifo":
        os.mkfifo(store)
    else:
        foreign_sqlite(store)
    before = sorted(os.listdir(tmp_path)), hashlib.sha256(store.read_bytes()).hexdigest() if kind != "fifo" else ""
    with ScriptedServer(reply="(1 + 2 + 3) * 4") as server:
        for command in COMMANDS:
            args = [*command, str(store), str(tmp_path / "copy.sqlite")] if command[0] == "store" else \
                [*command, "--store", str(store)]  # fmt: skip
            done = critiquebench(forked_light_env, *args, url=server.base_url)  # a hang fails here (timeout)
            lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
            assert done.returncode == 2 and len(lines) == 1, (command, done.stdout, done.stderr)
            wanted = "is a FIFO, not a file" if kind == "fifo" else "another program's SQLite file (tables moz_places)"
            assert lines[0].startswith(f"error: store {store} ") and wanted in lines[0], lines[0]
        assert server.requests == 0
    after = sorted(os.listdir(tmp_path)), hashlib.sha256(store.read_bytes()).hexdigest() if kind != "fifo" else ""
    assert after == before  # no table, no -wal/-shm file, no copy written
