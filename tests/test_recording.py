"""The one writer of recorded runs (`importers.recording`): answers keyed by where they came from, one
transaction, a study that only grows (issue 40 item 1, issue 45 items 0 and 3).

Two sample logs of the same Game of 24 puzzles (the shared dataset's 901-920), made with different answers and
no prompt recorded, are imported into one store as two studies: each replays to its own numbers.
"""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.arith import solve
from critiquebench.importers.recording import (
    BadRecord,
    RecordedCall,
    Recording,
    RecordingError,
    content_source,
    recorded_endpoint,
    write_recording,
)
from critiquebench.store.cache import CallCache, sampling_params
from critiquebench.store.db import opened
from critiquebench.store.results import load_study
from critiquebench.studies.config import StudyConfig
from tests.test_study_cli import CLI, DATASETS, ROOT, invoke

IDS = [str(i) for i in range(901, 921)]
LENIENT = ("--domain-option", "reader=lenient")


def _log(seed: int, right_share: float, n: int = 6) -> list[dict[str, Any]]:
    """n samples per puzzle: a right expression with probability `right_share`, else a wrong sum."""
    rng = random.Random(seed)
    domain = get_domain("game24", reader="lenient")
    rows = []
    for puzzle in load_instances(domain, ",".join(IDS), DATASETS):
        numbers = puzzle.data["numbers"]
        right, wrong = solve(numbers), " + ".join(map(str, numbers))
        for index in range(n):
            text = right if rng.random() < right_share else wrong
            rows.append({"instance": puzzle.id, "sample": index, "response": f"Answer: {text} = 24",
                         "model": "one-model"})  # fmt: skip
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _report(store: Path, name: str, table: str) -> list[dict[str, Any]]:
    return json.loads(invoke("report", name, "--table", table, "--format", "json", "--store", str(store)).stdout)


def _config(store: Path, name: str) -> StudyConfig:
    with opened(store) as db:
        stored = load_study(db, name)
    assert stored is not None
    return StudyConfig.from_dict(stored)


