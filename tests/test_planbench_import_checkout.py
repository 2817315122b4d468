"""`import planbench FILE --planbench ROOT`: PlanBench's other prompt styles, found in a checkout, replay offline.

The fixtures under tests/data/planbench/ are recorded PlanBench results files trimmed to a few instances (each
names its source file and commit in `_source`). The checkout is a PlanBench `plan-bench/` layout assembled from
the shipped dataset (`../shared/datasets/planbench/blocksworld`, which is PlanBench's config, domain and problems
byte for byte). The expected prompts are the recorded ones: a replay is all cache hits only when our prompt is
PlanBench's, byte for byte.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from tests.conftest import DATASETS

FIXTURES = Path(__file__).parent / "data" / "planbench"
SHIPPED = DATASETS / "planbench" / "blocksworld"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PlanBench checkout in its `plan-bench/` layout with problems 1-6 of its Blocksworld set."""
    root = tmp_path_factory.mktemp("LLMs-Planning")
    layout = root / "plan-bench"
    (layout / "configs").mkdir(parents=True)
    shutil.copyfile(SHIPPED / "config.yaml", layout / "configs" / "blocksworld.yaml")
    problems = layout / "instances" / "blocksworld" / "generated_basic"
    problems.mkdir(parents=True)
    shutil.copyfile(SHIPPED / "domain.pddl", layout / "instances" / "blocksworld" / "generated_domain.pddl")
    shutil.copyfile(SHIPPED / "optimal_plans.json", layout / "instances" / "blocksworld" / "info.json")
    for n in range(1, 7):
        shutil.copyfile(SHIPPED / "instances" / f"instance-{n}.pddl", problems / f"instance-{n}.pddl")
    return root


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def replayed(store: Path, study: str) -> dict[str, bool]:
    """Replay `study` and return each instance's final verdict; asserts no call left the cache."""
    result = invoke("resume", study, "--store", str(store), "--replay", "--no-progress")
    assert result.exit_code == 0, result.output
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM llm_events WHERE kind != 'hit'").fetchone()[0] == 0
    rows = [json.loads(line) for line in invoke("export", study, "--store", str(store)).output.splitlines() if line]
    last: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["round"] >= last.get(row["instance"], {"round": 0})["round"]:
            last[row["instance"]] = row
    return {k: bool(v["sound_valid"]) for k, v in last.items()}


def labels(fixture: str) -> dict[str, bool]:
    data = json.loads((FIXTURES / fixture).read_text())
    return {str(i["instance_id"]): bool(i.get("llm_correct", i.get("correct"))) for i in data["instances"]}


@pytest.mark.parametrize(
    ("fixture", "style"),
    [
        ("zero_shot_nl_claude-3-opus.json", "nl_zero_shot"),
        ("one_shot_pddl_gpt-4.json", "pddl_planbench"),
        ("zero_shot_pddl_2023_gpt-4.json", "pddl_zero_shot_2023"),
    ],
)
def test_each_prompt_style_is_recognised_and_replays_offline_with_planbench_labels(
    checkout: Path, tmp_path: Path, fixture: str, style: str
) -> None:
    store = tmp_path / "s.sqlite"
    result = invoke("import", "planbench", str(FIXTURES / fixture), "--planbench", str(checkout), "--study", "s",
                    "--store", str(store))
    assert result.exit_code == 0, result.output
    assert f"PlanBench's {style} prompt" in result.output
    assert replayed(store, "s") == labels(fixture)


def test_a_prompt_of_no_known_style_is_one_line_naming_the_nearest_style_and_the_differing_line(
    checkout: Path, tmp_path: Path
) -> None:
    data = json.loads((FIXTURES / "zero_shot_nl_claude-3-opus.json").read_text())
    for inst in data["instances"]:
        inst["query"] = inst["query"].replace("Put down a block\n", "Put a block down\n")
    drifted = tmp_path / "drifted.json"
    drifted.write_text(json.dumps(data))
    store = tmp_path / "s.sqlite"
    result = invoke("import", "planbench", str(drifted), "--planbench", str(checkout), "--study", "s",
                    "--store", str(store))
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert line.startswith("error: ") and "nearest: nl_zero_shot" in line
    assert "recorded 'Put a block down', ours 'Put down a block'" in line
    assert not store.exists() or sqlite3.connect(store).execute("SELECT count(*) FROM llm_calls").fetchone()[0] == 0


