"""Why a replayed PlanBench verdict parts from PlanBench's label: the classes the breadth benchmark records for each
disagreement (`critiquebench.reports.task_disagreements.plan_why`), and the PlanBench page's table generated from
its results file. The records are GPT-4's t4 file (../shared/datasets/planbench, = plan-bench/results/blocksworld/
gpt-4_chat/task_4_plan_reuse.json of karthikv792/LLMs-Planning) and answers of the forms PlanBench's other files hold.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from critiquebench.domains.planning.tasks import task_domain
from critiquebench.reports.task_disagreements import (
    CONTRADICTS,
    DOUBLED,
    NO_PLAN,
    PAST_END,
    READ_OTHERWISE,
    plan_steps,
    plan_why,
)
from tests.conftest import DATASETS

T4 = DATASETS / "planbench" / "tasks" / "blocksworld" / "gpt-4" / "task_4_plan_reuse.json"


def test_t4_21_planbench_read_past_plan_end_and_its_own_plan_gives_its_label() -> None:
    record = next(r for r in json.loads(T4.read_text())["instances"] if str(r["instance_id"]) == "21")
    dom = task_domain("blocksworld", "t4", recorded=str(T4))
    [inst] = dom.load("21", DATASETS / "planbench" / "blocksworld")
    ours = dom.verify(inst, record["llm_raw_response"])
    # PlanBench stored the plan by colour: the keys name the same blocks
    stored = plan_steps(record["extracted_llm_plan"], dom.base.cfg)
    assert stored[0] == "(pick-up b)" and len(stored) == 7
    stored_right = dom.verify(inst, "\n".join(stored)).valid
    assert (record["llm_correct"], ours.valid, stored_right) == (False, True, False)
    why = plan_why(record["llm_raw_response"], record["extracted_llm_plan"], ours.answer, stored_right, False,
                   dom.base.cfg)  # fmt: skip
    assert why == PAST_END


def test_each_class_is_told_apart_by_what_planbench_stored() -> None:
    plan = "(unstack b a)\n(put-down b)"
    # the answer's "No plan possible." dropped by PlanBench's extractor, its unsolvable rule then said wrong
    assert plan_why("No plan possible.", "", "", None, False) == NO_PLAN
    # one plan written twice (bold, then in a code block) read as one plan of twice the steps
    assert plan_why("**Plan** ... ```...```", plan + "\n" + plan, plan, False, False) == DOUBLED
    # PlanBench's own stored plan is valid by our validator yet labelled wrong: the label contradicts it
    assert plan_why(plan, plan, plan, True, False) == CONTRADICTS
    # its reader kept another plan, which our validator judges as its label did
    assert plan_why("1. unstack b from a", "(unstack b a)", plan, False, False) == READ_OTHERWISE


def _generate() -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
    import generate

    return generate


def test_the_planbench_page_lists_every_disagreement_of_the_breadth_results(tmp_path: Path, monkeypatch: Any) -> None:
    generate = _generate()
    doc = json.loads(generate.BREADTH.read_text())
    parted = {"instance": "21", "label": False, "replay": True, "why": PAST_END, "planbench_read": "(pick-up b)",
              "we_read": "(pick-up b)", "answer": "pick up the blue block [PLAN END] [STATEMENT] ..."}  # fmt: skip
    doc["files"] = [
        {"n": 3, "file": "plan-bench/results/blocksworld/gpt-4_chat/task_4_plan_reuse.json", "task": "t4",
         "imported": True, "error": "", "style": "t4", "reading": "sound", "offline": True, "agree": 49,
         "labelled": 50, "sound_agree": 49, "disagreements": [parted]},
        {"n": 9, "file": "llm_planning_analysis/results/x/task_1_plan_generation.json", "task": "t1",
         "imported": False, "error": "no config", "style": "", "reading": "", "offline": False, "agree": 0,
         "labelled": 0, "sound_agree": 0, "disagreements": []},
    ]  # fmt: skip
    results = tmp_path / "bench_planbench_breadth.json"
    results.write_text(json.dumps(doc))
    monkeypatch.setattr(generate, "BREADTH", results)
    page = generate.planbench_breadth_agreement()
    assert "| t4 | 1 | 1 | 0 | 98.0% (49/50) |" in page
    assert "| 9 | `results/x/task_1_plan_generation.json` | t1 |  | - | not imported: no config |" in page
    assert f"| 3 | 21 | wrong | right | {PAST_END} |" in page
