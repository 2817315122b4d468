"""A store that runs out of room mid-study (issue 26 item 9), with a file size limit (`ulimit -f`, which makes a
write past it fail as on a full disk): the command ends with one line and a non-zero exit, nothing finished is
lost, and a resume with room again gives the report of an uninterrupted run."""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from tests.scripted_server import ScriptedServer
from tests.test_scale_claims import done_runs, numbers
from tests.test_study_cli import ROOT, game24_reply, invoke

LIMIT_KB = 700  # the store's file outgrows this part-way through the study


def study(store: Path, server: ScriptedServer) -> list[str]:
    return ["run", "full", "--domains", "game24,blocksworld", "--instances", "gen:6:21", "--schemes",
            "llm-llm,sound-first,sampling:k=5", "--temperature", "0.7", "--model", "scripted", "--base-url",
            server.base_url,
            "--concurrency", "4", "--store", str(store), "--no-progress"]  # fmt: skip


def test_a_full_store_ends_the_study_with_one_line_and_a_resume_finishes_it(tmp_path: Path) -> None:
    store = tmp_path / "full.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        command = shlex.join([sys.executable, "-m", "critiquebench", *study(store, server)])
        limited = subprocess.run(["bash", "-c", f"ulimit -f {LIMIT_KB}; exec {command}"], capture_output=True,
                                 text=True, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"}, timeout=300)  # fmt: skip
        lines = [line for line in (limited.stdout + limited.stderr).splitlines() if line.strip()]
        assert limited.returncode == 2 and len(lines) == 1, limited.stderr[-3000:]
        assert lines[0].startswith(f"error: store {store} is full (") and lines[0].endswith(
            "free some space; nothing is lost: critiquebench resume full"
        ), lines[0]
        assert done_runs(store, "full") < 36  # it stopped part-way

        resumed = invoke("resume", "full", "--store", str(store), "--no-progress")
        assert "Table 1" in resumed.stdout and done_runs(store, "full") == 36

    with ScriptedServer(reply=game24_reply) as clean:
        local = tmp_path / "clean.sqlite"
        invoke(*study(local, clean))
    assert numbers(store, "full") == numbers(local, "full")
    with closing(sqlite3.connect(store)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_store_copy_on_a_full_disk_leaves_no_file(tmp_path: Path) -> None:
    """Issue 45 item 7: `store copy` wrote its new store in place and left a 0-byte (or partial) file when the disk
    filled; it now writes through `critiquebench.outputs` (a file beside it, renamed in once whole)."""
    source = tmp_path / "source.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        invoke(*study(source, server))
    size_kb = source.stat().st_size // 1024
    copy = tmp_path / "copy.sqlite"
    command = shlex.join([sys.executable, "-m", "critiquebench", "store", "copy", str(source), str(copy)])
    limited = subprocess.run(["bash", "-c", f"ulimit -f {size_kb // 2}; exec {command}"], capture_output=True,
                             text=True, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"}, timeout=300)  # fmt: skip
    lines = [line for line in (limited.stdout + limited.stderr).splitlines() if line.strip()]
    assert limited.returncode == 2 and len(lines) == 1, limited.stderr[-3000:]
    assert lines[0].startswith(f"error: cannot write {copy}: "), lines[0]
    assert sorted(p.name for p in tmp_path.iterdir() if "copy" in p.name) == []  # nothing, not a 0-byte file
    done = invoke("store", "copy", str(source), str(copy))  # with room: the whole store
    assert done.stdout.startswith(f"copied {source} -> {copy}: ")
    assert numbers(copy, "full") == numbers(source, "full")
    link = tmp_path / "link.sqlite"
    link.symlink_to(source)
    refused = invoke("store", "copy", str(source), str(link), check=2)
    assert "is the store" in refused.stderr and "itself" in refused.stderr
