"""The plan self-critique study's Table 2 (the LLM verifier on final answers) and Table 3 (by feedback)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.scripted_server import ScriptedServer
from tests.test_study_cli import game24_reply, invoke, report, run_args

# no sound-all: Game of 24 has no all-errors feedback in the self-verification study (000:238), so it is left out
SCHEMES = "standard,llm-llm:rounds=3,sound-binary:rounds=2,sound-first:rounds=2"


def test_final_verifier_and_feedback_tables(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        invoke(*run_args("critique", store, server, instances="901-906", schemes=SCHEMES))
    out = tmp_path / "rounds.jsonl"
    invoke("export", "critique", "--store", str(store), "--output", str(out))
    # Hand count: for each llm-llm run, the last round the LLM judged, against the sound verdict.
    last: dict[str, dict] = {}
    for line in out.read_text().splitlines():
        row = json.loads(line)
        if row["llm_verdict"] is not None and row["round"] >= last.get(row["instance"], {}).get("round", 0):
            last[row["instance"]] = row
    cells = {"tp": 0, "fp": 0, "tn": 0, "fn": 0}
    for row in last.values():
        said, valid = bool(row["llm_verdict"]), bool(row["sound_valid"])
        cells[("t" if said == valid else "f") + ("p" if said else "n")] += 1
    table2 = report("critique", store, "--table", "final-verifier")
    assert len(table2) == 1 and table2[0]["scheme"] == "llm-llm:rounds=3" and table2[0]["runs"] == 6
    assert {k: table2[0][k] for k in cells} == cells
    valid = cells["tp"] + cells["fn"]
    assert table2[0]["tpr"] == (cells["tp"] / valid if valid else None)
    table3 = report("critique", store, "--table", "feedback")
    assert [r["feedback"] for r in table3] == ["no feedback", "LLM critique", "binary", "first error"]
    accuracy = {r["scheme"]: r["accuracy"] for r in report("critique", store)}
    assert all(r["accuracy"] == accuracy[r["scheme"]] for r in table3)
    text = invoke("report", "critique", "--table", "final-verifier", "--store", str(store)).stdout
    assert "Table 2: the LLM verifier on final answers" in text and "TNR" in text
