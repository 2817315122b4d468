"""The intrinsic self-critique paper's analyses (Figures 2-4) from a real store file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from critiquebench.reports.intrinsic import critic_by_step, shots_sweep, steps_curve
from tests.test_reports import CLI, add_run, new_store

SCHEMES = ["intrinsic:steps=2", "intrinsic:critic=sound,steps=2", "intrinsic:shots=1,steps=2"]


def test_steps_shots_and_critic_figures(tmp_path: Path) -> None:
    db = new_store(tmp_path / "s.sqlite", "s", ["blocksworld"], SCHEMES)
    wrong, right = {"sound_valid": 0, "llm_verdict": 0}, {"sound_valid": 1, "llm_verdict": 1, "stopped": 1}
    add_run(db, "s", "blocksworld", SCHEMES[0], "1", [wrong, wrong, right])  # correct at step 2
    add_run(db, "s", "blocksworld", SCHEMES[0], "2", [{"sound_valid": 0, "llm_verdict": 1, "stopped": 1}])
    add_run(db, "s", "blocksworld", SCHEMES[1], "1", [wrong, right])  # the oracle: correct at step 1
    add_run(db, "s", "blocksworld", SCHEMES[1], "2", [right])
    add_run(db, "s", "blocksworld", SCHEMES[2], "1", [wrong, wrong, wrong])

    curve = {(p.scheme, p.step): (p.correct, p.total) for p in steps_curve(db, "s")}
    assert [curve[(SCHEMES[0], s)] for s in (0, 1, 2)] == [(0, 2), (0, 2), (1, 2)]
    assert [curve[(SCHEMES[1], s)] for s in (0, 1)] == [(1, 2), (2, 2)]
    wald = {(p.scheme, p.step): p.wald for p in steps_curve(db, "s")}  # the paper's "±" beside each step
    assert wald[(SCHEMES[1], 0)] == pytest.approx(1.959963984540054 * (0.25 / 2) ** 0.5)
    assert wald[(SCHEMES[1], 1)] == 0.0

    sweep = [(p.series, p.shots, p.correct, p.total) for p in shots_sweep(db, "s")]
    assert ("intrinsic:steps=2", 1, 0, 1) in sweep and ("intrinsic:steps=2", 16, 1, 2) in sweep

    critic = {p.step: p for p in critic_by_step(db, "s") if p.scheme == SCHEMES[0]}
    assert (critic[0].n, critic[0].passed, critic[0].valid) == (2, 1, 0)  # a false pass at step 0
    assert (critic[0].precision, critic[0].accuracy) == (0.0, 0.5)
    assert (critic[2].precision, critic[2].recall) == (1.0, 1.0)


def test_report_command_prints_the_figures(tmp_path: Path) -> None:
    db = new_store(tmp_path / "s.sqlite", "s", ["blocksworld"], SCHEMES[:1])
    add_run(db, "s", "blocksworld", SCHEMES[0], "1", [{"sound_valid": 1, "llm_verdict": 1, "stopped": 1}])
    db.conn.commit()
    png = tmp_path / "fig.png"
    out = subprocess.run(
        [
            str(CLI),
            "report",
            "s",
            "--table",
            "critic-steps",
            "--format",
            "json",
            "--figure",
            str(png),
            "--store",
            str(tmp_path / "s.sqlite"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip  (one subprocess: the CLI wires the three tables alike)
    rows = json.loads(out.stdout)
    assert rows and rows[0]["table"] == "critic-steps" and "precision" in rows[0]
    assert png.read_bytes()[:4] == b"\x89PNG" and "Figures 2-4" in out.stderr
