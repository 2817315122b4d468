"""`import refinement`: the validator-guided refinement study's recorded runs (paper 004), replayed through `refine`.

The fixtures are trimmed from Singh8899/LLM-Planning-Leonardo@315ac15 (tests/data/refinement/SOURCE.md): both
models' replies on ten Blocksworld problems, the problems with the study's `blocksworld_domain.pddl` as it is,
and the rows of Mistral's runs from the study's dataset CSV. The study's VAL verdicts are what its files record:
its loop (`model_manager.py` `generate_with_validation`) rejected every round before the last and accepted the
last where it stopped before round 4; its CSV's `solves_problem` is VAL's verdict on Mistral's last reply.
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.importers.refinement import read_recording
from critiquebench.store.db import opened
from critiquebench.store.reads import study_rounds
from tests.test_study_cli import invoke

DATA = Path(__file__).resolve().parent / "data" / "refinement"
PROBLEMS = DATA / "problem_dataset" / "problems_blocksworlds"
FOLDER = PROBLEMS / "blocksworld"
OUTPUTS = DATA / "generated_plans" / "plans"
CSV = DATA / "generated_datasets_metamodel" / "blocksworld_generations_dataset_mistral.csv"
MODELS = {"llama": "llama-3.3-70b", "mistral": "mistral-small-3.1"}

# The study's prompts.py, `system_prompt_pddl` and `ppdl_problem_prompt(domanin, problem)` (with its
# `pddl_description`), restated from its text.
SYSTEM = """You are an expert PDDL planner. Always output only valid PDDL domain and problem definitions.
Follow strict PDDL syntax for `:domain`, `:requirements`, `:types`, `:predicates`, `:actions`, `:objects`, `:init`, `:goal` and other PDDL predicates.
A PDDL model has two parts: a DOMAIN describing the schema and a PROBLEM describing a specific instance.
Maintain a current state as you select actions.
Only perform actions whose preconditions are satisfied.
Your output should be a coherent and valid sequence of actions that leads from the initial state `:init` to the goal state `:goal`.
Do not include any narrative or explanation—output only plan.
"""  # noqa: E501
DESCRIPTION = """
Problem description: you are an agent capable of solving the planning problems described using the PDDL syntax.
In the following problem the agent can perform some actions (described later) to achieve a specific goal.
"""


def study_prompt(domain: str, problem: str) -> str:
    return f"""{DESCRIPTION}
 
=== DOMAIN DEFINITION ===
{domain}
=== PROBLEM DEFINITION ===
{problem}

