"""PlanBench's PDDL backprompting runs replay offline as PlanBench ran them (issue 24, item 1).

PlanBench's `back_prompting_parallel.py` sent each backprompting query with a window of one exchange: the first
prompt (after a system message only where the run had one), the last answer and the feedback on it; each step's
`sent_messages` records it. The feedback came from `full_validator`, a module the repository does not hold, so
the replay hands back the recorded feedback and our sound verifier judges every answer.

Fixtures (tests/data/planbench/, each naming its source file and commit in `_source`): o1-preview on Mystery
Blocksworld-3 (instance 57 sends the same window three times and gets "No plan." twice, then a plan) and
gpt-4o-mini on Blocksworld-hard (a system message first; PlanBench stopped after 2 answers). The checkout under
tests/data/planbench/checkout/ holds PlanBench's configs, domain files and those instances, byte for byte.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.domains import Instance, get_domain
from critiquebench.domains.planning.strips import PlanningError

FIXTURES = Path(__file__).parent / "data" / "planbench"
CHECKOUT = FIXTURES / "checkout"
O1 = "backprompting_pddl_window_o1-preview.json"
MINI = "backprompting_pddl_window_system_gpt-4o-mini.json"


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def import_file(source: Path, store: Path) -> Any:
    """`critiquebench import planbench SOURCE` as study "s" into `store`: click's result."""
    return invoke("import", "planbench", str(source), "--planbench", str(CHECKOUT), "--study", "s", "--store",
                  str(store))  # fmt: skip


def edited(tmp_path: Path, data: dict[str, Any]) -> Path:
    """A results file changed from a fixture, written to `tmp_path`."""
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path


def imported(tmp_path: Path, fixture: str | dict[str, Any]) -> tuple[Path, str]:
    """A fixture (its name, or its data as a test changed it) imported into a new store; the store and output."""
    store = tmp_path / "s.sqlite"
    result = import_file(FIXTURES / fixture if isinstance(fixture, str) else edited(tmp_path, fixture), store)
    assert result.exit_code == 0, result.output
    return store, result.output


def replay_rows(store: Path) -> dict[str, list[dict[str, Any]]]:
    """Replay study "s" offline; every round's row by instance, in round order. Asserts no call left the cache."""
    result = invoke("resume", "s", "--store", str(store), "--replay", "--no-progress")
    assert result.exit_code == 0, result.output
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM llm_events WHERE kind != 'hit'").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM runs WHERE status != 'done'").fetchone()[0] == 0
    rows: dict[str, list[dict[str, Any]]] = {}
    for line in invoke("export", "s", "--store", str(store)).output.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows.setdefault(row["instance"], []).append(row)
    return {k: sorted(v, key=lambda r: r["round"]) for k, v in rows.items()}


def recorded(fixture: str) -> dict[str, dict[str, Any]]:
    return {str(i["instance_id"]): i for i in json.loads((FIXTURES / fixture).read_text())["instances"]}


@pytest.mark.parametrize("fixture", [O1, MINI])
def test_every_recorded_answer_replays_in_planbench_window_and_ends_at_its_label(tmp_path: Path, fixture: str) -> None:
    store, output = imported(tmp_path, fixture)
    assert "sound-first:history=last" in output and "window of one exchange" in output
    assert "full_validator" in output
    rows = replay_rows(store)
    for ident, inst in recorded(fixture).items():
        answers = [m["content"] for m in inst["messages"] if m["role"] == "assistant"]
        # every recorded answer came back, in its order (the calls were PlanBench's windows, byte for byte)
        assert [r["answer"] for r in rows[ident]] == answers
        assert bool(rows[ident][-1]["sound_valid"]) == bool(inst["act_correct"])
        # our sound verifier judges each answer as PlanBench's validator did (its stored verdict per step)
        stored = [inst["step_wise_dict"][str(k)]["sound_verifier_json"]["validation_info"]["is_valid_plan"]
                  for k in range(len(answers))]
        assert [bool(r["sound_valid"]) for r in rows[ident]] == stored


def test_the_same_window_sent_again_is_the_next_sample_of_that_request(tmp_path: Path) -> None:
    """Instance 57: "No plan." thrice, so the 2nd and 3rd feedback windows are the same messages; PlanBench's
    model (temperature 1) answered "No plan." and then a valid plan. Both recorded answers replay."""
    store, _ = imported(tmp_path, O1)
    rows = replay_rows(store)["57"]
    assert [r["answer"] for r in rows[:3]] == ["No plan."] * 3
    assert rows[3]["answer"].startswith("[PLAN]\n(feast b a)") and rows[3]["sound_valid"]
    inst = recorded(O1)["57"]
    # the feedback handed back is the recorded text, as sent
    assert rows[0]["feedback"] == inst["messages"][2]["content"]
    assert rows[0]["feedback"].startswith("The above plan is invalid.  These are the unmet goal conditions:\n")


def test_runs_without_a_system_message_send_none_and_runs_with_one_keep_it(tmp_path: Path) -> None:
    store, _ = imported(tmp_path / "o1", O1)
    with sqlite3.connect(store) as db:
        config = json.loads(db.execute("SELECT config FROM studies WHERE name = 's'").fetchone()[0])
    [options] = config["domain_options"].values()
    assert options["replay"]["system"] is False
    store, output = imported(tmp_path / "mini", MINI)
    assert "after its system message" in output
    with sqlite3.connect(store) as db:
        config = json.loads(db.execute("SELECT config FROM studies WHERE name = 's'").fetchone()[0])
    [options] = config["domain_options"].values()
    assert "system" not in options["replay"]
    # PlanBench stopped gpt-4o-mini's runs after 2 answers (`iterations`); every failure of the file shows it
    assert config["schemes"] == ["sound-first:history=last,rounds=2"]
    assert replay_rows(store)["1"][-1]["round"] == 2


