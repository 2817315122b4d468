"""Game of 24 and colouring loops as the self-verification study's code sent them (`form = "transcript"`):
every call is the study's system message and one user message holding the whole transcript (kstechly/gpt-and-i
`response_generation.py` @b583c3c9 `send_query`, `game24.concat_trace`: previous prompt + answer + "[ANSWER
END]\\n" + the feedback). Expected texts are typed from the study's code, not read from ours."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

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


# ---- Colouring: the study's code, transcribed (kstechly/gpt-and-i llm-csp/domain_utils/graph_coloring.py) ----
# Each function below follows the lines it cites, @b583c3c9 unless said otherwise, so the expected transcripts
# come from the study's logic run on the instance file, not from our domain.
COL_START = ("Color the following graph, described as a set of edges, such that no two vertices on the same edge "
             "share a color.\n")  # l.1  # fmt: skip
COL_SPLITTER = ("Please do not provide anything else in your response, and end your response with "
                "'[ANSWER END]'")  # l.2  # fmt: skip
COL_END = ("Please provide each vertex's color. Do not skip any vertices. Each color must be provided on a new line "
           "in the response and should be formatted as \"{VERTEX NUMBER}: {VERTEX COLOR ASSIGNMENT}\". "
           + COL_SPLITTER)  # l.3  # fmt: skip
COL_STOP_PHRASE = "Verifier confirmed success."  # l.8
# What ends a run (`response_generation.py` `check_backprompt`, a substring of the backprompt, any case):
# @b583c3c9 l.13 "Verifier confirmed success"; @d883df86 l.18 "stop10002", which its "llm" backprompt returns
LOOP_STOP = {"passfail": "Verifier confirmed success", "first": "Verifier confirmed success",
             "full": "Verifier confirmed success", "llm": "stop10002"}  # fmt: skip


def study_parse_dimacs(instance_text: str) -> list[list[str]]:  # l.23-29
    return [line.split(" ")[1:3] for line in instance_text.split("\n") if line.split(" ")[0] == "e"]


def study_chromatic(instance_text: str) -> str:  # l.37-39 (every study file states it)
    return instance_text.split("OPTIMAL CHROMATIC NUMBER === ")[1].split("\n")[0]


def study_graph(instance_text: str) -> tuple[int, str]:  # generate_graph, l.110-119
    prompt, num_verts, min_vert = "", 0, 1
    for a, b in study_parse_dimacs(instance_text):
        prompt += f"Vertex {a} is connected to vertex {b}.\n"
        num_verts, min_vert = max(num_verts, int(a), int(b)), min(min_vert, int(a), int(b))
    return num_verts + (min_vert + 1) % 2, prompt


def study_generate(instance_text: str) -> str:  # l.132-139
    num_verts, graph_text = study_graph(instance_text)
    return (COL_START + f"You may use at most {study_chromatic(instance_text)} colors.\n" + graph_text
            + f"There are a total of {num_verts} vertices. Please label every vertex, even if it is disconnected "
            "from the rest of the graph." + COL_END)  # fmt: skip


def study_check(model_response: str, instance_text: str) -> tuple[bool, list[str]]:  # check_coloring, l.43-67
    coloring = {}
    for line in model_response.split("\n"):
        assignment = line.strip().split(": ")
        if len(assignment) >= 2:
            coloring[assignment[0]] = assignment[1]
    wrong = []
    for a, b in study_parse_dimacs(instance_text):
        if a not in coloring:
            return False, [f"Vertex {a} was not given a value in the coloring."]
        if b not in coloring:
            return False, [f"Vertex {b} was not given a value in the coloring."]
        if coloring[a] == coloring[b]:
            wrong.append(f"Vertex {a} and vertex {b} were both colored {coloring[a]} despite being connected by an "
                         "edge.")  # fmt: skip
    if wrong:
        return False, wrong
    used, optimal = len(set(coloring.values())), int(study_chromatic(instance_text))
    if used == optimal:
        return True, []
    return False, [f"This coloring is not optimal. It uses {used} colors, when only {optimal} are necessary.\n "
                   "Please recolor."]  # fmt: skip


def study_concat_trace(output: dict[str, list[str]], divisor: int = 1) -> str:  # l.121-125: "\n" before the answer
    return output["prompts"][-divisor] + "\n" + output["responses"][-divisor] + "[ANSWER END]\n"


def study_backprompt(instance_text: str, output: dict[str, list[str]], kind: str) -> str:
    """l.266-290 (passfail, first, full); "llm" from @d883df86 l.170-188 (@b583c3c9 has none yet)."""
    response = output["responses"][-1]
    if kind == "llm":
        if len(output["responses"]) % 2 == 0:  # the verifier answered: back to the generator
            if COL_STOP_PHRASE in response:
                return "stop10002"
            return (study_concat_trace(output, divisor=2) + "This is incorrect. Feedback:\n" + response
                    + f"\n\nUsing this feedback, please try again. {COL_END}")  # fmt: skip
        _, graph_text = study_graph(instance_text)
        return (f"The following graph, described as a set of edges, has an optimal coloring number of "
                f"{study_chromatic(instance_text)}:\n" + graph_text + "Please check if this coloring is correct:"
                + response + f"\nIf it is, say '{COL_STOP_PHRASE}' Do not provide anything else in your response. "
                "If it is incorrect, please point out which same-color vertices share an edge.")  # fmt: skip
    check, reasons = study_check(response, instance_text)
    if check:
        return COL_STOP_PHRASE
    if kind == "passfail":
        return (f"{study_concat_trace(output)}Feedback: This is not correct. Using the previously provided graph, "
                f"please provide a correct coloring. {COL_END}")  # fmt: skip
    if kind == "first":
        return f"{study_concat_trace(output)}Feedback: {reasons[0]}\nThis is wrong. Please recolor. {COL_END}"
    return f"{study_concat_trace(output)}Feedback: " + " ".join(reasons) + f"\nThis is wrong. Please recolor. {COL_END}"


def study_loop(instance_text: str, kind: str, replies: Callable[[str], str], calls: int) -> list[str]:
    """The user message of each call the study's loop sends (`response_generation.py` l.79-101): the last prompt
    goes out, `send_query` strips the reply the stop cut (l.137-138), the backprompt is the next prompt, and a
    backprompt holding the loop's stop phrase ends the run (l.98-101, `check_backprompt` l.120-121; the same in
    @d883df86 l.85-115)."""
    output: dict[str, list[str]] = {"prompts": [study_generate(instance_text)], "responses": []}
    while len(output["responses"]) < calls:
        output["responses"].append(replies(output["prompts"][-1]).split("[ANSWER END]")[0].strip())
        output["prompts"].append(study_backprompt(instance_text, output, kind))
        if LOOP_STOP[kind].lower() in output["prompts"][-1].lower():
            break
    return output["prompts"][: len(output["responses"])]


def calls_of(tmp_path: Path, command: str, study: str, answer: Callable[[list[dict[str, Any]]], str]
             ) -> list[list[dict[str, Any]]]:  # fmt: skip
    """Every message list a study (`study`: its TOML text) sends when `command` (run, verify-study) runs it on
    the scripted server, `answer` replying to each call."""
    sent: list[list[dict[str, Any]]] = []

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        sent.append(messages)
        return answer(messages)

    toml = tmp_path / f"{command}.toml"
    toml.write_text(study, encoding="utf-8")
    with ScriptedServer(reply=reply) as server:
        invoke(command, "t", "--config", str(toml), "--model", "scripted", "--base-url", server.base_url,
               "--store", str(tmp_path / f"{command}.sqlite"))  # fmt: skip
    return sent


def coloring_of(colors: dict[int, int]) -> str:
    return "".join(f"{v}: Color {c}\n" for v, c in sorted(colors.items()))


# instance 1 (k = 3): a proper 3-colouring, two conflicts (3-12, 4-12), a proper but non-optimal one, all one colour
PROPER = {v: 0 for v in range(14)} | {7: 1, 8: 1, 11: 1, 12: 1, 9: 2, 13: 2}
COL_ANSWERS = [" " + coloring_of(dict.fromkeys(range(14), 1)) + "[ANSWER END] trailing words",
               coloring_of(PROPER | {12: 0}), coloring_of(PROPER | {1: 3}) + "\n", coloring_of(PROPER)]  # fmt: skip
CRITIQUE = "Vertex 3 and vertex 12 are both Color 0 and share an edge."


def col_reply(content: str) -> str:
    """The generator's answers in turn (one per generation prompt the transcript holds), the critic's critique."""
    if content.startswith("The following graph"):
        return CRITIQUE
    return COL_ANSWERS[min(content.count("Please provide each vertex's color.") - 1, 3)]


@pytest.mark.parametrize(("scheme", "kind", "calls"), [("sound-binary:rounds=4", "passfail", 4),
                                                       ("sound-first:rounds=4", "first", 4),
                                                       ("sound-all:rounds=4", "full", 4),
                                                       # 3 rounds: the study's `-B 6` (l.168: "Double this
                                                       # number ... for LLM backprompting")
                                                       ("llm-llm:rounds=3", "llm", 6)])  # fmt: skip
def test_coloring_loops_send_the_study_s_transcripts_byte_for_byte(tmp_path: Path, scheme: str, kind: str,
                                                                   calls: int) -> None:  # fmt: skip
    study = (f'domains = ["coloring"]\nschemes = ["{scheme}"]\ndataset = "{DATASETS}"\nconcurrency = 1\n'
             '[instances]\ncoloring = "1"\n[domain_options.coloring]\nform = "transcript"\n'
             'stop = ["[ANSWER END]"]\n')  # fmt: skip
    sent = calls_of(tmp_path, "run", study, lambda messages: col_reply(messages[-1]["content"]))
    instance_text = (DATASETS / "graph_coloring" / "instance-1.col").read_text(encoding="utf-8")
    expected = study_loop(instance_text, kind, col_reply, calls)
    assert len(expected) == calls
    assert sent == [[{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}] for text in expected]
