"""`critiquebench prompt` prints every message a call sends, the system message included, with a study's domain
options (`--config`, `--option`): the self-verification study's verifier prompts as its code sent them, and
paper 002's val_form plan verifier. Expected texts come from the studies' code (kstechly/gpt-and-i, karthikv792/
LLMs-Planning @27b0c44, as cited in domains/prompts/*.toml) and PlanBench's frame, built in the tests below
and in the modules they import, never from our own output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_paper_000_002_planning import VAL_FORM, VAL_SYSTEM, instruction
from tests.test_paper_prompts import G24_CHECK, G24_JSON_FEEDBACK, G24_USING, col_verification, g24_verification
from tests.test_planning_verification_prompts import PLANBENCH, SYSTEM, action_text, zero_shot
from tests.test_self_verification_transcript import SYSTEM as CSP_SYSTEM  # response_generation.py@b583c3c9:129
from tests.test_self_verification_transcript import calls_of
from tests.test_study_cli import DATASETS, invoke

STUDIES = Path(__file__).resolve().parents[1] / "studies"
VERIFY_STUDY = str(STUDIES / "self_verification_verify.toml")
NUMBERS_901 = "4 5 6 10"  # 24.csv, rank 901


def shown(*args: str) -> list[dict[str, Any]]:
    return json.loads(invoke("prompt", *args, "--format", "json").stdout)


@pytest.mark.parametrize(("purpose", "kind"), [("verify", "correct"), ("verify-cot", "correct-cot"),
                                               ("verify-no-info", "correct-no-info")])  # fmt: skip
def test_game24_verification_prompts_carry_the_study_s_system_message(purpose: str, kind: str) -> None:
    args = ("--domain", "game24", "--instance", "901", "--purpose", purpose, "--answer", "(10-4)*(6-5)")
    expected = [{"role": "system", "content": CSP_SYSTEM},
                {"role": "user", "content": g24_verification(NUMBERS_901, kind, "(10-4)*(6-5)")}]  # fmt: skip
    assert shown(*args, "--config", VERIFY_STUDY) == expected
    # the same from the option alone, and the text form shows both messages under their role headers
    assert shown(*args, "--dataset", str(DATASETS), "--option", "form=transcript") == expected
    text = invoke("prompt", *args, "--config", VERIFY_STUDY).stdout
    assert text == f"--- system ---\n{CSP_SYSTEM}\n--- user ---\n{expected[1]['content']}\n"


def test_coloring_verification_prompt_carries_the_study_s_system_message() -> None:
    graph = (DATASETS / "graph_coloring" / "instance-1.col").read_text(encoding="utf-8")
    for purpose, kind in (("verify", "correct"), ("verify-cot", "correct-cot")):
        out = shown("--config", VERIFY_STUDY, "--domain", "coloring", "--instance", "1", "--purpose", purpose,
                    "--answer", "0: Color 0\n1: Color 1\n")  # fmt: skip
        study = col_verification(graph, kind, "0: Color 0\n1: Color 1\n")
        assert out == [{"role": "system", "content": CSP_SYSTEM}, {"role": "user", "content": study}]


def test_the_loop_critic_sees_the_answer_as_the_study_s_loop_kept_it() -> None:
    """The study's critic prompt holds the generator's reply as `send_query` returned it: cut at "[ANSWER END]"
    and stripped (game24.py@b583c3c9:139, response_generation.py@b583c3c9:133,138)."""
    out = shown("--config", str(STUDIES / "self_verification_loops.toml"), "--domain", "game24", "--instance", "901",
                "--purpose", "critique", "--answer", "  (10-4)*(6-5) = 6\n[ANSWER END] more")  # fmt: skip
    critic = (G24_USING.format(NUMBERS_901) + G24_CHECK + "(10-4)*(6-5) = 6"
              + "\nIf it is not correct, please give feedback on what is wrong and how to correct it."
              + G24_JSON_FEEDBACK)  # fmt: skip
    assert out == [{"role": "system", "content": CSP_SYSTEM}, {"role": "user", "content": critic}]


ACTIONS_9 = ["(unstack c d)", "(put-down c)", "(unstack d a)", "(stack d b)"]  # a plan for Blocksworld 9


def frame_9() -> tuple[str, str]:
    """PlanBench's verification frame of Blocksworld instance 9 with ACTIONS_9 (up to "[PLAN END]\\n\\n"), and
    the plan as the answer under review."""
    config = yaml.safe_load((PLANBENCH / "blocksworld" / "config.yaml").read_text())
    pddl = (PLANBENCH / "blocksworld" / "instances" / "instance-9.pddl").read_text()
    frame = zero_shot(config, pddl, ACTIONS_9).split("[PLAN END]\n\n")[0] + "[PLAN END]\n\n"
    return frame, "\n".join(action_text(config, a) for a in ACTIONS_9)


def test_paper_002_val_form_verifier_is_printed_with_its_system_message() -> None:
    frame, plan = frame_9()
    expected = [{"role": "system", "content": VAL_SYSTEM}, {"role": "user", "content": frame + VAL_FORM}]
    one = ("--domain", "blocksworld", "--instance", "9", "--purpose", "critique", "--answer", plan)
    assert shown(*one, "--config", str(STUDIES / "plan_critique.toml")) == expected
    assert shown(*one, "--dataset", str(DATASETS), "--option", "verifier=val_form") == expected
    # 000's loop critic on the same cell: PlanBench's open-ended prompt, after the validator's system message too
    # (back_prompting.py@27b0c44:277-283 sends it whichever prompt val_form picks)
    open_ended = frame + instruction("open", "blocksworld")
    assert shown(*one, "--config", str(STUDIES / "self_verification_loops.toml")) == [
        {"role": "system", "content": VAL_SYSTEM},
        {"role": "user", "content": open_ended},
    ]


@pytest.mark.parametrize(("purpose", "form"), [("verify", "format"), ("verify-cot", "cot"), ("verify-swap", "swap")])
def test_paper_000_planning_verification_prompts_with_the_system_message(purpose: str, form: str) -> None:
    """000 A.5: format-based JSON, chain of thought, swapped order; each after the planner's system message."""
    frame, plan = frame_9()
    out = shown("--config", VERIFY_STUDY, "--domain", "blocksworld", "--instance", "9", "--purpose", purpose,
                "--answer", plan)  # fmt: skip
    assert [m["role"] for m in out] == ["system", "user"] and out[0]["content"] == SYSTEM
    assert out[1]["content"].startswith(frame)
    assert " ".join(out[1]["content"].removeprefix(frame).split()) == instruction(form, "blocksworld")