def test_a_new_answer_gets_no_invented_feedback(tmp_path: Path) -> None:
    """The feedback's wording is not published: an answer the run did not record is an error saying so."""
    store, _ = imported(tmp_path, O1)
    with sqlite3.connect(store) as db:
        config = json.loads(db.execute("SELECT config FROM studies WHERE name = 's'").fetchone()[0])
    [(folder, options)] = config["domain_options"].items()
    domain = get_domain(folder, **options)
    [inst] = domain.load("57", domain.folder)
    verdict = domain.verify(Instance(inst.domain, inst.id, inst.data), "(attack a)")
    assert not verdict.valid  # our verifier still judges any answer
    with pytest.raises(PlanningError, match=r"full_validator.*not publish"):
        domain.assess(Instance(inst.domain, inst.id, inst.data), "(attack a)")


def test_a_conversation_sent_otherwise_than_the_window_is_left_out_and_named(tmp_path: Path) -> None:
    """One conversation whose recorded windows break the protocol is left out, named with its step; the others
    import. A file where every conversation breaks it is refused in one line, nothing stored."""
    data = json.loads((FIXTURES / O1).read_text())
    data["instances"][0]["step_wise_dict"]["1"]["sent_messages"] = data["instances"][0]["messages"][:1]
    store, output = imported(tmp_path, data)
    assert "left out instance 57: step 1: the recorded sent_messages are not" in output
    assert set(replay_rows(store)) == {"68", "1"}
    data["instances"] = data["instances"][:1]
    store = tmp_path / "refused.sqlite"
    result = import_file(edited(tmp_path, data), store)
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert "instance 57 step 1" in line and "window of one" in line
    assert not store.exists() or sqlite3.connect(store).execute("SELECT count(*) FROM llm_calls").fetchone()[0] == 0


def test_after_an_empty_answer_the_step_records_hold_the_next_calls_windows(tmp_path: Path) -> None:
    """o1-preview's mystery_new run (22 conversations): answer 2 is empty (a failed call, judged as the empty plan
    and answered with the unmet goals); from there each step's `sent_messages` is the window of the call after
    it (instance 41: step 2 records [prompt, "", feedback], what was sent for answer 3). Read so, the windows are
    PlanBench's and every answer replays. Instance 22's conversation lost the failed call's assistant turn (two
    feedback turns in a row; the next call was sent both): it is left out and named."""
    fixture = "backprompting_pddl_window_empty_answer_o1-preview.json"
    inst = recorded(fixture)["41"]
    assert inst["step_wise_dict"]["2"]["sent_messages"][1] == {"role": "assistant", "content": ""}
    store, output = imported(tmp_path, fixture)
    assert "left out instance 22: step 2: the conversation holds two feedback turns" in output
    rows = replay_rows(store)
    assert set(rows) == {"41"}
    answers = [m["content"] for m in inst["messages"] if m["role"] == "assistant"]
    assert [r["answer"] for r in rows["41"]] == answers and answers[2] == ""
    assert bool(rows["41"][-1]["sound_valid"]) == bool(inst["act_correct"]) is False


def test_failing_conversations_stopped_at_different_counts_each_end_at_their_last_answer(tmp_path: Path) -> None:
    """Where the failing conversations of a file stopped after different numbers of answers (o1-preview's
    mystery_new run: 2 to 15), no one `iterations` count is the file's: each run ends at its recorded last
    answer, so no call beyond the recording is asked for. Here gpt-4o-mini's instance 1 is cut to its first
    answer and the feedback on it; instance 2 keeps its two answers."""
    data = json.loads((FIXTURES / MINI).read_text())
    inst = data["instances"][0]
    first = next(k for k, m in enumerate(inst["messages"]) if m["role"] == "assistant")
    inst["messages"] = inst["messages"][: first + 2]
    inst["step_wise_dict"] = {"0": inst["step_wise_dict"]["0"]}
    store, _ = imported(tmp_path, data)
    rows = replay_rows(store)  # every run done, every call from the cache
    assert [r["round"] for r in rows["1"]] == [1] and [r["round"] for r in rows["2"]] == [1, 2]
    assert not rows["1"][-1]["sound_valid"]


def test_a_conversation_ending_at_an_answer_it_gave_before_ends_at_its_recorded_round(tmp_path: Path) -> None:
    """o1-preview's mystery_new run, instances 74 and 80: the last of their four answers is one they gave before
    (74: "No plan possible." twice; 80: answer 2 again), and that earlier turn was sent feedback, so the answer
    cannot mark where PlanBench's run ended; the run's conversations stopped after different counts (56: three), so
    no one round limit does either. Each ends at its recorded count of answers: every recorded call replays, none
    beyond (before: a second sample of the last window was asked for, not recorded, and the run failed)."""
    fixture = "backprompting_pddl_window_answer_again_o1-preview.json"
    data = recorded(fixture)
    for ident in ("74", "80"):
        answers = [m["content"] for m in data[ident]["messages"] if m["role"] == "assistant"]
        assert len(answers) == 4 and answers.count(answers[-1]) == 2
    store, _ = imported(tmp_path, fixture)
    rows = replay_rows(store)  # every run done, every call from the cache
    for ident, inst in data.items():
        answers = [m["content"] for m in inst["messages"] if m["role"] == "assistant"]
        assert [r["answer"] for r in rows[ident]] == answers
        assert bool(rows[ident][-1]["sound_valid"]) == bool(inst["act_correct"]) is False
