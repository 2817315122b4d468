"""Planning prompts and backprompts of the self-verification paper (000, appendix A.5) and the plan self-critique
study (002, its 2023 code), word for word, as a scripted run sends them.

Every expected instruction is cut from the paper's text (`../shared/papers/000_...txt`), mended only for the PDF
extraction's damage (margin line numbers, `\\_`, a stray LaTeX fragment, line breaks inside sentences); the
frame around it (domain intro, problem, plan) is PlanBench's, built independently of our modules by
`tests/test_planning_verification_prompts.py`. Paper 002's verifier texts are quoted from its 2023 code
(karthikv792/LLMs-Planning @27b0c44 `utils/task_utils.py`, `back_prompting.py`).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.base import read_judgement, verification_messages
from tests.scripted_server import ScriptedServer
from tests.test_planning_verification_prompts import PLANBENCH, SYSTEM, zero_shot
from tests.test_study_cli import DATASETS, invoke

PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "000_7dad9bd10bc7f316.txt"
LINES = PAPER.read_text(encoding="utf-8").splitlines()


def paper(first: int, last: int, start: str, end: str) -> str:
    """Lines first..last of paper 000 (1-based, as cited), mended, from `start` through `end`."""
    text = " ".join(LINES[first - 1 : last])
    text = re.sub(r"%\s*\\left\(.*?(?=fails\.)", " ", text)  # a stray LaTeX fragment in the open-ended prompt
    text = text.replace("\\\\_", "_").replace("\\_", "_")
    text = re.sub(r"(?<![\w.(])\d{4}(?![\w.)])", " ", text)  # the PDF's margin line numbers
    text = " ".join(text.split())
    return text[text.index(start) : text.index(end, text.index(start)) + len(end)]


V = "Verify whether the above plan is valid."
# form -> ((Blocksworld lines), (Mystery lines), end of the instruction): 000 A.5.2 and A.5.6
CITED = {
    "open": ((2122, 2127), (2923, 2928), "fails."),
    "format": ((2220, 2220), (3034, 3058), "invalidity."),
    "cot": ((2328, 2328), (3145, 3177), "Let's think step by step [THOUGHTS]"),
    "swap": ((2418, 2418), (3267, 3290), "invalidity."),
}
# 002's verifier instruction and system message, from its 2023 code (the code wins over 002:47's "any format")
VAL_FORM = (
    'Verify whether the above plan is valid. If it is valid, please say "Plan is valid." and nothing else. If it '
    'is invalid, please say "Plan is invalid." and then provide feedback on why the plan fails according to the '
    "following format. If the plan is inexecutable, provide the first action that is inexecutable and the unmet "
    "preconditions in the following format: The following action [action name] has unmet preconditions [list of "
    "preconditions]. If the plan is executable but does not satisfy the goal, provide the unmet goal conditions."
)
VAL_SYSTEM = ("You are the planner assistant that validates whether a provided plan is correct and provides feedback "
              "if not.")


def instruction(form: str, domain: str) -> str:
    bw, mystery, end = CITED[form]
    return paper(*(bw if domain == "blocksworld" else mystery), V, end)


@pytest.mark.parametrize("form", list(CITED))
def test_the_paper_prints_one_instruction_per_form_for_both_domains(form: str) -> None:
    assert instruction(form, "blocksworld") == instruction(form, "mystery_blocksworld")


def sent_instruction(content: str) -> str:
    return content.split("[PLAN END]\n\n", 1)[1]


@pytest.mark.parametrize("name", ["blocksworld", "mystery_blocksworld"])
def test_every_planning_verification_prompt_is_the_papers(name: str) -> None:
    """open (the llm-llm critic), format-based JSON (Table 2), chain of thought (A2's -CoT, A1's LLM+LLM-C) and
    swapped order (A2's -S), each in PlanBench's frame; 002's val_form with its own system message."""
    config = yaml.safe_load((PLANBENCH / name / "config.yaml").read_text())
    domain = get_domain(name)
    val_form = get_domain(name, verifier="val_form")
    for inst in load_instances(domain, "2-11", DATASETS):
        pddl = (PLANBENCH / name / "instances" / f"instance-{inst.id}.pddl").read_text()
        for kind in domain.candidate_kinds:
            text = domain.candidate(inst, kind, random.Random(f"{inst.id}/{kind}"))
            frame = zero_shot(config, pddl, domain.parse(inst, text)).split("[PLAN END]\n\n")[0] + "[PLAN END]\n\n"
            sent = {
                "open": domain.judge_prompt(inst, "critique", text),
                "format": verification_messages(domain, inst, text, "default"),
                "cot": verification_messages(domain, inst, text, "cot"),
                "swap": verification_messages(domain, inst, text, "swap"),
            }
            assert sent["cot"] == domain.judge_prompt(inst, "critique-cot", text)  # the loop's CoT critic
            for form, messages in sent.items():
                # the loop's critic: the validator's system message (back_prompting.py@27b0c44:277-283)
                assert messages[0] == {"role": "system", "content": VAL_SYSTEM if form == "open" else SYSTEM}
                assert messages[1]["content"].startswith(frame), (form, inst.id, kind)
                said = sent_instruction(messages[1]["content"])
                assert " ".join(said.split()) == instruction(form, name), (form, inst.id)
                assert "\n" not in said or form == "cot"
            assert sent_instruction(sent["cot"][1]["content"]).endswith(
                "invalidity.\nLet's think step by step\n[THOUGHTS]")
            assert val_form.judge_prompt(inst, "critique", text) == [
                {"role": "system", "content": VAL_SYSTEM}, {"role": "user", "content": frame + VAL_FORM}]


def test_prompt_command_ends_with_the_papers_instruction() -> None:
    for purpose, form in (("verify-format", "format"), ("verify", "format"), ("verify-cot", "cot"),
                          ("verify-swap", "swap"), ("critique", "open"), ("critique-cot", "cot")):  # fmt: skip
        out = invoke("prompt", "--domain", "mystery_blocksworld", "--instance", "3", "--purpose", purpose,
                     "--dataset", str(DATASETS)).stdout  # fmt: skip
        wanted = instruction(form, "mystery_blocksworld")
        assert " ".join(out.split()).endswith(wanted), purpose
        assert out.rstrip("\n").endswith(wanted if form != "cot" else "Let's think step by step\n[THOUGHTS]")


JSON_REPLY = (
    "[THOUGHTS]\nStep 1 ...\n[JSON]\n{\"unmet_preconditions\": {\"action\": \"attack object a\", "
    "\"preconditions\": [\"province object a\"]}, \"valid\": false}\n[JSON_END]"
)


@pytest.mark.parametrize(("reply", "valid", "parsed"), [
    (JSON_REPLY, False, True),
    ("[JSON]\n{\"valid\": true}\n[JSON_END]", True, True),
    ("[JSON] {'valid': True,} [JSON_END]", True, True),  # Python-style, repaired
    ("[JSON]\n{\"valid\": \"false\", \"unmet_goals\": [\"object d craves object a\"]}\n[JSON_END]", False, True),
    ("[JSON]\n{\"valid\": true, \"unmet_goals\": [\"x\"", True, True),  # cut off: the key still reads
    ("The plan is valid.", False, False),  # no JSON: no verdict, never a pass
])  # fmt: skip
def test_json_verdicts_are_read_from_the_json_block(reply: str, valid: bool, parsed: bool) -> None:
    domain = get_domain("mystery_blocksworld")
    instance = load_instances(domain, "3", DATASETS)[0]
    judged = read_judgement(domain, instance, "", reply, "default").verdict
    assert (judged.says_valid, judged.parsed) == (valid, parsed)


# A.5.6's example answer to Mystery instance 3 (000:2801), and A.5.7's backprompts for it (000:3295-3325)
ANSWER = ("feast object b from object c\nsuccumb object b\nattack object a\novercome object a from object c\n"
          "feast object d from object a\nsuccumb object d\nattack object c\novercome object c from object a\n"
          "[PLAN END]")  # fmt: skip
SELF_CRITIQUE = ('Plan is invalid.\n\nThe first action "feast object b from object c" is not possible because the '
                 'initial conditions do not include "Province object b" which is required for the Feast action.')


def _reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    last = messages[-1]["content"]
    if "Verify whether the above plan is valid" in last:
        return SELF_CRITIQUE
    return ANSWER


def test_scripted_loops_send_the_papers_backprompts(tmp_path: Path) -> None:
    """llm-llm hands the critique back verbatim (000:3295-3299, 2023 back_prompting.py); sound-first is
    PlanBench's first error (000:3301-3304); sound-all is the paper's all-errors form (000:3306-3325), goal first."""
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=_reply) as server:
        invoke("run", "loops", "--domains", "mystery_blocksworld", "--instances", "3",
               "--schemes", "llm-llm:rounds=2,sound-first:rounds=2,sound-all:rounds=2,llm-llm-cot:rounds=2",
               "--model", "scripted", "--base-url", server.base_url, "--dataset", str(DATASETS),
               "--store", str(store))  # fmt: skip
        calls = [messages for messages, _ in server.calls]
    handed = {m[-1]["content"] for m in calls if len(m) > 2 and m[-2]["role"] == "assistant"}
    first = ("The above plan is invalid.The following action at step 3 has an unmet precondition:\n"
             "attack object a\nThe unmet precondition is:\nprovince object a")
    every = ("The above plan is invalid.\nThere is an unmet goal condition. This is:\nobject d craves object a\n"
             "There are unsatisfied preconditions.\nThe following action at step 3 has an unmet precondition:\n"
             "attack object a\nThe unmet precondition is:\nprovince object a\n"
             "The following action at step 5 has an unmet precondition:\nfeast object d from object a\n"
             "The unmet precondition is:\nprovince object d\n")
    assert SELF_CRITIQUE in handed  # verbatim, no request sentence
    assert first in handed
    assert any(h.startswith(every) for h in handed)  # then step 7 (our semantics; the paper's example omits it)
    assert any(m[-1]["content"].endswith("Let's think step by step\n[THOUGHTS]") for m in calls)  # llm-llm-cot
    rows = json.loads(invoke("report", "loops", "--store", str(store), "--format", "json").stdout)
    assert {r["scheme"] for r in rows if r.get("table") == "1"} >= {"llm-llm-cot:rounds=2"}


