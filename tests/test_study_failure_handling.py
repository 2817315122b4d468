"""Where the self-verification study's loop failed on its critic's reply, a run ends as that instance's record
ended (issue 41, audit M3/M4): kstechly/gpt-and-i `response_generation.py@b583c3c9:92-96` wraps `backprompt` in
`try: ... except: failed_instances.append(instance); break` (an empty reply: l.84-87), so nothing more is sent
for the instance, and `game24.evaluate@b583c3c9:82-84` scores it by its last generated answer
(`responses[::2][-1]`); @d883df86:99-100 calls `backprompt` with no `try` (a crash, same record). The expected
calls and texts are typed from the study's code below, not read from ours, and sent through the scripted
server; the run's record is read from its store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_server import ScriptedServer
from tests.test_self_verification_transcript import END, START, SYSTEM, calls_of
from tests.test_study_cli import DATASETS, invoke

ANSWER = "(6 - 1) * (4 - 1) = 24"  # puzzle 1 is "1 1 4 6"; this evaluates to 15


def study_critic_prompt(numbers: str, model_response: str) -> str:
    """game24.backprompt "llm", odd turn (@b583c3c9:137-141; "llm-cot" @d883df86:207-213 adds two sentences)."""
    query = (f"Using each of the numbers {numbers} exactly as many times as they appear in the list and the basic "
             "arithmetic operations (+ - * /), it is possible to write an expression that evaluates to 24. ")
    query += "Please check if the following expression uses only the correct numbers (and no others) and evaluates to 24: " + model_response  # noqa: E501
    query += "\nIf it is not correct, please give feedback on what is wrong and how to correct it."
    query += '\nRespond only in JSON format as described below:\n{\n   "feedback": "feedback",\n   "correct": boolean}\nEnsure that Python\'s json.loads can parse this.'  # noqa: E501
    return query


def study_loop_raises(reply: str) -> bool:
    """game24.backprompt "llm", even turn (@b583c3c9:126-135) on `reply`, as `send_query` returned it (stripped;
    an empty reply failed before it, l.84-87): True where the study's loop failed the instance."""
    if not reply.strip():
        return True
    try:
        llm_json = json.loads(reply.strip())
        if llm_json["correct"]:
            return False
        "" + llm_json["feedback"]
        return False
    except Exception:
        return True


# Critic replies the study's loop failed on: no "feedback" key (the scripted replies of the audit's 104-call run),
# a fenced object, prose around it, an empty reply
FAILING = ['{"evaluation": "15", "correct": false}',
           '```json\n{"feedback": "It evaluates to 15.", "correct": false}\n```',
           "Sure! {'feedback': 'Uses 5', 'correct': False}", ""]  # fmt: skip


