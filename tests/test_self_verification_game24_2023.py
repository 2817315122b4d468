"""GPT-4's 2023 Game of 24 recordings replay under the code that made them (issue 40, item 4).

Fixtures (tests/data/self_verification/gpt-and-i@212aee59/...): puzzles 1-3 of kstechly/gpt-and-i's
`llm-csp/responses/game24/gpt-4_chat/backprompting-{15top1,passfail}/responses.json` at commit 212aee59
(2023-11-02), trimmed. Their queries are the prompts of `llm-csp/domain_utils/game24.py@c9a5d349` (2023-10-30),
our `protocol = "2023"` (`game24.2023.generate`), not the January 2024 code's that 000 prints.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

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
