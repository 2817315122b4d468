"""Shortest plans for Logistics-hard: A* with the Logistics bound vs the greedy search it replaces.

For every size the generator offers (3-4 cities, 2 places each, 5-8 packages, one airplane), `--seeds`
problems each: the time of `optimal_plan` (A*, shortest plans) beside the time of `find_plan` (lazy greedy
best-first search, the previous example plans, valid but longer) on the same problem in the same run, the
ratio of the two, and how much shorter the proven-shortest plans are. Breadth-first search, the exact
baseline, is shown on the smallest size only, within a state budget: it does not finish the larger ones.

    .venv/bin/python benchmarks/bench_optimal_plans.py [--seeds 10]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from critiquebench.domains import get_domain
from critiquebench.domains.contract import Instance
from critiquebench.domains.planning.generators import PAPER_SIZES, sized_problem
from critiquebench.domains.planning.planner import _bfs, _Space, find_plan, optimal_plan
from critiquebench.domains.planning.validator import check_plan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.results import add_json_option, record, row  # noqa: E402

BFS_BUDGET = 300_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    add_json_option(parser)
    args = parser.parse_args()
    seeds = args.seeds
    rows = []
    domain = get_domain("logistics_hard")
    print(
        f"{'size (cities, places, packages, airplanes)':44} {'A* mean / max':>16} {'greedy mean':>12} "
        f"{'A*/greedy':>9} {'shortest vs greedy length':>26}"
    )
    worst = 0.0
    # the results file sums sizes up by number of cities (one row each, not one per size): star, greedy, steps
    by_cities: dict[int, list[list[float]]] = {}
    for size in PAPER_SIZES["logistics_hard"]:
        star, greedy, short, long_ = [], [], 0, 0
        for seed in range(seeds):
            text = sized_problem("logistics_hard", size, random.Random(f"bench{size}{seed}"))
            task = domain.task(Instance("logistics_hard", str(seed), {"problem": text}))
            t0 = time.perf_counter()
            plan = optimal_plan(task)
            t1 = time.perf_counter()
            other = find_plan(task)
            t2 = time.perf_counter()
            assert plan is not None and check_plan(task, [(a.name, a.args) for a in plan]).valid
            star.append(t1 - t0)
            greedy.append(t2 - t1)
            short, long_ = short + len(plan), long_ + len(other)
        worst = max(worst, *star)
        mean_star, mean_greedy = sum(star) / seeds, sum(greedy) / seeds
        print(
            f"{size!s:44} {mean_star:7.2f}s /{max(star):5.2f}s {mean_greedy:11.2f}s {mean_star / mean_greedy:8.1f}x "
            f"{short / seeds:11.1f} vs {long_ / seeds:.1f} steps"
        )
        group = by_cities.setdefault(size[0], [[], [], [0, 0]])
        group[0] += star
        group[1] += greedy
        group[2][0] += short
        group[2][1] += long_
    for cities, (star, greedy, (short, long_)) in by_cities.items():
        sizes = [s for s in PAPER_SIZES["logistics_hard"] if s[0] == cities]
        packages = f"{min(s[2] for s in sizes)}-{max(s[2] for s in sizes)}"
        shape = f"{cities} {'city' if cities == 1 else 'cities'}, {packages} packages, {len(star)} problems"
        rows += [
            row(f"A* time, {shape}", 1000 * sum(star) / len(star), "ms a problem",
                baseline=("greedy best-first search", 1000 * sum(greedy) / len(greedy)),
                ratio=sum(star) / sum(greedy), target="< 10 s a problem", met=max(star) < 10,
                note=f"slowest {max(star):.2f} s"),
            row(f"plan length, {shape}", short / len(star), "steps a plan",
                baseline=("greedy best-first search", long_ / len(star)), ratio=short / long_,
                target="A*'s shortest plans no longer than greedy's", met=short <= long_),
        ]  # fmt: skip
    print(f"slowest A* search: {worst:.2f} s")
    smallest = PAPER_SIZES["logistics_hard"][0]
    task = domain.task(
        Instance("logistics_hard", "0", {"problem": sized_problem("logistics_hard", smallest, random.Random(0))})
    )
    t0 = time.perf_counter()
    found = _bfs(task, _Space(task), BFS_BUDGET)
    bfs_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    plan = optimal_plan(task)
    star_time = time.perf_counter() - t0
    outcome = f"{len(found)} steps" if found is not None else f"no plan within {BFS_BUDGET} states"
    rows += [
        row("slowest A* search", worst, "s", target="< 10 s a problem", met=worst < 10),
        row(f"breadth-first search, size {smallest}", bfs_time, "s", baseline=("A*", star_time),
            ratio=bfs_time / star_time if star_time > 0 else None,
            note=f"breadth-first: {outcome}; A*: {len(plan or [])} steps"),
    ]  # fmt: skip
    print(
        f"breadth-first search at {smallest}: {bfs_time:.1f} s, {outcome}; A*: {star_time:.2f} s, "
        f"{len(plan or [])} steps"
    )
    record("bench_optimal_plans", rows, path=args.json)


if __name__ == "__main__":
    main()
