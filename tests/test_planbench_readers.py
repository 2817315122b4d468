"""PlanBench's plan readers as a study's `reading`, and our own reader on the answers it used to get wrong.

Each case of tests/data/planbench/reader_cases.json is one recorded answer with the plan PlanBench stored
(`extracted_llm_plan`) and its label. PlanBench's readers must give exactly the stored plan; our sound reader
must give the plan the answer commits to (the label where PlanBench's reader read it right, see the case's
`why`; `../shared/audits/planbench_breadth.md`, class 4).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import get_domain
from tests.conftest import DATASETS

CASES = json.loads((Path(__file__).parent / "data" / "planbench" / "reader_cases.json").read_text())["cases"]


def case(ident: int, why: str) -> dict[str, Any]:
    return next(c for c in CASES if c["instance_id"] == ident and why in c["why"])


def verdict(domain_name: str, ident: int, answer: str, **options: Any) -> tuple[bool, str | None]:
    domain = get_domain(domain_name, **options)
    [inst] = domain.load(str(ident), DATASETS / "planbench" / domain_name)
    result, canonical = domain.assess(inst, answer)
    return result.valid, canonical


def stored(c: dict[str, Any]) -> str:
    plan = c["extracted_llm_plan"]
    return "\n".join(plan) if isinstance(plan, list) else plan.strip()


@pytest.mark.parametrize(
    ("ident", "why", "reading"),
    [
        (46, "whole-answer", "planbench-whole"),
        (124, "whole-answer", "planbench-whole"),
        (22, "several [PLAN]", "planbench-head"),
        (256, "several [PLAN]", "planbench-head"),
        (31, "**verb**", "planbench-whole"),
        (2, "without *", "planbench-whole-nostar"),
        (3, "without *", "planbench-whole-nostar"),
    ],
)
def test_planbench_readers_give_the_stored_plan_and_the_label(ident: int, why: str, reading: str) -> None:
    c = case(ident, why)
    valid, canonical = verdict(c["domain"], ident, c["llm_raw_response"], reading=reading)
    assert (canonical or "") == stored(c)
    assert valid == c["label"]


def test_a_planbench_reader_needs_a_blocksworld_domain() -> None:
    with pytest.raises(ValueError, match="Blocksworld reader"):
        get_domain("logistics", reading="planbench-head")


@pytest.mark.parametrize(
    ("ident", "why"),
    [(11, "heading"), (14, "heading"), (301, "Step 2"), (39, "italics")],
)
def test_our_reader_reads_each_step_once_and_ignores_explanations(ident: int, why: str) -> None:
    """PlanBench's label is right on these (its reader, or GPT-4o's translation, read the plan the answer gives)."""
    c = case(ident, why)
    valid, canonical = verdict(c["domain"], ident, c["llm_raw_response"])
    assert valid == c["label"] is True
    assert (canonical or "").count("\n") + 1 == len(stored(c).splitlines())


def test_the_whole_answer_reader_concatenates_a_restated_plan_where_ours_reads_it_once() -> None:
    c = case(46, "whole-answer")
    ours, _ = verdict(c["domain"], 46, c["llm_raw_response"])
    assert c["label"] is False and ours is True  # ours right: the plan is stated twice, executed once


TRANSLATED = json.loads((Path(__file__).parent / "data" / "planbench" / "translated_plans_val_lexer_o1-preview.json")
                        .read_text())["cases"]  # fmt: skip


@pytest.mark.parametrize("c", TRANSLATED, ids=lambda c: f"run{c['run']}-{c['instance_id']}")
def test_a_stored_translation_is_read_as_val_reads_the_plan_file(c: dict[str, Any]) -> None:
    """o1-preview's Mystery reruns keep the translated plans PlanBench wrote to a file for VAL
    (`response_evaluation.py@1540aef`: `validate_plan` on `llm_plan`), fences and all. VAL's lexer
    (`planner_tools/VAL/src/pddl+.lex`) has no rule for a backtick or a backslash, so flex echoes and skips them:
    "```\n(feast a d)\n..." and "(\\\nfeast a c\\\n)" are the plans inside, and right (17, 205, ...); a translation
    opening with a word or "[PDDL PLAN]" ends the plan before its first step (5, 11: wrong)."""
    from critiquebench.domains.planning.planbench_reading import answer_digest

    answer = f"o1-preview's answer to instance {c['instance_id']}"  # the translation is keyed by its answer
    lines = [line.strip() for line in c["extracted_llm_plan"].splitlines() if line.strip()]
    valid, _ = verdict("mystery_blocksworld", c["instance_id"], answer, reading="planbench-translation",
                       translations={answer_digest(answer): lines})  # fmt: skip
    assert valid == c["llm_correct"]
