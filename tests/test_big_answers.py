"""Big answers in the store (issue 26 item 10, the store's half): a long text in a run's state is stored once in
the `texts` table, not in every graph checkpoint and pending write (a 5 MB answer grew the store 11x, most of it
LangGraph's checkpoints); checkpoints still resume, and `store copy` to Postgres and back keeps every text."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.store.checkpoints import open_saver
from critiquebench.studies.execute import CHECKPOINTS_ENV
from tests.scripted_server import ScriptedServer
from tests.test_scale_claims import numbers

ANSWER = "(1 + 2 + 3) * 4 " + "x" * 1_000_000  # one distinct 1 MB answer, given to every call


def run(store: str, server: ScriptedServer) -> None:
    args = ["run", "big", "--domains", "game24", "--instances", "gen:2:1", "--schemes", "standard,sound-first:rounds=3",
            "--model", "fake", "--base-url", server.base_url, "--store", store, "--no-progress"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def test_a_long_answer_is_stored_once_outside_the_checkpoints(
    tmp_path: Path, pg_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHECKPOINTS_ENV, "1")  # live runs checkpointed by LangGraph, as before it was optional
    store = tmp_path / "big.sqlite"
    with ScriptedServer(reply=ANSWER) as server:
        run(str(store), server)
        paid = server.answered
        run(str(store), server)  # the same study again: everything is stored, nothing is paid twice
        assert server.answered == paid == 6
    with closing(sqlite3.connect(store)) as conn:
        assert conn.execute("SELECT COUNT(*), SUM(LENGTH(text)) FROM texts").fetchone() == (1, len(ANSWER))
        checkpoints = conn.execute("SELECT SUM(LENGTH(checkpoint)) FROM checkpoints").fetchone()[0]
        writes = conn.execute("SELECT SUM(LENGTH(value)) FROM writes").fetchone()[0]
        threads = [row[0] for row in conn.execute("SELECT thread_id FROM runs WHERE scheme LIKE 'sound-first%'")]
    # before: 4x the 6 MB of answers in checkpoints and writes; now their markers only
    assert checkpoints + writes < 0.01 * paid * len(ANSWER)

    # the checkpoints give the full text back, here and in a copy through Postgres and back
    copy = tmp_path / "copy.sqlite"
    for args in (["store", "copy", str(store), pg_store], ["store", "copy", pg_store, str(copy)]):
        assert CliRunner().invoke(app, args).exit_code == 0
    for where in (str(store), pg_store, str(copy)):
        with open_saver(where) as saver:
            state = saver.get_tuple({"configurable": {"thread_id": threads[0], "checkpoint_ns": ""}})
            assert state is not None
            assert state.checkpoint["channel_values"]["attempt"]["answer"] == ANSWER
        assert numbers(where if where == pg_store else Path(where), "big") == numbers(store, "big")
