"""Intrinsic self-critique's Critique+SC and room to think, on the scripted server (paper 001, Bohnet et al.).

Critique+SC is N critiques of the same plan at every step, a majority vote, ties "wrong" (Algorithm 1
`001:107-109`, `001:212`): `intrinsic:votes=5` must send 5 distinct draws (5 cache entries) per step, at a
temperature where 5 draws can differ, while the planner stays at the study's temperature (the paper's 0.0).
The paper's step-by-step critiques run 4.4-4.6k characters (`001:433-599`): no cap by default, and a critique
cut off by a cap before its verdict is recorded as cut off.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from critiquebench.domains import get_domain
from critiquebench.domains.planning import PlanningDomain
from critiquebench.llm.client import LLMClient
from critiquebench.store.db import connect
from critiquebench.store.results import attempts
from critiquebench.studies.execute import execute_run
from tests.scripted_server import ScriptedServer

CRITIC_MARK = "So, for each action:"  # A.2's first instruction line (001:242): every critic prompt has it


def is_critic(messages: list[dict[str, Any]]) -> bool:
    return CRITIC_MARK in messages[-1]["content"]


def run(tmp_path: Path, llm: LLMClient, spec: str) -> tuple[Any, list[dict[str, Any]]]:
    domain = get_domain("blocksworld_3_7")
    assert isinstance(domain, PlanningDomain)
    inst = domain.generate(1, 7)[0]
    out = execute_run(tmp_path / "s.sqlite", "t", domain, inst, spec, 0, llm)
    return out, attempts(connect(tmp_path / "s.sqlite"), out.thread_id)


def test_five_votes_are_five_distinct_draws_per_step_and_the_planner_keeps_the_papers_temperature(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    served: list[int] = []

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        served.append(1)
        if is_critic(messages):
            return f"draw {len(served)}: the plan is wrong"
        return "(pick-up a)\n" * len(served)

    scripted_server.reply = reply
    out, rows = run(tmp_path, scripted_llm, "intrinsic:steps=1,votes=5,shots=2")
    critic_calls = [(m, p) for m, p in scripted_server.calls if is_critic(m)]
    plan_calls = [(m, p) for m, p in scripted_server.calls if not is_critic(m)]
    assert len(plan_calls) == 2 and len(critic_calls) == 10  # 2 steps x 5 votes
    assert {p["temperature"] for _m, p in plan_calls} == {0.0}  # the study's (the paper's) temperature
    assert {p["temperature"] for _m, p in critic_calls} == {0.7}  # votes are samples
    with sqlite3.connect(tmp_path / "store.sqlite") as db:  # the call cache (`call_cache`)
        entries = [
            (msgs, sample)
            for msgs, sample in db.execute("SELECT messages, sample FROM llm_calls")
            if CRITIC_MARK in msgs
        ]
    assert len(entries) == 10 and len({(m, s) for m, s in entries}) == 10
    by_prompt: dict[str, set[int]] = {}
    for msgs, sample in entries:
        by_prompt.setdefault(msgs, set()).add(sample)
    assert sorted(map(len, by_prompt.values())) == [5, 5]  # per step: one prompt, five distinct draws
    assert all(r["llm_verdict"] == 0 for r in rows)


def test_a_planner_that_repeats_its_plan_gets_fresh_critic_votes_at_every_step(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """The critic prompt shows only the plan, so a repeated plan asks the same prompt again: its votes used to come
    back from the call cache, the same N critiques at every step, not N fresh samples (issue 32)."""
    critiques: list[str] = []

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        if is_critic(messages):
            critiques.append(f"draw {len(critiques) + 1}: the plan is wrong")
            return critiques[-1]
        return "(pick-up a)"  # the same plan at every step

    scripted_server.reply = reply
    out, rows = run(tmp_path, scripted_llm, "intrinsic:steps=2,votes=3,shots=1")
    critic_prompts = {m[-1]["content"] for m, _p in scripted_server.calls if is_critic(m)}
    assert len(critic_prompts) == 1 and len(critiques) == 9  # one prompt, 3 steps x 3 fresh votes
    assert out.rounds == 3 and [r["llm_critique"] for r in rows] == [critiques[0], critiques[3], critiques[6]]


def test_a_tie_of_votes_is_wrong(tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient) -> None:
    votes: list[int] = []
    plans: list[int] = []

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        if is_critic(messages):
            votes.append(1)
            return "the plan is correct" if len(votes) % 2 else "the plan is wrong"
        plans.append(1)
        return "(pick-up a)\n" * len(plans)  # a new plan each step: its critic prompt is new too

    scripted_server.reply = reply
    out, rows = run(tmp_path, scripted_llm, "intrinsic:steps=1,votes=2,shots=1")
    assert [r["llm_verdict"] for r in rows] == [0, 0]  # 1 of 2 says correct: a tie, so the loop goes on
    assert out.rounds == 2 and len(votes) == 4


def test_critiques_have_no_length_cap_by_default(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    scripted_server.reply = lambda messages, params: "the plan is correct" if is_critic(messages) else "(pick-up a)"
    run(tmp_path, scripted_llm, "intrinsic:steps=0,shots=1")
    assert scripted_llm.settings.max_tokens == 512  # the study's cap ...
    for _messages, params in scripted_server.calls:  # ... is not sent: the endpoint's own limit applies
        assert params.get("max_tokens") is None and params.get("max_completion_tokens") is None


def test_a_critique_cut_off_before_its_verdict_is_recorded_as_cut_off(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    rambling = "Step 1: (pick-up a) " + "checking " * 60  # 62 words: past a 50-token cap, no verdict yet

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        return rambling if is_critic(messages) else "(pick-up a)"

    scripted_server.reply = reply
    out, rows = run(tmp_path, scripted_llm, "intrinsic:steps=1,shots=1,max_tokens=50")
    assert {p.get("max_tokens") for _m, p in scripted_server.calls} == {50}
    assert [r["llm_verdict"] for r in rows] == [None, None]  # no verdict, not "wrong"
    assert rows[0]["llm_critique"].endswith("[cut off: the critique reached max_tokens=50 before a verdict]")
    assert out.rounds == 2  # not "correct", so the loop goes on (Algorithm 1 breaks only on "correct")
