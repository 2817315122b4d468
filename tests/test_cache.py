"""The SQLite LLM call cache: keys, recorded imports, export/merge, stats and multi-process writers."""

from __future__ import annotations

import io
import json
import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.llm.client import LLMClient, LLMSettings
from critiquebench.store.cache import CallCache, CallRecord, cache_key, sampling_params

MESSAGES = [{"role": "user", "content": "Plan: stack A on B"}]


def _record(key_suffix: str = "", response: str = "(pick-up a)") -> CallRecord:
    messages = [{"role": "user", "content": f"Plan: stack A on B{key_suffix}"}]
    params = sampling_params()
    return CallRecord(cache_key("m", "e", messages, params, 0), "m", "e", messages, params, 0, response, 7, 3)


def test_put_get_round_trip_keeps_first_answer(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "s.sqlite")
    record = _record()
    assert cache.get(record.key) is None
    assert cache.put(record) is True
    assert cache.put(_record(response="something else")) is False
    stored = cache.get(record.key)
    assert stored is not None and stored.response == "(pick-up a)" and stored.messages == record.messages
    assert (stored.prompt_tokens, stored.completion_tokens, stored.created_at > 0) == (7, 3, True)


def test_a_hit_reads_the_answer_as_stored_long_or_short_without_the_messages(tmp_path: Path) -> None:
    """`answer` (what a cache hit reads) gives what `get` gives of the answer, a long one kept in `texts` too."""
    cache = CallCache(tmp_path / "s.sqlite")
    long = "(pick-up a)\n" * 400  # over 2,048 characters: stored once in `texts`, a reference in the row
    for record in (_record(), _record("x", response=long)):
        assert cache.answer(record.key) is None
        cache.put(record)
        stored, hit = cache.get(record.key), cache.answer(record.key)
        assert stored is not None and hit is not None
        assert (hit.key, hit.response, hit.prompt_tokens, hit.completion_tokens, hit.tokens_estimated,
                hit.latency_s) == (stored.key, record.response, 7, 3, False, 0.0)  # fmt: skip


def test_key_depends_on_every_part() -> None:
    base = cache_key("m", "e", MESSAGES, sampling_params(), 0)
    assert base == cache_key("m", "e", [dict(MESSAGES[0])], sampling_params(), 0)
    others = [
        cache_key("m2", "e", MESSAGES, sampling_params(), 0),
        cache_key("m", "e2", MESSAGES, sampling_params(), 0),
        cache_key("m", "e", [{"role": "user", "content": "Plan: stack B on A"}], sampling_params(), 0),
        cache_key("m", "e", MESSAGES, sampling_params(temperature=0.7), 0),
        cache_key("m", "e", MESSAGES, sampling_params(max_tokens=100), 0),
        cache_key("m", "e", MESSAGES, sampling_params(stop=["\n"]), 0),
        cache_key("m", "e", MESSAGES, sampling_params(top_p=0.9), 0),
        cache_key("m", "e", MESSAGES, sampling_params(), 1),
    ]
    assert len({base, *others}) == 1 + len(others)


def test_put_recorded_is_replayed_by_a_client(tmp_path: Path) -> None:
    """An imported study's answers are found by a replaying client with matching settings."""
    cache = CallCache(tmp_path / "s.sqlite")
    settings = LLMSettings(model="gpt-4", endpoint_id="openai", replay=True, max_tokens=1024)
    key = cache.put_recorded("gpt-4", "openai", MESSAGES, "(unstack b a)", params=settings.sampling_params())
    completion = LLMClient(settings, cache).complete(MESSAGES)
    assert (completion.key, completion.text, completion.cached) == (key, "(unstack b a)", True)
    assert completion.tokens_estimated


def test_export_and_import_hand_a_cache_to_a_colleague(tmp_path: Path) -> None:
    mine = CallCache(tmp_path / "mine.sqlite")
    records = [_record(str(i)) for i in range(5)]
    for record in records:
        mine.put(record)
    buffer = io.StringIO()
    assert mine.export(buffer) == 5
    theirs = CallCache(tmp_path / "theirs.sqlite")
    theirs.put(records[0])
    assert theirs.import_jsonl(io.StringIO(buffer.getvalue())) == (4, 1)
    assert {r.key: r.response for r in theirs.iter_records()} == {r.key: r.response for r in records}


