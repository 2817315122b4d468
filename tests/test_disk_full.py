"""A store that runs out of room mid-study (issue 26 item 9), with a file size limit (`ulimit -f`, which makes a
write past it fail as on a full disk): the command ends with one line and a non-zero exit, nothing finished is
lost, and a resume with room again gives the report of an uninterrupted run."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.forked_process import ForkServer
from tests.scripted_server import ScriptedServer
from tests.test_scale_claims import done_runs, numbers
from tests.test_study_cli import ROOT, game24_reply, invoke

LIMIT_KB = 700  # the store's file outgrows this part-way through the study
# `python -m critiquebench ARGS...` under `ulimit -f KB` (soft and hard, in KiB as bash's), run by the fork server's
# forked-python: a process of its own, forked from the preloaded CLI rather than an interpreter importing it anew
LIMITED = """
import resource, runpy, sys
limit = int(sys.argv[1]) * 1024
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv = ["critiquebench", *sys.argv[2:]]
runpy.run_module("critiquebench", run_name="__main__", alter_sys=True)
"""


def limited(fork_server: ForkServer, kilobytes: int, args: list[str]) -> Any:
    """The command's process with writes past `kilobytes` failing as on a full disk (`ulimit -f`)."""
    return fork_server.run(["-c", LIMITED, str(kilobytes), *args], program="forked-python", cwd=ROOT,
                           env={**os.environ, "NO_COLOR": "1"}, timeout=300)  # fmt: skip


def study(store: Path, server: ScriptedServer) -> list[str]:
    return ["run", "full", "--domains", "game24,blocksworld", "--instances", "gen:6:21", "--schemes",
            "llm-llm,sound-first,sampling:k=5", "--temperature", "0.7", "--model", "scripted", "--base-url",
            server.base_url,
            "--concurrency", "4", "--store", str(store), "--no-progress"]  # fmt: skip


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study run whole with room, in this process, once for the module (the tests copy it, or only read it)."""
    store = tmp_path_factory.mktemp("whole") / "whole.sqlite"
    with ScriptedServer(reply=game24_reply) as clean:
        invoke(*study(store, clean))
    return store


def copy_of(store: Path, to: Path) -> Path:
    with closing(sqlite3.connect(store)) as source, closing(sqlite3.connect(to)) as copy:
        source.backup(copy)
    return to


def test_a_full_store_ends_the_study_with_one_line_and_a_resume_finishes_it(
    tmp_path: Path, fork_server: ForkServer, whole: Path
) -> None:
    store = tmp_path / "full.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        full = limited(fork_server, LIMIT_KB, study(store, server))
        lines = [line for line in (full.stdout + full.stderr).splitlines() if line.strip()]
        assert full.returncode == 2 and len(lines) == 1, full.stderr[-3000:]
        assert lines[0].startswith(f"error: store {store} is full (") and lines[0].endswith(
            "free some space; nothing is lost: critiquebench resume full"
        ), lines[0]
        assert done_runs(store, "full") < 36  # it stopped part-way

        resumed = invoke("resume", "full", "--store", str(store), "--no-progress")
        assert "Table 1" in resumed.stdout and done_runs(store, "full") == 36

    assert numbers(store, "full") == numbers(whole, "full")
    with closing(sqlite3.connect(store)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_store_copy_on_a_full_disk_leaves_no_file(tmp_path: Path, fork_server: ForkServer, whole: Path) -> None:
    """Issue 45 item 7: `store copy` wrote its new store in place and left a 0-byte (or partial) file when the disk
    filled; it now writes through `critiquebench.outputs` (a file beside it, renamed in once whole)."""
    source = copy_of(whole, tmp_path / "source.sqlite")
    size_kb = source.stat().st_size // 1024
    copy = tmp_path / "copy.sqlite"
    full = limited(fork_server, size_kb // 2, ["store", "copy", str(source), str(copy)])
    lines = [line for line in (full.stdout + full.stderr).splitlines() if line.strip()]
    assert full.returncode == 2 and len(lines) == 1, full.stderr[-3000:]
    assert lines[0].startswith(f"error: cannot write {copy}: "), lines[0]
    assert sorted(p.name for p in tmp_path.iterdir() if "copy" in p.name) == []  # nothing, not a 0-byte file
    done = invoke("store", "copy", str(source), str(copy))  # with room: the whole store
    assert done.stdout.startswith(f"copied {source} -> {copy}: ")
    assert numbers(copy, "full") == numbers(source, "full")
    link = tmp_path / "link.sqlite"
    link.symlink_to(source)
    refused = invoke("store", "copy", str(source), str(link), check=2)
    assert "is the store" in refused.stderr and "itself" in refused.stderr
