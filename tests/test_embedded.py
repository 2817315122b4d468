"""The embedded default model end to end: served, answered through LLMClient, stopped, replayable."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from critiquebench.llm.client import LLMSettings, open_llm
from critiquebench.store.cache import CallCache


def _embedded_children() -> set[int]:
    """Pids of this process's children running the embedded server."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"critiquebench.llm.embedded" in cmdline:
            found.add(int(entry.name))
    return found


@pytest.mark.embedded
def test_embedded_model_answers_then_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    settings = LLMSettings(max_tokens=24)
    cache = CallCache(tmp_path / "store.sqlite")
    messages = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    with open_llm(settings, cache) as llm:
        servers = _embedded_children()
        assert len(servers) == 1
        completion = llm.complete(messages)
    assert completion.text.strip() and not completion.cached
    assert 0 < completion.completion_tokens <= 24 and not completion.tokens_estimated
    assert llm.endpoint == "embedded:SmolLM2-135M-Instruct.Q4_1.gguf"
    (pid,) = servers
    assert not Path(f"/proc/{pid}").exists() and not _embedded_children()  # no server survives the block
    with open_llm(replace(settings, replay=True), cache) as replay:  # a rerun needs no server
        assert replay.complete(messages).text == completion.text
