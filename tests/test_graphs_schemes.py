"""Every scheme end to end: real domains and data, real HTTP to the scripted server, a real SQLite store."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.contract import Domain, Instance
from critiquebench.llm.client import LLMClient
from critiquebench.store.checkpoints import checkpoint_bytes
from critiquebench.store.db import connect
from critiquebench.store.results import attempts
from critiquebench.studies.execute import CHECKPOINTS_ENV, RunOutcome, execute_run
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer
from tests.test_graphs_support import ScriptedModel, always_no, always_yes, truthful

SELECTION = {"game24": "901-902", "coloring": "1-2"}


@functools.cache
def setup(domain_name: str) -> tuple[Domain, list[Instance]]:
    domain = get_domain(domain_name)
    return domain, load_instances(domain, SELECTION[domain_name], DATASETS)


class Bench:
    """One store + scripted server + client; `run(spec)` executes one thread and returns it with its rows."""

    def __init__(
        self, tmp_path: Path, server: ScriptedServer, llm: LLMClient, domain: Domain, instance: Instance
    ) -> None:
        self.store, self.server, self.llm = tmp_path / "store.sqlite", server, llm
        self.domain, self.instance = domain, instance

    def script(self, **kwargs: Any) -> ScriptedModel:
        model = ScriptedModel([(self.domain, self.instance)], **kwargs)
        self.server.reply = model
        return model

    def run(self, spec: str, trial: int = 0) -> tuple[RunOutcome, list[dict[str, Any]]]:
        out = execute_run(self.store, "t", self.domain, self.instance, spec, trial, self.llm)
        return out, attempts(connect(self.store), out.thread_id)


@pytest.fixture(params=["game24", "coloring"])
def bench(
    request: pytest.FixtureRequest, tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> Bench:
    domain, instances = setup(request.param)
    return Bench(tmp_path, scripted_server, scripted_llm, domain, instances[0])


def column(rows: list[dict[str, Any]], name: str) -> list[Any]:
    return [r[name] for r in rows]


def test_standard_is_one_call_and_final(bench: Bench) -> None:
    bench.script(plan=[0, "c"])
    out, rows = bench.run("standard")
    assert (out.status, out.correct, out.rounds, out.final_round) == ("done", False, 1, 1)
    assert column(rows, "stopped") == [1] and column(rows, "sound_valid") == [0]
    assert bench.server.answered == 1


def test_sound_feedback_loop_stops_at_first_correct_answer(bench: Bench) -> None:
    bench.script(plan=[0, 1, "c"])
    out, rows = bench.run("sound-first")
    assert (out.correct, out.rounds, out.final_round) == (True, 3, 3)
    assert column(rows, "sound_valid") == [0, 0, 1] and column(rows, "stopped") == [0, 0, 1]
    first_errors = [
        bench.domain.feedback(bench.instance, bench.domain.verify(bench.instance, r["answer"]), "first")
        for r in rows[:2]
    ]
    assert column(rows, "feedback")[:2] == first_errors
    # round 3 replays both earlier answers and their wrapped feedback as chat turns
    last_messages = bench.server.calls[-1][0]
    assert [m["role"] for m in last_messages[-4:]] == ["assistant", "user", "assistant", "user"]
    assert last_messages[-1]["content"] == bench.domain.backprompt(bench.instance, first_errors[1])


def test_sound_loop_gives_up_after_the_round_limit(bench: Bench) -> None:
    bench.script(plan=[0, 1, 2, 3, 4])
    out, rows = bench.run("sound-binary:rounds=4")
    assert (out.correct, out.rounds, out.final_round) == (False, 4, 4)
    assert column(rows, "stopped") == [0, 0, 0, 1]
    assert bench.server.answered == 4


def test_llm_llm_stops_when_the_critic_says_correct(bench: Bench) -> None:
    bench.script(plan=[0, 1, "c"], critic=truthful)
    out, rows = bench.run("llm-llm")
    assert (out.correct, out.rounds) == (True, 3)
    assert column(rows, "llm_verdict") == [0, 0, 1] and column(rows, "sound_valid") == [0, 0, 1]
    assert all(r["llm_calls"] == 2 for r in rows)  # one generation and one critique per round
    assert rows[0]["feedback"] == rows[0]["llm_critique"] != ""


def test_llm_llm_false_positive_ends_the_run_wrong(bench: Bench) -> None:
    bench.script(plan=[0, "c"], critic=always_yes)
    out, rows = bench.run("llm-llm")
    assert (out.correct, out.rounds) == (False, 1)
    assert (rows[0]["llm_verdict"], rows[0]["sound_valid"]) == (1, 0)  # the FP that Table 2 counts


def test_llm_llm_never_satisfied_runs_to_the_limit(bench: Bench) -> None:
    bench.script(plan=[0, 1, "c"], critic=always_no)
    out, rows = bench.run("llm-llm:rounds=5")
    assert (out.rounds, out.final_round, out.correct) == (5, 5, True)  # the last answer is output
    assert column(rows, "llm_verdict") == [0] * 5 and column(rows, "sound_valid") == [0, 0, 1, 1, 1]


def test_llm_llm_cot_uses_the_cot_verifier_prompt(bench: Bench) -> None:
    bench.script(plan=["c"])
    out, _ = bench.run("llm-llm-cot")
    critic_prompt = bench.server.calls[1][0]
    assert critic_prompt == bench.domain.judge_prompt(bench.instance, "critique-cot", out.final_answer or "")


def test_sampling_shares_sample_zero_with_standard(bench: Bench) -> None:
    bench.script(plan=[0, 1, "c", 2])
    assert bench.run("standard")[0].correct is False
    out, rows = bench.run("sampling:k=5")
    assert (out.correct, out.rounds) == (True, 3)
    assert column(rows, "cache_hits") == [1, 0, 0]  # sample 0 is standard's call
    assert bench.server.answered == 3
    again, _ = bench.run("sampling:k=5", trial=1)  # a new thread asking the same samples pays nothing
    assert again.correct is True and bench.server.answered == 3


def test_self_consistency_outputs_the_most_common_answer(bench: Bench) -> None:
    bench.script(plan=[0, 1, "c", 1, "c"])  # 1 and c twice each: the tie goes to the earliest, 1
    out, rows = bench.run("self-consistency:k=5")
    assert (out.rounds, out.final_round, out.correct) == (5, 2, False)
    assert column(rows, "stopped") == [0, 1, 0, 0, 0]
    out7, rows7 = bench.run("self-consistency:k=7")  # samples 5, 6 repeat "c": now the majority
    assert (out7.final_round, out7.correct) == (3, True)
    assert bench.server.answered == 7


def test_refine_hands_back_the_first_error_verbatim(bench: Bench) -> None:
    bench.script(plan=[0, 1, 2, 3, 4])
    out, rows = bench.run("refine")
    assert (out.rounds, out.correct) == (4, False)
    verdict = bench.domain.verify(bench.instance, rows[0]["answer"])
    assert rows[0]["feedback"] == bench.domain.feedback(bench.instance, verdict, "request") == verdict.errors[0]
    second = bench.server.calls[1][0]
    assert second[-1] == {"role": "user", "content": rows[0]["feedback"]}


def test_intrinsic_votes_and_critique_handed_back(bench: Bench) -> None:
    # The critic says "correct" on 2 of 5 samples, then 3 of 5: a minority is "wrong", a majority stops.
    # Outside planning the scheme uses the domain's own prompts (its verification prompt for the critic).
    def critic(correct: bool, occurrence: int) -> bool:
        return occurrence < (3 if correct else 2)

    bench.script(plan=[0, "c"], critic=critic)
    out, rows = bench.run("intrinsic:votes=5")
    assert (out.rounds, out.correct) == (2, True)
    assert column(rows, "llm_verdict") == [0, 1] and column(rows, "llm_calls") == [6, 6]
    assert rows[0]["feedback"] == rows[0]["llm_critique"]  # the critique itself goes back
    backprompt = bench.domain.backprompt(bench.instance, rows[0]["feedback"])
    assert bench.server.calls[6][0][-1] == {"role": "user", "content": backprompt}


@pytest.mark.parametrize("votes,yes,expected", [(4, 2, 0), (4, 3, 1), (3, 2, 1)])
def test_critic_vote_tie_counts_as_wrong(bench: Bench, votes: int, yes: int, expected: int) -> None:
    bench.script(plan=[0], critic=lambda correct, occurrence: occurrence < yes)
    _, rows = bench.run(f"llm-llm:rounds=1,votes={votes}")
    assert rows[0]["llm_verdict"] == expected and rows[0]["llm_calls"] == 1 + votes


def test_finished_run_is_not_rerun(bench: Bench) -> None:
    bench.script(plan=[0, "c"])
    first, _ = bench.run("sound-all")
    answered = bench.server.answered
    again, rows = bench.run("sound-all")
    assert again.skipped and again.correct == first.correct and len(rows) == first.rounds
    assert bench.server.answered == answered


def llm_llm_failed_in_its_critic(
    tmp_path: Path, scripted_server: ScriptedServer, make_llm: Callable[..., LLMClient]
) -> tuple[Bench, RunOutcome, list[dict[str, Any]]]:
    """A game24 llm-llm run whose round 1 critic call met a server error (no retries): the bench, the failed
    run and its rows."""
    domain, instances = setup("game24")
    bench = Bench(tmp_path, scripted_server, make_llm(max_retries=0), domain, instances[0])
    bench.script(plan=[0, 1, "c"])
    bench.run("standard")  # caches round 1's generation, so llm-llm first meets the fault in its critic
    scripted_server.queue_fault("500")
    failed, rows = bench.run("llm-llm")
    return bench, failed, rows


def test_llm_failure_is_recorded_and_resumable(
    tmp_path: Path, scripted_server: ScriptedServer, make_llm: Callable[..., LLMClient]
) -> None:
    bench, failed, rows = llm_llm_failed_in_its_critic(tmp_path, scripted_server, make_llm)
    assert failed.status == "failed" and "LLMCallError" in (failed.error or "") and rows  # round 1 recorded
    resumed, rows = bench.run("llm-llm")
    assert resumed.status == "done" and resumed.resumed and resumed.correct is True
    assert column(rows, "round") == [1, 2, 3]


def test_a_resume_whose_recorded_calls_left_the_cache_runs_again_from_the_start(
    tmp_path: Path, scripted_server: ScriptedServer, make_llm: Callable[..., LLMClient]
) -> None:
    """A run without checkpoints resumes by stepping again from its cached calls. When a call of its recorded
    steps is no longer there (the cache cleared, or the scheme's prompts changed since), nothing is paid again
    for those steps' sake: the run is done again from the start, its rows written anew as a fresh run's."""
    bench, failed, rows = llm_llm_failed_in_its_critic(tmp_path, scripted_server, make_llm)
    assert failed.status == "failed" and column(rows, "round") == [1]
    db = connect(bench.store)
    sql = "SELECT calls FROM round_calls WHERE thread_id = ? AND round = 1 AND node = 'generator'"
    generation = db.execute(sql, [failed.thread_id]).fetchone()[0]
    db.execute("DELETE FROM llm_calls WHERE key IN (SELECT value FROM json_each(?))", [generation])
    asked = scripted_server.requests
    resumed, rows = bench.run("llm-llm")
    assert resumed.status == "done" and resumed.correct is True and column(rows, "round") == [1, 2, 3]
    # the run's calls asked again from the start: each not counted a cache hit was asked of the endpoint, round
    # 1's generation among them
    calls, hits = sum(column(rows, "llm_calls")), sum(column(rows, "cache_hits"))
    assert scripted_server.requests - asked == calls - hits and rows[0]["cache_hits"] == 0


def test_full_fifteen_rounds_fit_the_step_limit_and_checkpoints_grow_linearly(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHECKPOINTS_ENV, "1")  # live runs checkpointed by LangGraph (off by default)
    domain, instances = setup("game24")
    bench = Bench(tmp_path, scripted_server, scripted_llm, domain, instances[0])
    bench.script(plan=list(range(15)), critic=always_no)
    sizes = {}
    for rounds in (5, 15):
        out, rows = bench.run(f"llm-llm:rounds={rounds}" if rounds != 15 else "llm-llm")
        assert (out.status, out.rounds, len(rows)) == ("done", rounds, rounds)
        sizes[rounds] = checkpoint_bytes(bench.store, out.thread_id)
    # earlier rounds are delta writes, not copied into every checkpoint: 3x the rounds is about 3x the bytes
    # (a history copied into each checkpoint would be ~9x)
    assert 2.5 < sizes[15] / sizes[5] < 3.5


@pytest.mark.parametrize("domain_name", ["blocksworld", "mystery_blocksworld", "logistics"])
def test_planning_schemes(
    domain_name: str, tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    domain = get_domain(domain_name)
    instance = load_instances(domain, "2", DATASETS)[0]
    bench = Bench(tmp_path, scripted_server, scripted_llm, domain, instance)
    bench.script(plan=[0, 1, "c"])
    expected = {
        "standard": (1, False),
        "sound-first": (3, True),
        "llm-llm": (3, True),
        "refine": (3, True),
        "intrinsic:votes=3,shots=3,critic=llm": (3, True),
    }
    for spec, (rounds, correct) in expected.items():
        out, rows = bench.run(spec)
        assert (out.status, out.rounds, out.correct) == ("done", rounds, correct), spec
    # intrinsic plans with the paper's B.1 prompt; the plan and the critique go back inside that one prompt,
    # with the paper's request (its Revise-Prompt, 001:420, 600)
    _, rows = bench.run("intrinsic:votes=3,shots=3,critic=llm")
    revised = [m for m, _ in bench.server.calls if "Please can you explain the error and fix it." in m[-1]["content"]]
    assert revised and len(revised[0]) == 1 and revised[0][0]["content"].startswith("The domain definition:")
    assert revised[0][0]["content"].endswith(
        "\nThe clean plan:\n" + domain.critic_plan(instance, rows[0]["answer"]) + "\n" + rows[0]["llm_critique"]
        + "\n\nPlease can you explain the error and fix it."
    )  # fmt: skip
    # refine hands the validator's first error back as the refinement paper's request
    _, rows = bench.run("refine")
    assert rows[0]["feedback"] == domain.feedback(instance, domain.verify(instance, rows[0]["answer"]), "request")
    assert rows[0]["feedback"].startswith("The plan you provided is invalid. ")
