"""The call deadline covers a reply's headers, not only its body (issue 45 item 4): a server that sends its status
line and then one header line every 0.2 s never lets a read wait the timeout, and hung a call for as long as it
went on (240 s in the audit, where it never ended). A loopback server of that kind here, stopped by the test, one
line every 0.1 s against timeouts of 0.5 s: every read still ends well within the timeout, and each of the 3-8
attempts a test waits out costs half a second, not one or two."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from critiquebench.llm.client import LLMCallError, LLMClient, LLMSettings
from critiquebench.store.cache import CallCache
from tests.forked_process import ForkServer


@pytest.fixture
def trickling_headers() -> Iterator[tuple[str, list[int]]]:
    """(base URL, requests seen) of a server that answers every request with `HTTP/1.1 200 OK` and then one
    `X-A: b` header line every 0.1 s, never the blank line that ends the headers (until the test ends)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    seen: list[int] = []

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            seen.append(1)
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                while not stop.wait(0.1):
                    conn.sendall(b"X-A: b\r\n")
            except OSError:  # the client gave up on it
                pass

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", seen
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def test_headers_that_trickle_fail_at_the_deadline(tmp_path: Path, trickling_headers: tuple[str, list[int]]) -> None:
    base_url, seen = trickling_headers
    with CallCache(tmp_path / "s.sqlite") as cache:
        client = LLMClient(LLMSettings(model="m", base_url=base_url, timeout=0.5, max_retries=0), cache)
        started = time.monotonic()
        with pytest.raises(LLMCallError, match=r"no complete reply within 0\.5 s") as failed:
            client.complete([{"role": "user", "content": "hi"}])
        took = time.monotonic() - started
    assert "after 1 attempt" in str(failed.value) and len(seen) == 1
    assert 0.5 <= took < 30.0, took  # the deadline plus building the chat model (slow under load); not for ever


def test_retries_of_trickling_headers_each_end_at_the_deadline(
    tmp_path: Path, trickling_headers: tuple[str, list[int]]
) -> None:
    base_url, seen = trickling_headers
    settings = LLMSettings(model="m", base_url=base_url, timeout=0.5, max_retries=2, backoff_s=0.01, max_backoff_s=0.05)
    with CallCache(tmp_path / "s.sqlite") as cache:
        started = time.monotonic()
        with pytest.raises(LLMCallError, match=r"no complete reply within 0\.5 s"):
            LLMClient(settings, cache).complete([{"role": "user", "content": "hi"}])
        took = time.monotonic() - started
    assert len(seen) == 3 and took < 40.0, (len(seen), took)


def test_a_run_against_trickling_headers_ends_in_lines_not_a_hang(
    tmp_path: Path, trickling_headers: tuple[str, list[int]], fork_server: ForkServer
) -> None:
    """The whole command: the endpoint check (urllib, which reads at most 100 header lines and then raised a
    traceback) and every call end at their deadlines; the run is failed, resumable, with no traceback. (The
    command's process is forked from the preloaded CLI, tests/forked_process.py.)"""
    base_url, seen = trickling_headers
    args = ["run", "t", "--domains", "game24", "--instances", "gen:1:1",
            "--schemes", "standard", "--model", "m", "--base-url", base_url, "--timeout", "0.5", "--store",
            str(tmp_path / "s.sqlite"), "--no-progress"]  # fmt: skip
    quick_retries = {**os.environ, "CRITIQUEBENCH_BACKOFF_S": "0.001"}  # 0.063 s of backoff in all, not up to 63 s
    done = fork_server.run(args, timeout=240, env=quick_retries)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "no complete reply within 0.5 s" in done.stderr
    assert len(seen) == 8  # the endpoint check, then the call's first attempt and 6 retries, each cut at 0.5 s
