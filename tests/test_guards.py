"""Methodology guards: sampling at temperature 0 is a warning, the shipped paper studies sample at the paper's
temperature, small-n cells and one-class verifier rows are flagged in the tables (and in the rows the viewer
reads), and the main job's live column says it is a smoke test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from critiquebench.reports.findings import findings_grid
from critiquebench.reports.guards import SMALL_N
from critiquebench.store.db import opened
from critiquebench.studies.config import read_toml
from critiquebench.studies.guards import temperature_warnings
from critiquebench.viewer.data import study as viewer_study
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import invoke

ROOT = Path(__file__).resolve().parents[1]


def test_sampling_at_temperature_zero_is_a_warning(tmp_path: Path) -> None:
    base = ["run", "t", "--domains", "game24", "--instances", "gen:2:1", "--base-url", "http://127.0.0.1:9/v1",
            "--store", str(tmp_path / "s.sqlite"), "--dry-run"]  # fmt: skip
    warned = invoke(*base, "--schemes", "standard,sampling:k=3,self-consistency:k=3").stderr
    assert "warning: sampling:k=3 draws its 3 samples at temperature 0" in warned
    assert "warning: self-consistency:k=3 draws its 3 samples at temperature 0" in warned
    for fixed in (["--schemes", "sampling:k=3,temperature=1.0"], ["--schemes", "sampling:k=3", "--temperature", "0.7"]):
        assert "warning" not in invoke(*base, *fixed).stderr


def test_the_shipped_studies_sample_at_a_temperature_above_zero() -> None:
    checked = 0
    for path in sorted((ROOT / "studies").glob("*.toml")):
        values = read_toml(path)
        schemes = values.get("schemes", [])
        assert temperature_warnings(schemes, values.get("temperature", 0.0)) == [], path.name
        checked += any(s.startswith(("sampling", "self-consistency")) for s in schemes)
    assert checked >= 3  # main, every_scheme, self_verification_loops


def always_wrong(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """A model that never solves Game of 24 and, as verifier, calls every answer wrong: right every time."""
    if "Please check if the following expression" in messages[-1]["content"]:
        return json.dumps({"feedback": "the expression is wrong", "correct": False})
    return "1 + 2 + 3 + 4"


def test_small_cells_and_one_class_verifier_rows_are_flagged(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=always_wrong) as server:
        invoke("run", "w", "--domains", "game24", "--instances", "gen:2:1", "--schemes", "standard,llm-llm:rounds=2",
               "--model", "scripted", "--base-url", server.base_url, "--store", str(store))  # fmt: skip
    table1 = invoke("report", "w", "--store", str(store)).stdout
    assert "0.0% (0/2) *" in table1 and f"fewer than {SMALL_N} finished runs" in table1
    table2 = invoke("report", "w", "--table", "2", "--store", str(store)).stdout
    assert "100.0% (4/4) †" in table2 and "every answer judged was sound-invalid" in table2
    rows = json.loads(invoke("report", "w", "--table", "2", "--format", "json", "--store", str(store)).stdout)
    assert [(r["one_class"], r["fnr"]) for r in rows] == [(True, None)]
    with opened(store, readonly=True) as db:
        shown = viewer_study(db, "w")  # what the viewer's page reads
        assert {r["small_n"] for r in shown["table1"]} == {True}
        assert [r["one_class"] for r in shown["table2"]] == [True]
        grid = findings_grid(db, ["w"], "w")
    assert grid.headers[-1] == "scripted (live smoke test)"
    assert "a smoke test that the pipeline runs end to end" in grid.note


@pytest.mark.parametrize("n", [SMALL_N])
def test_a_cell_of_the_threshold_size_is_not_flagged(tmp_path: Path, n: int) -> None:
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=always_wrong) as server:
        invoke("run", "big", "--domains", "game24", "--instances", f"gen:{n}:1", "--schemes", "standard",
               "--model", "scripted", "--base-url", server.base_url, "--store", str(store))  # fmt: skip
    (row,) = json.loads(invoke("report", "big", "--format", "json", "--store", str(store)).stdout)
    assert (row["total"], row["small_n"]) == (n, False)
    assert "*" not in invoke("report", "big", "--store", str(store)).stdout.split("Accuracy =")[0]
