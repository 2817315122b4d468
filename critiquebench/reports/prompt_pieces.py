"""The 36 prompt pieces papers 000 and 002 send (section 3 of `../shared/audits/fidelity_000_002.md`), each
against the code version that made the paper's number, with the test that compares our text with that code's
(run or transcribed) or the paper's: the re-count of issue 41's acceptance, rendered on 000's page
(`docs/generate.py` block `prompt-pieces`) with its tally, and walked by tests/test_differences.py.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Piece:
    piece: str
    count: int  # pieces the row stands for (the audit's tally counts them one by one)
    source: str  # the code version (or paper lines) that made the number
    verdict: str  # "exact", or "ours, because ..."
    test: str


_G24 = "gpt-and-i `game24.py` @b583c3c9"
_TR = "tests/test_self_verification_transcript.py"
_FAIL = "tests/test_study_failure_handling.py"
_IMP = "tests/test_self_verification_import.py"
_PM = "tests/test_prompt_messages.py"
_PP = "tests/test_paper_000_002_planning.py"
PIECES: tuple[Piece, ...] = (  # fmt: skip
    Piece("Game of 24 generation", 1, f"{_G24} `generate`; 000:394-401", "exact", _TR),
    Piece("Game of 24 loop critic", 1, f"{_G24} `backprompt` \"llm\"", "exact", _FAIL),
    Piece("Game of 24 loop critic, CoT (and its lower-cased hand-back, M3)", 1, "`game24.py` @d883df86 l.192-213",
          "exact", _FAIL),
    Piece("Game of 24 verify / verify-cot / verify-no-info", 3, "`game24_verification.generate` @d883df86", "exact",
          _PM),
    Piece("Game of 24 backprompts: pass/fail, first error, LLM critique", 3, f"{_G24} `backprompt`, `concat_trace`",
          "exact", _TR),
    Piece("Colouring generation (`protocol = \"2023\"`, the recorded runs behind Table 1)", 1,
          "`graph_coloring.py` @ada66fc6; 000:826-880", "exact", _IMP),
    Piece("Colouring loop critic / CoT critic", 2, "`graph_coloring.py` llm-query @ada66fc6, `generate_cot_prompt` "
          "@d883df86", "exact", _IMP),
    Piece("Colouring verify / verify-cot", 2, "`color_verification.py` @d883df86 (GPT-4's 500 recorded queries)",
          "exact", _IMP),
    Piece("Colouring backprompts: pass/fail, first, full, LLM critique", 4,
          "`graph_coloring.py` / `response_generation.py` @ada66fc6; 000's A.4.3", "exact", _IMP),
    Piece("Blocksworld / Mystery generation (the recorded one-shot runs: PlanBench's older intro, `nl_legacy`)", 2,
          "000:1955-2056, 000:2692-2800; PlanBench's recorded queries", "exact",
          "tests/test_planbench_recorded_prompts.py"),
    Piece("Blocksworld / Mystery open-ended verification", 2, "000:2061-2127, 000:2833-2931", "exact", _PP),
    Piece("Blocksworld / Mystery format-based JSON verification", 2, "000:2131-2220, 000:2933-3058", "exact", _PP),
    Piece("Blocksworld / Mystery chain-of-thought verification", 2, "000:2222-2328, 000:3062-3177", "exact", _PP),
    Piece("Blocksworld / Mystery swapped (-S) verification", 2, "000:2330-2418, 000:3183-3290", "exact", _PP),
    Piece("002's verifier (`val_form`)", 1, "`task_utils.py` @27b0c44 `plan_verification_zero_shot_val_form`",
          "exact", _PM),
    Piece("Planning first-error feedback", 1, "`get_validation_message`; 000:2478-2484, 000:3301-3304", "exact",
          "tests/test_recorded_feedback.py"),
    Piece("Planning binary feedback", 1, "none published", "ours, because no study publishes its text", _PP),
    Piece("Planning all-errors feedback", 1, "000:2486-2508, 000:3306-3325",
          "ours, because which steps count is not published (the paper's example omits a step ours lists)", _PP),
    Piece("Planning LLM critique hand-back", 1, "000:2422-2476; `back_prompting.py` @27b0c44 l.402", "exact",
          "tests/test_plan_critique_backprompt.py"),
    Piece("System message: planner", 1, "`llm_utils.py` @27b0c44 l.170", "exact",
          "tests/test_planning_verification_prompts.py"),
    Piece("System message: CSP solver", 1, "`response_generation.py` @b583c3c9:129 (= @ada66fc6)", "exact", _TR),
    Piece("System message: 002's validator, with either verifier prompt (M5)", 1, "`back_prompting.py` @27b0c44 "
          "l.277-283", "exact", _PP),
)


def tally() -> Counter[str]:
    """Pieces by verdict word ("exact", "ours")."""
    counts: Counter[str] = Counter()
    for p in PIECES:
        counts[p.verdict.split(",")[0]] += p.count
    return counts
