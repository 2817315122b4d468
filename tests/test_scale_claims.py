"""Run claims: two `resume` processes on one interrupted study split its runs, and no call is paid twice."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from critiquebench.store.cache import CallCache
from critiquebench.store.claims import process_owner, take_lease
from critiquebench.store.db import connect
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import ROOT, game24_reply, invoke, report, run_args

SCHEMES = "standard,sound-first:rounds=3"


def done_runs(store: Path | str, study: str) -> int:
    if isinstance(store, Path) and not store.exists():
        return 0
    db = connect(store)
    try:
        return db.execute("SELECT COUNT(*) FROM runs WHERE study = ? AND status = 'done'", [study]).fetchone()[0]
    except Exception:  # noqa: BLE001 - the tables may not exist yet
        return 0


def asked(server: ScriptedServer) -> list[str]:
    return [json.dumps(messages, sort_keys=True) for messages, _ in server.calls]


def numbers(store: Path | str, study: str) -> list[dict[str, Any]]:
    """Table 1 without cache hits (a run re-done after a kill finds its earlier calls in the cache)."""
    return [{k: v for k, v in r.items() if k != "cache_hits"} for r in report(study, store)]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], list[str]]:
    """The study below run whole, without a kill (once for both backends): its Table 1 and the calls it asked."""
    with ScriptedServer(reply=game24_reply, latency=0.0) as clean:
        whole = tmp_path_factory.mktemp("whole") / "whole.sqlite"
        invoke(*run_args("s", whole, clean, "901-930", SCHEMES, concurrency=4))
        return numbers(whole, "s"), asked(clean)


# the postgres variant takes its store by getfixturevalue, which conftest's grouping cannot see: marked here
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_two_resumes_of_a_killed_study_run_every_run_once(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, fork_server: Any,
    uninterrupted: tuple[list[dict[str, Any]], list[str]],
) -> None:  # fmt: skip
    """The first process and both resumes are real `critiquebench` processes (forked from the preloaded CLI,
    tests/forked_process.py): the kill is a SIGKILL of the command itself, and the claims name its pid."""
    env = dict(os.environ)  # the default lease: a loaded machine must not expire a live one
    store: Any = tmp_path / "killed.sqlite" if backend == "sqlite" else request.getfixturevalue("pg_store")
    with ScriptedServer(reply=game24_reply, latency=0.05) as server:
        args = run_args("s", store, server, "901-930", SCHEMES, concurrency=4)
        first = fork_server.popen(args, cwd=ROOT, env=env)
        deadline = time.monotonic() + 120
        while done_runs(store, "s") < 6 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        first.kill()  # SIGKILL: its claims and in-flight markers stay behind in the store
        first.communicate(timeout=60)
        before = done_runs(store, "s")
        assert 6 <= before < 60
        # 0.05 s a call only had to leave the kill midway; 0.01 s still keeps the resumes' calls in flight beside
        # each other (two processes taking turns at the runs) without 0.05 s of waiting for each of their ~50 calls
        server.latency = 0.01
        resume = ["resume", "s", "--concurrency", "2", "--store", str(store)]
        procs = [fork_server.popen(resume, cwd=ROOT, env=env) for _ in range(2)]
        outs = [p.communicate(timeout=240) for p in procs]
        for proc, (out, err) in zip(procs, outs, strict=True):
            assert proc.returncode == 0, err[-2000:]
            assert "Table 1" in out and "Traceback" not in err
        killed_calls = asked(server)

    clean_numbers, clean_calls = uninterrupted

    # every run was executed by exactly one of the two resumes
    done_now = [int(re.search(r"(\d+) done now", err).group(1)) for _, err in outs]  # type: ignore[union-attr]
    assert sum(done_now) == 60 - before, done_now
    # the answered calls are the uninterrupted study's, plus at most the 4 in flight at the kill
    assert sorted(set(killed_calls)) == sorted(clean_calls)
    assert len(clean_calls) <= len(killed_calls) <= len(clean_calls) + 4
    assert numbers(store, "s") == clean_numbers
    # the resumes released their claims; only the killed process's may remain (for runs it finished)
    owners = [row[0] for row in connect(store).execute("SELECT owner FROM run_claims").fetchall()]
    assert all(owner.split(":")[-2] == str(first.pid) for owner in owners), owners


def test_an_expired_claim_is_taken_over_and_a_live_one_is_not(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "store.sqlite")
    db = cache.db
    assert take_lease(db, "run_claims", "r", "elsewhere:1:a", 60)
    assert not take_lease(db, "run_claims", "r", process_owner(), 60)  # live, and not this host's process
    assert take_lease(db, "run_claims", "e", "elsewhere:1:a", -1)  # already expired
    assert take_lease(db, "run_claims", "e", process_owner(), 60)
    # a marker of a process of this host that is gone is taken over at once
    dead = f"{socket.gethostname()}:{_exited_pid()}:x"
    assert take_lease(db, "llm_inflight", "k", dead, 60)
    assert cache.reserve("k", 60)
    cache.unreserve("k")
    assert db.execute("SELECT COUNT(*) FROM llm_inflight").fetchone()[0] == 0


def test_a_call_answered_since_the_look_up_is_not_reserved_again(tmp_path: Path) -> None:
    """A process that missed the cache reserves the call; if another process stored its answer in between
    (and dropped its marker, or died before dropping it), the reservation is refused and the answer is found:
    the call is not paid twice."""
    cache = CallCache(tmp_path / "store.sqlite")
    try:
        key = cache.put_recorded("m", "e", [{"role": "user", "content": "q"}], "answer")
        assert not cache.reserve(key, 60)  # no marker: the answer alone refuses it
        dead = f"{socket.gethostname()}:{_exited_pid()}:x"
        assert take_lease(cache.db, "llm_inflight", key, dead, 60)  # the answerer died before dropping it
        assert not cache.reserve(key, 60)
        assert cache.answer(key) is not None
        assert cache.reserve("unanswered", 60)
    finally:
        cache.close()


def test_a_killed_but_unreaped_owner_is_taken_over_at_once(tmp_path: Path) -> None:
    """A SIGKILLed worker whose parent has not collected it yet (a zombie) is gone: its claims move at once."""
    cache = CallCache(tmp_path / "store.sqlite")
    proc = subprocess.Popen(["sleep", "60"])
    try:
        assert take_lease(cache.db, "run_claims", "r", f"{socket.gethostname()}:{proc.pid}:w", 60)
        assert not take_lease(cache.db, "run_claims", "r", process_owner(), 60)  # alive: its claim holds
        proc.kill()
        deadline = time.monotonic() + 10
        while "Z" not in Path(f"/proc/{proc.pid}/stat").read_text().rpartition(")")[2].split()[:1]:
            assert time.monotonic() < deadline, "the killed child never became a zombie"
            time.sleep(0.01)
        os.kill(proc.pid, 0)  # still "exists" to a signal probe: the case this covers
        assert take_lease(cache.db, "run_claims", "r", process_owner(), 60)
    finally:
        proc.kill()
        proc.wait()
        cache.close()


def _exited_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    try:
        os.kill(proc.pid, 0)
    except ProcessLookupError:
        return proc.pid
    return 2**22 + 1  # beyond pid_max: never a live process