def test_scripted_verification_study_sends_the_papers_prompts_and_scores_tables_a5_a6(tmp_path: Path) -> None:
    """verify-study on Mystery with the paper's five kinds and three prompts: every prompt the server receives
    ends with the paper's instruction; the reply "invalid, unmet goals" is scored as Tables A5-A6 score it."""
    reply = '[JSON]\n{"valid": false, "unmet_goals": ["object a craves object b"]}\n[JSON_END]'
    toml = tmp_path / "v.toml"
    kinds = [f"{k}{v}" for v in ("", "-cot", "-swap")
             for k in ("correct", "inexecutable", "non_goal_reaching", "random", "llm")]  # fmt: skip
    toml.write_text(
        f'domains = ["mystery_blocksworld"]\ndataset = "{DATASETS}"\nkinds = {json.dumps(kinds)}\n'
        '[instances]\nmystery_blocksworld = "2-4"\n'
        '[candidate_files]\nmystery_blocksworld = "planbench/reference/gpt-4_mystery_one_shot.json"\n'
    )
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=reply) as server:
        invoke("verify-study", "v", "--config", str(toml), "--model", "scripted", "--base-url", server.base_url,
               "--store", str(store))  # fmt: skip
        sent = [messages[-1]["content"] for messages, _ in server.calls]
    assert len(sent) == 45  # 3 instances x 5 kinds x 3 prompts (no two texts alike)
    for form in ("format", "cot", "swap"):
        wanted = instruction(form, "mystery_blocksworld")
        assert sum(" ".join(s.split()).endswith(wanted) for s in sent) == 15, form
    rows = json.loads(invoke("report", "v", "--table", "plan-critique", "--format", "json", "--store",
                             str(store)).stdout)  # fmt: skip
    cells = {(r["prompt"], r["kind"]): (r["n"], r["binary"], r["type_identified"], r["critique"]) for r in rows}
    assert cells[("default", "correct")] == (3, 0, 0, 0)  # called invalid
    assert cells[("default", "inexecutable")] == (3, 3, 0, 0)  # invalid, but the wrong kind of invalidity
    assert cells[("cot", "non_goal_reaching")][:3] == (3, 3, 3)  # the kind named; the goals are not the real ones
    assert cells[("swap", "non_goal_reaching")][3] == 0
    assert sum(n for (p, k), (n, *_) in cells.items() if p == "default" and k.startswith("llm ")) == 3
