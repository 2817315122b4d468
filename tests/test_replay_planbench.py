"""Replaying PlanBench's recorded GPT-4 runs through our graphs lands on the published outcomes, offline.

Every turn must be a cache hit: that only happens when our prompts and feedback are PlanBench's, byte for byte.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATASETS

REFERENCE = DATASETS / "planbench" / "reference"
BACKPROMPTING = REFERENCE / "gpt-4_blocksworld_backprompting_first_error.json"
ONE_SHOT = REFERENCE / "gpt-4_blocksworld_one_shot.json"
LOGISTICS = REFERENCE / "gpt-4_logistics_backprompting_first_error.json"
CLI = [sys.executable, "-m", "critiquebench.cli"]


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`critiquebench ARGS` run in this process (typer's CliRunner), its outcome as the process's would be: exit
    status, stdout, stderr (an exception nothing caught printed there, as the interpreter prints it). A fresh
    interpreter cost 2-4 s of CPU a command importing; these tests are about what the commands do, not the process
    (the replay killed midway, tests/test_replay_direct.py, keeps one)."""
    from typer.testing import CliRunner

    from critiquebench.cli import app

    done = CliRunner().invoke(app, list(args))
    stderr = done.stderr
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        stderr += "".join(traceback.format_exception(done.exception))
    result = subprocess.CompletedProcess([*CLI, *args], done.exit_code, done.stdout, stderr)
    if check and result.returncode != 0:
        raise AssertionError(f"critiquebench {' '.join(args)} exited {result.returncode}:\n{result.stderr}")
    return result


def new_calls(store: Path) -> int:
    """Calls that reached an endpoint (as opposed to cache hits)."""
    with sqlite3.connect(store) as db:
        return db.execute("SELECT count(*) FROM llm_events WHERE kind != 'hit'").fetchone()[0]


