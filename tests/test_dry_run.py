"""`--dry-run`: runs, new calls (after the cache and shared draws), tokens and cost, without any LLM call."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from critiquebench.store.db import connect
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import DATASETS, ROOT, game24_reply, invoke, run_args

STUDIES = ROOT / "studies"


def numbers(text: str) -> dict[str, float]:
    found = re.search(r"new LLM calls: max (\d+), expected (\d+) \((\d+) known", text)
    assert found, text
    todo = re.search(r": (\d+) \((\d+) finished before", text)
    assert todo, text
    return {"max": int(found[1]), "expected": int(found[2]), "cached": int(found[3]), "runs": int(todo[1]),
            "done": int(todo[2])}  # fmt: skip


@pytest.mark.parametrize(("command", "toml", "runs"), [
    ("run", "self_verification_loops.toml", 3500),
    ("run", "plan_critique.toml", 300),
    ("run", "plan_critique_feedback.toml", 150),
    ("run", "blocksworld_llm_llm_open.toml", 100),      # Table 1's Blocksworld LLM+LLM cell, the published run
    ("run", "blocksworld_llm_llm_val_form.toml", 100),  # the same cell as the 2023 code's default would run it
    ("verify-study", "self_verification_verify.toml", 14200),
])  # fmt: skip
def test_the_shipped_paper_studies_pass_dry_run(tmp_path: Path, command: str, toml: str, runs: int) -> None:
    store = tmp_path / "store.sqlite"
    out = invoke(command, "paper", "--config", str(STUDIES / toml), "--dry-run", "--price-in", "30",
                 "--price-out", "60", "--store", str(store)).stdout  # fmt: skip
    got = numbers(out)
    assert got["runs"] == runs and 0 < got["expected"] <= got["max"]
    assert "cost at $30 / $60 per million tokens" in out and "tokens (replies at max_tokens): max" in out
    assert not store.exists()  # nothing stored, nothing called (the endpoint in the file is never contacted)
    if toml == "self_verification_loops.toml":  # Table 1's cells: no all-errors cell for Game of 24 (000:238)
        assert "sound-all on game24 left out: no all-errors feedback for Game of 24" in out
        assert "llm-llm-cot on" not in out  # planning has the paper's CoT prompt (Table A1's LLM+LLM-C)
    if command == "verify-study":  # the paper's Table 2 / A2 denominators (000:212, 000:351-362)
        for row in (
            "game24, default prompt: 4100 answers (correct 1000, ablated_op 1000, ablated_number 1000, random 1000, "
            "llm 100): 3071 invalid / 1029 valid",
            "game24, cot prompt: 4100 answers (correct 1000, ablated_op 1000, ablated_number 1000, random 1000, "
            "llm 100): 3071 invalid / 1029 valid",
            "coloring, default prompt: 500 answers (correct 100, ablated 100, non_optimal 100, random 100, llm 100): "
            "382 invalid / 118 valid",
            "coloring, cot prompt: 500 answers (correct 100, ablated 100, non_optimal 100, random 100, llm 100): "
            "382 invalid / 118 valid",
            "mystery_blocksworld, default prompt: 500 answers (correct 100, inexecutable 100, non_goal_reaching 100, "
            "random 100, llm 100): 397 invalid / 103 valid",
            "mystery_blocksworld, swap prompt: 500 answers (correct 100, inexecutable 100, non_goal_reaching 100, "
            "random 100, llm 100): 397 invalid / 103 valid",
            # not the paper's 345 / 155: its llm plans are not GPT-4's recorded one-shot plans (README)
            "blocksworld, default prompt: 500 answers (correct 100, inexecutable 100, non_goal_reaching 100, "
            "random 100, llm 100): 360 invalid / 140 valid",
            "blocksworld, cot prompt: 500 answers (correct 100, inexecutable 100, non_goal_reaching 100, "
            "random 100, llm 100): 360 invalid / 140 valid",
        ):
            assert row + "\n" in out


def test_dry_run_counts_shared_draws_and_the_cache(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    schemes = "standard,sound-first:rounds=3,sampling:k=3,self-consistency:k=3"
    with ScriptedServer(reply=game24_reply) as server:
        args = run_args("dry", store, server, instances="901-902", schemes=schemes)
        before = numbers(invoke(*args, "--dry-run").stdout)
        assert server.requests == 0 and not store.exists()
        # Per puzzle: sample 0 (standard = every first round = sampling's first draw) and samples 1-2 (shared by
        # sampling and self-consistency) are known: 6 calls; sound-first's rounds 2-3 are 4 more at most, each
        # reached with probability 0.75 and 0.75^2 at the default stop rate 0.25.
        assert before == {"max": 10, "expected": round(6 + 2 * (0.75 + 0.75**2)), "cached": 0, "runs": 8,
                          "done": 0}  # fmt: skip
        invoke(*args)
        calls = server.requests
        assert 6 <= calls <= 10
        after = numbers(invoke(*args, "--dry-run").stdout)
        assert after == {"max": 0, "expected": 0, "cached": 0, "runs": 8, "done": 8}
        twin = numbers(invoke(*["twin" if a == "dry" else a for a in args], "--dry-run").stdout)
        assert twin["done"] == 0 and twin["cached"] == 6  # a new study over the same calls: all known ones cached
        judge = numbers(invoke("verify-study", "v", "--domains", "game24", "--instances", "901-902", "--kinds",
                               "correct,random-no-info", "--dataset", str(DATASETS), "--model", "scripted",
                               "--base-url", server.base_url, "--store", str(store), "--dry-run").stdout)  # fmt: skip
        assert judge == {"max": 4, "expected": 4, "cached": 0, "runs": 4, "done": 0}
        assert server.requests == calls
    tables = connect(store).table_names()
    assert "verify_results" not in tables and "twin" not in str(connect(store).execute("SELECT name FROM studies")
                                                                .fetchall())  # fmt: skip
