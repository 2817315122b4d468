"""Intrinsic self-critique as published (paper 001, Bohnet et al.), message by message on the scripted server: the
many-shot planner prompt B.1, the critic prompts A.1-A.5, the Revise-Prompt of the traces D.1/E.1, steps 0..10,
the oracle, the context-length exit and self-critique with self-consistency.

The expected messages are built from the paper's own text, read from ../shared/papers/ at the lines cited: the
critic prompts A.1-A.5 (001:241-245) with their placeholders filled, B.1's frame (001:249) laid out as the traces
D.1 (001:289-419) and E.1 (001:1149-1241) show it, and the revise step of those traces (001:420, 597-601,
925). The appendix prints each prompt on one line (extraction lost the line breaks), so critic prompts are
compared with their whitespace collapsed; its quotes are typeset (’) and are mended to ASCII. Nothing here is
taken from our prompt files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.contract import Instance
from critiquebench.domains.planning import PlanningDomain
from critiquebench.domains.planning.critique import parse_critic_verdict
from critiquebench.domains.planning.instances import training_pool
from critiquebench.graphs import SCHEMES
from critiquebench.llm.client import LLMClient
from critiquebench.store.cache import CallCache
from critiquebench.store.db import connect
from critiquebench.store.results import attempts
from critiquebench.studies.execute import execute_run
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer

PAPER = DATASETS.parent / "papers" / "001_d090ca30e1edfbcb.txt"
VERDICTS = ("the plan is correct", "the plan is wrong", "goal not reached")
CRITIC_MARK = "The suggested solution:"  # every critic prompt A.1-A.5 has it; B.1 does not
WRONG_PLAN = "(pick-up a)\n[PLAN END]"


@functools.cache
def paper_lines() -> list[str]:
    return PAPER.read_text(encoding="utf-8").splitlines()


def paper(line: int) -> str:
    """Line `line` (1-based, as cited) of paper 001."""
    return paper_lines()[line - 1]


def appendix_prompt(line: int, title: str) -> str:
    """The prompt printed on `line` after its title, quotes mended (’ -> ')."""
    text = paper(line)
    assert text.startswith(title), text[:80]
    return text[len(title) :].strip().replace("\u2019", "'")


A1 = (241, "A.1: Self-Critique Prompt with few-shot exemplars")
A2 = (242, "A.2: Self-Critique 0-shot Prompt (without exemplars) with Domain Definition")
A3 = (243, "A.3: Self-Critique 0-shot Prompt without Domain Definition")
A4 = (244, "A.4: Self-Critique Prompt: Ablation of Domain Definition and numbered Instructions")
A5 = (245, "A.5: Self-Critique Prompt: Ablation of Domain Definition and numbered Instructions")


def collapse(text: str) -> str:
    return " ".join(text.split())


def expected_critic(which: tuple[int, str], domain: str, instance: str, plan: str, exemplars: str = "") -> str:
    """The paper's critic prompt with its placeholders filled (whitespace collapsed: see the module doc)."""
    text = appendix_prompt(*which)
    for field, value in (("{domain_pddl}", domain), ("{instance}", instance), ("{plan}", plan),
                         ("{self_evaluations_exemplars}", exemplars)):  # fmt: skip
        text = text.replace(field, value)
    return collapse(text)


# B.1's frame (001:249), each piece as the paper prints it; the layout (line breaks, blank lines) is the traces'.
B1_DOMAIN = "The domain definition:"  # 001:249, D.1 001:289
B1_EXAMPLE = "Example of a problem and its solution (plan):"  # 001:249, D.1 001:323
B1_PLAN = "The plan without formatting:"  # 001:249, D.1 001:347
B1_PROBLEM = "And now the problem for you to solve. Please solve the following problem:"  # 001:249
B1_ONLY = "Provide only the plan. Do not add numbers, items or any additional text."  # 001:249, E.1 001:1239
B1_END = "Your plan as plain text without formatting:"  # 001:249, D.1 001:419
CLEAN = "The clean plan:"  # D.1 001:420, 601, 803
REQUEST = "Please can you explain the error and fix it."  # D.1 001:600, 802, 925; E.1 001:1269


def test_the_frame_pieces_are_the_papers() -> None:
    b1 = paper(249)
    for piece in (B1_DOMAIN, B1_EXAMPLE, B1_PLAN, B1_PROBLEM, B1_ONLY, B1_END):
        assert piece in b1, piece
    assert paper(289) == B1_DOMAIN and paper(323) == B1_EXAMPLE and paper(347) == B1_PLAN
    assert paper(419) == B1_END and paper(420) == CLEAN and paper(1239) == B1_ONLY
    for line in (600, 802, 925, 1269):
        assert paper(line) == REQUEST
    assert paper(601) == CLEAN and paper(803) == CLEAN


@functools.cache
def blocksworld() -> tuple[PlanningDomain, Instance]:
    domain = get_domain("blocksworld", prompt_style="pddl")
    assert isinstance(domain, PlanningDomain)
    return domain, load_instances(domain, "20", DATASETS)[0]


def domain_text(domain: PlanningDomain) -> str:
    """The domain file as the model sees it: without its comment lines (PlanBench's file, as D.1 shows it)."""
    lines = (domain.folder / "domain.pddl").read_text().strip().splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith(";")).strip()


