"""Intrinsic self-critique as published, message by message on the scripted server: the many-shot planner,
the paper's critic prompt and verdict words, the critique handed back, steps 0..10, the oracle, the
context-length exit and self-critique with self-consistency."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.base import Instance
from critiquebench.domains.planning import PlanningDomain
from critiquebench.domains.planning.critique import parse_critic_verdict
from critiquebench.graphs import SCHEMES
from critiquebench.store.db import connect
from critiquebench.store.results import attempts

from critiquebench.llm.client import LLMClient
from critiquebench.studies.execute import execute_run
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer

CRITIC_MARK = "The suggested solution:"
WRONG_PLAN = "(pick-up a)\n[PLAN END]"


@functools.cache
def blocksworld() -> tuple[PlanningDomain, Instance]:
    domain = get_domain("blocksworld", prompt_style="pddl")
    assert isinstance(domain, PlanningDomain)
    return domain, load_instances(domain, "20", DATASETS)[0]


def gold(domain: PlanningDomain, inst: Instance) -> str:
    return domain.answer_text(domain.reference_plan(inst), "pddl")


class Script:
    """Planner calls get a wrong plan (or the gold one once `solve_at` plans were made); critic calls get the
    verdict of `verdicts` in turn (cycling)."""

    def __init__(self, verdicts: list[str], right: str = "", solve_at: int = 0) -> None:
        self.verdicts, self.right, self.solve_at = verdicts, right, solve_at
        self.plans: list[list[dict[str, str]]] = []
        self.critiques: list[list[dict[str, str]]] = []

    def __call__(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        if CRITIC_MARK in messages[-1]["content"]:
            self.critiques.append(messages)
            return self.verdicts[(len(self.critiques) - 1) % len(self.verdicts)]
        self.plans.append(messages)
        n = len(self.plans)
        if self.solve_at and n >= self.solve_at:
            return self.right
        return "(pick-up a)\n" * n + "[PLAN END]"  # a different plan each time: no critic call is cached


def run(tmp_path: Path, server: ScriptedServer, llm: LLMClient, spec: str, script: Script) -> tuple[Any, list]:
    domain, inst = blocksworld()
    server.reply = script
    out = execute_run(tmp_path / "s.sqlite", "t", domain, inst, spec, 0, llm)
    return out, attempts(connect(tmp_path / "s.sqlite"), out.thread_id)


def test_verdict_words_are_all_recognised() -> None:
    assert parse_critic_verdict("Step 1 ... so the plan is correct.").says_valid
    assert not parse_critic_verdict("The Plan is Wrong").says_valid
    wrong = parse_critic_verdict("all actions applicable, but goal not reached")
    assert not wrong.says_valid and wrong.parsed
    assert parse_critic_verdict("first I thought the plan is wrong, but the plan is correct").says_valid
    assert not parse_critic_verdict("no verdict here").parsed


def test_steps_0_to_10_give_11_plans_and_each_critique_reaches_the_next_planner_prompt(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    critiques = ["Step 1: (pick-up a) needs (clear a). the plan is wrong", "Step 1 fine. goal not reached"]
    script = Script(critiques)
    out, rows = run(tmp_path, scripted_server, scripted_llm, "intrinsic", script)
    assert (out.status, out.rounds, out.final_round) == ("done", 11, 11)
    assert len(script.plans) == 11 and len(script.critiques) == 11
    domain, inst = blocksworld()
    first = script.plans[0]
    assert first == domain.prompt(inst, "pddl", shots=16)
    assert first[-1]["content"].count("[PROBLEM]") == 17  # 16 solved examples and the problem
    for step, messages in enumerate(script.plans[1:], start=1):
        assert messages[: len(first)] == first  # the planner's conversation keeps growing
        turns = messages[len(first) :]
        assert len(turns) == 2 * step
        assert turns[-2]["role"] == "assistant" and turns[-2]["content"] == rows[step - 1]["answer"]
        assert turns[-1]["content"].startswith(critiques[(step - 1) % 2])  # the critique itself goes back
    critic = script.critiques[0][-1]["content"]
    assert critic.startswith("Given the domain definition:\n(define (domain blocksworld-4ops)")
    assert "(pick-up a)" in critic.split(CRITIC_MARK)[1]
    assert critic.endswith("'the plan is wrong', or 'goal not reached'.")
    assert [r["llm_verdict"] for r in rows] == [0] * 11


def test_correct_verdict_stops_and_the_plan_is_output(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    domain, inst = blocksworld()
    script = Script(["the plan is wrong", "the plan is correct"], right=gold(domain, inst), solve_at=2)
    out, rows = run(tmp_path, scripted_server, scripted_llm, "intrinsic", script)
    assert (out.rounds, out.final_round, out.correct) == (2, 2, True)
    assert [r["sound_valid"] for r in rows] == [0, 1]


def test_oracle_hands_back_the_validators_feedback(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    domain, inst = blocksworld()
    script = Script([], right=gold(domain, inst), solve_at=3)
    out, rows = run(tmp_path, scripted_server, scripted_llm, "intrinsic:critic=sound", script)
    assert (out.rounds, out.correct) == (3, True) and not script.critiques  # no LLM critic calls
    assert "The above plan is invalid." in script.plans[1][-1]["content"]
    assert script.plans[1][-1]["content"] == rows[0]["feedback"]


def test_few_shot_critic_without_domain_definition(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    script = Script(["the plan is correct"])
    run(tmp_path, scripted_server, scripted_llm, "intrinsic:critique_shots=8,domain_definition=false", script)
    critic = script.critiques[0][-1]["content"]
    assert "Given the domain definition" not in critic and "(:action" not in critic
    examples = critic.split("Here are examples of evaluated plans.")[1].split("The problem to solve:")[1:-1]
    assert len(examples) == 8
    endings = [e.split("Evaluation:")[1].strip().splitlines()[-1] for e in examples]
    assert {"the plan is correct", "the plan is wrong", "goal not reached"} <= set(endings)


def test_context_limit_stops_early_and_says_so(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    domain, inst = blocksworld()
    size = len(domain.prompt(inst, "pddl", shots=2)[-1]["content"]) // 4
    script = Script(["the plan is wrong " + "x" * 400])
    out, rows = run(tmp_path, scripted_server, scripted_llm, f"intrinsic:shots=2,context_limit={size + 150}", script)
    assert out.status == "done" and out.rounds < 11 and out.final_round == out.rounds
    assert "stopped early" in rows[-1]["feedback"] and "context_limit" in rows[-1]["feedback"]


def test_self_consistency_over_five_runs_outputs_the_majority_plan(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    domain, inst = blocksworld()
    right = gold(domain, inst)

    assert SCHEMES["intrinsic"].max_rounds({"runs": 5, "steps": 1}) == 10
    calls: list[int] = []

    def counted(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        calls.append(1)
        if CRITIC_MARK in messages[-1]["content"]:
            return "the plan is correct"
        return right if len(calls) not in (3, 7) else WRONG_PLAN

    scripted_server.reply = counted
    out = execute_run(tmp_path / "s.sqlite", "t", domain, inst, "intrinsic:runs=5,steps=1", 0, scripted_llm)
    rows = attempts(connect(tmp_path / "s.sqlite"), out.thread_id)
    finals = [r["round"] for r in rows]
    assert finals == [1, 3, 5, 7, 9]  # each run stops at its first plan (the critic says correct)
    assert out.correct and [r["stopped"] for r in rows].count(1) == 1


def test_temperature_reaches_planner_and_critic(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    run(tmp_path, scripted_server, scripted_llm, "intrinsic:steps=1,temperature=0.7", Script(["the plan is wrong"]))
    assert len(scripted_server.calls) == 4
    assert {params.get("temperature") for _messages, params in scripted_server.calls} == {0.7}
