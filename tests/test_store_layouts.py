"""Each long text stored once (issue 26 item 10): the call cache, the rounds and the runs refer to a long text by its
hash in the one `texts` table, so a study's store is about the size of its answers (30 MB of answers made a
store of 336 MB + 127 MB of WAL; after the checkpoints' share, still about 4x); a store written before (every
text inline) still reads, resumes without paying a stored call again, and `store copy` rewrites it compactly."""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.store.cache import CallCache
from critiquebench.store.db import opened
from critiquebench.store.reads import runs_with_ids, study_rounds, study_runs
from critiquebench.store.texts import MIN_CHARS, REF
from critiquebench.viewer import data
from critiquebench.viewer.site import ViewerServer
from tests import old_layout_store as old
from tests.scripted_server import ScriptedServer
from tests.test_scale_claims import numbers

FIXTURE = Path(__file__).parent / "data" / "old_layout_store.sqlite.gz"
# the same study written by the code at 81c710b (no `round_calls`, no `texts` table), as `old_layout_store` says
FIXTURE_81C710B = Path(__file__).parent / "data" / "store_81c710b.sqlite.gz"


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def stored_calls(store: Path | str) -> list[Any]:
    with CallCache(store, readonly=True) as cache:
        return list(cache.iter_records())


def rounds(store: Path | str, study: str) -> list[tuple[Any, ...]]:
    """Every round's texts and verdict, by run and round."""
    with opened(store, readonly=True) as db:
        return sorted((r["thread_id"], r["round"], r["answer"], r["feedback"], r["sound_valid"])
                      for r in study_rounds(db, study))  # fmt: skip


def final_answers(store: Path | str, study: str) -> dict[str, Any]:
    with opened(store, readonly=True) as db:
        return {r["thread_id"]: (r["status"], r["final_answer"]) for r in study_runs(db, study)}


def inline_long_texts(store: Path) -> int:
    """Long texts a row of the call cache, the rounds or the runs holds itself (not as a reference)."""
    sql = ("SELECT (SELECT COUNT(*) FROM llm_calls WHERE LENGTH(response) >= ?) + "
           "(SELECT COUNT(*) FROM attempts WHERE LENGTH(answer) >= ?) + "
           "(SELECT COUNT(*) FROM runs WHERE LENGTH(final_answer) >= ?)")  # fmt: skip
    with closing(sqlite3.connect(store)) as conn:
        return int(conn.execute(sql, [MIN_CHARS] * 3).fetchone()[0])


def text_chars(store: Path) -> int:
    """Characters of text the call cache, the rounds, the runs and the `texts` table hold."""
    sql = ("SELECT (SELECT SUM(LENGTH(response) + LENGTH(messages)) FROM llm_calls) + "
           "(SELECT SUM(LENGTH(answer)) FROM attempts) + (SELECT SUM(LENGTH(final_answer)) FROM runs) + "
           "(SELECT COALESCE(SUM(LENGTH(text)), 0) FROM texts)")  # fmt: skip
    with closing(sqlite3.connect(store)) as conn:
        return int(conn.execute(sql).fetchone()[0])


def test_a_store_written_before_reads_resumes_and_copies(tmp_path: Path) -> None:
    store = tmp_path / "old.sqlite"
    with gzip.open(FIXTURE) as src, store.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    # the old layout: every long text inline, 4 of 6 runs finished, 2 stopped halfway by the token budget
    assert inline_long_texts(store) == 6 + 9 + 4
    before_calls = stored_calls(store)
    assert len(before_calls) == 6
    assert all(c.response == old.reply(c.messages, {}) and len(c.response) > MIN_CHARS for c in before_calls)
    before_runs = final_answers(store, old.STUDY)
    assert sorted(s for s, _ in before_runs.values()) == ["done"] * 4 + ["pending"] * 2
    before_rounds = rounds(store, old.STUDY)
    with closing(data.open_readonly(store)) as db:  # the viewer's read: each round's prompt and answer whole
        rowid = next(r["id"] for r in runs_with_ids(db, old.STUDY) if r["rounds"] == 3)
        transcript = data.run(db, rowid, full=True)
        assert len(transcript["rounds"]) == 3
        for attempt in transcript["rounds"]:
            assert attempt["answer"] == old.reply(attempt["prompt"], {})

    with ScriptedServer(reply=old.reply, port=old.PORT) as server:
        invoke("resume", old.STUDY, "--budget-tokens", "1000000", "--store", str(store), "--no-progress")
        resumed = server.answered
        fresh = tmp_path / "fresh.sqlite"  # the same study uninterrupted, written by today's code
        invoke(*old.run_args(str(fresh), server.base_url, budget=1_000_000))
        total = server.answered - resumed
    assert resumed == total - len(before_calls)  # no stored call paid again
    assert numbers(store, old.STUDY) == numbers(fresh, old.STUDY)
    assert rounds(store, old.STUDY) == rounds(fresh, old.STUDY)
    # the finished work kept: its rounds, runs and calls read as before
    after_runs = final_answers(store, old.STUDY)
    assert all(after_runs[t] == v for t, v in before_runs.items() if v[0] == "done")
    assert set(before_rounds) <= set(rounds(store, old.STUDY))
    after_calls = {c.key: c for c in stored_calls(store)}
    assert all(after_calls[c.key] == c for c in before_calls)
    assert len(after_calls) == total
    assert all(c.response == old.reply(c.messages, {}) for c in after_calls.values())
    # the new rows refer to their texts; the old ones still hold theirs
    with closing(sqlite3.connect(store)) as conn:
        refs = conn.execute("SELECT COUNT(*) FROM llm_calls WHERE substr(response, 1, ?) = ?", [len(REF), REF])
        assert refs.fetchone()[0] == total - len(before_calls)
    assert inline_long_texts(fresh) == 0

    # `store copy` writes an old store's texts once: same reads, no inline long text, less text
    compact = tmp_path / "compact.sqlite"
    invoke("store", "copy", str(store), str(compact))
    assert inline_long_texts(compact) == 0
    assert numbers(compact, old.STUDY) == numbers(store, old.STUDY)
    assert rounds(compact, old.STUDY) == rounds(store, old.STUDY)
    assert {c.key: c for c in stored_calls(compact)} == after_calls
    assert text_chars(compact) < 0.5 * text_chars(store)


