"""PlanBench's eight tasks: our prompts are the queries PlanBench sent, our evaluators agree with its labels.

All ten GPT-4 Blocksworld task files are checked instance by instance (one planning domain shared, so each
problem is parsed once); every disagreement with PlanBench's label is listed here and explained in
docs/planbench.md. One file is imported and replayed through the CLI; fresh runs of every task on other
domains use drawn choices.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from critiquebench.domains import get_domain
from critiquebench.domains.planning import load_planning_domain
from critiquebench.domains.planning.tasks import TASKS, get_task, task_of
from critiquebench.domains.planning.tasks.base import plan_block
from critiquebench.domains.planning.tasks.domain import TaskDomain

from critiquebench.importers.planbench import sent_query
from tests.conftest import DATASETS
from tests.test_replay_planbench import cli as _cli

BLOCKSWORLD = DATASETS / "planbench" / "blocksworld"
GPT4 = sorted((DATASETS / "planbench" / "tasks" / "blocksworld" / "gpt-4").glob("task_*.json"))
# Instances whose verdict differs from PlanBench's label, each explained in docs/planbench.md.
DISAGREE = {"t4": {"21"}, "t7": {"67", "241", "323"}}
T3_LEVELS = {"binary": "llm_correct_binary", "type": "llm_correct_w_type", "explanation": "llm_correct_w_expl"}


@pytest.fixture(scope="module")
def base() -> Any:
    return load_planning_domain("blocksworld")


def _checked(base: Any, path: Path) -> tuple[TaskDomain, dict[str, Any], list[Any]]:
    records = {str(r["instance_id"]): r for r in json.loads(path.read_text())["instances"]}
    dom = TaskDomain(base, get_task(task_of(path.name) or ""), recorded=str(path))
    return dom, records, dom.load(",".join(records), BLOCKSWORLD)


def test_the_ten_gpt4_files_are_all_found() -> None:
    assert sorted(task_of(p.name) for p in GPT4) == sorted(TASKS)


@pytest.mark.parametrize("path", GPT4, ids=lambda p: task_of(p.name))
def test_prompts_equal_planbench_queries_and_verdicts_agree_with_its_labels(base: Any, path: Path) -> None:
    dom, records, instances = _checked(base, path)
    assert len(instances) == 500
    differing_prompts = [i.id for i in instances if dom.prompt(i)[1]["content"] != sent_query(records[i.id]["query"])]
    assert differing_prompts == []
    disagree = set()
    for inst in instances:
        record = records[inst.id]
        verdict = dom.verify(inst, record["llm_raw_response"])
        if verdict.valid != bool(record.get("llm_correct", record.get("llm_correct_binary"))):
            disagree.add(inst.id)
        if dom.task.name == "t3":
            for level, label in T3_LEVELS.items():
                if verdict.answer[level] != record[label] and (level, inst.id) != ("explanation", "377"):
                    disagree.add(f"{level}:{inst.id}")
    assert disagree == DISAGREE.get(dom.task.name, set())
    assert len(disagree) <= 0.02 * len(instances)


@pytest.mark.parametrize("domain", ["mystery_blocksworld", "logistics"])
def test_every_task_runs_fresh_on_another_domain_and_accepts_the_right_answer(domain: str) -> None:
    for name in TASKS:
        dom = get_domain(f"{domain}:{name}", seed=3)
        [inst] = dom.load("2", DATASETS / "planbench" / domain)
        prompt = dom.prompt(inst)[1]["content"]
        assert prompt.startswith(dom.base.cfg.domain_intro_cost if name == "t2" else dom.base.cfg.domain_intro[:40])
        if name in ("t3", "t7"):
            continue  # their answers are verdicts and states, checked on Blocksworld above
        right = _solution(dom, inst)
        assert dom.verify(inst, right).valid, (name, right)
        assert not dom.verify(inst, "I cannot solve this.").valid or name == "t6"


def _solution(dom: Any, inst: Any) -> str:
    """An optimal plan for the problem the task asks, written as PlanBench's examples write plans."""
    from critiquebench.domains.planning.planner import find_plan
    from critiquebench.domains.planning.tasks.base import simulate, with_state
    from critiquebench.domains.planning.tasks.replanning import new_state

    task, params = dom.base.task(inst), inst.data["params"]
    if dom.task.name == "t4":
        reached = simulate(task, dom.plan(inst.id)[: params["prefix"]])
        task = with_state(task, goal=reached - task.init)
    if dom.task.name == "t6":
        task = with_state(task, init=new_state(task, dom.plan(inst.id), params["events"][-1]))
    steps = [(a.name, a.args) for a in find_plan(task)]
    return plan_block(dom.base.cfg, steps).lstrip("\n")


def test_fresh_choices_follow_the_seed(base: Any) -> None:
    def drawn(seed: int) -> Any:
        dom = TaskDomain(base, get_task("t3"), seed=seed)
        return [i.data["params"] for i in dom.load("5,6", BLOCKSWORLD)]

    assert drawn(1) == drawn(1) != drawn(2)
    assert random.Random(0).random() == random.Random(0).random()


def test_a_task_file_imports_replays_offline_and_reports_like_planbench(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    t3 = next(p for p in GPT4 if task_of(p.name) == "t3")
    out = _cli("import", "planbench", str(t3), "--study", "gpt4", "--store", str(store)).stdout
    assert "500 blocksworld:t3 instance(s)" in out and "'gpt-4'" in out
    _cli("resume", "gpt4", "--store", str(store), "--no-progress")
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM llm_events WHERE kind != 'hit'").fetchone()[0] == 0
    report = _cli("report", "gpt4", "--store", str(store), "--format", "md").stdout
    assert "| t3 | Plan verification | blocksworld | 94.6% (473/500) |" in report
    assert "| blocksworld:t3 | type | 72.0% (360/500) |" in report
    assert "| blocksworld:t3 | explanation | 56.6% (283/500) |" in report
    lines = [json.loads(x) for x in _cli("export", "gpt4", "--store", str(store)).stdout.splitlines()]
    labels = {str(r["instance_id"]): r["llm_correct_binary"] for r in json.loads(t3.read_text())["instances"]}
    assert {x["instance"]: x["sound_valid"] for x in lines} == labels
    # Another task joins the same study; a clashing definition is refused with a one-line error.
    bogus = tmp_path / "task_7_plan_execution.json"
    bogus.write_text(json.dumps({"engine": "gpt-4_chat", "instances": [{"instance_id": 2, "query": "q",
                                                                         "llm_raw_response": "r"}]}))  # fmt: skip
    again = _cli("import", "planbench", str(bogus), "--study", "gpt4", "--store", str(store),
                 "--instances", str(BLOCKSWORLD), check=False)  # fmt: skip
    assert again.returncode == 0, again.stderr
    clash = _cli("import", "planbench", str(bogus), "--study", "gpt4", "--store", str(store), check=False)
    assert clash.returncode == 2 and clash.stderr.startswith("error:")