def expected_planner_prompt(inst: Instance, shots: int) -> str:
    """B.1 with the first `shots` problems of the instance's training pool and their dataset plans."""
    domain, _ = blocksworld()
    shown = "".join(
        f"{B1_EXAMPLE}\n{e['problem'].strip()}\n\n{B1_PLAN}\n" + "\n".join(e["plan"]) + "\n\n\n"
        for e in training_pool(inst)[:shots]
    )
    return (
        f"{B1_DOMAIN}\n{domain_text(domain)}\n\n{shown}{B1_PROBLEM}\n{inst.data['problem'].strip()}\n\n"
        f"{B1_ONLY}\n{B1_END}"
    )


def revise(plan: str, critique: str) -> str:
    """One Revise-Prompt addition as D.1 shows it (001:419-433, 597-602)."""
    return f"\n{CLEAN}\n{plan}\n{critique}\n\n{REQUEST}"


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
    tau = expected_planner_prompt(inst, 16)  # step 0: B.1, 16 shots
    for step, messages in enumerate(script.plans):
        # Algorithm 1: one prompt, τ ⊕ plan ⊕ critique per earlier step, with D.1's label and request
        text = tau + "".join(revise("\n".join(["(pick-up a)"] * (k + 1)), critiques[k % 2]) for k in range(step))
        assert messages == [{"role": "user", "content": text}], step
    for n, messages in enumerate(script.critiques, start=1):  # a fresh prompt each step: A.2 with the plan read
        (message,) = messages
        assert message["role"] == "user"
        plan = "\n".join(["(pick-up a)"] * n)
        expected = expected_critic(A2, domain_text(domain), inst.data["problem"].strip(), plan)
        assert collapse(message["content"]) == expected, n
    assert [r["llm_verdict"] for r in rows] == [0] * 11


def exemplars_of(text: str) -> str:
    """The A.1 exemplars a critic prompt shows (between A.1's sentence and its instructions)."""
    start = text.index("For instance, we verify the following steps.") + len(
        "For instance, we verify the following steps."
    )
    return text[start : text.index("So, for each action:")].strip()


def test_planner_critic_and_revise_at_steps_0_and_2_with_0_and_8_critic_shots(
    tmp_path: Path, scripted_server: ScriptedServer, make_llm: Callable[..., LLMClient]
) -> None:
    """The acceptance check of issue 23: planner (B.1), critic (A.2 / A.1) and revise messages as the paper's
    text gives them, at step 0 and step 2, with 0 and 8 critic shots."""
    domain, inst = blocksworld()
    problem = inst.data["problem"].strip()
    for shots in (0, 8):
        critiques = [f"**step 1: (pick-up a)** ... **the plan is wrong** ({shots}, {k})" for k in range(3)]
        script = Script(critiques)
        scripted_server.calls.clear()
        llm = make_llm(cache=CallCache(tmp_path / f"cache{shots}.sqlite"))  # every call reaches the server
        run(tmp_path / str(shots), scripted_server, llm, f"intrinsic:steps=2,critique_shots={shots}", script)
        tau = expected_planner_prompt(inst, 16)
        assert script.plans[0] == [{"role": "user", "content": tau}], shots
        step2 = tau + revise("(pick-up a)", critiques[0]) + revise("(pick-up a)\n(pick-up a)", critiques[1])
        assert script.plans[2] == [{"role": "user", "content": step2}]
        for step in (0, 2):
            (message,) = script.critiques[step]
            plan = "\n".join(["(pick-up a)"] * (step + 1))
            if shots == 0:
                expected = expected_critic(A2, domain_text(domain), problem, plan)
            else:
                shown = exemplars_of(message["content"])
                expected = expected_critic(A1, domain_text(domain), problem, plan, shown)
                assert shown.count("## plan evaluation:") == 8
            assert collapse(message["content"]) == expected, (shots, step)


