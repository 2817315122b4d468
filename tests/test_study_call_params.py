"""The shipped paper studies send their calls' parameters as the code that produced the papers' data did.

Game of 24 and colouring: every call stops at "[ANSWER END]" and has no length cap (kstechly/gpt-and-i
`response_generation.py` @b583c3c9: `STOP_STATEMENT = "[ANSWER END]"` l.14, `send_query(..., stop_statement=
STOP_STATEMENT)` l.83, `openai.ChatCompletion.create(model=eng, messages=messages, temperature=temp,
stop=stop_statement)` l.133: no max_tokens for chat models). Blocksworld and Mystery: no stop sequence and no cap
(LLMs-Planning `llm_utils.py` @27b0c44 l.77 and l.177: `openai.ChatCompletion.create(model=eng,
messages=messages, temperature=...)`). The study code passed the stop as one string; the OpenAI API reads a
string and a one-element list alike, and the client sends the list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_server import ScriptedServer
from tests.test_study_cli import ROOT, invoke

STUDIES = ROOT / "studies"
STOP = "[ANSWER END]"  # gpt-and-i response_generation.py @b583c3c9 l.14
CSP_SYSTEM = "You are a constraint satisfaction solver that solves various CSP problems."  # ibid. l.129
LENGTH_FIELDS = ("max_tokens", "max_completion_tokens")
INSTANCES = "game24=901,coloring=1,blocksworld=2,mystery_blocksworld=2"


def _requests(tmp_path: Path, *args: str) -> list[tuple[list[dict[str, Any]], dict[str, Any]]]:
    with ScriptedServer(reply=f"(6 - 1) * (4 - 1) = 24 {STOP} and whatever the model writes next") as server:
        invoke(*args, "--model", "scripted", "--base-url", server.base_url, "--store", str(tmp_path / "s.sqlite"))
        return list(server.calls)


def _check(calls: list[tuple[list[dict[str, Any]], dict[str, Any]]], coloring_stop: bool = True) -> None:
    csp = [(messages, params) for messages, params in calls if messages[0]["content"] == CSP_SYSTEM]
    planning = [params for messages, params in calls if messages[0]["content"] != CSP_SYSTEM]
    assert csp and planning
    for messages, params in csp:
        # the loop study's colouring follows gpt-and-i@ada66fc6, whose chat calls sent no stop (l.210)
        stops = coloring_stop or "graph" not in messages[-1]["content"]
        assert params.get("stop") == ([STOP] if stops else None), params
        assert not set(LENGTH_FIELDS) & set(params), params
    for params in planning:
        assert "stop" not in params and not set(LENGTH_FIELDS) & set(params), params


def test_the_loop_study_sends_the_study_code_s_stop_and_no_cap(tmp_path: Path) -> None:
    calls = _requests(tmp_path, "run", "loops", "--config", str(STUDIES / "self_verification_loops.toml"),
                      "--instances", INSTANCES, "--schemes", "standard,llm-llm:rounds=2")  # fmt: skip
    _check(calls, coloring_stop=False)
    # The server cut the reply at the stop, as OpenAI's do: the stored answers end before "[ANSWER END]".
    out = invoke("export", "loops", "--store", str(tmp_path / "s.sqlite")).stdout
    answers = {(r["domain"], r["answer"]) for r in map(json.loads, out.splitlines())}
    assert ("game24", "(6 - 1) * (4 - 1) = 24 ") in answers or ("game24", "(6 - 1) * (4 - 1) = 24") in answers
    assert not any(STOP in a for d, a in answers if d == "game24"), answers
    assert all(STOP in a for d, a in answers if d == "coloring"), answers  # no stop sent: the whole reply kept


def test_the_verification_study_sends_the_study_code_s_stop_and_no_cap(tmp_path: Path) -> None:
    _check(_requests(tmp_path, "verify-study", "verify", "--config", str(STUDIES / "self_verification_verify.toml"),
                     "--instances", INSTANCES, "--kinds", "correct"))  # fmt: skip


@pytest.mark.parametrize("toml", ["self_verification_loops.toml", "self_verification_verify.toml",
                                  "plan_critique.toml", "plan_critique_feedback.toml"])  # fmt: skip
def test_the_paper_studies_record_no_cap_and_the_stop_in_their_definition(tmp_path: Path, toml: str) -> None:
    from critiquebench.studies.config import LOOP, VERIFY, build_config, read_toml

    kind = VERIFY if "verify" in toml else LOOP
    config = build_config("paper", read_toml(STUDIES / toml), {}, kind)
    stored = config.to_dict()
    assert stored["max_tokens"] is None
    for domain in ("game24", "coloring"):
        if domain in config.domains and not (domain == "coloring" and kind == LOOP):
            assert stored["domain_options"][domain]["stop"] == [STOP]
    if kind == LOOP and "coloring" in config.domains:  # gpt-and-i@ada66fc6's colouring loop: no stop (l.210)
        assert stored["domain_options"]["coloring"] == {"form": "transcript", "protocol": "2023"}
    for domain in ("blocksworld", "mystery_blocksworld"):
        assert "stop" not in stored["domain_options"].get(domain, {})


def test_a_bad_stop_is_one_clear_line(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text('domains = ["game24"]\nschemes = ["standard"]\ninstances = "901"\n'
                    '[domain_options.game24]\nstop = [""]\n')  # fmt: skip
    out = invoke("run", "t", "--config", str(toml), "--dry-run", "--store", str(tmp_path / "s.sqlite"), check=None)
    assert out.exit_code != 0 and "stop must be a list of non-empty strings" in out.output


def test_max_tokens_none_on_the_command_line_sends_no_cap_and_a_word_is_one_line(tmp_path: Path) -> None:
    """A user reproducing the code's uncapped calls from the command line, as the shipped files do with
    `max_tokens = "none"`; an integer still caps, anything else is one line (exit 2)."""
    with ScriptedServer(reply="(6 - 1) * (4 - 1) = 24") as server:
        common = ("--domains", "game24", "--instances", "901", "--schemes", "standard", "--model", "scripted",
                  "--base-url", server.base_url)  # fmt: skip
        invoke("run", "uncapped", *common, "--max-tokens", "none", "--store", str(tmp_path / "a.sqlite"))
        invoke("run", "capped", *common, "--max-tokens", "64", "--store", str(tmp_path / "b.sqlite"))
        uncapped, capped = [params for _, params in server.calls]
    assert not set(LENGTH_FIELDS) & set(uncapped), uncapped
    assert 64 in [capped.get(field) for field in LENGTH_FIELDS], capped
    bad = invoke("run", "bad", "--max-tokens", "lots", "--dry-run", "--store", str(tmp_path / "c.sqlite"), check=None)
    assert bad.exit_code == 2 and "an integer, or \"none\" for no cap" in bad.output
