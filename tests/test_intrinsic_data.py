"""Intrinsic self-critique's data as the paper describes it (paper 001): many shots drawn from a training pool
disjoint from the test instances (001:130, Figure 3 up to 64 shots, 001:149-151), Blocksworld 3-7 in the layout
of its traces (b1..b7, D.1 001:323-345), Logistics* and Logistics-hard at the paper's bounds (001:161), and the
paper's "±" (mostly a Wald interval, not Table 3's: `report --published` checks each) beside our Wilson
interval."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.planning import PlanningDomain
from critiquebench.domains.planning.generators import PAPER_SIZES, generate_problems, problem_key
from critiquebench.domains.planning.instances import training_pool
from critiquebench.domains.planning.strips import PlanningError
from critiquebench.reports.metrics import wald_half_width, wilson
from tests.conftest import DATASETS

EXAMPLE = "Example of a problem and its solution (plan):\n"  # B.1's example label (001:249)


def shown_problems(prompt: str) -> list[str]:
    """The example problems a B.1 prompt shows."""
    return [part.split("\n\nThe plan without formatting:")[0] for part in prompt.split(EXAMPLE)[1:]]


def test_64_shots_are_64_distinct_training_problems_none_a_test_instance() -> None:
    domain = get_domain("blocksworld_3_7")
    assert isinstance(domain, PlanningDomain)
    tests = domain.generate(20, 3)
    test_keys = {problem_key(i.data["problem"]) for i in tests}
    for inst in tests[:2]:
        (message,) = domain.prompt(inst, "pddl", shots=64)
        shown = shown_problems(message["content"])
        assert len(shown) == 64 and len({problem_key(p) for p in shown}) == 64
        assert not test_keys & {problem_key(p) for p in shown}
        (sixteen,) = domain.prompt(inst, "pddl", shots=16)
        assert shown_problems(sixteen["content"]) == shown[:16]  # the same order in every ablation: nested
    with pytest.raises(PlanningError, match="65 planning examples asked for, but the training pool .* holds 64"):
        domain.prompt(tests[0], "pddl", shots=65)


def test_folder_datasets_draw_shots_from_the_instances_the_study_leaves_out() -> None:
    domain = get_domain("blocksworld", prompt_style="pddl")
    chosen = load_instances(domain, "1-5", DATASETS)
    ids = {i.id for i in chosen}
    for inst in chosen:
        assert len(training_pool(inst)) == 496 and not ids & {e["id"] for e in training_pool(inst)}
    (message,) = domain.prompt(chosen[0], "pddl", shots=32)
    texts = {i.data["problem"].strip() for i in chosen}
    assert len(shown_problems(message["content"])) == 32 and not texts & set(shown_problems(message["content"]))


def test_blocksworld_3_7_is_laid_out_as_the_papers_traces() -> None:
    for text in generate_problems("blocksworld_3_7", 30, 5):
        objects = re.search(r"\(:objects ([^)]*)\)", text)
        assert objects is not None
        names = objects.group(1).split()
        assert sorted(names, key=lambda b: int(b[1:])) == [f"b{i}" for i in range(1, len(names) + 1)]
        assert 3 <= len(names) <= 7 and "(:goal (and\n" in text and text.endswith("\n))\n)\n")


def test_logistics_star_and_hard_sizes_are_the_papers_bounds() -> None:
    for cities, places, packages, airplanes in PAPER_SIZES["logistics_star"]:
        assert cities * places <= 4 and packages <= 2 and airplanes == 1
    for cities, places, packages, _airplanes in PAPER_SIZES["logistics_hard"]:
        assert cities <= 4 and places == 2 and packages <= 8
    assert {s[0] for s in PAPER_SIZES["logistics_hard"]} == {2, 3, 4}  # one city needs no airplane (ours)
    assert {s[2] for s in PAPER_SIZES["logistics_hard"]} == set(range(1, 9))
    domain = get_domain("logistics_star")
    for inst in domain.generate(5, 1):
        assert domain.verify(inst, domain.answer_text(domain.reference_plan(inst), "pddl")).valid


def test_the_papers_plus_minus_is_a_wald_interval() -> None:
    # Table 1: Blocksworld 3-5 No-Critique 49.8±4.0 (001:158) and Table 2: Blocksworld* 3-7 57.2±3.1 (001:169)
    assert round(100 * wald_half_width(299, 600), 1) == 4.0
    assert round(100 * wald_half_width(572, 1000), 1) == 3.1
    low, high = wilson(299, 600)
    assert (round(100 * low, 1), round(100 * high, 1)) == (45.8, 53.8)


def test_published_says_which_of_the_papers_plus_minus_are_wald() -> None:
    """`report --published` sets every "±" of 001's Tables 1-6 against a Wald half-width at the n the paper gives
    (001:81, 83, 171, 196): Table 3's are none (Grid 9.5±0.0 at no n), the Hard rows fit no one n."""
    from critiquebench.reports.published import plus_minus_rows

    rows = {r.where: r for r in plus_minus_rows()}
    assert len(rows) == 30 and all(r.paper == "001" for r in rows.values())
    assert rows["Table 1, Mystery BW: ± (001:159)"].agrees
    assert rows["Table 4, 5 votes: ± (001:200)"].ours == "n=1000: ±3.1 ±2.2"
    grid = rows["Table 3, Grid: ± (001:177)"]
    assert grid.ours == "n=21: ±12.5 ±21.3" and "9.5±0.0 (fits no n up to 2000)" in grid.reason
    assert not any(r.agrees for w, r in rows.items() if w.startswith("Table 3"))
    assert "93.2±1.8 (fits n 709-794)" in rows["Table 2, Logistics*: ± (001:165)"].reason
    assert rows["Table 2, Logistics Hard: ± (001:166)"].reason.endswith("the whole row: no n up to 2000")
    # outside Table 3, the rows with a "±" that is no Wald half-width at the stated n (to its 0.1)
    off = {int(w[-4:-1]) for w, r in rows.items() if not r.agrees and not w.startswith("Table 3")}
    assert off == {158, 165, 166, 167, 168, 204, 205, 207, 219, 279}


