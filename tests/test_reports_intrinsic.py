"""The intrinsic self-critique paper's analyses (Figures 2-4) from a real store file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.reports.intrinsic import critic_by_step, shots_sweep, steps_curve
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer
from tests.test_intrinsic import CRITIC_MARK, REQUEST
from tests.test_reports import add_run, new_store
from tests.test_study_cli import invoke, report

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


# -- Figures 2-4 of a study run through the CLI on the scripted server ---------------------------------------

STUDY_SCHEMES = [
    "standard",
    "intrinsic:shots=1,steps=2",
    "intrinsic:shots=2,steps=2",
    "intrinsic-oracle:shots=1,steps=2",
    "intrinsic-sc:shots=1,steps=1",
]  # canonical (sorted parameters), as the store names the cells
FALSE_PASS = "gen-1-2"  # the scripted critic passes this instance's wrong plan


class Model:
    """Plans: a wrong one at step 0 (the prompt has no revise request yet), the reference plan after. Critic:
    "correct" for the reference plan, and for `FALSE_PASS`'s wrong plan too; "wrong" otherwise."""

    def __init__(self) -> None:
        domain = get_domain("blocksworld_3_7")
        self.gold = {i.id: (i.data["problem"].strip(), domain.answer_text(domain.reference_plan(i), "pddl"))
                     for i in load_instances(domain, "gen:2:1", DATASETS)}  # fmt: skip

    def __call__(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        text = messages[-1]["content"]
        iid, (_, plan) = next((i, g) for i, g in self.gold.items() if g[0] in text)
        if CRITIC_MARK in text:
            shown = text.split(CRITIC_MARK, 1)[1]
            return "the plan is correct" if plan in shown or iid == FALSE_PASS else "the plan is wrong"
        return plan if REQUEST in text else "(pick-up a)\n[PLAN END]"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small study (2 generated instances) shared by every case: its store file."""
    store = tmp_path_factory.mktemp("intrinsic") / "s.sqlite"
    with ScriptedServer(reply=Model()) as server:
        invoke("run", "fig", "--domains", "blocksworld_3_7", "--instances", "gen:2:1", "--schemes",
               ",".join(STUDY_SCHEMES), "--model", "scripted", "--base-url", server.base_url, "--dataset",
               str(DATASETS), "--concurrency", "2", "--store", str(store))  # fmt: skip
    return store


def by(rows: list[dict[str, Any]], *keys: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(r[k] for k in keys): r for r in rows}


def test_steps_give_every_curve_of_figure_2(study: Path) -> None:
    rows = by(report("fig", study, "--table", "steps"), "scheme", "step")
    got = {(s, step): (r["curve"], r["correct"], r["total"]) for (s, step), r in rows.items()}
    assert got == {
        ("standard", 0): ("No-Critique", 0, 2),
        **{(STUDY_SCHEMES[1], s): ("Self-Critique", c, 2) for s, c in ((0, 0), (1, 1), (2, 1))},
        **{(STUDY_SCHEMES[2], s): ("Self-Critique", c, 2) for s, c in ((0, 0), (1, 1), (2, 1))},
        **{(STUDY_SCHEMES[3], s): ("Oracle", c, 2) for s, c in ((0, 0), (1, 2), (2, 2))},
        **{(STUDY_SCHEMES[4], s): ("Self-Critique + SC (5 runs)", c, 2) for s, c in ((0, 0), (1, 1))},
    }
    final = {r["scheme"]: r["correct"] for r in report("fig", study)}  # the last step is the run's output
    assert all(final[s] == max(r["correct"] for (k, _), r in rows.items() if k == s) for s in STUDY_SCHEMES[1:])


def test_shots_give_self_critique_oracle_and_no_critique_series(study: Path) -> None:
    rows = {(r["series"], r["shots"]): (r["curve"], r["correct"]) for r in report("fig", study, "--table", "shots")}
    assert rows == {
        ("standard", 16): ("No-Critique", 0),  # the generated sets' default: B.1 with 16 examples
        ("No-Critique (step 0)", 1): ("No-Critique", 0),
        ("No-Critique (step 0)", 2): ("No-Critique", 0),
        ("intrinsic:steps=2", 1): ("Self-Critique", 1),
        ("intrinsic:steps=2", 2): ("Self-Critique", 1),
        ("intrinsic-oracle:steps=2", 1): ("Oracle", 2),
        ("intrinsic-sc:steps=1", 1): ("Self-Critique + SC (5 runs)", 1),
    }


def test_critic_steps_count_the_false_pass(study: Path) -> None:
    rows = by(report("fig", study, "--table", "critic-steps"), "scheme", "step")
    cells = {k: (r["n"], r["passed"], r["valid"], r["precision"], r["recall"]) for k, r in rows.items()}
    assert cells[(STUDY_SCHEMES[1], 0)] == (2, 1, 0, 0.0, None)  # one wrong plan passed
    assert cells[(STUDY_SCHEMES[1], 1)] == (1, 1, 1, 1.0, 1.0)
    assert cells[(STUDY_SCHEMES[3], 0)] == (2, 0, 0, None, None)  # the oracle passes nothing wrong
    assert cells[(STUDY_SCHEMES[4], 0)] == (10, 5, 0, 0.0, None)  # 5 runs x 2 instances
    assert rows[(STUDY_SCHEMES[3], 1)]["curve"] == "Oracle"


TITLES = {"steps": "Figure 2 data", "shots": "Figure 3 data", "critic-steps": "Figure 4 data"}


@pytest.mark.parametrize("fmt", ["table", "md", "csv", "json"])
@pytest.mark.parametrize("table", list(TITLES))
def test_every_format_prints_every_scheme_and_the_figure_is_a_png(
    study: Path, tmp_path: Path, table: str, fmt: str
) -> None:
    png = tmp_path / f"{table}.png"
    out = invoke("report", "fig", "--table", table, "--format", fmt, "--store", str(study), "--figure", str(png))
    text = out.stdout
    names = ["intrinsic:steps=2", "intrinsic-oracle:steps=2", "intrinsic-sc:steps=1"] if table == "shots" else \
        STUDY_SCHEMES[1:]  # fmt: skip
    assert all(name in text for name in names), text
    if fmt in ("table", "md"):
        assert TITLES[table] in text and "Oracle" in text
    if fmt == "json":
        assert {r["table"] for r in json.loads(text)} == {table}
    if fmt == "csv":
        assert text.splitlines()[0].startswith("study,domain,")
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
