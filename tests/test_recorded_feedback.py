"""GPT-4's recorded Mystery first-error run (PlanBench's conversations, ../shared/datasets/planbench/reference):
every answer read and judged again, its first-error feedback compared with the one the run sent. The expected
counts come from the recorded file itself: its feedback turns, and the empty answers PlanBench's loop recorded
when a call failed on a rate limit (LLMs-Planning llm_utils.py @27b0c44 send_query_with_feedback appends "",
back_prompting.py @27b0c44 self_critique sends the same feedback again)."""

from __future__ import annotations

import json
from pathlib import Path

from critiquebench.reports.recorded_feedback import (
    NO_ANSWER,
    PLANBENCH_READS_PROSE,
    feedback_disagreements,
)

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
RUN = DATASETS / "planbench" / "reference" / "gpt-4_mystery_backprompting_first_error.json"


def recorded() -> tuple[int, dict[str, list[int]]]:
    """The file's feedback turns, and per instance the empty answers whose feedback is the turn before's repeated
    (the rate-limit path) and is not the one an empty plan gets (VAL's unmet goals): 12 answers are empty, 9 of
    them got the unmet goals (an empty reply judged, or a repeat that says the same)."""
    turns, empty = 0, {}
    for record in json.loads(RUN.read_text(encoding="utf-8"))["instances"]:
        messages = record["messages"]
        for k in range(len(messages) - 1):
            if messages[k]["role"] == "assistant" and messages[k + 1]["role"] == "user":
                turns += 1
                sent = messages[k + 1]["content"]
                if not messages[k]["content"].strip() and "unmet goal condition" not in sent:
                    assert sent == messages[k - 1]["content"]
                    empty.setdefault(str(record["instance_id"]), []).append(k)
    return turns, empty


def test_every_disagreement_with_the_recorded_run_is_classed() -> None:
    turns, empty = recorded()
    counted, rows = feedback_disagreements(RUN, "mystery_blocksworld", DATASETS)
    assert counted == turns == 664
    by_class: dict[str, list[str]] = {}
    for row in rows:
        by_class.setdefault(row.why, []).append(row.instance)
    assert {r.instance: list(r.turns) for r in rows if r.why == NO_ANSWER} == empty == {"21": [12], "23": [4],
                                                                                          "50": [16]}  # fmt: skip
    # instance 5's five answers quote a verb in prose (`the "feast" action require both ...`): no action, as
    # PlanBench read them (its feedback names the unmet goal)
    assert by_class == {NO_ANSWER: ["21", "23", "50"], PLANBENCH_READS_PROSE: ["39", "48"]}
    assert sum(len(r.turns) for r in rows) == 19


def test_planbench_s_reader_leaves_only_the_empty_answers() -> None:
    turns, empty = recorded()
    _, rows = feedback_disagreements(RUN, "mystery_blocksworld", DATASETS, "planbench-whole")
    assert {r.instance: list(r.turns) for r in rows} == empty and all(r.why == NO_ANSWER for r in rows)


def test_blocksworld_s_recorded_run_gets_its_feedback_on_every_turn() -> None:
    """002's domain: our reader sends the recorded first-error feedback on all 236 turns of GPT-4's run."""
    run = DATASETS / "planbench" / "reference" / "gpt-4_blocksworld_backprompting_first_error.json"
    assert feedback_disagreements(run, "blocksworld", DATASETS) == (236, [])