def test_bad_study_options_are_one_line(tmp_path: Path) -> None:
    base = ("prompt", "--domain", "game24", "--instance", "901", "--dataset", str(DATASETS))
    cases = {
        ("--option", "transcript"): "error: --domain-option 'transcript': write KEY=VALUE (or DOMAIN.KEY=VALUE), "
                                    "e.g. reader=lenient\n",
        ("--domain-option", "bogus=1"): "error: --domain-option bogus: game24 has no option 'bogus'; its options: "
                                        "stop, prompts, prompt_style, reader, form, paper_levels, verdict, protocol\n",
        ("--option", "form=letter"): "error: game24 form must be one of chat, transcript, not 'letter'\n",
        ("--config", str(STUDIES / "plan_critique.toml")):
            f"error: {STUDIES / 'plan_critique.toml'} runs no domain 'game24' (its domains: blocksworld)\n",
        ("--config", str(tmp_path / "none.toml")): f"error: config file {tmp_path / 'none.toml'} not found\n",
    }  # fmt: skip
    for extra, message in cases.items():
        done = invoke(*base, *extra, check=2)
        assert (done.stdout, done.stderr) == ("", message)


def test_what_prompt_prints_is_every_message_the_calls_send(tmp_path: Path) -> None:
    """The calls a run really sends, caught on the scripted server: 002's val_form critic inside llm-llm and a
    verification-only Game of 24 call carry exactly the messages `prompt` prints, the system message included,
    and those are the studies' code's (expected texts as above)."""
    frame, plan = frame_9()
    critique = (f'domains = ["blocksworld"]\nschemes = ["llm-llm:rounds=2"]\ndataset = "{DATASETS}"\n'
                '[instances]\nblocksworld = "9"\n[domain_options.blocksworld]\nverifier = "val_form"\n')  # fmt: skip
    sent = calls_of(tmp_path, "run", critique,
                    lambda m: "Plan is valid." if m[0]["content"] == VAL_SYSTEM else plan + "\n[PLAN END]")  # fmt: skip
    critic = [m for m in sent if m[0]["content"] == VAL_SYSTEM]
    printed = shown("--config", str(tmp_path / "run.toml"), "--domain", "blocksworld", "--instance", "9",
                    "--purpose", "critique", "--answer", plan + "\n[PLAN END]")  # fmt: skip
    expected = [{"role": "system", "content": VAL_SYSTEM}, {"role": "user", "content": frame + VAL_FORM}]
    assert critic == [printed] == [expected]

    verify = (f'domains = ["game24"]\nkinds = ["correct"]\ndataset = "{DATASETS}"\n'
              '[instances]\ngame24 = "901"\n[domain_options.game24]\nform = "transcript"\n')  # fmt: skip
    [call] = calls_of(tmp_path, "verify-study", verify, lambda m: '{"correct": true}')
    candidate = call[1]["content"].split("evaluates to 24: ")[1].split("\n")[0].strip()
    printed = shown("--config", str(tmp_path / "verify-study.toml"), "--domain", "game24", "--instance", "901",
                    "--purpose", "verify", "--answer", candidate)  # fmt: skip
    study = g24_verification(NUMBERS_901, "correct", candidate)
    assert call == printed == [{"role": "system", "content": CSP_SYSTEM}, {"role": "user", "content": study}]
