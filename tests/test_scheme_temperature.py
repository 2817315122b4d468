"""Schemes with their own sampling temperature: sampling and self-consistency at 1.0, standard at the study's 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from critiquebench.graphs import parse_spec
from critiquebench.store.db import connect
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import invoke, report, run_args

SCHEMES = "standard,sampling:k=3,temperature=1.0,self-consistency:k=3,temperature=1.0"


def by_temperature(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """Right only when drawn hot: at temperature 0 the model always says 1+1+1+1."""
    numbers = messages[-1]["content"].split("Input: ")[1].split("\n")[0].split()
    return "1+1+1+1" if params.get("temperature", 0) == 0 else f"{numbers[0]}+{numbers[1]}"


def test_sampling_at_its_own_temperature_shares_cached_draws(tmp_path: Path) -> None:
    assert parse_spec("sampling:k=3,temperature=1.0").params["temperature"] == 1.0
    assert parse_spec("sampling").params["temperature"] is None  # the study's temperature
    store = tmp_path / "store.sqlite"
    with ScriptedServer(reply=by_temperature) as server:
        args = run_args("hot", store, server, instances="901-902", schemes=SCHEMES)
        invoke(*args)
        temperatures = sorted(params.get("temperature") for _, params in server.calls)
        # standard: 1 call per puzzle at 0; sampling: 3 draws per puzzle at 1.0, which self-consistency reuses.
        assert temperatures == [0.0] * 2 + [1.0] * 6
        calls = server.requests
        again = invoke(*args)
        assert server.requests == calls and "0 done now" in again.stderr
        twin = list(args)
        twin[1] = "twin"
        assert "LLM calls: 0 new" in invoke(*twin).stderr and server.requests == calls
    db = connect(store)
    cached = db.execute("SELECT params, sample FROM llm_calls").fetchall()
    assert sorted((json.loads(p)["temperature"], s) for p, s in cached) == [
        (0.0, 0), (0.0, 0), (1.0, 0), (1.0, 0), (1.0, 1), (1.0, 1), (1.0, 2), (1.0, 2)]
    rows = {r["scheme"]: r for r in report("hot", store)}
    assert set(rows) == {"standard", "sampling:k=3,temperature=1.0", "self-consistency:k=3,temperature=1.0"}
    assert rows["standard"]["correct"] == 0 and rows["standard"]["llm_calls"] == 2
