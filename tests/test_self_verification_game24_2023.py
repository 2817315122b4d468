"""GPT-4's 2023 Game of 24 recordings replay under the code that made them (issue 40, item 4).

Fixtures (tests/data/self_verification/gpt-and-i@212aee59/...): kstechly/gpt-and-i's
`llm-csp/responses/game24/gpt-4_chat/backprompting-*/responses.json` at commit 212aee59 (2023-11-02), trimmed:
puzzles 1-3 of `15top1` and `passfail`, 1-2 of `first`, 1, 4, 5 and 6 of `llm`; and `evaluations/.../sympy-values.json`,
every reply of the `passfail` and `first` runs whose value the study's own `evaluations.json` (same commit,
`"response i eval"`: `str(sympy.simplify(...))` of the 2023 reading) records as zoo, nan, a fraction or negative,
mapped to that recorded value. Their queries are the prompts of `llm-csp/domain_utils/game24.py@c9a5d349` (2023-10-30),
our `protocol = "2023"` (`game24.2023.generate`), not the January 2024 code's that 000 prints.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import get_domain, load_instances
from tests.test_study_cli import DATASETS, invoke

FILES = Path(__file__).parent / "data/self_verification/gpt-and-i@212aee59/llm-csp/responses/game24/gpt-4_chat"
# game24.py@c9a5d349:10 (DEFAULT_PROMPT_START, END_TAG "[ANSWER END]" at :9) and :38 (generate)
C9A5D349_START = ("Use numbers and basic arithmetic operations (+ - * /) to obtain 24. Write your answer first. "
                  "At the end of your answer, write [ANSWER END]\n")  # fmt: skip


def recorded(variant: str) -> dict:
    return json.loads((FILES / variant / "responses.json").read_text(encoding="utf-8"))


def test_the_2023_generation_prompt_is_the_c9a5d349_code_and_the_recorded_query() -> None:
    domain = get_domain("game24", protocol="2023", form="transcript")
    for variant in ("backprompting-15top1", "backprompting-passfail"):
        for inst in load_instances(domain, "1-3", DATASETS):
            numbers = " ".join(map(str, inst.data["numbers"]))
            sent = domain.prompt(inst)[-1]["content"]
            assert sent == C9A5D349_START + f"Input: {numbers}\nAnswer: "
            assert sent == recorded(variant)[inst.id]["query"]
    assert get_domain("game24").prompt(inst)[-1]["content"] != sent  # the 2024 code's prompt differs


@pytest.mark.parametrize(("variant", "calls"), [("backprompting-15top1", 45), ("backprompting-passfail", 40)])
def test_a_2023_recording_replays_with_0_new_calls(tmp_path: Path, variant: str, calls: int) -> None:
    store = tmp_path / "s.sqlite"
    result = invoke("import", "self-verification", str(FILES / variant / "responses.json"), "--study", "g",
                    "--store", str(store), "--dataset", str(DATASETS), "--replay", "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"{calls} recorded call(s)" in result.output and "other requests than ours" not in result.output
    with sqlite3.connect(store) as db:
        kinds = dict(db.execute("SELECT kind, count(*) FROM llm_events GROUP BY kind").fetchall())
        assert db.execute("SELECT count(*) FROM runs WHERE status != 'done'").fetchone()[0] == 0
    schemes = 2 if "top" in variant else 1  # sampling and self-consistency replay the same 15 samples
    assert kinds == {"hit": calls * schemes}  # every request was a recorded query, byte for byte


def test_the_study_sympy_values_come_from_exact_arithmetic() -> None:
    """Every recorded value (zoo and nan for a division by zero, fractions, negatives) is ours, text unevaluated."""
    from critiquebench.domains import arith
    from critiquebench.domains.game24 import study_expression

    values = json.loads((FILES.parents[2] / "evaluations/game24/gpt-4_chat/sympy-values.json").read_text())
    assert "zoo" in values.values() and len(values) == 87
    for reply, recorded in values.items():
        assert str(arith.study_value(arith.parse_expression(study_expression(reply, "2023")))) == recorded, reply
    # what sympy 1.12's simplify gives where no recording reaches (checked once by hand against it)
    sympy_gives = {"0/0": "nan", "(1/0)*0": "nan", "1/0-1/0": "nan", "(1/0)/(1/0)": "nan", "(1/0)*(1/0)": "zoo",
                   "4/(1/0)": "0", "(1/0)/0": "zoo", "24/(1/0)+24": "24", "3/(1/0)+(1/0)": "zoo"}  # fmt: skip
    for text, value in sympy_gives.items():
        assert str(arith.study_value(arith.parse_expression(text))) == value, text


def test_a_division_by_zero_is_fed_back_in_the_studys_words() -> None:
    domain = get_domain("game24", protocol="2023", form="transcript")
    [inst] = load_instances(domain, "1", DATASETS)  # 1 1 4 6
    run = recorded("backprompting-first")["1"]
    verdict = domain.verify(inst, run["response 5"])  # "(6 / (1 - 1)) * 4 = 24 [ANSWER END]"
    assert domain.backprompt(inst, domain.feedback(inst, verdict, "first")) == run["backprompt 6"]
    assert "evaluates to zoo instead of 24." in run["backprompt 6"]


def _import(tmp_path: Path, path: Path, *extra: str) -> Any:
    return invoke("import", "self-verification", str(path), "--study", "g", "--store", str(tmp_path / "s.sqlite"),
                  "--dataset", str(DATASETS), "--no-progress", *extra, check=None)  # fmt: skip


def _events(store: Path) -> dict[str, int]:
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM runs WHERE status != 'done'").fetchone()[0] == 0
        return dict(db.execute("SELECT kind, count(*) FROM llm_events GROUP BY kind").fetchall())


def test_first_error_feedback_replays_with_0_new_calls(tmp_path: Path) -> None:
    result = _import(tmp_path, FILES / "backprompting-first/responses.json", "--replay")
    assert result.exit_code == 0, result.output
    assert "24 recorded call(s)" in result.output  # puzzle 1: 8 calls (the zoo feedback in the 8th), 2: 16
    assert _events(tmp_path / "s.sqlite") == {"hit": 24}


def test_the_llm_loop_replays_with_0_new_calls_and_names_the_run_it_cannot(tmp_path: Path) -> None:
    """The 2023 critic was sent "Verifier confirmed success." itself for every answer the study accepted: puzzles 4
    and 6 sent that same request and got two replies, and one request replays one reply."""
    result = _import(tmp_path, FILES / "backprompting-llm/responses.json", "--replay")
    assert result.exit_code == 0, result.output
    assert "on 3 game24 instance(s), 10 recorded call(s)" in result.output  # 5 answers, 5 critic replies
    assert "instance 6 critique 2: sends the request of instance 4 critique 1 and got another reply" in result.output
    assert _events(tmp_path / "s.sqlite") == {"hit": 10}


def test_a_feedback_that_is_not_the_studys_is_one_error_naming_the_call_and_line(tmp_path: Path) -> None:
    data = recorded("backprompting-first")
    data["1"]["backprompt 6"] = data["1"]["backprompt 6"].replace("zoo", "undefined")
    bad = tmp_path / "game24/gpt-4_chat/backprompting-first/responses.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(json.dumps(data), encoding="utf-8")
    result = _import(tmp_path, bad)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "instance 1 call 8: our request is not the recorded one: line 23" in result.stderr


def test_a_truncated_game24_file_is_one_line(tmp_path: Path) -> None:
    text = (FILES / "backprompting-llm/responses.json").read_text(encoding="utf-8")
    bad = tmp_path / "game24/gpt-4_chat/backprompting-llm/responses.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(text[: len(text) // 2], encoding="utf-8")
    result = _import(tmp_path, bad)
    assert result.exit_code == 2 and "not JSON (truncated?)" in result.stderr


NOV = Path(__file__).parent / "data/self_verification/gpt-and-i@709404d1/llm-csp"  # commit 709404d1, 2023-11-07


def test_gpt4_0613s_samples_in_the_2024_format_replay_with_0_new_calls(tmp_path: Path) -> None:
    """`backprompting-top-temp1.0` (puzzles 1-2 of 100, 25 samples each kept here): every prompt is the first,
    c9a5d349's (the prompts.json every Game of 24 file of the history asked), so k=25 at temperature 1."""
    result = _import(tmp_path, NOV / "responses/game24/gpt-4-0613_chat/backprompting-top-temp1.0/responses.json",
                     "--replay")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "sampling:k=25,temperature=1.0" in result.output and "50 recorded call(s) of 'gpt-4-0613'" in result.output
    assert set(_events(tmp_path / "s.sqlite")) == {"hit"}


def test_the_old_format_folders_llm_run_replays_with_0_new_calls(tmp_path: Path) -> None:
    """`responses-old_format20231006/.../backprompting-llm` (97 puzzles; 1-3 here): the 2023 format with a
    boolean "stopped" beside the calls."""
    result = _import(tmp_path, NOV / "responses-old_format20231006/game24/gpt-4_chat/backprompting-llm/responses.json",
                     "--replay")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "on 3 game24 instance(s)" in result.output and "skipped" not in result.output
    assert set(_events(tmp_path / "s.sqlite")) == {"hit"}