Can you BUILD A PLAN?
Do not include any narrative or explanation—output only the chosen actions for the PLAN.
The actions should have no ':action' prefix since it is in the domain definition and should not be outputted in the plan text.
"""  # noqa: W291, E501


def study_request(reason: str) -> str:
    return f"The plan you provided is invalid. {reason}. Please provide a corrected plan."


def recorded(model: str) -> dict[str, int]:
    """Problem -> the rounds its run made ("Generated in N iterations.")."""
    folder = OUTPUTS / f"model_outputs_{model}_blocksword" / "blocksworld"
    return {p.name[: -len("_plan.txt")]: int(re.search(r"Generated in (\d+) iterations\.", p.read_text())[1])
            for p in folder.glob("*_plan.txt")}  # fmt: skip


def reply(model: str, problem: str, index: int) -> str:
    return (OUTPUTS / f"model_outputs_{model}_blocksword" / "blocksworld" / f"{problem}_temp{index}.txt").read_text()


def csv_rows() -> dict[str, dict[str, str]]:
    with CSV.open(newline="", encoding="utf-8") as fp:
        return {row["problem"]: row for row in csv.DictReader(fp)}


def test_the_study_s_folder_is_a_domain_as_it_is_and_refine_sends_the_study_s_prompt() -> None:
    domain = get_domain(str(FOLDER))
    instances = load_instances(domain, "all", FOLDER)
    assert sorted(i.id for i in instances) == sorted(p.stem for p in FOLDER.glob("pddl_*.pddl"))
    domain_text = (FOLDER / "blocksworld_domain.pddl").read_text()  # the study's read_file: comments and all
    for instance in instances:
        want = study_prompt(domain_text, (FOLDER / f"{instance.id}.pddl").read_text())
        assert domain.prompt(instance, "refine") == [{"role": "system", "content": SYSTEM},
                                                      {"role": "user", "content": want}]  # fmt: skip


def test_each_round_is_recorded_under_the_study_s_request_with_val_s_reason() -> None:
    recording, runs, bad = read_recording(OUTPUTS / "model_outputs_mistral_blocksword", PROBLEMS, model="m",
                                          study="s")  # fmt: skip
    assert not bad and len(runs) == 7
    calls = {c.position: c for c in recording.calls}
    rows = csv_rows()
    for run in runs:
        first = calls[f"blocksworld/{run.problem} round 1"].messages
        for number in range(2, run.rounds + 1):
            sent = calls[f"blocksworld/{run.problem} round {number}"].messages
            assert sent[:2] == first and len(sent) == 2 * number
            assert sent[-2] == {"role": "assistant", "content": reply("mistral", run.problem, number - 2)}
            # The reason VAL (without -v) printed, as the code cut it: a failed step's "Plan failed to execute"
            # is where `VAL -v` counted its violations (the CSV); a plan VAL cannot build checks nothing
            row = rows[run.problem]
            violations = int(row[f"gen{number - 1}_logical_violations"])
            checked = int(row[f"gen{number - 1}_consecutive_valid_steps"])
            if violations:
                assert sent[-1]["content"] == study_request("Plan failed to execute")
            elif checked == 0:
                assert sent[-1]["content"] in (study_request("Bad plan description!"), study_request("Plan invalid"))
            else:  # every step executed, the goal missed
                assert float(row[f"gen{number - 1}_valid_action_percent"]) == 100.0
                assert sent[-1]["content"] == study_request("Plan invalid")
    # the four kinds the fixtures hold: a failed step, a missed goal, an undefined action (`on-table`), a reply
    # cut off mid-action
    assert calls["blocksworld/pddl_4_1 round 2"].messages[-1]["content"] == study_request("Plan failed to execute")
    assert calls["blocksworld/pddl_4_6 round 2"].messages[-1]["content"] == study_request("Plan invalid")
    assert calls["blocksworld/pddl_5_19 round 4"].messages[-1]["content"] == study_request("Plan invalid")
    assert calls["blocksworld/pddl_9_13 round 2"].messages[-1]["content"] == study_request("Bad plan description!")


@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_replayed_run_stops_at_its_recorded_round_with_the_study_s_verdicts(tmp_path: Path, model: str
                                                                                 ) -> None:  # fmt: skip
    store = str(tmp_path / "s.sqlite")
    out = invoke("import", "refinement", str(OUTPUTS / f"model_outputs_{model}_blocksword" / "blocksworld"),
                 "--problems", str(PROBLEMS), "--model", MODELS[model], "--study", model, "--store", store,
                 "--replay", "--no-progress")  # fmt: skip
    assert "0 failed" in out.stderr and "LLM calls: 0 new" in out.stderr, out.stderr
    runs = recorded(model)
    rows = csv_rows()
    seen: dict[str, list[dict]] = {}
    with opened(store) as db:
        for rec in study_rounds(db, model, done_only=True):
            seen.setdefault(rec["instance_id"], []).append(rec)
    assert sorted(seen) == sorted(runs)
    for problem, rounds in runs.items():
        made = seen[problem]
        assert [r["round"] for r in made] == list(range(1, rounds + 1)) and made[-1]["stopped"] == 1
        assert [r["answer"] for r in made] == [reply(model, problem, i) for i in range(rounds)]
        for number, rec in enumerate(made, start=1):
            if number < rounds:
                study = False
            elif rounds < 4:
                study = True
            elif model == "mistral":
                study = rows[problem]["solves_problem"] == "True"
            else:
                continue  # Llama's fourth replies: the study recorded no verdict on them
            assert bool(rec["sound_valid"]) is study, (problem, number)
    assert any(r < 4 for r in runs.values()) and any(r == 4 for r in runs.values())


def test_an_imported_study_feeds_the_confidence_networks_with_the_study_s_features(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite")
    invoke("import", "refinement", str(OUTPUTS / "model_outputs_mistral_blocksword"), "--problems", str(PROBLEMS),
           "--model", "mistral", "--study", "m", "--store", store, "--replay", "--no-progress")  # fmt: skip
    features = tmp_path / "f.csv"
    invoke("export", "m", "--features", "--format", "csv", "--output", str(features), "--store", store)
    rows = csv_rows()
    with features.open(newline="", encoding="utf-8") as fp:
        exported = list(csv.DictReader(fp))
    assert len(exported) == sum(recorded("mistral").values())  # one row per reply
    for row in exported:  # the study's `VAL -v` features of the same reply (its CSV)
        study = rows[row["problem"]]
        i = row["iteration"]
        assert float(row["valid_share"]) == pytest.approx(float(study[f"gen{i}_valid_action_percent"]))
        assert row["valid_prefix"] == study[f"gen{i}_consecutive_valid_steps"]
        assert row["violations"] == study[f"gen{i}_logical_violations"]
    trained = invoke("confidence", "train", "m", "--model", "mn4", "--protocol", "paper", "--output",
                     str(tmp_path / "mn4.pkl"), "--store", store)  # fmt: skip
    assert "mn4 (paper) trained on 7 runs" in trained.stdout + trained.stderr
    assert (tmp_path / "mn4.pkl").is_file()


def test_unreadable_runs_are_reported_by_position_and_the_rest_replays(tmp_path: Path) -> None:
    replies = tmp_path / "model_outputs_llama_blocksword" / "blocksworld"
    shutil.copytree(OUTPUTS / "model_outputs_llama_blocksword" / "blocksworld", replies)
    plan = replies / "pddl_4_20_plan.txt"
    plan.write_bytes(plan.read_bytes()[:40])  # cut off before "Generated in 2 iterations."
    garbled = replies / "pddl_4_6_temp1.txt"
    garbled.write_bytes(garbled.read_bytes()[:30] + b"\xff\xfe" + garbled.read_bytes()[30:])
    (replies / "pddl_4_19_temp2.txt").unlink()
    # a run our VAL reading would end early: round 3's solution (with its prose) as round 1's reply too
    shutil.copy(replies / "pddl_4_12_temp2.txt", replies / "pddl_4_12_temp0.txt")
    # ... and one it would not end where the study's VAL did: another problem's plan as the accepted reply
    wrong = (replies / "pddl_5_1_temp0.txt").read_text()
    (replies / "pddl_4_1_temp0.txt").write_text(wrong)
    (replies / "pddl_4_1_plan.txt").write_text(wrong + "\n\nGenerated in 1 iterations.")
    problems = tmp_path / "problems"
    shutil.copytree(FOLDER, problems)
    (problems / "pddl_5_11.pddl").unlink()
    store = str(tmp_path / "s.sqlite")
    done = invoke("import", "refinement", str(replies), "--problems", str(problems), "--model", "llama", "--study",
                  "l", "--store", store, "--replay", "--no-progress", check=1)  # fmt: skip
    skipped = [line for line in done.stderr.splitlines() if line.startswith("skipped")]
    assert skipped[0].startswith("skipped blocksworld/pddl_4_1: round 1: the study's VAL accepted it, our VAL "
                                 "reading does not (")  # fmt: skip
    assert skipped[1:] == [
        "skipped blocksworld/pddl_4_6: pddl_4_6_temp1.txt is not UTF-8 text (byte 30)",
        "skipped blocksworld/pddl_4_12: round 1: our VAL reading accepts it, the study's VAL did not (its loop "
        "went on)",
        "skipped blocksworld/pddl_4_19: pddl_4_19_temp2.txt is missing (the run made 4 round(s))",
        'skipped blocksworld/pddl_4_20: pddl_4_20_plan.txt does not end with "Generated in N iterations." (cut off?)',
        f"skipped blocksworld/pddl_5_11: no problem file pddl_5_11.pddl in {problems}",
    ]
    assert "imported 1 run(s)" in done.stdout  # pddl_5_1
    assert "LLM calls: 0 new" in done.stderr and "0 failed" in done.stderr, done.stderr


def test_a_folder_without_the_study_s_files_is_one_line(tmp_path: Path) -> None:
    done = invoke("import", "refinement", str(tmp_path), "--problems", str(PROBLEMS), "--model", "m", "--study",
                  "s", "--store", str(tmp_path / "s.sqlite"), check=2)  # fmt: skip
    assert done.stderr.strip() == f"error: {tmp_path}: no *_plan.txt files (the study's pddl_N_K_plan.txt) nor " \
                                  "folders of them"  # fmt: skip
    replies = OUTPUTS / "model_outputs_llama_blocksword"
    done = invoke("import", "refinement", str(replies), "--problems", str(tmp_path), "--model", "m", "--study",
                  "s", "--store", str(tmp_path / "s.sqlite"), check=2)  # fmt: skip
    assert done.stderr.strip().startswith(f"error: {tmp_path}: no domain file")
