"""`critiquebench prompt --scheme SPEC` prints what a run of that scheme really sends: compared with the messages
the scripted server receives in a real run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.scripted_server import ScriptedServer
from tests.test_study_cli import DATASETS, invoke

REPLY = "(unstack b a)\nthe plan is correct"  # a plan, and then the critic's verdict that ends the run


def shown(*args: str) -> list[dict[str, str]]:
    return json.loads(invoke("prompt", *args, "--format", "json").stdout)


def test_prompt_scheme_shows_what_intrinsic_sends(tmp_path: Path) -> None:
    spec = "intrinsic:critique_shots=8,shots=16"
    with ScriptedServer(reply=REPLY) as server:
        invoke("run", "shots", "--domains", "blocksworld_3_7", "--instances", "gen:16:1", "--schemes", spec,
               "--model", "scripted", "--base-url", server.base_url, "--store", str(tmp_path / "s.sqlite"))  # fmt: skip
        sent = [messages for messages, _params in server.calls]
    assert len(sent) == 32  # each instance: the planner, then the critic (who says correct)
    one = ("--domain", "blocksworld_3_7", "--among", "gen:16:1", "--instance", "gen-1-16")
    planner = shown(*one, "--scheme", "intrinsic:shots=16")
    assert planner in sent
    assert planner[-1]["content"].count("Example of a problem and its solution (plan):") == 16  # B.1's examples
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([REPLY]))
    critic = shown(*one, "--scheme", spec, "--call", "2", "--replies", str(replies))
    assert critic in sent  # runs go in parallel: calls of different instances interleave
    assert critic[-1]["content"].startswith("Given the domain definition:")
    assert critic[-1]["content"].count("The suggested solution:") == 9  # 8 verified example plans, then ours


def test_prompt_scheme_shows_a_later_round_with_its_history(tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["1+2+3+4", '{"feedback": "use 4 5 6 10", "correct": false}']))
    third = shown("--domain", "game24", "--instance", "901", "--dataset", str(DATASETS), "--scheme", "llm-llm",
                  "--call", "3", "--replies", str(replies))  # fmt: skip
    assert [m["role"] for m in third] == ["user", "assistant", "user"]
    assert third[1]["content"] == "1+2+3+4"
    assert third[2]["content"].startswith("Feedback: This is not correct.\nuse 4 5 6 10\n\nWith this feedback")
    refused = invoke("prompt", "--domain", "blocksworld", "--instance", "2", "--dataset", str(DATASETS),
                     "--style", "pddl", "--scheme", "llm-llm-cot", check=2)  # fmt: skip
    assert refused.stderr.startswith("error: llm-llm-cot is left out of blocksworld: no published chain-of-thought")