def report(store: Path, study: str, *extra: str) -> list[dict[str, Any]]:
    return json.loads(cli("report", study, "--store", str(store), "--format", "json", *extra).stdout)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store holding both recorded studies, imported and replayed: one by `import` then `resume`, the other
    by `import --replay`, one command."""
    store = tmp_path_factory.mktemp("replay") / "store.sqlite"
    cli("import", "planbench", str(BACKPROMPTING), "--study", "gpt4-backprompt", "--store", str(store))
    cli("resume", "gpt4-backprompt", "--store", str(store), "--no-progress")
    done = cli("import", "planbench", str(ONE_SHOT), "--study", "gpt4-oneshot", "--store", str(store), "--replay",
               "--no-progress")  # fmt: skip
    assert "Replaying it:" in done.stdout and "Table 1" in done.stdout, done.stdout
    assert "study gpt4-oneshot: 500 runs: 500 done now, 0 done before or elsewhere, 0 failed" in done.stderr
    return store


def test_backprompting_replay_reproduces_41_of_50_turn_by_turn(replayed: Path) -> None:
    [row] = report(replayed, "gpt4-backprompt")
    assert (row["scheme"], row["correct"], row["total"]) == ("sound-first", 41, 50)
    assert new_calls(replayed) == 0 and row["llm_calls"] == row["cache_hits"]
    recorded = {str(x["instance_id"]): x["steps"] for x in json.loads(BACKPROMPTING.read_text())["instances"]}
    with sqlite3.connect(replayed) as db:
        rounds = dict(db.execute("SELECT instance_id, rounds FROM runs WHERE study = 'gpt4-backprompt'"))
    assert rounds == recorded  # each conversation ends after the recorded number of steps


def test_one_shot_replay_reproduces_157_of_500(replayed: Path) -> None:
    [row] = report(replayed, "gpt4-oneshot")
    assert (row["scheme"], row["correct"], row["total"]) == ("standard", 157, 500)
    assert new_calls(replayed) == 0


def test_reimport_adds_nothing_and_report_compares_studies(replayed: Path) -> None:
    again = cli("import", "planbench", str(BACKPROMPTING), "--study", "gpt4-backprompt", "--store", str(replayed))
    assert "imported 0 recorded call(s)" in again.stdout
    compared = report(replayed, "gpt4-oneshot", "--compare", "gpt4-backprompt")
    assert compared, "a comparison has rows"


def test_a_drifting_prompt_stops_the_replay_with_the_first_differing_message(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    cli("import", "planbench", str(ONE_SHOT), "--study", "drift", "--store", str(store))
    with sqlite3.connect(store) as db:  # ask for today's intro, which the recorded 2023 run did not send
        config = json.loads(db.execute("SELECT config FROM studies WHERE name = 'drift'").fetchone()[0])
        config["instances"] = {"blocksworld": "2"}
        config["domain_options"] = {"blocksworld": {"prompt_style": "nl"}}
        db.execute("UPDATE studies SET config = ? WHERE name = 'drift'", [json.dumps(config)])
    result = cli("resume", "drift", "--store", str(store), "--no-progress", check=False)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "ReplayMiss" in output
    assert "+Once you stack a block on top of a second block, the second block is no longer clear." in output
    assert new_calls(store) == 0


def test_logistics_import_takes_the_recorded_intro_and_example_plans(tmp_path: Path) -> None:
    """The run was sent PlanBench's intro with an example per action and Fast Downward's example plans (no
    optimal-plan file ships for Logistics): the study keeps both, so our first prompts are the recorded ones."""
    from critiquebench.domains import get_domain, load_instances

    store = tmp_path / "store.sqlite"
    cli("import", "planbench", str(LOGISTICS), "--study", "logistics", "--store", str(store))
    with sqlite3.connect(store) as db:
        config = json.loads(db.execute("SELECT config FROM studies WHERE name = 'logistics'").fetchone()[0])
    options = config["domain_options"]["logistics"]
    assert options["intro"] == "zero_shot" and options["replay"]["reading"] == "planbench"
    assert options["replay"]["example_plans"]["1"][0] == "(fly-airplane a1 l0-0 l1-0)"
    domain = get_domain("logistics", **options)
    recorded = {x["instance_id"]: x["messages"][:2] for x in json.loads(LOGISTICS.read_text())["instances"]}
    for inst in load_instances(domain, "2,5,9", Path(config["dataset"])):
        assert domain.prompt(inst) == recorded[int(inst.id)]


def test_logistics_backprompting_replay_reproduces_35_of_50_turn_by_turn(tmp_path: Path) -> None:
    """Every conversation replays to its recorded end through PlanBench's reading (objects the problem lacks,
    `None` feedback after an answer cut off mid-action), its retries, its stops (no plan read, context window)."""
    store = tmp_path / "store.sqlite"
    imported = cli("import", "planbench", str(LOGISTICS), "--study", "logistics", "--store", str(store))
    assert "imported 332 recorded call(s)" in imported.stdout
    cli("resume", "logistics", "--store", str(store), "--no-progress")
    [row] = report(store, "logistics")
    assert (row["correct"], row["total"], row["failed"]) == (35, 50, 0)
    assert new_calls(store) == 0 and row["llm_calls"] == row["cache_hits"] == 332
    recorded = {str(x["instance_id"]): x for x in json.loads(LOGISTICS.read_text())["instances"]}
    with sqlite3.connect(store) as db:
        runs = {i: (r, bool(c)) for i, r, c in db.execute("SELECT instance_id, rounds, correct FROM runs")}
    # PlanBench's steps leave out the answer it could not read a plan from (15, 34, 35), where its loop stopped
    assert runs == {i: (x["steps"] + int(x["could_not_extract"]), x["correct"]) for i, x in recorded.items()}


def test_mystery_backprompting_named_mystery_imports_without_a_checkout_and_replays_its_outcome(tmp_path: Path) -> None:
    """PlanBench's 2023 Mystery file names its domain "mystery/generated_basic"; the import stopped at "no dataset
    folder for domain 'mystery'" although the shipped dataset holds it as mystery_blocksworld."""
    mystery = REFERENCE / "gpt-4_mystery_backprompting_first_error.json"
    store = tmp_path / "store.sqlite"
    imported = cli("import", "planbench", str(mystery), "--study", "mystery", "--store", str(store))
    assert "mystery_blocksworld" in imported.stdout
    cli("resume", "mystery", "--store", str(store), "--replay", "--no-progress")
    [row] = report(store, "mystery")
    recorded = json.loads(mystery.read_text())["instances"]
    assert (row["correct"], row["total"], row["failed"]) == (sum(bool(x["correct"]) for x in recorded), 50, 0)
    assert row["correct"] == 5 and new_calls(store) == 0


