"""LLMClient through the real ChatOpenAI client, against the scripted loopback server and a real cache."""

from __future__ import annotations

import itertools
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.llm.client import (
    BudgetExceeded,
    Completion,
    LLMCallError,
    LLMClient,
    LLMSettings,
    ReplayMiss,
    chat_model,
    endpoint_identity,
)
from critiquebench.llm.embedded import embedded_endpoint_id
from critiquebench.store.cache import CallCache
from tests.scripted_server import ScriptedServer

MakeLLM = Callable[..., LLMClient]
ASK = [{"role": "system", "content": "You solve puzzles."}, {"role": "user", "content": "Solve 1 2 3 4"}]


def _events(cache: CallCache, kind: str) -> list[dict]:
    return list(cache.db.query("SELECT * FROM llm_events WHERE kind = ?", [kind]))


def _numbered(server: ScriptedServer) -> None:
    """Every answer differs, as samples at temperature > 0 would."""
    counter = itertools.count()
    lock = threading.Lock()

    def reply(messages: list, params: dict) -> str:
        with lock:
            return f"draw {next(counter)}"

    server.reply = reply


def test_miss_then_hit_answers_from_cache(scripted_server: ScriptedServer, scripted_llm: LLMClient) -> None:
    scripted_server.reply = [("1 2 3 4", "(1+2+3)*4")]
    first = scripted_llm.complete(ASK)
    second = scripted_llm.complete(ASK)
    assert (first.text, first.cached, second.text, second.cached) == ("(1+2+3)*4", False, "(1+2+3)*4", True)
    assert second.key == first.key
    assert (
        (second.prompt_tokens, second.completion_tokens)
        == (first.prompt_tokens, first.completion_tokens)
        != (0, 0)
    )
    assert scripted_server.answered == 1
    stats = scripted_llm.cache.stats()["total"]
    assert (stats["calls"], stats["hits"], stats["recorded"]) == (1, 1, 1)


def test_samples_are_shared_across_k(scripted_server: ScriptedServer, scripted_llm: LLMClient) -> None:
    _numbered(scripted_server)
    fifteen = [scripted_llm.complete(ASK, sample=i) for i in range(15)]
    assert len({c.key for c in fifteen}) == 15 and len({c.text for c in fifteen}) == 15  # temperature 0 too
    again = [scripted_llm.complete(ASK, sample=i) for i in range(15)]  # self-consistency with the same k
    assert scripted_server.answered == 15 and all(c.cached for c in again)
    assert [c.text for c in again] == [c.text for c in fifteen]
    twenty_five = [scripted_llm.complete(ASK, sample=i) for i in range(25)]
    assert scripted_server.answered == 25
    assert sum(not c.cached for c in twenty_five) == 10


def test_cache_survives_a_new_client_and_server_port(tmp_path: Path) -> None:
    """A rerun (new client, local server on a new port, fixed endpoint_id) makes no new call."""
    cache = CallCache(tmp_path / "store.sqlite")
    with ScriptedServer(reply="42") as first:
        settings = LLMSettings(model="m", base_url=first.base_url, endpoint_id="local-vllm")
        LLMClient(settings, cache).complete(ASK)
    with ScriptedServer(reply="other") as second:
        settings = LLMSettings(model="m", base_url=second.base_url, endpoint_id="local-vllm")
        again = LLMClient(settings, CallCache(tmp_path / "store.sqlite")).complete(ASK)
        assert (again.text, again.cached, second.requests) == ("42", True, 0)


def test_endpoint_identity_has_no_credentials_or_port_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    assert endpoint_identity("HTTPS://user:pw@API.example.com/v1/?key=x") == "https://api.example.com/v1"
    assert endpoint_identity("http://localhost:8000/v1///") == "http://localhost:8000/v1"
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert LLMSettings().endpoint() == embedded_endpoint_id() == "embedded:SmolLM2-135M-Instruct.Q4_1.gguf"


def test_sampling_params_reach_the_server(scripted_server: ScriptedServer, make_llm: MakeLLM) -> None:
    make_llm(max_tokens=24, stop=("\n\n",), temperature=0.7).complete(ASK)
    params = scripted_server.calls[-1][1]
    assert params["max_tokens"] == 24 and params["stop"] == ["\n\n"] and params["temperature"] == 0.7
    assert scripted_server.calls[-1][0] == ASK


