"""A reply no store can hold as it is (issue 26 item 2): JSON's `"\\ud800"` decodes to a lone UTF-16 surrogate,
which UTF-8 (SQLite) cannot encode, and `"\\u0000"` to a NUL, which Postgres text cannot hold. The answer is
stored with U+FFFD in their place and its 'call' event says so; its tokens are counted and charged to the budget;
a resume pays nothing again."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.store.db import connect
from tests.scripted_server import ScriptedServer

REPLY = "(1 + 2 + 3) * 4 \ud800 and \x00 cut inside an emoji \udfff"


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_unstorable_reply_is_stored_replaced_counted_and_never_paid_twice(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    store = str(tmp_path / "s.sqlite") if backend == "sqlite" else request.getfixturevalue("pg_store")
    with ScriptedServer(reply=REPLY) as server:
        args = ["run", "s", "--domains", "game24", "--instances", "gen:2:1", "--schemes", "standard", "--model",
                "fake", "--base-url", server.base_url, "--store", store, "--budget-tokens", "300"]  # fmt: skip
        for _ in range(3):  # the first run, then two more that find every answer stored
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, result.output
            assert "Traceback" not in result.output
        assert server.answered == 2  # one paid call per instance, never again

    db = connect(store)
    try:
        responses = [r["response"] for r in db.query("SELECT response FROM llm_calls")]
        stored = REPLY.replace("\ud800", "\ufffd").replace("\x00", "\ufffd").replace("\udfff", "\ufffd")
        assert responses == [stored] * 2
        notes = [r["error"] for r in db.query("SELECT error FROM llm_events WHERE kind = 'call'")]
        assert notes == ["the reply held 3 character(s) no store can hold, stored as U+FFFD"] * 2
        spent = sum(r["t"] for r in db.query("SELECT prompt_tokens + completion_tokens AS t FROM llm_events "
                                             "WHERE kind = 'call'"))  # fmt: skip
        (budget,) = db.query("SELECT spent_tokens FROM budgets WHERE study = 's'")
        assert spent > 0 and budget["spent_tokens"] == spent  # the budget moved by what was paid
        assert [r["status"] for r in db.query("SELECT status FROM runs")] == ["done"] * 2
    finally:
        db.close()
    stats = CliRunner().invoke(app, ["cache", "stats", "--json", "--store", store])
    assert '"calls": 2' in stats.output
