"""How LLM calls fail: only transient errors are retried, a refused endpoint stops at once, one failed shared
call is one failure for all its waiters, a query in the base URL is kept, and secrets stay out of messages."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.llm.client import EndpointUnreachable, LLMCallError, LLMClient
from critiquebench.store.db import connect
from tests.scripted_server import ScriptedServer

MakeLLM = Callable[..., LLMClient]
ASK = [{"role": "user", "content": "Solve 1 2 3 4"}]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_query_in_the_base_url_is_kept_on_every_request(scripted_server: ScriptedServer, make_llm: MakeLLM) -> None:
    llm = make_llm(base_url=scripted_server.base_url + "?api-key=K1&deployment=d")
    assert llm.complete(ASK).text == "OK"
    assert llm.complete([{"role": "user", "content": "again"}]).text == "OK"
    assert scripted_server.paths == ["/v1/chat/completions?api-key=K1&deployment=d"] * 2
    # the identity (and so the cache) does not depend on the query
    assert llm.key(ASK) == make_llm().key(ASK) and llm.complete(ASK).cached


def test_only_transient_errors_are_retried(scripted_server: ScriptedServer, make_llm: MakeLLM) -> None:
    scripted_server.queue_fault("error200")  # a 200 carrying an error object: retrying asks the same again
    with pytest.raises(LLMCallError, match="1 attempt"):
        make_llm().complete(ASK)
    assert scripted_server.requests == 1
    (event,) = make_llm().cache.db.query("SELECT * FROM llm_events WHERE kind = 'failed'")
    assert "content policy" in event["error"]


def test_a_refused_connection_fails_at_once_without_secrets(make_llm: MakeLLM) -> None:
    url = f"http://user:hunter2@127.0.0.1:{closed_port()}/v1?api-key=sekrit"
    llm = make_llm(base_url=url, backoff_s=1.0, max_backoff_s=8.0, max_retries=6)  # retries would take > 30 s
    started = time.monotonic()
    with pytest.raises(EndpointUnreachable) as caught:
        llm.complete(ASK)
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert "connection refused" in message and "hunter2" not in message and "sekrit" not in message
    (event,) = llm.cache.db.query("SELECT * FROM llm_events WHERE kind = 'failed'")  # still recorded
    assert "hunter2" not in event["error"] and "sekrit" not in event["error"]


def test_one_failed_shared_call_is_one_failure_for_all_waiters(
    scripted_server: ScriptedServer, make_llm: MakeLLM
) -> None:
    scripted_server.latency = 0.1
    scripted_server.queue_fault("500", times=50)
    llm = make_llm(max_retries=2, concurrency=8)

    def ask(_: int) -> str:
        try:
            return llm.complete(ASK).text
        except LLMCallError as exc:
            return type(exc).__name__

    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(ask, range(6)))
    assert outcomes == ["LLMCallError"] * 6
    assert scripted_server.requests == 3  # one retry chain (3 attempts), not one per waiter
    assert llm.usage()["failed"] == 1
    assert len(list(llm.cache.db.query("SELECT * FROM llm_events WHERE kind = 'failed'"))) == 1
    scripted_server.reply = "fixed"
    with scripted_server._lock:
        scripted_server._queued.clear()
    assert llm.complete(ASK).text == "fixed"  # a later ask (a resume) tries again


def test_a_study_against_a_closed_port_stops_at_once_with_one_line(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    url = f"http://127.0.0.1:{closed_port()}/v1"
    args = ["run", "dead", "--domains", "game24", "--instances", "gen:6:1", "--schemes", "standard,sampling:k=3",
            "--temperature", "0.7", "--base-url", url, "--concurrency", "2", "--store", str(store)]  # fmt: skip
    started = time.monotonic()
    result = CliRunner().invoke(app, args)
    assert time.monotonic() - started < 20  # the hand-written retries took 45 s here
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: cannot connect to http://127.0.0.1:")
    assert "connection refused" in lines[0] and "critiquebench resume dead" in lines[0]


def test_secrets_in_the_base_url_never_reach_the_store(
    scripted_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    store = tmp_path / "s.sqlite"
    host = scripted_server.base_url.removeprefix("http://")
    secret_url = f"http://user:hunter2@{host}?api-key=sekrit1"

    def run(url: str) -> Any:
        args = ["run", "s", "--domains", "game24", "--instances", "gen:2:1", "--schemes", "standard",
                "--base-url", url, "--store", str(store)]  # fmt: skip
        return CliRunner().invoke(app, args)

    assert run(secret_url).exit_code == 0
    assert scripted_server.paths[0].endswith("?api-key=sekrit1")  # the query still reaches the endpoint
    raw = store.read_bytes()
    assert b"hunter2" not in raw and b"sekrit1" not in raw
    (stored,) = connect(store).execute("SELECT config FROM studies").fetchone()
    assert f"http://***@{host}?api-key=***" in stored
    # a new key for the same endpoint is the same study (identity does not depend on secrets) ...
    assert run(secret_url.replace("sekrit1", "sekrit2")).exit_code == 0
    # ... and resuming needs the full URL again, from the environment
    resumed = CliRunner().invoke(app, ["resume", "s", "--store", str(store)])
    assert resumed.exit_code == 2 and "secrets are never stored: set OPENAI_BASE_URL" in resumed.output
    assert "hunter2" not in resumed.output
    monkeypatch.setenv("OPENAI_BASE_URL", secret_url)
    assert CliRunner().invoke(app, ["resume", "s", "--store", str(store)]).exit_code == 0