def test_two_logs_of_the_same_puzzles_replay_each_to_its_own_numbers(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    logs = {"often": _log(1, 0.7), "rarely": _log(2, 0.15)}
    for name, rows in logs.items():
        invoke("import", "samples", str(_write(tmp_path / f"{name}.jsonl", rows)), "--domain", "game24",
               "--study", name, "--dataset", str(DATASETS), "--store", str(store), *LENIENT)  # fmt: skip
    for name in logs:
        replay = invoke("resume", name, "--replay", "--store", str(store))
        assert "LLM calls: 0 new" in replay.stderr and "0 failed" in replay.stderr, replay.stderr
    tables = {}
    for name in logs:
        table1 = {r["scheme"]: r["correct"] for r in _report(store, name, "1")}
        first_k = {r["k"]: r for r in _report(store, name, "pass-at-k")}
        assert first_k  # every k up to 6
        for k, row in first_k.items():
            assert table1[f"sampling:k={k}"] == row["sampling_correct"], (name, k)
            assert table1[f"self-consistency:k={k}"] == row["maj_correct"], (name, k)
        assert table1["standard"] == first_k[1]["sampling_correct"]
        tables[name] = table1
    assert tables["often"] != tables["rarely"]  # the logs differ, and so do their replays
    # each study reads its own answers: one endpoint per source, neither shared nor shadowed
    endpoints = {name: _config(store, name).endpoint_id for name in logs}
    assert len(set(endpoints.values())) == 2 and all(e.startswith("recorded:samples:") for e in endpoints.values())
    with CallCache(store) as cache:
        for name, rows in logs.items():
            assert sorted(r.response for r in cache.recorded("one-model", endpoints[name])) == sorted(
                r["response"] for r in rows
            )


def _recording(source: str, reply: str, name: str = "w", bad: tuple[BadRecord, ...] = ()) -> Recording:
    config = StudyConfig(name=name, domains=("game24",), instances={"game24": "901"}, schemes=("standard",),
                         model="m", replay=True)  # fmt: skip
    call = RecordedCall(({"role": "user", "content": "Use 1 1 4 6 to make 24."},), reply, 0, "line 1")
    return Recording(source, config, [call], sampling_params(), bad)


def test_the_writer_keys_answers_by_source_and_refuses_a_shadowing_answer(tmp_path: Path) -> None:
    store = tmp_path / "w.sqlite"
    first = write_recording(store, _recording("test:a", "(1 + 1) * ...", bad=(BadRecord("line 2", "no answer"),)))
    assert first.config.endpoint_id == recorded_endpoint("test:a") == "recorded:test:a"
    assert first.added == 1 and [b.describe() for b in first.bad] == ["line 2: no answer"]
    again = write_recording(store, _recording("test:a", "(1 + 1) * ..."))  # the same answers: nothing new
    assert again.added == 0 and again.config == first.config
    other = write_recording(store, _recording("test:b", "6 * 4", name="w2"))  # another source, another study
    assert other.added == 1 and other.config.endpoint_id == "recorded:test:b"
    # into study w (endpoint test:a), another answer to the same call: refused, naming both, and nothing stored
    with pytest.raises(RecordingError, match=r"test:c \(line 1\).*already recorded for study w from test:a"):
        write_recording(store, _recording("test:c", "6 * 4"), merge=lambda old, new: old)
    with CallCache(store) as cache:
        assert cache.count() == 2
    # a different definition without a merge rule is refused; a study that is not recorded is never grown
    changed = _recording("test:a", "(1 + 1) * ...")
    changed = Recording(changed.source, StudyConfig(**{**changed.config.__dict__, "schemes": ("sampling:k=2",)}),
                        changed.calls, changed.params)  # fmt: skip
    with pytest.raises(RecordingError, match="already exists with another definition"):
        write_recording(store, changed)


def test_content_source_names_the_answers_not_the_file() -> None:
    calls = [RecordedCall(({"role": "user", "content": "q"},), "a")]
    other = [RecordedCall(calls[0].messages, "b")]
    assert content_source("samples", "m", calls) == content_source("samples", "m", list(calls))
    assert content_source("samples", "m", calls) != content_source("samples", "m", other)
    assert content_source("samples", "m", calls) != content_source("samples", "other", calls)
    assert content_source("samples", "m", calls).startswith("samples:") and len(content_source("x", "m", [])) == 14


def _cpu(pid: int) -> int:
    """The process's user + system CPU ticks so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])


def _all_waiting(procs: list[subprocess.Popen[str]], seconds: float = 60.0) -> None:
    """Until every process has stopped using CPU for a second (each waits in SQLite's busy handler)."""
    deadline = time.monotonic() + seconds
    before = [-1] * len(procs)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = [_cpu(p.pid) for p in procs]
        if now == before:
            return
        before = now
    raise AssertionError("the imports never waited for the store's write lock")


def test_two_imports_into_one_study_at_once_both_land(tmp_path: Path) -> None:
    """Issue 45 item 3 with two real processes: both read the study while the other's write is pending (the
    test holds the store's write lock until both wait for it); the definition only grows, to both domains."""
    store = tmp_path / "s.sqlite"
    game24 = _write(tmp_path / "g.jsonl", [r for r in _log(3, 0.5, n=3) if r["instance"] in ("901", "902")])
    blocks = get_domain("blocksworld")
    kinds = ("correct", "random", "correct")
    rows = [{"instance": i.id, "sample": s, "response": blocks.candidate(i, kind, random.Random(s)),
             "model": "one-model"}
            for i in load_instances(blocks, "2,3", DATASETS) for s, kind in enumerate(kinds)]  # fmt: skip
    blocksworld = _write(tmp_path / "b.jsonl", rows)
    with CallCache(store), opened(store) as db:  # the store's tables, then its write lock, held
        from critiquebench.store.samples import ensure_samples_schema

        ensure_samples_schema(db)
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    procs = [subprocess.Popen([str(CLI), "import", "samples", str(source), "--domain", domain, "--study", "both",
                               "--k", "1,3", "--dataset", str(DATASETS), "--store", str(store), *extra],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
             for source, domain, extra in ((game24, "game24", LENIENT), (blocksworld, "blocksworld", ()))]  # fmt: skip
    try:
        _all_waiting(procs)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    config = _config(store, "both")
    assert sorted(config.domains) == ["blocksworld", "game24"]
    assert config.instances == {"game24": "901,902", "blocksworld": "2,3"}
    domains = {r["domain"]: r for r in _report(store, "both", "pass-at-k") if r["k"] == 3}
    assert {d: r["samples"] for d, r in domains.items()} == {"game24": 6, "blocksworld": 6}
    replay = invoke("resume", "both", "--replay", "--store", str(store))
    assert "LLM calls: 0 new" in replay.stderr and "0 failed" in replay.stderr, replay.stderr


def test_a_study_grows_only_as_itself_and_not_while_it_runs(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    first = _write(tmp_path / "g.jsonl", [r for r in _log(3, 0.5, n=3) if r["instance"] == "901"])
    args = ("--domain", "game24", "--study", "g", "--dataset", str(DATASETS), "--store", str(store), *LENIENT)
    invoke("import", "samples", str(first), *args, "--k", "1,3")
    # other schemes (k): refused in one line, the study as it was
    refused = invoke("import", "samples", str(first), *args, "--k", "1,2", check=2)
    assert refused.stderr.startswith("error: study 'g' already exists with another definition")
    assert len(refused.stderr.strip().splitlines()) == 1
    # the same puzzle answered otherwise, into the same study: its answers would shadow (or be shadowed by) the
    # study's own, so the import is refused, naming both sources
    other = _write(tmp_path / "h.jsonl", [r for r in _log(4, 0.0, n=3) if r["instance"] == "901"])
    clash = invoke("import", "samples", str(other), *args, "--k", "1,3", check=2)
    endpoint = _config(store, "g").endpoint_id
    assert "another answer to this call" in clash.stderr and endpoint.removeprefix("recorded:") in clash.stderr
    # a process holding one of the study's runs: a growing import waits for it to finish
    from critiquebench.store.claims import take_lease

    with opened(store) as db:
        assert take_lease(db, "run_claims", "g/game24/standard/901/0", "elsewhere:1:x", 60)
    more = _write(tmp_path / "m.jsonl", [r for r in _log(3, 0.5, n=3) if r["instance"] == "902"])
    running = invoke("import", "samples", str(more), *args, "--k", "1,3", check=2)
    assert "study g is running (elsewhere:1:x holds its runs)" in running.stderr
    assert _config(store, "g").instances == {"game24": "901"}


def _as_before_source_keys(store: Path, name: str, legacy: str) -> None:
    """Rewrite study `name` as an import made before answers were keyed by source left it: its answers and its
    definition under the one endpoint every import of the kind shared (`legacy`)."""
    from critiquebench.store.cache import cache_key
    from critiquebench.store.results import save_study

    config = _config(store, name)
    with CallCache(store) as cache:
        records = cache.recorded(config.model, str(config.endpoint_id))
    with opened(store) as db:
        for r in records:
            key = cache_key(r.model, legacy, r.messages, r.params, r.sample)
            db.execute("UPDATE llm_calls SET key = ?, endpoint = ? WHERE key = ?", [key, legacy, r.key])
        save_study(db, name, {**config.to_dict(), "endpoint_id": legacy})


def test_a_study_imported_before_keeps_replaying_from_its_old_endpoint(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    args = ("--dataset", str(DATASETS), "--store", str(store), "--k", "1,3")
    old = _log(5, 0.5, n=3)[:6]
    invoke("import", "samples", str(_write(tmp_path / "old.jsonl", old)), "--domain", "game24", "--study", "old",
           *args, *LENIENT)  # fmt: skip
    _as_before_source_keys(store, "old", "recorded:samples")
    # it grows under the endpoint its definition names
    blocks = get_domain("blocksworld")
    rows = [{"instance": i.id, "sample": s, "response": blocks.candidate(i, "correct", random.Random(s)),
             "model": "one-model"} for i in load_instances(blocks, "2", DATASETS) for s in range(3)]  # fmt: skip
    invoke("import", "samples", str(_write(tmp_path / "b.jsonl", rows)), "--domain", "blocksworld", "--study", "old",
           *args)  # fmt: skip
    assert _config(store, "old").endpoint_id == "recorded:samples"
    # a new study of other answers to the same puzzles gets its own
    new = _log(6, 0.9, n=3)[:6]
    invoke("import", "samples", str(_write(tmp_path / "new.jsonl", new)), "--domain", "game24", "--study", "new",
           *args, *LENIENT)  # fmt: skip
    assert _config(store, "new").endpoint_id.startswith("recorded:samples:")
    for name in ("old", "new"):
        replay = invoke("resume", name, "--replay", "--store", str(store))
        assert "LLM calls: 0 new" in replay.stderr and "0 failed" in replay.stderr, replay.stderr
        table1 = {(r["domain"], r["scheme"]): r["correct"] for r in _report(store, name, "1")}
        for row in _report(store, name, "pass-at-k"):
            assert table1[(row["domain"], f"sampling:k={row['k']}")] == row["sampling_correct"], (name, row)