def test_report_prints_the_wald_half_width_beside_wilson(tmp_path: Path) -> None:
    from critiquebench.reports.metrics import table1
    from critiquebench.store.db import connect
    from critiquebench.store.results import ensure_schema, save_study, upsert_run

    db = connect(tmp_path / "s.sqlite")
    ensure_schema(db)
    save_study(db, "s", {"name": "s", "domains": ["blocksworld"], "schemes": ["standard"]})
    for i in range(10):
        upsert_run(db, f"s/blocksworld/standard/{i}/0", study="s", domain="blocksworld", scheme="standard",
                   instance_id=str(i), status="done", correct=int(i < 4))  # fmt: skip
    (row,) = table1(db, "s")
    assert row.wald == pytest.approx(1.959963984540054 * (0.4 * 0.6 / 10) ** 0.5)


def test_prompt_scheme_shows_64_distinct_training_examples_none_a_test_instance() -> None:
    """`critiquebench prompt --scheme intrinsic:shots=64`: what the scheme really sends, 64 distinct examples,
    none of them a test instance of the set; one more than the pool holds is a one-line error."""
    from typer.testing import CliRunner

    from critiquebench.cli import app

    args = ["prompt", "--domain", "blocksworld_3_7", "--instance", "gen:1:1"]
    result = CliRunner().invoke(app, [*args, "--scheme", "intrinsic:shots=64"])
    assert result.exit_code == 0, result.stderr
    shown = shown_problems(result.stdout.split("--- user ---", 1)[1])
    assert len(shown) == 64 and len({problem_key(p) for p in shown}) == 64
    tests = {problem_key(p) for p in generate_problems("blocksworld_3_7", 1000 + 1, 1)}  # gen:1000:1 and smaller
    assert not tests & {problem_key(p) for p in shown}
    failed = CliRunner().invoke(app, [*args, "--scheme", "intrinsic:shots=65"])
    assert failed.exit_code != 0 and "65 planning examples asked for" in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1


def test_standard_is_the_papers_16_shot_no_critique_baseline_on_its_sets() -> None:
    """The No-Critique baseline is step 0 with "a 16-shot planning prompt" (001:145; 16 chosen, 001:149; Table 5,
    001:216): `standard` on the paper's generated sets sends B.1 with 16 training examples unless the study says
    otherwise (`domain_options.NAME.shots`); PlanBench's domains in PDDL keep our 3."""
    from typer.testing import CliRunner

    from critiquebench.cli import app

    for name in ("blocksworld_3_7", "logistics_star"):
        result = CliRunner().invoke(app, ["prompt", "--domain", name, "--instance", "gen:1:1"])
        assert result.exit_code == 0, result.stderr
        assert result.stdout.count("Example of a problem and its solution (plan):") == 16, name  # 001:249
    three = CliRunner().invoke(app, ["prompt", "--domain", "blocksworld", "--instance", "2", "--style", "pddl"])
    assert three.stdout.count("Example of a problem and its solution (plan):") == 3
