"""Game of 24 and colouring loops as the self-verification study's code sent them (`form = "transcript"`):
every call is the study's system message and one user message holding the whole transcript (kstechly/gpt-and-i
`response_generation.py` @b583c3c9 `send_query`, `game24.concat_trace`: previous prompt + answer + "[ANSWER
END]\\n" + the feedback). Expected texts are typed from the study's code, not read from ours."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.scripted_server import ScriptedServer
from tests.test_study_cli import DATASETS, invoke

SYSTEM = "You are a constraint satisfaction solver that solves various CSP problems."
START = ("Use numbers and basic arithmetic operations (+ - * /) to obtain 24. You must write your response. Write "
         "your answer first, followed by [ANSWER END]\nInput: 1 1 4 6\nAnswer: ")  # fmt: skip
END = ("Using the numbers 1 1 4 6 please provide a correct expression that evaluates to 24. Write your answer "
       "first. At the end of your answer, write [ANSWER END]\nAnswer: ")  # fmt: skip
ANSWERS = ["(6 - 1) * (4 - 1) = 24 [ANSWER END] and more", "((6 / (1 - 1)) * 4 = 24", "(6 / (1 / 4)) = 24"]


def test_game24_loop_sends_one_transcript_with_the_study_s_system_message(tmp_path: Path) -> None:
    seen: list[list[dict[str, Any]]] = []

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        seen.append(messages)
        return ANSWERS[min(messages[-1]["content"].count("Answer: ") - 1, 2)]

    toml = tmp_path / "t.toml"
    toml.write_text(f'domains = ["game24"]\nschemes = ["sound-first:rounds=3"]\ndataset = "{DATASETS}"\n'
                    '[instances]\ngame24 = "1"\n[domain_options.game24]\nform = "transcript"\n')  # fmt: skip
    with ScriptedServer(reply=reply) as server:
        invoke("run", "t", "--config", str(toml), "--model", "scripted", "--base-url", server.base_url, "--store",
               str(tmp_path / "s.sqlite"))  # fmt: skip
    first = START
    # each answer as the stop sequence cut it and `send_query` stripped it, then "[ANSWER END]\n" (concat_trace)
    second = (first + "(6 - 1) * (4 - 1) = 24[ANSWER END]\nFeedback: This is not correct. This expression evaluates "
              "to 15 instead of 24. " + END)  # fmt: skip
    third = (second + "((6 / (1 - 1)) * 4 = 24[ANSWER END]\nFeedback: This is not correct. This expression is "
             "malformed. " + END)  # fmt: skip
    assert seen == [[{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
                    for text in (first, second, third)]  # fmt: skip
    rows = json.loads(invoke("report", "t", "--format", "json", "--store", str(tmp_path / "s.sqlite")).stdout)
    assert [r["correct"] for r in rows if r.get("table") == "1"] == [0]


def test_coloring_and_game24_critics_carry_the_system_message_too() -> None:
    out = json.loads(invoke("prompt", "--domain", "game24", "--instance", "1", "--purpose", "critique",
                            "--answer", "(6 / (1 / 4)) = 24", "--dataset", str(DATASETS), "--format", "json").stdout)
    assert [m["role"] for m in out] == ["user"]  # the chat form stays the default
    from critiquebench.domains import get_domain, load_instances

    for name in ("game24", "coloring"):
        domain = get_domain(name, form="transcript")
        instance = load_instances(domain, "1", DATASETS)[0]
        for messages in (domain.prompt(instance), domain.judge_prompt(instance, "critique", "x")):
            assert messages[0] == {"role": "system", "content": SYSTEM} and len(messages) == 2
