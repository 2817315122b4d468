"""The dry-run estimate asks each scheme what a run costs: for every scheme of `SCHEMES`, the estimate's maximum
bounds the calls a scripted run makes, and equals them when the scripted model never gets anything right (every
run goes the full length)."""

from __future__ import annotations

import json
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
    """Wrong as a generator (no expression with the puzzle's numbers) and unconvinced as a critic, in the JSON
    the study's loop reads (a critic reply it could not read ended its instance, and so ends our run:
    `domains/study_verdicts.py`), and a different text every round (so no critique prompt repeats and hits the
    cache)."""
    said = f"I cannot tell ({len(messages)} messages, {sum(len(m['content']) for m in messages)} characters)"
    return json.dumps({"correct": False, "feedback": said})


SPECS = [small_spec(n) for n in SCHEMES] + ["intrinsic:steps=1,votes=3", "intrinsic:runs=2,steps=1"]
DOMAINS = {"game24": ("901-902", "901-904"), "coloring": ("1-2", "1-4")}  # (full-length runs, any runs)


def study_args(name: str, store: Path, server: ScriptedServer, spec: str, which: int) -> list[str]:
    """`run` of `spec` on the first domain it can run on (each has a case for every scheme)."""
    domain = next(d for d in DOMAINS if unsupported(spec, get_domain(d)) is None)
    args = run_args(name, store, server, instances=DOMAINS[domain][which], schemes=spec)
    return [domain if a == "game24" else a for a in args]


@pytest.mark.parametrize("spec", SPECS)
def test_the_estimate_is_the_calls_a_full_length_run_makes(tmp_path: Path, spec: str) -> None:
    with ScriptedServer(reply=never_right) as server:
        args = study_args("full", tmp_path / "s.sqlite", server, spec, 0)
        estimate = numbers(invoke(*args, "--dry-run").stdout)
        invoke(*args, check=None)
        assert server.requests == estimate["max"] > 0


@pytest.mark.parametrize("spec", SPECS)
def test_the_estimate_bounds_the_calls_of_any_run(tmp_path: Path, spec: str) -> None:
    with ScriptedServer(reply=game24_reply) as server:  # right sometimes (on Game of 24): runs stop early
        args = study_args("some", tmp_path / "s.sqlite", server, spec, 1)
        estimate = numbers(invoke(*args, "--dry-run").stdout)
        invoke(*args, check=None)
        assert 0 < server.requests <= estimate["max"]


@pytest.mark.parametrize("spec", ["sound-all:rounds=3", "llm-llm:rounds=3", "sampling:k=3"])
def test_the_estimate_is_exact_on_graph_colouring_too(tmp_path: Path, spec: str) -> None:
    with ScriptedServer(reply=never_right) as server:
        args = [("coloring" if a == "game24" else "1-2" if a == "901-902" else a)
                for a in run_args("full", tmp_path / "s.sqlite", server, instances="901-902", schemes=spec)]
        estimate = numbers(invoke(*args, "--dry-run").stdout)
        invoke(*args, check=None)
        assert server.requests == estimate["max"] > 0


def test_intrinsic_is_costed_by_its_steps_runs_and_votes(tmp_path: Path) -> None:
    """(steps + 1) plans and as many critiques (votes each) per run, `runs` times: 2 puzzles."""
    store = tmp_path / "s.sqlite"
    for spec, calls in (("intrinsic", 44), ("intrinsic:steps=0", 4), ("intrinsic:runs=5", 220),
                        ("intrinsic:votes=3,steps=1", 16), ("intrinsic-oracle:steps=4", 10)):  # fmt: skip
        out = invoke("run", "x", "--domains", "game24", "--instances", "gen:2:1", "--schemes", spec, "--model", "m",
                     "--base-url", "http://127.0.0.1:9/v1", "--store", str(store), "--dry-run").stdout  # fmt: skip
        assert numbers(out)["max"] == calls, spec
