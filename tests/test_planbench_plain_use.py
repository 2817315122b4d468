"""`import planbench FILE` without a checkout, for PlanBench's domain names that are not ours (issue 31 item 3).

`blocksworld_3` is PlanBench's 3-block set of Blocksworld: the same PDDL and English templates as the shipped
domain, other problems. The fixture is PlanBench's GPT-4 one-shot run on it trimmed to instances 2-5, and its
problems 1-5 (tests/data/planbench/generated_basic_3, from the checkout's
`llm_planning_analysis/instances/blocksworld/generated_basic_3`). The expected verdicts are PlanBench's labels.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.reports.metrics import shown_domains
from tests.conftest import DATASETS

FIXTURES = Path(__file__).parent / "data" / "planbench"
BLOCKSWORLD_3 = FIXTURES / "blocksworld_3_one_shot_gpt-4.json"
PROBLEMS_3 = FIXTURES / "generated_basic_3"
SHIPPED = DATASETS / "planbench" / "blocksworld"  # PlanBench's Blocksworld config, domain and problems


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_blocksworld_3_with_instances_imports_and_replays_planbench_labels(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    result = invoke("import", "planbench", str(BLOCKSWORLD_3), "--instances", str(PROBLEMS_3), "--study", "s",
                    "--store", str(store))  # fmt: skip
    assert result.exit_code == 0, result.output
    resumed = invoke("resume", "s", "--store", str(store), "--replay", "--no-progress")
    assert resumed.exit_code == 0, resumed.output
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM llm_events WHERE kind != 'hit'").fetchone()[0] == 0
    rows = [json.loads(line) for line in invoke("export", "s", "--store", str(store)).output.splitlines() if line]
    got = {row["instance"]: bool(row["sound_valid"]) for row in rows}
    recorded = json.loads(BLOCKSWORLD_3.read_text())["instances"]
    assert got == {str(i["instance_id"]): i["correct"] for i in recorded}
    # the set is named as PlanBench names it, not as the shipped Blocksworld whose PDDL and English it shares
    shown = invoke("report", "s", "--store", str(store)).output
    assert "blocksworld_3 " in shown and "blocksworld " not in shown


def test_blocksworld_3_without_its_problems_asks_for_them_once(tmp_path: Path) -> None:
    """The shipped Blocksworld problems are another set: the import names what to pass, and never an option the
    user gave."""
    result = invoke("import", "planbench", str(BLOCKSWORLD_3), "--study", "s", "--store", str(tmp_path / "s.sqlite"))
    assert result.exit_code == 2
    assert "blocksworld_3" in result.output and "--instances DIR" in result.output
    assert "Traceback" not in result.output
    given = invoke("import", "planbench", str(BLOCKSWORLD_3), "--instances", str(tmp_path), "--study", "s",
                   "--store", str(tmp_path / "s.sqlite"))  # fmt: skip
    assert given.exit_code == 2
    assert "--instances" not in given.output and str(tmp_path) in given.output


def test_a_file_inside_a_checkout_is_read_with_its_checkout_where_its_problems_do_not_ship(tmp_path: Path) -> None:
    """No --planbench, no --instances: the blocksworld_3 file lies in a PlanBench checkout (its
    `llm_planning_analysis/` layout: configs/blocksworld_3.yaml, instances/blocksworld/generated_basic_3), which
    holds its problems; the shipped Blocksworld problems are another set."""
    layout = tmp_path / "LLMs-Planning" / "llm_planning_analysis"
    config = (SHIPPED / "config.yaml").read_text(encoding="utf-8")
    (layout / "configs").mkdir(parents=True)
    (layout / "configs" / "blocksworld_3.yaml").write_text(
        config.replace("instance_dir: blocksworld/generated_basic\n", "instance_dir: blocksworld/generated_basic_3\n"),
        encoding="utf-8",
    )
    shutil.copytree(PROBLEMS_3, layout / "instances" / "blocksworld" / "generated_basic_3")
    shutil.copyfile(SHIPPED / "domain.pddl", layout / "instances" / "blocksworld" / "generated_domain.pddl")
    results = layout / "results" / "blocksworld_3" / "gpt-4_chat"
    results.mkdir(parents=True)
    shutil.copyfile(BLOCKSWORLD_3, results / "task_1_plan_generation.json")
    store = tmp_path / "s.sqlite"
    result = invoke("import", "planbench", str(results / "task_1_plan_generation.json"), "--study", "s",
                    "--store", str(store))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert invoke("resume", "s", "--store", str(store), "--replay", "--no-progress").exit_code == 0
    rows = [json.loads(line) for line in invoke("export", "s", "--store", str(store)).output.splitlines() if line]
    recorded = json.loads(BLOCKSWORLD_3.read_text())["instances"]
    assert {row["instance"]: bool(row["sound_valid"]) for row in rows} == {
        str(i["instance_id"]): i["correct"] for i in recorded
    }
    assert "blocksworld_3 " in invoke("report", "s", "--store", str(store)).output


def test_reports_name_a_laid_out_checkout_config_by_its_planbench_name() -> None:
    """`--planbench ROOT` lays a config out as NAME-<short id>; tables show NAME, with the id only where two
    configs of one name differ in a study."""
    assert shown_domains(["mystery_blocksworld-26a793e04bb6", "blocksworld"]) == {
        "mystery_blocksworld-26a793e04bb6": "mystery_blocksworld",
        "blocksworld": "blocksworld",
    }
    two = ["blocksworld_3-c542f6aa86fd", "blocksworld_3-0123456789ab"]
    assert shown_domains(two) == {name: name for name in two}


T5_BLOCKSWORLD_3 = FIXTURES / "t5_blocksworld_3_gpt-4.json"  # plan-bench/results/blocksworld_3/gpt-4_chat @b008bc4


def test_a_3_block_t5_file_asks_the_generalized_problems_which_ship(tmp_path: Path) -> None:
    """PlanBench's t5 asks the config's `generalized_instance_dir`, `blocksworld/generated` for `blocksworld_3` as
    for `blocksworld` (`plan-bench/configs/blocksworld_3.yaml:2`): those problems ship, so no option is needed."""
    store = tmp_path / "s.sqlite"
    result = invoke("import", "planbench", str(T5_BLOCKSWORLD_3), "--study", "s", "--store", str(store))
    assert result.exit_code == 0, result.output
    assert invoke("resume", "s", "--store", str(store), "--replay", "--no-progress").exit_code == 0
    rows = [json.loads(line) for line in invoke("export", "s", "--store", str(store)).output.splitlines() if line]
    recorded = json.loads(T5_BLOCKSWORLD_3.read_text())["instances"]
    assert {r["instance"]: bool(r["sound_valid"]) for r in rows} == {
        str(i["instance_id"]): i["llm_correct"] for i in recorded
    }


def test_dataset_may_name_the_datasets_root_and_the_replay_finds_the_domain_under_it(tmp_path: Path) -> None:
    """`--dataset DIR --replay`: DIR the datasets root (or PlanBench's folder of domains) names the domain's folder
    under it; a set that is not there is refused at import, with nothing stored."""
    t7 = DATASETS / "planbench" / "tasks" / "blocksworld" / "gpt-4" / "task_7_plan_execution.json"
    records = json.loads(t7.read_text())["instances"][:3]
    copied = tmp_path / "task_7_plan_execution.json"  # outside the datasets, so DIR alone says where problems are
    copied.write_text(json.dumps({"task": "task_7_plan_execution", "engine": "gpt-4_chat", "domain": "blocksworld",
                                  "instances": records}))  # fmt: skip
    for n, root in enumerate((DATASETS, DATASETS / "planbench")):
        store = tmp_path / f"{n}.sqlite"
        done = invoke("import", "planbench", str(copied), "--dataset", str(root), "--study", "s", "--store",
                      str(store), "--replay", "--no-progress")  # fmt: skip
        assert done.exit_code == 0, done.output
        rows = [json.loads(line) for line in invoke("export", "s", "--store", str(store)).output.splitlines() if line]
        assert {r["instance"]: bool(r["sound_valid"]) for r in rows} == {
            str(i["instance_id"]): i["llm_correct"] for i in records
        }
    t5 = invoke("import", "planbench", str(T5_BLOCKSWORLD_3), "--dataset", str(DATASETS),
                     "--study", "s", "--store", str(tmp_path / "r.sqlite"))  # fmt: skip
    assert t5.exit_code == 0, t5.output  # t5 shares the shipped generalized problems
    bw3 = invoke("import", "planbench", str(BLOCKSWORLD_3), "--dataset", str(DATASETS), "--study", "s", "--store",
                 str(tmp_path / "b.sqlite"))  # fmt: skip
    assert bw3.exit_code == 2 and "blocksworld_3" in bw3.output and "Traceback" not in bw3.output


def test_reports_name_a_checkout_task_by_planbench_set_and_task() -> None:
    from critiquebench.reports.metrics import shown_domain

    assert shown_domain("/tmp/x/planbench-domains/blocksworld_3-63de69f85a27:t5") == "blocksworld_3:t5"
    assert shown_domain("blocksworld_3-63de69f85a27:t3") == "blocksworld_3:t3"
    assert shown_domain("blocksworld:t7") == "blocksworld:t7"
