"""`verdict = "study"`: the self-verification study's own reading of its verifier's replies (kstechly/gpt-and-i),
beside ours. The expected verdicts are what the study's code does with each reply, transcribed below from its
files (`game24.py` @b583c3c9 l.128-133 and @d883df86 l.192-205, `game24_verification.py` and
`color_verification.py` @d883df86), never our reader's output; where that code raised, the verdict is recorded
as unreadable (invalid, `parsed=False`) and nothing raises.

The replies: GPT-4's verifier replies printed in paper 000's appendix (`000:L`) and the replies our own reader's
tests hold (tests/test_game24.py, tests/test_coloring.py). GPT-4's 500 recorded colouring verification replies
(gpt-and-i's history before its response files moved to Git LFS, `../shared/datasets/self_verification/recorded/`)
are replayed by tests/test_self_verification_import.py."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from critiquebench.domains import get_domain
from critiquebench.domains.contract import Instance

UNREADABLE = "unreadable"


def study_loop_turn(llm_json: Any) -> bool | str:
    """Both loops' even turn once the reply is read: `if llm_json["correct"]`, else the "feedback" appended."""
    try:
        if llm_json["correct"]:
            return True
        "" + llm_json["feedback"]
        return False
    except Exception:
        return UNREADABLE


def study_game24_loop(reply: str) -> bool | str:
    """game24.py @b583c3c9 backprompt "llm", even turn: json.loads(model_response), then the turn."""
    try:
        return study_loop_turn(json.loads(reply))
    except Exception:
        return UNREADABLE


def study_game24_loop_cot(reply: str) -> bool | str:
    """game24.py @d883df86 backprompt "llm-cot", even turn: the first {...} lower-cased; a failure there is
    "correct": False with the reply as feedback."""
    llm_json: dict[str, Any] = {}
    try:
        json_string = re.search("{([^}]*)}", reply).group(0).lower()  # type: ignore[union-attr]
        llm_json = json.loads(json_string)
    except Exception:
        llm_json["correct"] = False
        llm_json["feedback"] = reply
    return study_loop_turn(llm_json)


def study_game24_verify(reply: str, no_info: bool = False) -> bool | str:
    """game24_verification.py @d883df86 `evaluate`: claim = json.loads(reply) (l.123); the verdict it scores
    (l.130-132); then l.134-137 index claim['correct'] whatever the prompt, so a no-info reply without it raised."""
    try:
        claim = json.loads(reply)
        said = 24.0 == float(claim["evaluation"]) if no_info else bool(claim["correct"])
        claim["correct"]
        return said
    except Exception:
        return UNREADABLE


def study_coloring(reply: str, cot: bool) -> bool | str:
    """color_verification.py @d883df86 `evaluate` / graph_coloring.py @d883df86 backprompt "llm"(-cot)."""
    if not cot:
        return "Verifier confirmed success." in reply
    try:
        try:
            response = reply.split("[Answer]")[1].lower()
        except IndexError:
            response = reply.split("final answer is:")[1].lower()
        wrong_edges = response.split("wrong edges:")[1].split("\n")[0].strip().replace("(", "[").replace(")", "]")
        all_verts = response.split("all vertices colored:")[1].split("\n")[0].strip()
        optimal_or_less = response.split("optimal or less:")[1].split("\n")[0].strip()
        correct = response.split("correct:")[1].split("\n")[0].strip()
        messy = ('{"wrong_edges": ' + wrong_edges + ', "all_verts":' + all_verts + ', "opt":' + optimal_or_less
                 + ', "correct":' + correct + "}")  # fmt: skip
        return bool(json.loads(messy)["correct"])
    except Exception:
        return UNREADABLE


GAME24_REPLIES = [  # tests/test_game24.py's, and the shapes a verifier gave
    '{"feedback": "Correct use.", "correct": true}',
    '{"evaluation": "24", "correct": true}',
    '{"evaluation": "22", "correct": false}',
    '```json\n{"feedback": "It uses 5.", "correct": false}\n```',
    "Sure! {'feedback': 'Uses 5', 'correct': False} Hope that helps.",
    '[Thoughts] {"correct": false}\n[Answer]\n{"feedback": "fine", "correct": "True",}',
    'Verdict: "correct": true, "feedback": "ok"',
    '{"correct": false}',
    '{"Feedback": "The Expression Uses 7.", "Correct": false}',
    '[Thoughts] 6*4 = 24\n[Answer]\n{"feedback": "It is right.", "correct": true}',
    '{"evaluation": "8/3", "correct": false}',
    "The expression is incorrect: true story",
    "",
    # replies that follow the no-info prompt, which asks for "evaluation" only (audit M7)
    '{"evaluation": "24"}',
    '{"evaluation": "24.0"}',
    '{"evaluation": "23"}',
    '{"evaluation": "twenty-four"}',
]
# GPT-4's colouring verifier replies printed in 000's appendix, and tests/test_coloring.py's
COLORING_REPLIES = [
    "No adjacent vertices share a same color, and no colors exceed the optimal coloring number. Hence, the "
    "coloring is correct.\nVerifier confirmed success.",  # 000:1069-1071
    "Vertex 10, colored 4, is connected to vertex 11, also colored 1. However, it is also colored 4, which is "
    "greater than the optimal coloring of 4. So, this coloring is non-optimal.",  # 000:1074
    "verifier confirmed success",
    "Vertex 0 and vertex 1 share Color1.",
    "[Thoughts] fine\n[Answer]\nWrong Edges: []\nAll Vertices Colored: true\nOptimal Or Less: true\nCorrect: true",
    "[Answer]\n**Wrong Edges:** [(0, 1)]\n**All Vertices Colored:** true\n**Correct:** False",
    "[Answer]\nWrong Edges: [(0, 1), (2, 3)]\nAll Vertices Colored: true\nOptimal Or Less: true\nCorrect: false",
    "So my final answer is:\nWrong Edges: []\nAll Vertices Colored: True\nOptimal Or Less: True\nCorrect: True",
    "[Thoughts] it looks fine\n[Answer]\nI think so.",
    "",
]


