"""Table 1's Game of 24 cells beside GPT-4's recorded runs (`reports.recorded_game24`): the counts are recounted
from the replies of kstechly/gpt-and-i's recordings, as the study's `evaluate` counted them: the last answer (the
one answer, any of the first k samples) read by the 2023 `check_answer` (`study_check(..., protocol="2023")`).

The recordings are not in ../shared; `data/self_verification/recorded_game24.json` holds, per recording (named by
its gpt-and-i commit and path), each puzzle's numbers and the replies the count reads, verbatim: the last reply of
each loop run, the first 15 or 25 samples of a sampling file (180 KB of the six files' 1.7 MB). Run this file as a
script with a gpt-and-i git directory to write it again:
`PYTHONPATH=. python tests/test_recorded_game24.py GIT_DIR`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from critiquebench.domains.game24 import study_check
from critiquebench.nodes.voting import pick_consistent
from critiquebench.reports.published import published_rows
from critiquebench.reports.recorded_game24 import CELLS, RecordedCell
from tests.test_study_cli import DATASETS

TRIMMED = Path(__file__).parent / "data" / "self_verification" / "recorded_game24.json"


def _kept(cell: RecordedCell) -> int | None:
    """How many replies of each puzzle a cell reads from the front (None: only the last)."""
    return int(cell.label.rsplit("=", 1)[1]) if cell.label.startswith(("Sampling", "S.C.")) else None


def _count(cell: RecordedCell, puzzles: list[dict]) -> int:
    right = 0
    for puzzle in puzzles:
        ok = [study_check(puzzle["numbers"], reply, protocol="2023").valid for reply in puzzle["replies"]]
        if cell.label.startswith("Sampling"):
            right += any(ok[: _kept(cell)])
        elif cell.label.startswith("S.C."):
            rows = [{"round": n + 1, "answer": reply, "canonical": None} for n, reply in enumerate(puzzle["replies"])]
            right += ok[pick_consistent(rows, "text") - 1]
        else:
            right += ok[-1]
    return right


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c.label)
def test_each_cell_is_what_the_recording_gives(cell: RecordedCell) -> None:
    puzzles = json.loads(TRIMMED.read_text())[f"{cell.commit}:{cell.path}"]["puzzles"]
    assert (_count(cell, puzzles), len(puzzles)) == (cell.right, cell.of)


def test_report_published_sets_each_game24_cell_beside_000s() -> None:
    rows = {r.where: r for r in published_rows(DATASETS) if "Table 1, Game of 24" in r.where}
    assert [(r.published, r.ours) for r in rows.values()] == [
        ("5%", "17.0% (17/100)"), ("3%", "37.1% (36/97)"), ("36%", "61.0% (61/100)"), ("38%", "71.0% (71/100)"),
        ("28%", "50.0% (50/100)"), ("42%", "61.0% (61/100)"), ("6%", "11.0% (11/100)")]  # fmt: skip
    assert all(not r.agrees and "puzzles 1-100 where 000 evaluates 901-1000 (000:139)" in r.reason
               for r in rows.values())  # fmt: skip


def _numbers(query: str) -> list[int]:
    return [int(n) for n in query.split("Input: ")[1].split("\n")[0].split()]


def trim(git_dir: str) -> dict:
    """The replies each cell reads, from gpt-and-i's history (both of its file formats)."""
    out: dict = {}
    for cell in CELLS:
        shown = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{cell.commit}:llm-csp/{cell.path}"],
                               capture_output=True, check=True)  # fmt: skip
        puzzles = out.setdefault(f"{cell.commit}:{cell.path}", {"puzzles": []})["puzzles"]
        if puzzles:  # two cells read one file (k=15 sampling and S.C.): the same replies
            continue
        for record in json.loads(shown.stdout).values():
            if "prompts" in record:  # 2024 format: samples of one prompt
                numbers, replies = _numbers(record["prompts"][0]), record["responses"]
            else:
                numbers = _numbers(record["query"])
                replies = [v for k, v in record.items() if k.startswith("response")]
            kept = _kept(cell)
            puzzles.append({"numbers": numbers, "replies": replies[:kept] if kept else replies[-1:]})
    return out


if __name__ == "__main__":
    TRIMMED.write_text(json.dumps(trim(sys.argv[1]), indent=0, ensure_ascii=False) + "\n")