def test_import_recomputes_keys_and_rejects_bad_lines(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "s.sqlite")
    line = json.loads(json.dumps(_record().__dict__))
    line["key"] = "0" * 64  # a forged key must not shadow another call
    assert cache.import_jsonl(io.StringIO(json.dumps(line) + "\n\n")) == (1, 0)
    assert cache.get("0" * 64) is None and cache.get(_record().key) is not None
    with pytest.raises(ValueError, match="line 2"):
        cache.import_jsonl(io.StringIO(json.dumps(line) + "\n{not json\n"))


def test_stats_by_model_and_total(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "s.sqlite")
    cache.put(_record())
    cache.log_event("k1", "m", "call", None, 10, 5)
    cache.log_event("k1", "m", "hit", None, 10, 5)
    cache.log_event("k2", "n", "failed", "HTTP 500")
    stats = cache.stats()
    assert stats["by_model"]["m"] == {
        "calls": 1,
        "hits": 1,
        "failed": 0,
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "recorded": 1,
    }
    assert stats["total"] == {
        "calls": 1,
        "hits": 1,
        "failed": 1,
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "recorded": 1,
    }
    with pytest.raises(ValueError):
        cache.log_event("k", "m", "bogus")


_WRITER = """
import sys
from critiquebench.store.cache import CallCache, CallRecord
cache = CallCache(sys.argv[1])
for i in range(int(sys.argv[3])):
    key = f"{sys.argv[2]}-{i}"
    cache.put(CallRecord(key, "m", "e", [{"role": "user", "content": key}], {}, 0, "answer", 1, 1))
    cache.log_event(key, "m", "call", None, 1, 1)
"""


def test_concurrent_processes_write_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    # Separate interpreters, as real workers are (an SQLite connection must never cross a fork).
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, path, f"w{w}", "100"], stderr=subprocess.PIPE, text=True
        )
        for w in range(4)
    ]
    errors = [worker.communicate(timeout=120)[1] for worker in workers]
    assert [w.returncode for w in workers] == [0, 0, 0, 0], errors  # none died of "database is locked"
    stats = CallCache(path).stats()["total"]
    assert (stats["recorded"], stats["calls"]) == (400, 400)


def _open_new_stores(folder: str, count: int, barrier: Any) -> None:
    """Open store 0, 1, ... in `folder` at the same moment as the other workers, and write to it."""
    from critiquebench.store.db import StoreError, connect_raw
    from critiquebench.store.memo import SCHEMA

    failed = []
    for i in range(count):
        barrier.wait()
        try:
            conn = connect_raw(Path(folder) / f"s{i}.sqlite")
        except StoreError as exc:
            failed.append(str(exc))
            continue
        conn.execute(SCHEMA[0])
        conn.execute("INSERT OR IGNORE INTO run_memo (key, thread_id) VALUES (?, ?)", [str(i), "t"])
        conn.close()
    if failed:
        sys.exit(f"{len(failed)} of {count} opens failed, e.g. {failed[0]}")


def test_processes_opening_one_new_store_at_once_all_open_it(tmp_path: Path) -> None:
    # Switching a new file to WAL needs it alone, and SQLite refused ("database is locked") without waiting when
    # another process held it that instant: about 2 opens in 600 failed here this way, 1 in 40 in CI's test above.
    context = multiprocessing.get_context("spawn")  # an SQLite connection must never cross a fork
    barrier = context.Barrier(4)
    workers = [context.Process(target=_open_new_stores, args=(str(tmp_path), 150, barrier)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]


def test_cli_export_then_import(tmp_path: Path) -> None:
    source = CallCache(tmp_path / "a.sqlite")
    source.put(_record())
    out = tmp_path / "calls.jsonl"
    runner = CliRunner()
    result = runner.invoke(
        app, ["cache", "export", "--store", str(tmp_path / "a.sqlite"), "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text().splitlines()[0])["response"] == "(pick-up a)"
    result = runner.invoke(app, ["cache", "import", str(out), "--store", str(tmp_path / "b.sqlite")])
    assert result.exit_code == 0, result.output
    assert CallCache(tmp_path / "b.sqlite").get(_record().key) is not None
    missing = runner.invoke(app, ["cache", "stats", "--store", str(tmp_path / "nope.sqlite")])
    assert missing.exit_code == 2 and "no store" in missing.output
