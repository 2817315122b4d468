"""The dry-run estimate asks each scheme what a run costs: for every scheme of `SCHEMES`, the estimate's maximum
bounds the calls a scripted run makes, and equals them when the scripted model never gets anything right (every
run goes the full length)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from critiquebench.domains import get_domain
from critiquebench.graphs import SCHEMES, unsupported

from tests.scripted_server import ScriptedServer
from tests.test_dry_run import numbers
from tests.test_study_cli import game24_reply, invoke, run_args

SMALL = {"rounds": 3, "k": 3, "steps": 2}  # keep every loop short


def small_spec(name: str) -> str:
    declared = {p.name for p in SCHEMES[name].declared}
    given = [f"{k}={v}" for k, v in SMALL.items() if k in declared]
    return name + (":" + ",".join(given) if given else "")


def never_right(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """Wrong as a generator (no expression with the puzzle's numbers) and unconvinced as a critic, and a
    different text every round (so no critique prompt repeats and hits the cache)."""
    return f"I cannot tell ({len(messages)} messages, {sum(len(m['content']) for m in messages)} characters)"


SPECS = [small_spec(n) for n in SCHEMES] + ["intrinsic:steps=1,votes=3", "intrinsic:runs=2,steps=1"]


@pytest.mark.parametrize("spec", SPECS)
def test_the_estimate_is_the_calls_a_full_length_run_makes(tmp_path: Path, spec: str) -> None:
    assert unsupported(spec, get_domain("game24")) is None
    with ScriptedServer(reply=never_right) as server:
        args = run_args("full", tmp_path / "s.sqlite", server, instances="901-902", schemes=spec)
        estimate = numbers(invoke(*args, "--dry-run").stdout)
        invoke(*args, check=None)
        assert server.requests == estimate["max"] > 0


@pytest.mark.parametrize("spec", SPECS)
def test_the_estimate_bounds_the_calls_of_any_run(tmp_path: Path, spec: str) -> None:
    with ScriptedServer(reply=game24_reply) as server:  # right sometimes: runs stop early
        args = run_args("some", tmp_path / "s.sqlite", server, instances="901-904", schemes=spec)
        estimate = numbers(invoke(*args, "--dry-run").stdout)
        invoke(*args, check=None)
        assert 0 < server.requests <= estimate["max"]


def test_intrinsic_is_costed_by_its_steps_runs_and_votes(tmp_path: Path) -> None:
    """(steps + 1) plans and as many critiques (votes each) per run, `runs` times: 2 puzzles."""
    store = tmp_path / "s.sqlite"
    for spec, calls in (("intrinsic", 44), ("intrinsic:steps=0", 4), ("intrinsic:runs=5", 220),
                        ("intrinsic:votes=3,steps=1", 16), ("intrinsic-oracle:steps=4", 10)):  # fmt: skip
        out = invoke("run", "x", "--domains", "game24", "--instances", "gen:2:1", "--schemes", spec, "--model", "m",
                     "--base-url", "http://127.0.0.1:9/v1", "--store", str(store), "--dry-run").stdout  # fmt: skip
        assert numbers(out)["max"] == calls, spec