@pytest.mark.parametrize("fixture", [FIXTURE, FIXTURE_81C710B], ids=["05e4484", "81c710b"])
def test_view_reads_every_older_store_layout_and_writes_nothing_to_it(tmp_path: Path, fixture: Path) -> None:
    """`view` (static and served) on a store of an earlier layout: its studies and runs are shown, the file is
    untouched (the static export leaves no -wal/-shm file beside it either). Issue 35 item 5: 81c710b's store
    was "cannot be written"."""
    store = tmp_path / "old.sqlite"
    with gzip.open(fixture) as src, store.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    before = store.read_bytes()
    site = tmp_path / "site"
    assert "files written" in invoke("view", "--store", str(store), "--output", str(site))
    index = (site / "data" / "index.js").read_text()
    assert f'"name":"{old.STUDY}"' in index
    assert len(list((site / "data" / "run").glob("*.js"))) == 6
    assert store.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["old.sqlite", "site"]
    with ViewerServer(store, []) as server:
        served = json.loads(urlopen(f"{server.url}data/index.json", timeout=30).read())  # noqa: S310 (loopback)
        run = json.loads(urlopen(f"{server.url}data/run/1.json", timeout=30).read())  # noqa: S310
    assert [s["name"] for s in served["studies"]] == [old.STUDY] and run["rounds"]
    assert store.read_bytes() == before  # (a live reader may leave SQLite's empty -wal/-shm beside it)


SIZE = 5_000_000  # the reliability audit's answer (its 1c probe: 6 calls, 30 MB of answers)


def big_replies(size: int) -> tuple[Any, list[str]]:
    """A reply function giving every call a distinct answer of `size` characters, and the list of those given."""
    served: list[str] = []
    counter = itertools.count()

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        n = next(counter)
        body = "".join(chr(97 + (j * 7 + n) % 26) for j in range(64))
        text = f"({n}) (1 + 2 + 3) * 4 " + body * (size // 64)
        served.append(text)  # the server answers concurrent calls in threads: return this call's own text
        return text

    return reply, served


def big_study(store: str, base_url: str) -> None:
    invoke("run", "big", "--domains", "game24", "--instances", "gen:2:1", "--schemes",
           "standard,sound-first:rounds=3", "--model", "fake", "--base-url", base_url, "--store", store,
           "--no-progress")  # fmt: skip


def test_thirty_megabytes_of_answers_make_a_store_of_about_their_size(tmp_path: Path) -> None:
    store = tmp_path / "big.sqlite"
    reply, served = big_replies(SIZE)
    with ScriptedServer(reply=reply) as server:
        big_study(str(store), server.base_url)
        big_study(str(store), server.base_url)  # again: everything is stored, nothing paid twice
        assert server.answered == len(served) == 6
    answers = sum(len(a) for a in served)
    assert answers > 30_000_000
    on_disk = sum(p.stat().st_size for p in tmp_path.glob("big.sqlite*"))  # the file and any WAL
    assert on_disk < 1.5 * answers  # was about 4x (and 11x before the checkpoints stored each text once)
    with closing(sqlite3.connect(store)) as conn:
        assert conn.execute("SELECT COUNT(*), SUM(LENGTH(text)) FROM texts").fetchone() == (6, answers)
    # every read gives the texts back whole: the cache, the rounds, the runs
    assert sorted(c.response for c in stored_calls(store)) == sorted(served)
    assert {a for _, _, a, _, _ in rounds(store, "big")} == set(served)
    assert {a for _, a in final_answers(store, "big").values()} <= set(served)


def test_postgres_stores_each_long_text_once(tmp_path: Path, pg_store: str) -> None:
    reply, served = big_replies(200_000)
    sqlite_store = tmp_path / "big.sqlite"
    with ScriptedServer(reply=reply) as server:
        big_study(pg_store, server.base_url)
        answered = server.answered
        big_study(pg_store, server.base_url)
        assert server.answered == answered
        invoke("store", "copy", pg_store, str(sqlite_store))
    with opened(pg_store) as db:
        count, chars = db.execute("SELECT COUNT(*), SUM(LENGTH(text)) FROM texts").fetchone()
        inline = db.execute("SELECT SUM(LENGTH(response)) + SUM(LENGTH(messages)) FROM llm_calls").fetchone()[0]
        inline += db.execute("SELECT SUM(LENGTH(answer)) FROM attempts").fetchone()[0]
        inline += db.execute("SELECT SUM(LENGTH(final_answer)) FROM runs").fetchone()[0]
    assert (count, chars) == (len(served), sum(len(a) for a in served))
    assert inline < 10_000  # references only
    assert sorted(c.response for c in stored_calls(pg_store)) == sorted(served)
    assert rounds(pg_store, "big") == rounds(sqlite_store, "big")
    assert numbers(pg_store, "big") == numbers(sqlite_store, "big")
    assert inline_long_texts(sqlite_store) == 0
