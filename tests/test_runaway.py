"""Runaway values (issue 26 item 5): every scheme parameter and study setting has a documented range, values
outside it (or NaN) are one line before anything runs, the dry-run estimate is closed-form, and a study that
may make very many calls asks for --yes or a token budget before it spends anything."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from critiquebench.graphs import SCHEMES
from critiquebench.store.db import connect
from tests.scripted_server import ScriptedServer
from tests.test_dry_run import numbers
from tests.test_study_cli import DATASETS, game24_reply, invoke, run_args

HUGE = 10**9
ENDPOINT = "http://127.0.0.1:9/v1"  # never contacted


def critiquebench(*args: str) -> Any:
    """The command line in this process (the old code hung here on k=10^9 or trials=10^9)."""
    return invoke(*args, check=None)


def one_error_line(done: Any) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-3000:]
    return lines[0]


def test_every_numeric_scheme_parameter_has_a_documented_range() -> None:
    for scheme in SCHEMES.values():
        for param in scheme.declared:
            if param.type in (int, float):
                described = param.describe()
                assert described["minimum"] is not None and described["maximum"] is not None, (scheme.name, param)


@pytest.mark.parametrize("spec", [f"self-consistency:k={HUGE}", f"sampling:k={HUGE}", f"sound-first:rounds={HUGE}",
                                  f"llm-llm:rounds={HUGE}", f"intrinsic:steps={HUGE}", f"intrinsic:runs={HUGE}",
                                  f"llm-llm:votes={HUGE}", f"sampling:k={10**29}", "sampling:temperature=nan",
                                  "intrinsic:vote_temperature=inf"])  # fmt: skip
def test_a_runaway_scheme_parameter_is_one_line_in_dry_run_and_run(tmp_path: Path, spec: str) -> None:
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        for extra in (["--dry-run"], []):
            line = one_error_line(critiquebench(*run_args("huge", store, server, instances="901", schemes=spec),
                                                *extra))  # fmt: skip
            assert "must be <=" in line or "finite" in line, line
        assert server.requests == 0 and not store.exists()


@pytest.mark.parametrize(("setting", "message"), [
    (f"trials = {HUGE}", "trials must be an integer <= 1000"),
    ("timeout = nan", "timeout must be a number of seconds in (0, 3600]"),
    ("timeout = 0", "timeout must be a number of seconds in (0, 3600]"),
    ("timeout = -1", "timeout must be a number of seconds in (0, 3600]"),
    ("timeout = inf", "timeout must be a number of seconds in (0, 3600]"),
    (f"concurrency = {10**6}", "concurrency must be an integer <= 1024"),
    (f"max_tokens = {10**20}", "max_tokens must be an integer <= 1000000"),
])  # fmt: skip
def test_a_runaway_study_setting_is_one_line(tmp_path: Path, setting: str, message: str) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text(f'domains = ["game24"]\ninstances = "901"\nschemes = ["standard"]\nmodel = "m"\n'
                    f'base_url = "{ENDPOINT}"\ndataset = "{DATASETS}"\n{setting}\n')  # fmt: skip
    store = tmp_path / "s.sqlite"
    for extra in (["--dry-run"], []):
        assert message in one_error_line(critiquebench("run", "t", "--config", str(toml), "--store", str(store),
                                                       *extra))  # fmt: skip
    assert not store.exists()


def test_the_estimate_of_a_long_loop_is_closed_form(tmp_path: Path) -> None:
    """1,000 rounds on 2 puzzles: counted, not enumerated (the expected figure is the geometric series)."""
    out = critiquebench("run", "x", "--domains", "game24", "--instances", "901-902", "--dataset", str(DATASETS),
                        "--schemes", "sound-first:rounds=1000,self-consistency:k=1000", "--model", "m",
                        "--base-url", ENDPOINT, "--store", str(tmp_path / "s.sqlite"), "--dry-run")  # fmt: skip
    got = numbers(out.stdout)
    # sound-first: its first round is self-consistency's sample 0; 999 later rounds each, reached with 0.75^r
    assert got["max"] == 2 * (1000 + 999)
    assert got["expected"] == round(2 * (1000 + sum(0.75**r for r in range(1, 1000))))
    assert math.isclose(got["expected"], 2 * (1000 + 0.75 * (1 - 0.75**999) / 0.25), abs_tol=1)


def test_a_study_that_may_make_many_calls_asks_before_spending(tmp_path: Path, monkeypatch: Any) -> None:
    store = tmp_path / "s.sqlite"
    monkeypatch.setenv("CRITIQUEBENCH_CONFIRM_CALLS", "5")  # 3 puzzles x sound-first:rounds=3: up to 9 calls
    with ScriptedServer(reply=game24_reply) as server:
        args = run_args("big", store, server, instances="901-903", schemes="sound-first:rounds=3")
        line = one_error_line(critiquebench(*args))
        assert line == ("error: study big may make up to 9 new LLM calls (more than 5): run it with --yes, or cap it "
                        "with --budget-tokens N; --dry-run shows the estimate")  # fmt: skip
        assert server.requests == 0 and "big" not in str(connect(store).execute("SELECT name FROM studies").fetchall())
        assert critiquebench(*args, "--yes").exit_code == 0 and server.requests > 0
        paid = server.requests
        # once paid for, the same study again is free and needs no --yes; neither does a capped study
        assert critiquebench(*args).exit_code == 0 and server.requests == paid
        capped = run_args("capped", store, server, instances="904-906", schemes="sound-first:rounds=3")
        assert critiquebench(*capped, "--budget-tokens", "100000").exit_code == 0
