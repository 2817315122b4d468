"""llm-llm on planning domains as the plan self-critique study (Valmeekam et al.) ran its LLM+LLM loop, message by
message on the scripted server: after natural-language prompts the LLM critic's answer goes back to the generator
stripped and otherwise verbatim (the study's 2023 code, karthikv792/LLMs-Planning back_prompting.py
@27b0c44); after PDDL prompts it is followed by the 2025 script's PDDL request
(llm_planning_analysis/back_prompting_parallel.py). PDDL-style prompts are verified with the intrinsic
self-critique paper's critic prompt (A.2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.contract import Domain, Instance
from critiquebench.llm.client import LLMClient
from critiquebench.store.db import connect
from critiquebench.store.results import attempts
from critiquebench.studies.execute import execute_run
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer
from tests.test_intrinsic import A2, CRITIC_MARK, collapse, domain_text, expected_critic

# The study's requests, typed here from its code (not read from ours).
STUDY_PDDL_REQUEST = (
    "\nProvide your revised plan as a sequence of actions in PDDL format. An action ACTION which acts on two objects "
    "OBJ1 and OBJ2 would be written (ACTION OBJ1 OBJ2). Do not provide anything else in your answer.\n\n[PLAN]"
)
PLANBENCH_VERIFY = 'Verify whether the above plan is valid. If it is valid, please say "Plan is valid."'


class Script:
    """Generator calls get `plan`; critic calls (recognised by `mark`) get `critique`."""

    def __init__(self, mark: str, plan: str, critique: str) -> None:
        self.mark, self.plan, self.critique = mark, plan, critique
        self.generations: list[list[dict[str, Any]]] = []
        self.critics: list[list[dict[str, Any]]] = []

    def __call__(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        if self.mark in messages[-1]["content"]:
            self.critics.append(messages)
            return self.critique
        self.generations.append(messages)
        return self.plan


def run_llm_llm(
    tmp_path: Path, server: ScriptedServer, llm: LLMClient, domain: Domain, instance: Instance, script: Script
) -> list[dict[str, Any]]:
    server.reply = script
    out = execute_run(tmp_path / "store.sqlite", "critique", domain, instance, "llm-llm:rounds=3", 0, llm)
    assert (out.status, out.rounds, out.correct) == ("done", 3, False)
    return attempts(connect(tmp_path / "store.sqlite"), out.thread_id)


def test_nl_critiques_go_back_verbatim(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    critique = "\n  Plan is invalid. The orange block is not clear, so it cannot be picked up.  \n"
    script = Script(PLANBENCH_VERIFY, "pick up the orange block\n[PLAN END]", critique)
    rows = run_llm_llm(tmp_path, scripted_server, scripted_llm, domain, instance, script)
    assert [r["llm_verdict"] for r in rows] == [0, 0, 0]
    # verbatim, as the study's 2023 code and both papers' examples hand it back (000:3295-3299, 000:2596-2669;
    # LLMs-Planning back_prompting.py @27b0c44); the 2025 script's request sentence is not added
    expected = "Plan is invalid. The orange block is not clear, so it cannot be picked up."
    last = script.generations[-1]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [last[3]["content"], last[5]["content"]] == [expected, expected]


def test_pddl_prompts_are_verified_by_the_a2_critic_and_get_the_study_s_pddl_request(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    domain = get_domain("blocksworld", prompt_style="pddl")
    (instance,) = load_instances(domain, "20", DATASETS)
    critique = "1. (pick-up a): a is not clear.\nSo the plan is wrong.\n"
    script = Script(CRITIC_MARK, "(pick-up a)", critique)
    rows = run_llm_llm(tmp_path, scripted_server, scripted_llm, domain, instance, script)
    assert [r["llm_verdict"] for r in rows] == [0, 0, 0]
    a2 = expected_critic(A2, domain_text(domain), instance.data["problem"].strip(), "(pick-up a)")
    assert all(len(m) == 1 and collapse(m[0]["content"]) == a2 for m in script.critics) and script.critics
    assert script.generations[-1][-1]["content"] == critique.strip() + STUDY_PDDL_REQUEST
    # The critic prompt's own verdict phrases decide, as in the intrinsic scheme.
    assert domain.judge_reply(instance, "critique", "", "Every step holds: the plan is correct.").verdict.says_valid
    assert not domain.judge_reply(instance, "critique", "", "Plan is valid.").verdict.says_valid

