"""A study identical to a finished one (another name) copies its runs instead of stepping through the graphs;
anything that changes what a run computes makes it execute as usual."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.store.db import connect
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import game24_reply, report, run_args

SCHEMES = "standard,sound-first:rounds=3,sampling:k=3"


def run(*args: str) -> Any:
    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, done.stderr[-2000:]
    return done


def rows(store: Path, study: str, table: str) -> list[tuple[Any, ...]]:
    db = connect(store, readonly=True)
    key = "thread_id" if table == "runs" else "thread_id, round"
    found = db.execute(
        f"SELECT * FROM {table} WHERE substr(thread_id, 1, ?) = ? ORDER BY {key}", [len(study) + 1, f"{study}/"]
    )
    names = [d[0] for d in found.description]
    drop = {"thread_id", "study", "updated_at", "started_at", "cache_hits"}  # times differ by run
    return [tuple(v for n, v in zip(names, row, strict=True) if n not in drop) for row in found.fetchall()]


def asked(store: Path) -> int:
    """How many calls runs have asked the call cache for (each logs a 'call' or 'hit' event): a run stepped
    through its graph asks for every call, a copied one for none."""
    return connect(store, readonly=True).execute("SELECT COUNT(*) FROM llm_events").fetchone()[0]


def test_an_identical_study_copies_finished_runs_and_a_changed_one_runs(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        run(*run_args("first", store, server, "901-904", SCHEMES))
        calls, first = server.requests, asked(store)
        twin = run(*run_args("twin", store, server, "901-904", SCHEMES))
        assert "LLM calls: 0 new" in twin.stderr and server.requests == calls
        assert "12 runs copied from identical finished runs" in twin.stderr
        assert first >= 12 and asked(store) == first  # no graph stepped
        for table in ("runs", "attempts"):
            assert rows(store, "twin", table) == rows(store, "first", table)
        firsts, twins = report("first", store), report("twin", store)
        for a, b in zip(firsts, twins, strict=True):
            assert (a["correct"], a["total"], a["llm_calls"], a["prompt_tokens"]) == (
                b["correct"], b["total"], b["llm_calls"], b["prompt_tokens"])  # fmt: skip
            assert b["cache_hits"] == b["llm_calls"]  # read as a replay: every call from the cache

        # max_tokens changes the calls: nothing is copied, the graphs run (and call the endpoint)
        run(*run_args("longer", store, server, "901-904", SCHEMES), "--max-tokens", "100")
        assert asked(store) == 2 * first and server.requests > calls
    # deleting the study whose runs were copied keeps the copies, and they still serve a third twin
    run("studies", "delete", "first", "--store", str(store))
    run(*run_args("third", store, server, "901-904", SCHEMES))
    assert asked(store) == 2 * first and rows(store, "third", "runs") == rows(store, "twin", "runs")
