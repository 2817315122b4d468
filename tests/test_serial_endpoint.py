"""The embedded model's server answers one request at a time and works on each until it answers. A call that hit
its timeout used to be sent again while the server was still working on it, so on a busy machine every retry put
the same work in its queue again (the main job had finished 12 of 40 runs after 30 minutes). A serial endpoint's
call is waited for: one request per call, and the wait is said once."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest

from critiquebench.llm.client import LLMClient, LLMSettings
from critiquebench.store.cache import CallCache
from tests.scripted_server import ScriptedServer


def settings_for(server: ScriptedServer, serial: bool) -> LLMSettings:
    return LLMSettings(model="scripted", base_url=server.base_url, timeout=0.3, concurrency=1, serial=serial,
                       backoff_s=0.01, max_backoff_s=0.05, max_retries=3)  # fmt: skip


def test_a_serial_endpoint_slower_than_the_timeout_gets_each_call_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with ScriptedServer(reply="(4 + 4) * (10 - 7) = 24", latency=0.75) as server:  # each answer 2.5x the timeout
        llm = LLMClient(settings_for(server, serial=True), CallCache(tmp_path / "s.sqlite"))
        with caplog.at_level(logging.WARNING):
            answers = [llm.complete([{"role": "user", "content": f"puzzle {i}"}]).text for i in range(2)]
        assert answers == ["(4 + 4) * (10 - 7) = 24"] * 2
        assert server.requests == 2 and server.max_in_flight == 1  # never a second copy of a call
    slow = [r.getMessage() for r in caplog.records if "is slow" in r.getMessage()]
    assert len(slow) == 1 and "waited for, not sent again" in slow[0]


def test_an_ordinary_endpoint_past_the_timeout_is_retried(tmp_path: Path) -> None:
    """The contrast: elsewhere a timeout is a lost request, retried (what piled up on the embedded server)."""
    with ScriptedServer(reply="24", latency=0.75) as server:
        llm = LLMClient(replace(settings_for(server, serial=False), max_retries=1), CallCache(tmp_path / "s.sqlite"))
        with pytest.raises(Exception, match="timed out|deadline|timeout"):
            llm.complete([{"role": "user", "content": "puzzle"}])
        assert server.requests == 2
