"""What differs between each paper and our reproduction of it, finding by finding: the rows of each paper page's
"What is exact and what differs" table (`docs/generate.py`, block `differences:PAPER`), written from here.

Two kinds of row. A finding (`Difference`) states what we do where the paper or its code did something, with its
verdict and the tests that show it (`tests`: each file must exist and assert the behaviour the row states, so a
change that fixes or breaks the difference fails them and the row is rewritten). And every published number that
the recorded data does *not* reproduce (`reports.published`, the rows `report --published` prints, judged afresh on
each generation): a mismatch fixed in the code or the data leaves the table by itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from critiquebench.reports.published import PublishedRow


@dataclass(frozen=True)
class Difference:
    """One finding of a paper's reproduction: `verdict` "exact", or "ours, because ..." with the reason."""

    paper: str  # "000", "002"
    finding: str
    source: str  # the paper's lines or the study's code the finding is about
    verdict: str
    evidence: str
    tests: tuple[str, ...] = ()  # test files (repository paths) that assert what the row states


FINDINGS: tuple[Difference, ...] = (  # fmt: skip
    Difference(
        "000",
        "Colouring loop transcripts, `protocol = \"2023\"` (the shipped loop study)",
        (
            "gpt-and-i `graph_coloring.py` and `response_generation.py` @ada66fc6: `generate`, `backprompt` "
            "(passfail, first, full, llm-query, llm-wrapper), the trace joined by `\"\\n\"` (l.132), the give-up "
            "words (l.109), no stop (l.210)"
        ),
        "exact",
        (
            "`tests/test_self_verification_import.py`: every request of GPT-4's recorded passfail, first, full "
            "and llm loops (graphs 1-100) equals the one the study's loop built from its trace, and the "
            "backprompts equal 000's A.4.3; the replays make 0 calls. Where the study's code cannot be run as "
            "committed (`check is str`, never true, l.274/284: a missing vertex or too many colours raises), we "
            "send the text its recorded run of graph 1 shows"
        ),
    ),
    Difference(
        "000",
        (
            "Colouring loop transcripts, `protocol = \"2024\"` (`sound-binary`, `sound-first`, `sound-all`, "
            "`llm-llm`, `form = \"transcript\"`)"
        ),
        (
            "gpt-and-i `graph_coloring.py` @b583c3c9 `generate`, `check_coloring`, `concat_trace` (its `\"\\n\"` "
            "before each answer), `backprompt`; \"llm\" @d883df86; the loop of `response_generation.py`"
        ),
        "exact",
        (
            "`tests/test_self_verification_transcript.py` transcribes that code, runs each loop on instance 1 "
            "against the scripted server and compares every call (system message and whole transcript) with the "
            "study's output, byte for byte"
        ),
    ),
    Difference(
        "000",
        "Table 1's Blocksworld LLM+LLM 55% (000:193, 002:61, Table A1 000:336)",
        "one published cell; no run of it is recorded",
        (
            "ours, because no record says which verifier produced it: the published cell is **`bw-llm-llm-open`**"
            " (`studies/blocksworld_llm_llm_open.toml`: PlanBench's open-ended prompt, 000:2122-2127, after the "
            "validator's system message, which `back_prompting.py` @27b0c44 l.277-283 sends with either prompt), "
            "since 002 says the verifier's format was not restricted (002:43, 002:47) and every verifier reply "
            "000 prints for this loop is free-form (\"Plan is invalid. The plan fails because ...\", "
            "000:2597-2671), none in val_form's \"The following action [action name] has unmet preconditions\"; the"
            " 2023 code's default (`val_form`, LLMs-Planning `back_prompting.py` @27b0c44 l.465-469, system "
            "message l.283) ships as **`bw-llm-llm-val-form`** (`studies/blocksworld_llm_llm_val_form.toml`) and "
            "is what `studies/plan_critique.toml` runs"
        ),
        "both study files above; `tests/test_prompt_messages.py` checks what each verifier call sends",
    ),
    Difference(
        "000",
        "Planning's answer reader on GPT-4's recorded Mystery first-error run",
        "LLMs-Planning `text_to_plan_blocksworld` (`reading = \"planbench-whole\"`)",
        (
            "ours, because an explanation is no plan (16 of 664 feedback turns); 3 turns are calls that failed on"
            " a rate limit (no answer to read): see the table below"
        ),
        "`critiquebench/reports/recorded_feedback.py`, `tests/test_recorded_feedback.py`",
    ),
    Difference(
        "000",
        "Game of 24 and colouring LLM-verdict readers",
        (
            "gpt-and-i `game24.py` @b583c3c9 l.128-133 (loop), @d883df86 l.192-205 (CoT loop), "
            "`game24_verification.py` and `color_verification.py` @d883df86 `evaluate`, `parse_messy_json`"
        ),
        (
            "ours, because the study's code rejected or failed on replies its paper counts: its Game of 24 "
            "verification reads the whole reply with `json.loads` (its `[Answer]` split is commented out), so no "
            "chain-of-thought reply is readable, yet Table A2 has a Game of 24-CoT row (000:353); its colouring "
            "check is case-sensitive. The study's own reading is `--domain-option verdict=study` "
            "(`[domain_options.game24] verdict = \"study\"`, likewise colouring): a reply it failed on is recorded "
            "unreadable (invalid, `llm_parsed = 0`), never an error; a Game of 24 no-info reply without a "
            "\"correct\" key is unreadable too, since `evaluate` indexes `claim['correct']` (l.134-137) whatever "
            "the prompt asked"
        ),
        (
            "`domains/study_verdicts.py`; `tests/test_study_verdicts.py` compares its verdicts with the study's "
            "code, transcribed, on the replies 000 prints (000:1069-1074) and our readers' test replies"
        ),
    ),
    Difference(
        "000",
        "`critiquebench prompt` on a verification or val_form call",
        "the studies' code (above)",
        "exact",
        (
            "it prints every message the call sends, the system message first: `--config "
            "studies/self_verification_verify.toml --purpose verify` (Game of 24, colouring, planning), `--config"
            " studies/plan_critique.toml --purpose critique` (002's val_form). `tests/test_prompt_messages.py` "
            "compares what it prints with what a run really sends on the scripted server and with the studies' "
            "texts"
        ),
    ),
    Difference(
        "000",
        "Blocksworld's Table 2 set",
        "Table A5's LLM plans (55 correct) are not published",
        (
            "ours, because the recorded one-shot answers (40 correct) are the only GPT-4 plans published: 360 "
            "invalid / 140 valid where the paper prints 345 / 155. Mystery is exact (397 / 103)"
        ),
        "`report --published`",
        tests=("tests/test_dry_run.py", "tests/test_self_verification_inputs.py"),
    ),
    Difference(
        "000",
        "All-errors feedback",
        "wording 000:2486-2508, 000:3306-3325",
        "ours, because which steps count is not published: the wording is the paper's (see the table above)",
        "`score -f all`",
        tests=("tests/test_paper_000_002_planning.py",),
    ),
    Difference(
        "000",
        (
            "A critic reply the study's loop failed on (audit M4): not JSON, no \"feedback\" key, empty; the CoT "
            "loop's missing keys; colouring's `parse_messy_json`"
        ),
        (
            "gpt-and-i `response_generation.py` @b583c3c9 l.92-96 (`except: failed_instances.append(instance); "
            "break`; an empty reply l.84-87), @d883df86 l.99-100 (no `try`: a crash); `game24.py` @b583c3c9 "
            "l.82-84 scores the instance by its last generated answer"
        ),
        (
            "exact: the run ends with the answer the critic judged, that round recorded with no LLM verdict (the "
            "reply kept as its critique), with either reader; the study sent nothing more. The run is done, in the "
            "accuracy by that answer, and marked `study_failed`: `report` counts it apart (Table 1 detail, `--table "
            "stops`, every format), as the study listed its failed instances (l.94, printed l.116)"
        ),
        (
            "`tests/test_study_failure_handling.py`: the scripted server receives the study's two calls and no "
            "third; the run is done, scored by round 1's answer, and counted apart in every report format; "
            "`tests/test_study_verdicts.py`: `fails_run` "
            "wherever the study's code, transcribed, raised"
        ),
    ),
    Difference(
        "000",
        "The Game of 24 CoT loop's critique handed back (audit M3)",
        "gpt-and-i `game24.py` @d883df86 l.192-205: the first `{...}` lower-cased, its \"feedback\" appended",
        (
            "exact, with either reader: where both readings say \"not correct\", the critique handed back is the "
            "study's"
        ),
        (
            "`tests/test_study_failure_handling.py`: the third call equals the study's backprompt, \"it evaluates "
            "to 15\" lower-cased"
        ),
    ),
    Difference(
        "000",
        "`verdict = \"study\"` on a Game of 24 no-info reply (audit M7)",
        (
            "gpt-and-i `game24_verification.py` @d883df86 `evaluate` l.131-137: `claim['correct']` indexed "
            "whatever the prompt asked"
        ),
        (
            "exact: a reply without a \"correct\" key (what the no-info prompt asks for) is unreadable, no verdict,"
            " as `evaluate` raised"
        ),
        (
            "`tests/test_study_verdicts.py`: the audit's four no-info replies against the study's code, "
            "transcribed"
        ),
    ),
    Difference(
        "002",
        "Table 1's LLM+LLM 55/100 (002:61), which 000 prints too (000:193)",
        "one published cell; no run of it is recorded",
        (
            "ours, because no record says which verifier produced it. The published cell is **`bw-llm-llm-open`**"
            " (`studies/blocksworld_llm_llm_open.toml`: PlanBench's open-ended prompt after the validator's "
            "system message, which `back_prompting.py` @27b0c44 l.277-283 sends with either prompt): 002 says the"
            " verifier's format was not restricted (002:43, 002:47), and 000's printed replies of this loop are "
            "free-form (000:2597-2671), none in val_form's format. The 2023 code's default, `val_form` with its "
            "validator system message (`back_prompting.py` @27b0c44 l.465-469, l.283), ships as "
            "**`bw-llm-llm-val-form`** (`studies/blocksworld_llm_llm_val_form.toml`) and is the verifier of "
            "`studies/plan_critique.toml` (Tables 1 and 2 together, as the code ran them)"
        ),
        "the two study files; `tests/test_dry_run.py`",
    ),
    Difference(
        "002",
        "`critiquebench prompt` on 002's verifier",
        "`plan_verification_zero_shot_val_form` and the system message of `back_prompting.py` @27b0c44",
        "exact",
        (
            "`critiquebench prompt --config studies/plan_critique.toml --domain blocksworld --instance 9 "
            "--purpose critique --answer PLAN` prints both messages; `tests/test_prompt_messages.py` compares "
            "them with the code's texts and with what an `llm-llm` run really sends"
        ),
    ),
    Difference(
        "002",
        "Answers read for the sound verdict and VAL's feedback",
        "PlanBench's `text_to_plan` (`back_prompting.py` @27b0c44 l.326, 398)",
        (
            "exact on Blocksworld: GPT-4's recorded first-error run gets the recorded feedback on 236 of 236 "
            "turns. On Mystery, ours, because an explanation is no plan ([000's "
            "page](self-verification.md#gpt-4s-recorded-mystery-first-error-run-turn-by-turn))"
        ),
        "`critiquebench/reports/recorded_feedback.py`",
        tests=("tests/test_recorded_feedback.py",),
    ),
    Difference(
        "002",
        "The generator alone (`standard`)",
        "GPT-4's recorded one-shot answers to instances 2-101",
        "exact: 40/100, the paper's \"generator-only\" number (below)",
        "`report --published`",
        tests=("tests/test_self_verification_inputs.py",),
    ),
    Difference(
        "002",
        "The all-errors level (`sound-all`)",
        "002:86 defines it as a partial-order plan's open conditions, without publishing how",
        (
            "ours, because which steps count is not published: every step whose preconditions are unmet after "
            "applying every earlier action's effects"
        ),
        "`score -f all`",
        tests=("tests/test_paper_000_002_planning.py",),
    ),
    Difference(
        "002",
        "The loop verifier's system message (audit M5)",
        (
            "LLMs-Planning `back_prompting.py` @27b0c44 l.277-283 (`get_llm_feedback`: the validator's system "
            "message whichever prompt `val_form` picks)"
        ),
        (
            "exact: the open-ended and the val_form verifier both after the validator's system message "
            "(`bw-llm-llm-open`, `bw-llm-llm-val-form`, the loops study's Blocksworld and Mystery critic); the "
            "CoT critic (000's A1 LLM+LLM-C, code unpublished) after PlanBench's"
        ),
        "`tests/test_paper_000_002_planning.py`, `tests/test_prompt_messages.py`",
    ),
)


def findings(paper: str) -> list[Difference]:
    """Paper `paper`'s findings, then each of its published numbers the recorded data does not reproduce."""
    return [d for d in FINDINGS if d.paper == paper]


def mismatches(rows: list[PublishedRow], paper: str) -> list[Difference]:
    """The published numbers of `paper` that `report --published` finds not reproduced, as rows of the table."""
    return [
        Difference(r.paper, f"{r.where}: published {r.published}", "the paper's number", f"differs: {r.ours}", r.reason,
                   ("tests/test_self_verification_inputs.py",))  # fmt: skip
        for r in rows
        if r.paper == paper and not r.agrees
    ]


def named_tests(row: Difference) -> tuple[str, ...]:
    """The test files a row names (its `tests`, and those its evidence cites)."""
    return tuple(dict.fromkeys((*row.tests, *re.findall(r"tests/test_\w+\.py", row.evidence))))


def missing_tests(root: Path) -> list[str]:
    """Test files rows name that `root` (a checkout) lacks."""
    return sorted({t for row in FINDINGS for t in named_tests(row) if not (root / t).is_file()})