def test_few_shot_exemplars_are_shaped_like_the_papers_and_agree_with_the_validator() -> None:
    """A.1's exemplars (001:132): verifications of training plans whose verdict agrees with the validator, in the
    shape of the paper's (D.1 001:433-599), none of them a test instance."""
    domain, inst = blocksworld()
    (message,) = domain.critic_messages(inst, "(pick-up a)", shots=8)
    shown = exemplars_of(message["content"]).split("The problem to solve:\n")[1:]
    assert len(shown) == 8
    pool = {e["problem"].strip(): e for e in training_pool(inst)}
    endings = []
    for exemplar in shown:
        problem, after = exemplar.split("\n\nThe suggested solution:\n")
        assert problem in pool and problem != inst.data["problem"].strip()
        plan, trace = after.split("\n\n", 1)
        assert trace.startswith("## plan evaluation:\n\n**step 1: ")  # D.1 001:433-435
        assert "1. **action and preconditions:**" in trace and "2. **verification:**" in trace
        verdict = parse_critic_verdict(trace)
        truth = domain.verify(Instance(inst.domain, "x", {"problem": problem}), plan).valid
        assert verdict.parsed and verdict.says_valid == truth
        endings.append(next((v for v in VERDICTS if v in trace.strip().lower().splitlines()[-1]), trace[-200:]))
    assert set(endings) == set(VERDICTS)


def test_critic_ablations_a3_a4_a5(tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient) -> None:
    """Table 4's last three rows (001:206-208): no domain definition (A.3), no 3-step instruction (A.4), no
    "verify each action" (A.5)."""
    domain, inst = blocksworld()
    problem = inst.data["problem"].strip()
    for spec, which in (
        ("intrinsic:steps=0,domain_definition=false", A3),
        ("intrinsic:steps=0,instructions=verify-each", A4),
        ("intrinsic:steps=0,instructions=chain-of-thought", A5),
    ):
        script = Script(["the plan is correct"])
        run(tmp_path / which[1][:3], scripted_server, scripted_llm, spec, script)
        (message,) = script.critiques[0]
        assert collapse(message["content"]) == expected_critic(which, "", problem, "(pick-up a)"), spec


def test_correct_verdict_stops_and_the_plan_is_output(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    domain, inst = blocksworld()
    script = Script(["the plan is wrong", "the plan is correct"], right=gold(domain, inst), solve_at=2)
    out, rows = run(tmp_path, scripted_server, scripted_llm, "intrinsic", script)
    assert (out.rounds, out.final_round, out.correct) == (2, 2, True)
    assert [r["sound_valid"] for r in rows] == [0, 1]


def test_oracle_hands_back_vals_advice_in_the_planners_names(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """The Oracle (001:142): the validator's feedback as the critique, in the PDDL names the planner's prompt
    uses (VAL's repair advice), inside the same Revise-Prompt."""
    domain, inst = blocksworld()
    script = Script([], right=gold(domain, inst), solve_at=3)
    out, rows = run(tmp_path, scripted_server, scripted_llm, "intrinsic:critic=sound", script)
    assert (out.rounds, out.correct) == (3, True) and not script.critiques  # no LLM critic calls
    advice = rows[0]["feedback"]
    assert advice.startswith("(pick-up a) has an unsatisfied precondition at time 1\n")
    assert "(Set (clear a) to true)" in advice and "block" not in advice
    assert script.plans[1] == [
        {"role": "user", "content": expected_planner_prompt(inst, 16) + revise("(pick-up a)", advice)}
    ]


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