def said(verdict: Any) -> bool | str:
    return verdict.says_valid if verdict.parsed or verdict.says_valid else UNREADABLE


@pytest.fixture(scope="module")
def puzzle() -> Instance:
    return Instance("game24", "901", {"numbers": [4, 5, 6, 10]})


@pytest.mark.parametrize("reply", GAME24_REPLIES)
def test_game24_study_verdicts_are_the_study_code_s(puzzle: Instance, reply: str) -> None:
    game24 = get_domain("game24", verdict="study")
    expected = {"critique": study_game24_loop(reply), "critique-cot": study_game24_loop_cot(reply),
                "verify": study_game24_verify(reply), "verify-cot": study_game24_verify(reply),
                "verify-no-info": study_game24_verify(reply, no_info=True)}  # fmt: skip
    got = {p: said(game24.judge_reply(puzzle, p, "(10-4)*(6-5)", reply).verdict) for p in expected}
    # the study's CoT fallback is "not correct" (parsed or not, it is no valid verdict)
    if got["critique-cot"] == UNREADABLE and expected["critique-cot"] is False:
        got["critique-cot"] = False
    assert got == expected


def test_the_two_readers_part_on_the_audit_s_replies(puzzle: Instance) -> None:
    """Ours reads a verdict in every reply that states one; the study's loop code read only pure JSON."""
    ours, study = get_domain("game24"), get_domain("game24", verdict="study")
    reply = "Sure! {'feedback': 'Uses 5', 'correct': False} Hope that helps."
    assert ours.judge_reply(puzzle, "critique", "", reply).verdict.parsed
    assert said(study.judge_reply(puzzle, "critique", "", reply).verdict) == UNREADABLE
    # the critique handed back is the study's: the "feedback" text, lower-cased by its CoT reader
    cot = study.judge_reply(puzzle, "critique-cot", "", '{"Feedback": "Uses 7.", "correct": false}').verdict
    assert (cot.says_valid, cot.critique) == (False, "uses 7.")


@pytest.mark.parametrize("reply", COLORING_REPLIES)
def test_coloring_study_verdicts_are_the_study_code_s(reply: str) -> None:
    coloring = get_domain("coloring", verdict="study")
    graph = Instance("coloring", "1", {"n": 2, "k": 2, "edges": [(0, 1)]})
    for purpose in ("verify", "critique", "verify-cot", "critique-cot"):
        got = said(coloring.judge_reply(graph, purpose, "0: Color1\n1: Color2\n", reply).verdict)
        assert got == study_coloring(reply, purpose.endswith("-cot")), purpose


def test_hostile_replies_stay_linear_and_never_raise(puzzle: Instance) -> None:
    game24, coloring = get_domain("game24", verdict="study"), get_domain("coloring", verdict="study")
    graph = Instance("coloring", "1", {"n": 2, "k": 2, "edges": [(0, 1)]})
    for text in ('{"correct": ' * 20_000, "{" * 50_000, "[" * 50_000 + "]" * 50_000, "[Answer]" * 20_000):
        for purpose in ("critique", "critique-cot", "verify", "verify-no-info"):
            assert not game24.judge_reply(puzzle, purpose, "", text).verdict.says_valid
        assert not coloring.judge_reply(graph, "verify-cot", "", text).verdict.says_valid


def test_the_option_is_one_line_when_wrong() -> None:
    for name in ("game24", "coloring"):
        with pytest.raises(ValueError, match=f"{name} verdict must be one of lenient, study, not 'strict'"):
            get_domain(name, verdict="strict")


@pytest.mark.parametrize("verdict", ["lenient", "study"])
def test_a_reply_the_study_s_loop_failed_on_ends_the_run_with_either_reader(puzzle: Instance, verdict: str) -> None:
    """`fails_run` where the study's loop raised on the critic's reply (its instance failed, or the run crashed):
    the study's transcriptions above say UNREADABLE there; the CoT loop's own fallback is no failure."""
    game24, coloring = get_domain("game24", verdict=verdict), get_domain("coloring", verdict=verdict)
    graph = Instance("coloring", "1", {"n": 2, "k": 2, "edges": [(0, 1)]})
    for reply in GAME24_REPLIES:
        for purpose, study in (("critique", study_game24_loop), ("critique-cot", study_game24_loop_cot)):
            got = game24.judge_reply(puzzle, purpose, "", reply).verdict.fails_run
            assert got == (study(reply) == UNREADABLE), (purpose, reply)
    for reply in COLORING_REPLIES:
        assert not coloring.judge_reply(graph, "critique", "", reply).verdict.fails_run
        got = coloring.judge_reply(graph, "critique-cot", "", reply).verdict.fails_run
        assert got == (study_coloring(reply, cot=True) == UNREADABLE), reply