def run_record(store: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with sqlite3.connect(store) as db:
        db.row_factory = sqlite3.Row
        run = dict(db.execute("SELECT status, final_round, correct, rounds, llm_calls FROM runs").fetchone())
        rounds = [dict(r) for r in db.execute("SELECT round, llm_verdict, stopped FROM attempts ORDER BY round")]
    return run, rounds


@pytest.mark.parametrize("verdict", ["lenient", "study"])
@pytest.mark.parametrize("critique", FAILING)
def test_a_critic_reply_the_study_failed_on_ends_the_run(tmp_path: Path, verdict: str, critique: str) -> None:
    assert study_loop_raises(critique)
    study = (f'domains = ["game24"]\nschemes = ["llm-llm:rounds=3"]\ndataset = "{DATASETS}"\n[instances]\n'
             f'game24 = "1"\n[domain_options.game24]\nform = "transcript"\nverdict = "{verdict}"\n')  # fmt: skip
    sent = calls_of(tmp_path, "run", study, lambda m: critique if m[-1]["content"].startswith("Using each") else ANSWER)
    # the study: the generation prompt, the critic's prompt, then nothing (instance failed)
    assert sent == [[{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
                    for text in (START, study_critic_prompt("1 1 4 6", ANSWER))]  # fmt: skip
    run, rounds = run_record(tmp_path / "run.sqlite")
    # scored by its last generated answer, as `evaluate` scored the failed instance; no LLM verdict recorded
    assert run == {"status": "done", "final_round": 1, "correct": 0, "rounds": 1, "llm_calls": 2}
    assert rounds == [{"round": 1, "llm_verdict": None, "stopped": 1}]


def test_a_readable_critique_goes_on_as_the_study_s_loop_did(tmp_path: Path) -> None:
    critique = '{"feedback": "It evaluates to 15.", "correct": false}'
    assert not study_loop_raises(critique)
    study = (f'domains = ["game24"]\nschemes = ["llm-llm:rounds=2"]\ndataset = "{DATASETS}"\n[instances]\n'
             'game24 = "1"\n[domain_options.game24]\nform = "transcript"\n')  # fmt: skip
    sent = calls_of(tmp_path, "run", study, lambda m: critique if m[-1]["content"].startswith("Using each") else ANSWER)
    assert len(sent) == 3  # round 2's critic call is round 1's request again: answered from the cache
    run, rounds = run_record(tmp_path / "run.sqlite")
    assert (run["status"], run["final_round"]) == ("done", 2) and [r["llm_verdict"] for r in rounds] == [0, 0]


@pytest.mark.parametrize("verdict", ["lenient", "study"])
def test_the_cot_loop_hands_the_critique_back_lower_cased(tmp_path: Path, verdict: str) -> None:
    """M3: game24.backprompt "llm-cot" @d883df86:192-205 reads the first {...} lower-cased and appends its
    "feedback" to `concat_trace(instance_output, divisor=2)` (l.203-206; concat_trace l.24-28: the last
    generation prompt + answer + "[ANSWER END]\\n")."""
    critique = '[Thoughts] 5 * 3 = 15\n[Answer] {"feedback": "It Evaluates To 15", "correct": false}'
    study = (f'domains = ["game24"]\nschemes = ["llm-llm-cot:rounds=2"]\ndataset = "{DATASETS}"\n[instances]\n'
             f'game24 = "1"\n[domain_options.game24]\nform = "transcript"\nverdict = "{verdict}"\n')  # fmt: skip
    sent = calls_of(tmp_path, "run", study, lambda m: critique if m[-1]["content"].startswith("Using each") else ANSWER)
    backprompt = START + ANSWER + "[ANSWER END]\n"
    backprompt += "Feedback: This is not correct.\n"
    backprompt += "it evaluates to 15"
    backprompt += f"\n\nWith this feedback, please try again. {END}"
    assert sent[2] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": backprompt}]


def test_reports_count_the_runs_the_study_s_code_failed_on_apart(tmp_path: Path) -> None:
    """gpt-and-i scored a failed instance by its last generated answer (`game24.evaluate@b583c3c9:82-84`) and
    listed it apart (`response_generation.py@b583c3c9:94`, printed l.116: "Failed instances: [...]"): the run
    stays in the accuracy, its status done, and `report` shows the count in every format, Table 1 and stops."""
    study = (f'domains = ["game24"]\nschemes = ["llm-llm:rounds=3"]\ndataset = "{DATASETS}"\n[instances]\n'
             'game24 = "1-2"\n[domain_options.game24]\nform = "transcript"\n')  # fmt: skip

    def answer(messages: list[dict[str, Any]]) -> str:
        text = messages[-1]["content"]
        if not text.startswith("Using each"):
            return ANSWER
        # puzzle 1's critic reply has no "feedback" key (the study's loop failed on it); puzzle 2's is readable
        return FAILING[0] if "numbers 1 1 4 6 " in text else '{"feedback": "", "correct": true}'

    toml, store = tmp_path / "run.toml", tmp_path / "run.sqlite"
    toml.write_text(study, encoding="utf-8")
    with ScriptedServer(reply=lambda messages, params: answer(messages)) as server:
        ran = invoke("run", "t", "--config", str(toml), "--model", "scripted", "--base-url", server.base_url,
                     "--store", str(store))  # fmt: skip
    # the run's summary line says it, as the study printed "Failed instances: [...]" (l.116)
    assert "2 done now (1 where the study's own code failed on a reply)" in " ".join(ran.stderr.split())
    with sqlite3.connect(store) as db:
        marked = db.execute("SELECT instance_id, status, correct, study_failed FROM runs ORDER BY instance_id")
        assert marked.fetchall() == [("1", "done", 0, 1), ("2", "done", 0, None)]
        assert db.execute("SELECT round, study_failed FROM attempts WHERE study_failed = 1").fetchall() == [(1, 1)]
    for table in ("1", "stops"):
        rows = json.loads(invoke("report", "t", "--table", table, "--format", "json", "--store", str(store)).stdout)
        assert [(r["total"] if table == "1" else r["runs"], r["study_failed"]) for r in rows] == [(2, 1)]
        csv = invoke("report", "t", "--table", table, "--format", "csv", "--store", str(store)).stdout.splitlines()
        assert dict(zip(csv[0].split(","), csv[1].split(","), strict=True))["study_failed"] == "1"
        for fmt, bar in (("table", "\u2502"), ("md", "|")):
            out = invoke("report", "t", "--table", table, "--format", fmt, "--store", str(store)).stdout
            # the column is the last of the detail (Table 1) or stops grid, its note says what it counts
            row = [line for line in out.splitlines() if "llm-llm:rounds=3" in line][-1]
            assert [c.strip() for c in row.split(bar) if c.strip()][-1] == "1", out
            assert "the study's own code failed on a reply" in " ".join(out.split())