def test_planbench_reading_is_the_replay_protocol_and_the_sound_reader_stays_for_live_studies() -> None:
    """GPT-4 named `airplane_1` where only `airplane_0` exists: PlanBench reads the line and reports VAL's unmet
    preconditions; our sound reader does not take an action on an object the problem lacks."""
    from critiquebench.domains import get_domain, load_instances

    answer = "load package_0 into truck_0 at location_0_0\nload package_0 into airplane_1 at location_0_0\n[PLAN END]"
    planbench = get_domain("logistics", reading="planbench")
    [inst] = load_instances(planbench, "44", DATASETS / "planbench" / "logistics")
    verdict = planbench.verify(inst, answer)
    assert planbench.feedback(inst, verdict, "first") == (
        "The above plan is invalid. The following action at step 2 has unmet preconditions:\n"
        "load package_0 into airplane_1 at location_0_0\nThe unmet preconditions are:\n"
        "airplane_1 is at location_0_0 and package_0 is at location_0_0"
    )
    sound = get_domain("logistics")
    assert sound.verify(inst, answer).answer == ["(load-truck p0 t0 l0-0)"]
    # an answer cut off mid-action: VAL took no plan, PlanBench sent None; a line it cannot read ends the loop
    cut = planbench.verify(inst, "load package_0 into truck_0 at location_0_0\nfly airplane_0 from location_0_0")
    assert planbench.feedback(inst, cut, "first") == "None" and not cut.final
    assert planbench.verify(inst, "load package_0 into location_0_0").final
    with pytest.raises(ValueError, match="Logistics reader"):
        get_domain("blocksworld", reading="planbench")


def test_importing_a_file_that_is_not_planbench_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "results.json"
    bogus.write_text(json.dumps({"rows": []}))
    result = cli("import", "planbench", str(bogus), "--study", "x", "--store", str(tmp_path / "s.sqlite"), check=False)
    assert result.returncode == 2
    assert "not a PlanBench results file" in result.stderr


def _truth(value: Any) -> bool:
    return value is True or str(value) == "True"


def test_paired_compare_and_stops_on_gpt4s_recorded_runs(replayed: Path) -> None:
    """GPT-4 with the sound verifier's first-error feedback against GPT-4 one-shot, on the instances both ran (the
    backprompting set), computed from the recorded files directly; and each backprompting run in the stops class its
    recorded conversation puts it in."""
    from scipy.stats import binomtest

    import critiquebench as cb

    loops = {str(x["instance_id"]): x for x in json.loads(BACKPROMPTING.read_text())["instances"]}
    once = {str(x["instance_id"]): _truth(x["correct"]) for x in json.loads(ONE_SHOT.read_text())["instances"]}
    shared = sorted(loops.keys() & once.keys())
    a_only = sum(1 for i in shared if _truth(loops[i]["correct"]) and not once[i])
    b_only = sum(1 for i in shared if once[i] and not _truth(loops[i]["correct"]))
    [row] = report(replayed, "gpt4-backprompt", "--table", "compare", "--compare", "gpt4-oneshot")
    assert (row["scheme_a"], row["scheme_b"], row["n"]) == ("sound-first", "standard", len(shared)) == (
        "sound-first", "standard", 50)  # fmt: skip
    assert (row["a_only"], row["b_only"]) == (a_only, b_only) == (41, 0)
    assert row["mcnemar_p"] == pytest.approx(binomtest(b_only, a_only + b_only, 0.5).pvalue)
    assert row["significant"] is True and row["ci_low"] <= row["difference"] <= row["ci_high"]
    assert (row["difference"], row["ci_low"], row["ci_high"]) == pytest.approx((0.82, 0.70, 0.92))  # docs/reports.md
    assert row["unpaired"] == len(once) - len(shared)

    [stops] = report(replayed, "gpt4-backprompt", "--table", "stops")
    right = sum(_truth(x["correct"]) for x in loops.values())
    assert (stops["accepted_correct"], stops["exhausted_wrong"], stops["runs"]) == (right, 50 - right, 50)
    assert stops["accepted_wrong"] == stops["exhausted_correct"] == stops["lost"] == 0  # a sound verifier
    per_run = cb.stops("gpt4-backprompt", store=replayed, runs=True)
    for run in per_run.itertuples():
        recorded = loops[run.instance]
        assert run.stop == ("accepted_correct" if _truth(recorded["correct"]) else "exhausted_wrong"), run.instance
    early = sum(1 for x in loops.values() if not _truth(x["correct"]) and int(x["steps"]) < 15)
    assert stops["ended_early"] == early