def test_retry_after_is_honoured_on_429(scripted_server: ScriptedServer, scripted_llm: LLMClient) -> None:
    scripted_server.retry_after = 0.2  # ten times the client's own backoff at these attempts (5-20 ms)
    scripted_server.queue_fault("429", times=2)
    assert scripted_llm.complete(ASK).text == "OK"
    arrivals = scripted_server.arrivals
    assert scripted_server.requests == 3
    assert all(b - a >= 0.19 for a, b in itertools.pairwise(arrivals))


@pytest.mark.parametrize("fault", ["500", "503", "hang", "drop", "garbage"])
def test_transient_faults_are_retried(scripted_server: ScriptedServer, make_llm: MakeLLM, fault: str) -> None:
    scripted_server.queue_fault(fault)
    completion = make_llm(timeout=0.5).complete(ASK)
    assert (completion.text, completion.cached) == ("OK", False)
    assert scripted_server.requests == 2 and scripted_server.answered == 1


def test_bad_request_is_not_retried(scripted_server: ScriptedServer, scripted_llm: LLMClient) -> None:
    scripted_server.queue_fault("400")
    with pytest.raises(LLMCallError, match="400"):
        scripted_llm.complete(ASK)
    assert scripted_server.requests == 1


def test_final_failure_is_recorded_and_a_resume_retries(
    scripted_server: ScriptedServer, make_llm: MakeLLM
) -> None:
    llm = make_llm(max_retries=2)
    scripted_server.queue_fault("500", times=3)
    with pytest.raises(LLMCallError, match="3 attempt"):
        llm.complete(ASK)
    (failed,) = _events(llm.cache, "failed")
    assert "500" in failed["error"] and failed["key"] == llm.key(ASK)
    assert llm.cache.get(llm.key(ASK)) is None  # failures are not answers
    assert llm.complete(ASK).cached is False  # so a resumed run asks again
    assert llm.cache.stats()["total"]["failed"] == 1


def test_a_rate_limited_first_attempt_is_retried_after_retry_after_and_logged(
    scripted_server: ScriptedServer, make_llm: MakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    """The first attempt is made outside tenacity; its transient failure is retried as tenacity would have:
    the server's Retry-After waited, one warning naming attempt 1 and the wait, one retry counted."""
    llm = make_llm(max_retries=2, backoff_s=30.0)  # a backoff would be 15-30 s: the 0.01 s is the Retry-After
    scripted_server.retry_after = 0.01
    scripted_server.queue_fault("429", times=2)
    with caplog.at_level(logging.WARNING, logger="critiquebench.llm.client"):
        done = llm.complete(ASK)
    assert not done.cached and scripted_server.requests == 3
    said = [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]
    assert [m.split(" failed")[0] for m in said] == ["scripted attempt 1", "scripted attempt 2"], said
    assert all(m.endswith("retrying in 0.01s") for m in said), said
    assert llm.usage()["retries"] == 2 and llm.usage()["failed"] == 0


def test_fault_injection_batch_loses_and_duplicates_nothing(
    scripted_server: ScriptedServer, make_llm: MakeLLM
) -> None:
    scripted_server.fault_rate = 0.3
    scripted_server.faults = ("429", "500", "503", "drop", "garbage")
    scripted_server.retry_after = 0.01
    scripted_server.reply = lambda messages, params: messages[-1]["content"].upper()
    llm = make_llm(concurrency=16, max_retries=6)
    prompts = [[{"role": "user", "content": f"question {i}"}] for i in range(200)]

    def ask(messages: list[dict[str, str]]) -> Completion | LLMCallError:
        try:
            return llm.complete(messages)
        except LLMCallError as exc:
            return exc

    with ThreadPoolExecutor(16) as pool:
        outcomes = list(pool.map(ask, prompts))
    answered = [o for o in outcomes if isinstance(o, Completion)]
    failed = [o for o in outcomes if isinstance(o, LLMCallError)]
    assert len(answered) + len(failed) == 200
    assert all(c.text == f"QUESTION {i}" for i, c in enumerate(outcomes) if isinstance(c, Completion))
    assert scripted_server.faulted > 0
    assert llm.cache.db["llm_calls"].count == len(answered) == scripted_server.answered
    assert len(_events(llm.cache, "call")) == len(answered)
    assert len(_events(llm.cache, "failed")) == len(failed)


def test_concurrent_identical_calls_make_one_request(
    scripted_server: ScriptedServer, make_llm: MakeLLM
) -> None:
    scripted_server.latency = 0.05
    llm = make_llm(concurrency=8)
    with ThreadPoolExecutor(8) as pool:
        texts = list(pool.map(lambda _: llm.complete(ASK).text, range(8)))
    assert texts == ["OK"] * 8 and scripted_server.answered == 1


def test_concurrency_limit_per_endpoint(scripted_server: ScriptedServer, make_llm: MakeLLM) -> None:
    scripted_server.latency = 0.05
    llm = make_llm(concurrency=2)
    prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(llm.complete, prompts))
    assert scripted_server.answered == 8 and scripted_server.max_in_flight <= 2


