"""The intrinsic self-critique paper's generated sets: every size yields solvable problems whose shortest plans
(breadth-first search; A* with an admissible bound for Logistics-hard) our validator accepts; seeds reproduce
them. The Logistics bound is checked against breadth-first search where that search is quick."""

from __future__ import annotations

import random

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.contract import Instance
from critiquebench.domains.planning import PAPER_PLANNING, PlanningDomain
from critiquebench.domains.planning.generators import PAPER_SIZES, logistics_problem, sized_problem
from critiquebench.domains.planning.logistics_bound import logistics_bound
from critiquebench.domains.planning.planner import _bfs, _Space, find_plan, optimal_plan
from critiquebench.domains.planning.strips import Task
from critiquebench.domains.planning.validator import check_plan


@pytest.mark.parametrize("kind", sorted(PAPER_SIZES))
def test_every_size_has_a_plan_the_validator_accepts(kind: str) -> None:
    domain = get_domain(kind)
    assert isinstance(domain, PlanningDomain) and domain.generator == kind
    for size in PAPER_SIZES[kind]:
        text = sized_problem(kind, size, random.Random(f"{kind}{size}"))
        task = domain.task(Instance(kind, "x", {"problem": text}))
        assert not task.goal_reached(task.init), size
        plan = optimal_plan(task)
        assert plan is not None, (kind, size)
        assert check_plan(task, [(a.name, a.args) for a in plan]).valid, (kind, size)
        assert len(plan) <= len(find_plan(task)), (kind, size)


def task_of(text: str) -> Task:
    return get_domain("logistics_hard").task(Instance("logistics_hard", "x", {"problem": text}))


@pytest.mark.parametrize("seed", range(6))
def test_logistics_astar_plans_are_as_short_as_breadth_first_ones(seed: int) -> None:
    # Small worlds (2-3 cities, 1-3 places each, 1-3 packages) where breadth-first search is quick: A* finds
    # plans of the same length, and the bound never exceeds the remaining steps of a shortest plan.
    rng = random.Random(seed)
    task = task_of(logistics_problem(rng.randint(2, 3), rng.randint(1, 3), rng.randint(1, 3), 1, rng))
    h = logistics_bound(task)
    assert h is not None
    shortest = _bfs(task, _Space(task), 200_000)
    plan = optimal_plan(task)
    assert shortest is not None and plan is not None
    assert len(plan) == len(shortest)
    state = task.init
    for i, action in enumerate(shortest):
        assert h(state) <= len(shortest) - i
        state = action.apply(state)


def test_logistics_bound_only_where_its_assumptions_hold() -> None:
    rng = random.Random(0)
    assert logistics_bound(task_of(logistics_problem(3, 2, 4, 2, rng))) is None  # two airplanes: breadth-first
    blocks = get_domain("blocksworld_3_7")
    text = sized_problem("blocksworld_3_7", (3,), rng)
    assert logistics_bound(blocks.task(Instance("blocksworld_3_7", "x", {"problem": text}))) is None


def test_generated_sets_are_reproducible_and_prompt_with_optimal_examples() -> None:
    for kind in PAPER_PLANNING:
        domain = get_domain(kind)
        first, again = load_instances(domain, "gen:3:7"), load_instances(domain, "gen:3:7")
        assert [i.data["problem"] for i in first] == [i.data["problem"] for i in again]
        assert (
            first[0].id == "gen-7-1"
            and first[0].data["problem"] != load_instances(domain, "gen:3:8")[0].data["problem"]
        )
    minigrid = get_domain("minigrid")
    inst = load_instances(minigrid, "gen:2:1")[0]
    prompt = minigrid.prompt(inst)[-1]["content"]  # PDDL style by default, examples solved by BFS
    assert prompt.startswith("The domain definition:") and "(move cell-" in prompt  # B.1 (001:249)
    english = get_domain("minigrid", prompt_style="nl").prompt(inst)[1]["content"]
    assert "I am a robot in a grid of rooms" in english and "[PLAN END]" in english
