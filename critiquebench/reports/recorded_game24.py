"""000's Table 1 Game of 24 cells beside GPT-4's own recorded Game of 24 runs (`report --published`).

gpt-and-i's history keeps GPT-4's runs of the Game of 24 loops of October-November 2023 (`llm-csp/responses/
game24/`, and the 2023 format kept in `responses-old_format20231006/`), all on puzzles 1-100 of 24.csv, where
000 evaluates generation on 901-1000 (000:139): they cannot check Table 1's figures, and this sets each beside
the figure to say so. The counts are the study's own, as its `evaluate` counted them (the last answer of each
run read by the 2023 `check_answer`: its `evaluations.json` beside each file records the same numbers), and
`critiquebench import self-verification` replays every file below with 0 new calls and gets them too
(docs/replaying.md). The files are not in `../shared`; `tests/test_recorded_game24.py` counts them afresh from
the replies they hold, kept verbatim in `tests/data/self_verification/recorded_game24.json`.
"""

from __future__ import annotations

from dataclasses import dataclass

from critiquebench.reports.tables import pct

TABLE_1 = "000:191"  # Table 1's Game of 24 row: S.P. 5, LLM+LLM 3, B.F. 36, F.E.F. 38, k=15 28, k=25 42, S.C. 6


@dataclass(frozen=True)
class RecordedCell:
    """One Table 1 cell: the recording that answers it (path under `llm-csp/` at `commit`), what the study
    counted in it, and the count's rule."""

    label: str
    published: int
    path: str
    commit: str
    right: int
    of: int
    rule: str


GPT4 = "game24/gpt-4_chat"
CELLS = (
    RecordedCell("S.P.", 5, f"responses/{GPT4}/responses.json", "c9a5d349", 17, 100,
                 "the one answer (its query, \"... to obtain 24.\\nInput: ...\", is no commit's code: the import "
                 "refuses it)"),
    RecordedCell("LLM+LLM", 3, f"responses-old_format20231006/{GPT4}/backprompting-llm/responses.json", "709404d1",
                 36, 97, "the last answer of each run (3 puzzles missing); the replay holds 92 (5 runs sent the "
                 "critic a request another run sent, with another reply)"),
    RecordedCell("B.F.", 36, f"responses/{GPT4}/backprompting-passfail/responses.json", "212aee59", 61, 100,
                 "the last answer of each run"),
    RecordedCell("F.E.F.", 38, f"responses/{GPT4}/backprompting-first/responses.json", "212aee59", 71, 100,
                 "the last answer of each run"),
    RecordedCell("Sampling, k=15", 28, f"responses/{GPT4}/backprompting-15top1/responses.json", "212aee59", 50, 100,
                 "any of the 15 samples at temperature 1 (the study's \"ever correct\")"),
    RecordedCell("Sampling, k=25", 42, "responses/game24/gpt-4-0613_chat/backprompting-top-temp1.0/responses.json",
                 "709404d1", 61, 100, "any of the first 25 samples at temperature 1, gpt-4-0613"),
    RecordedCell("S.C., k=15", 6, f"responses/{GPT4}/backprompting-15top1/responses.json", "212aee59", 11, 100,
                 "the most common reply text of the 15, the earliest on a tie (our `vote=text`: the 2023 code "
                 "has no Game of 24 vote)"),
)  # fmt: skip

Row = tuple[str, str, str, str, bool, str]  # a `reports.published.PublishedRow`'s fields


def recorded_game24_rows() -> list[Row]:
    """(paper, where, published, recorded, agrees, reason) for each Table 1 Game of 24 cell."""
    rows = []
    for cell in CELLS:
        why = (f"GPT-4's recorded run, gpt-and-i@{cell.commit} llm-csp/{cell.path}, puzzles 1-100 where 000 "
               f"evaluates 901-1000 (000:139): not the published runs; {cell.rule}")  # fmt: skip
        rows.append(("000", f"Table 1, Game of 24, {cell.label} ({TABLE_1}), recorded run", f"{cell.published}%",
                     pct(cell.right, cell.of), False, why))  # fmt: skip
    return rows
