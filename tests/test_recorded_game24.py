"""Table 1's Game of 24 cells beside GPT-4's recorded runs (`reports.recorded_game24`): the counts are recounted
from kstechly/gpt-and-i's history, read from a mirror of it when one is on this machine (the files are not in
../shared), as the study's `evaluate` counted them: the last answer (the one answer, any of the first k samples)
read by the 2023 `check_answer` (`study_check(..., protocol="2023")`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from critiquebench.domains.game24 import study_check
from critiquebench.nodes.voting import pick_consistent
from critiquebench.reports.published import published_rows
from critiquebench.reports.recorded_game24 import CELLS
from tests.test_study_cli import DATASETS

MIRROR = Path("/work/.mirror/kstechly+gpt-and-i/repo")


def _read(commit: str, path: str) -> dict:
    shown = subprocess.run(["git", f"--git-dir={MIRROR}", "show", f"{commit}:llm-csp/{path}"], capture_output=True,
                           check=True)  # fmt: skip
    return json.loads(shown.stdout)


def _numbers(query: str) -> list[int]:
    return [int(n) for n in query.split("Input: ")[1].split("\n")[0].split()]


def _count(label: str, data: dict) -> int:
    right = 0
    for record in data.values():
        if "prompts" in record:  # 2024 format: samples of one prompt
            numbers, replies = _numbers(record["prompts"][0]), record["responses"]
        else:
            numbers = _numbers(record["query"])
            replies = [v for k, v in record.items() if k.startswith("response")]
        ok = [study_check(numbers, reply, protocol="2023").valid for reply in replies]
        if label.startswith("Sampling"):
            right += any(ok[: int(label.rsplit("=", 1)[1])])
        elif label.startswith("S.C."):
            rows = [{"round": n + 1, "answer": reply, "canonical": None} for n, reply in enumerate(replies)]
            right += ok[pick_consistent(rows, "text") - 1]
        else:
            right += ok[-1]
    return right


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no mirror of kstechly/gpt-and-i on this machine")
@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c.label)
def test_each_cell_is_what_the_recording_gives(cell) -> None:  # noqa: ANN001
    data = _read(cell.commit, cell.path)
    assert (_count(cell.label, data), len(data)) == (cell.right, cell.of)


def test_report_published_sets_each_game24_cell_beside_000s() -> None:
    rows = {r.where: r for r in published_rows(DATASETS) if "Table 1, Game of 24" in r.where}
    assert [(r.published, r.ours) for r in rows.values()] == [
        ("5%", "17.0% (17/100)"), ("3%", "37.1% (36/97)"), ("36%", "61.0% (61/100)"), ("38%", "71.0% (71/100)"),
        ("28%", "50.0% (50/100)"), ("42%", "61.0% (61/100)"), ("6%", "11.0% (11/100)")]  # fmt: skip
    assert all(not r.agrees and "puzzles 1-100 where 000 evaluates 901-1000 (000:139)" in r.reason
               for r in rows.values())  # fmt: skip