def test_a_file_whose_domain_the_checkout_lacks_names_the_configs_looked_for(checkout: Path, tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "zero_shot_nl_claude-3-opus.json").read_text())
    data["domain"] = "obfuscated_randomized_blocksworld"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    result = invoke("import", "planbench", str(other), "--planbench", str(checkout), "--study", "s",
                    "--store", str(tmp_path / "s.sqlite"))
    assert result.exit_code == 2
    assert "has no problems for domain 'obfuscated_randomized_blocksworld'" in result.output


def test_a_task_file_sent_an_older_intro_replays_with_it(tmp_path: Path) -> None:
    """PlanBench's GPT-4 Mystery t3 run was sent the first Mystery intro ("Harmony, Pain object"), which only
    the repository's first commit holds (domains/data/planbench_intros.yaml)."""
    fixture = "t3_mystery_2023_intro_gpt-4.json"
    store = tmp_path / "s.sqlite"
    result = invoke("import", "planbench", str(FIXTURES / fixture), "--study", "s", "--store", str(store),
                    "--dataset", str(DATASETS / "planbench" / "mystery_blocksworld"))
    assert result.exit_code == 0, result.output
    data = json.loads((FIXTURES / fixture).read_text())
    expected = {str(i["instance_id"]): bool(i["llm_correct_binary"]) for i in data["instances"]}
    assert replayed(store, "s") == expected


def test_labels_from_gpt4o_translations_replay_with_the_stored_translation(tmp_path: Path) -> None:
    """o1-mini's answers were labelled from GPT-4o's translation of each into a plan (`raw_translation`):
    the import reads the plan PlanBench stored for each answer; our sound reading differs on 7 and 44."""
    fixture = "zero_shot_nl_translated_o1-mini.json"
    store = tmp_path / "s.sqlite"
    result = invoke("import", "planbench", str(FIXTURES / fixture), "--study", "s", "--store", str(store),
                    "--dataset", str(SHIPPED))
    assert result.exit_code == 0, result.output
    assert "reading planbench-translation" in result.output
    assert replayed(store, "s") == labels(fixture)


def test_a_task_2_file_copied_out_of_the_checkout_finds_the_config_it_was_asked_with(tmp_path: Path) -> None:
    """Both layouts hold a `blocksworld_3.yaml`; only plan-bench's has the `domain_intro_cost` task 2 asks with
    (`plan-bench/configs/blocksworld_3.yaml`). A file in the checkout takes its own layout's; one copied out takes
    the config whose intro opens its recorded queries, so every call is PlanBench's and replays from the cache."""
    root = tmp_path / "LLMs-Planning"
    shutil.copytree(FIXTURES / "checkout", root)
    old, new = root / "llm_planning_analysis", root / "plan-bench"
    (new / "configs").mkdir(parents=True)
    shutil.copyfile(FIXTURES / "plan-bench_blocksworld_3.yaml", new / "configs" / "blocksworld_3.yaml")
    shutil.copytree(old / "instances" / "blocksworld", new / "instances" / "blocksworld")
    copied = tmp_path / "elsewhere" / "task_2_plan_optimality.json"
    copied.parent.mkdir()
    shutil.copyfile(FIXTURES / "t2_blocksworld_3_gpt-4.json", copied)
    store = tmp_path / "s.sqlite"
    result = invoke("import", "planbench", str(copied), "--study", "t2", "--planbench", str(root),
                    "--store", str(store))
    assert result.exit_code == 0, result.output
    assert "imported 3 recorded call(s)" in result.output
    labels = {str(i["instance_id"]): i["llm_correct"] for i in json.loads(copied.read_text())["instances"]}
    assert replayed(store, "t2") == labels  # every call from the cache, each verdict PlanBench's