def test_budget_cap_stops_new_calls_but_not_hits(scripted_server: ScriptedServer, make_llm: MakeLLM) -> None:
    llm = make_llm(budget_tokens=5)
    first = llm.complete(ASK)
    assert first.prompt_tokens + first.completion_tokens >= 5
    with pytest.raises(BudgetExceeded, match="budget of 5"):
        llm.complete([{"role": "user", "content": "something new"}])
    assert llm.complete(ASK).cached and scripted_server.answered == 1
    assert llm.usage()["calls"] == 1


def test_missing_usage_is_estimated(scripted_server: ScriptedServer, scripted_llm: LLMClient) -> None:
    scripted_server.usage = False
    scripted_server.reply = "x" * 40
    completion = scripted_llm.complete(ASK)
    assert completion.tokens_estimated and completion.completion_tokens == 10
    assert scripted_llm.cache.get(completion.key).tokens_estimated


def test_cost_table(scripted_server: ScriptedServer, make_llm: MakeLLM) -> None:
    llm = make_llm(cost_per_1k=(1.0, 2.0))
    c = llm.complete(ASK)
    assert llm.usage()["cost_usd"] == pytest.approx((c.prompt_tokens + 2 * c.completion_tokens) / 1000)


def test_api_key_never_reaches_the_store(
    scripted_server: ScriptedServer, make_llm: MakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = "sk-MARKER-do-not-store-7f3a"
    monkeypatch.setenv("OPENAI_API_KEY", marker)
    llm = make_llm(max_retries=1)
    llm.complete(ASK)
    assert scripted_server.authorization == f"Bearer {marker}"  # the key does reach the endpoint
    scripted_server.queue_fault("400")
    with pytest.raises(LLMCallError) as failure:
        llm.complete([{"role": "user", "content": "fails"}])
    assert marker not in str(failure.value)
    llm.cache.db.conn.execute("PRAGMA wal_checkpoint(FULL)")
    for path in tmp_path.glob("store.sqlite*"):
        assert marker.encode() not in path.read_bytes(), path


def test_replay_answers_without_endpoint_and_explains_misses(
    scripted_server: ScriptedServer, scripted_settings: LLMSettings, call_cache: CallCache
) -> None:
    from dataclasses import replace

    LLMClient(scripted_settings, call_cache).complete(ASK)
    requests = scripted_server.requests
    replay = LLMClient(replace(scripted_settings, replay=True), call_cache)
    assert replay.complete(ASK).cached
    changed = [ASK[0], {"role": "user", "content": "Solve 1 2 3 5"}]
    with pytest.raises(ReplayMiss) as miss:
        replay.complete(changed)
    text = str(miss.value)
    assert "message 1" in text and "-Solve 1 2 3 4" in text and "+Solve 1 2 3 5" in text
    with pytest.raises(ReplayMiss, match=r"sample 3.*samples recorded with these params: \[0\]"):
        replay.complete(ASK, sample=3)
    with pytest.raises(ReplayMiss, match="no recorded calls for model 'other'"):
        LLMClient(replace(scripted_settings, replay=True, model="other"), call_cache).complete(ASK)
    assert scripted_server.requests == requests


def test_bad_messages_get_a_clear_error(scripted_llm: LLMClient) -> None:
    with pytest.raises(ValueError, match="roles"):
        scripted_llm.complete([{"role": "wizard", "content": "hi"}])
    with pytest.raises(ValueError, match="'role' and 'content'"):
        scripted_llm.complete([{"text": "hi"}])


def test_cli_cache_stats_json(
    scripted_server: ScriptedServer, scripted_llm: LLMClient, tmp_path: Path
) -> None:
    scripted_llm.complete(ASK)
    scripted_llm.complete(ASK)
    result = CliRunner().invoke(app, ["cache", "stats", "--store", str(tmp_path / "store.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    keys = {"calls", "hits", "failed", "prompt_tokens", "completion_tokens"}
    assert keys <= set(stats) and keys <= set(stats["by_model"]["scripted"])
    assert (stats["calls"], stats["hits"], stats["failed"]) == (1, 1, 0)


def test_a_global_langchain_cache_does_not_collapse_sample_indices(
    scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """Sample i is its own draw even when a user's code has set LangChain's process-wide LLM cache."""
    from langchain_core.caches import InMemoryCache
    from langchain_core.globals import get_llm_cache, set_llm_cache

    draws = itertools.count()
    scripted_server.reply = lambda messages, params: f"draw {next(draws)}"
    previous = get_llm_cache()
    set_llm_cache(InMemoryCache())
    try:
        texts = [scripted_llm.complete([{"role": "user", "content": "same prompt"}], sample=i).text for i in range(3)]
    finally:
        set_llm_cache(previous)
    assert texts == ["draw 0", "draw 1", "draw 2"]
    assert scripted_server.requests == 3


def test_the_request_carries_the_messages_as_given_whichever_path_the_sdk_takes(
    scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """Text messages skip the SDK's per-message transform (sent in `extra_body`, `client._chat_openai`): the
    endpoint gets the same body, the messages once, in order; a message that is not plain text (a list of
    parts) keeps the SDK's own path and arrives as the SDK sends it."""
    turns = [{"role": "system", "content": "s"}, {"role": "user", "content": "é\u2028\\"},
             {"role": "assistant", "content": ""}, {"role": "user", "content": "go"}]  # fmt: skip
    scripted_llm.complete(turns, temperature=0.5)
    messages, params = scripted_server.calls[-1]
    assert messages == turns and "extra_body" not in params and params["temperature"] == 0.5
    chat = chat_model(scripted_llm.settings, scripted_server.base_url)
    parts = [{"role": "user", "content": [{"type": "text", "text": "in parts"}]}]
    chat._generate(parts)
    assert scripted_server.calls[-1][0] == [{"role": "user", "content": [{"type": "text", "text": "in parts"}]}]


@pytest.mark.parametrize(
    "overrides",
    [{}, {"temperature": 0.7}, {"stop": ["\n"]}, {"max_tokens": 64, "extra_body": {"max_tokens": 64}}],
    ids=["settings", "temperature", "stop", "cap"],
)
def test_the_body_and_the_reply_are_langchain_openais_own(
    scripted_server: ScriptedServer, scripted_llm: LLMClient, overrides: dict[str, object]
) -> None:
    """The chat model's request fields, worked out once per set of overrides and sent in `extra_body`, and its
    reply read as a dict (`client._chat_openai`, `_DictReplies`): the endpoint gets the body langchain-openai's
    own payload makes through the SDK, and the reply is the message langchain-openai's own parsing makes."""
    import openai
    from langchain_openai import ChatOpenAI

    scripted_server.usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    turns = [{"role": "system", "content": "s"}, {"role": "user", "content": "go\nnow"}]
    chat = chat_model(scripted_llm.settings, scripted_server.base_url)
    ours = chat._generate(turns, **overrides).generations[0].message
    sent = scripted_server.calls[-1]
    payload = ChatOpenAI._get_request_payload(chat, turns, **overrides)  # langchain-openai's own, through the SDK
    reply = chat.root_client.chat.completions.with_raw_response.create(**payload).parse()
    assert isinstance(reply, openai.BaseModel)
    theirs = ChatOpenAI._create_chat_result(chat, reply).generations[0].message
    assert scripted_server.calls[-1] == sent and sent[0] == turns
    assert ours.text == theirs.text == "OK"
    assert ours.usage_metadata == theirs.usage_metadata and ours.usage_metadata["input_tokens"] == 11
    assert ours.response_metadata == theirs.response_metadata
