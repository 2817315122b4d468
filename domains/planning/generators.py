"""Seeded problem generators in PlanBench's PDDL layout: Blocksworld, Mystery Blocksworld, Logistics.

Every generated problem is solvable by construction and its goal does not already hold initially. Mystery
problems are Blocksworld problems with PlanBench's consistent renaming of the domain's names.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

from critiquebench.domains.planning.strips import PlanningError

MYSTERY_NAMES = {
    "ontable": "planet",
    "clear": "province",
    "handempty": "harmony",
    "holding": "pain",
    "on": "craves",
}


def _random_towers(blocks: list[str], rng: random.Random) -> list[list[str]]:
    towers: list[list[str]] = []
    for block in rng.sample(blocks, len(blocks)):
        if towers and rng.random() < 0.5:
            rng.choice(towers).append(block)
        else:
            towers.append([block])
    return towers


def blocksworld_problem(n_blocks: int, rng: random.Random) -> str:
    """A random Blocksworld problem: random start towers, and the `on` facts of random goal towers."""
    if not 1 < n_blocks <= 12:
        raise PlanningError(f"blocksworld generator supports 2..12 blocks, not {n_blocks}")
    blocks = list(string.ascii_lowercase[:n_blocks])
    while True:
        start, goal = _random_towers(blocks, rng), _random_towers(blocks, rng)
        start_on = {(t[i + 1], t[i]) for t in start for i in range(len(t) - 1)}
        goal_on = sorted((t[i + 1], t[i]) for t in goal for i in range(len(t) - 1))
        if goal_on and not set(goal_on) <= start_on:
            break
    init = ["(handempty)"]
    for tower in sorted(start):
        init.append(f"(ontable {tower[0]})")
        init += [f"(on {tower[i + 1]} {tower[i]})" for i in range(len(tower) - 1)]
    init += [f"(clear {tower[-1]})" for tower in sorted(start)]
    goals = "\n".join(f"(on {a} {b})" for a, b in goal_on)
    return (
        f"(define (problem BW-rand-{n_blocks})\n(:domain blocksworld-4ops)\n(:objects {' '.join(blocks)} )\n"
        f"(:init\n" + "\n".join(init) + f"\n)\n(:goal\n(and\n{goals})\n)\n)\n"
    )


def mystery_problem(n_blocks: int, rng: random.Random) -> str:
    """A Blocksworld problem renamed into Mystery Blocksworld's vocabulary."""
    text = blocksworld_problem(n_blocks, rng)
    for old in MYSTERY_NAMES:
        text = text.replace(f"({old} ", f"({MYSTERY_NAMES[old]} ").replace(f"({old})", f"({MYSTERY_NAMES[old]})")
    return text.replace("blocksworld-4ops", "mystery-4ops").replace("BW-rand", "MY-rand")


def logistics_problem(cities: int, size: int, packages: int, airplanes: int, rng: random.Random) -> str:
    """A random Logistics problem: one truck per city, location 0 of each city is its airport."""
    if not all(0 < k < 10 for k in (cities, size, packages, airplanes)):
        # PlanBench names objects by their digits ("p1" -> package_1), so 10+ of a kind would be ambiguous.
        raise PlanningError("logistics generator supports 1..9 cities, locations, packages and airplanes")
    locs = [f"l{c}-{i}" for c in range(cities) for i in range(size)]
    lines = [f"(AIRPLANE a{i})" for i in range(airplanes)] + [f"(CITY c{c})" for c in range(cities)]
    lines += [f"(TRUCK t{c})" for c in range(cities)]
    lines += [f"(LOCATION {loc})\n    (in-city  {loc} c{loc[1]})" for loc in locs]
    lines += [f"(AIRPORT l{c}-0)" for c in range(cities)] + [f"(OBJ p{i})" for i in range(packages)]
    lines += [f"(at t{c} l{c}-{rng.randrange(size)})" for c in range(cities)]
    start = [rng.choice(locs) for _ in range(packages)]
    lines += [f"(at p{i} {loc})" for i, loc in enumerate(start)]
    lines += [f"(at a{i} l{rng.randrange(cities)}-0)" for i in range(airplanes)]
    goal = list(start)
    while goal == start:
        goal = [rng.choice(locs) for _ in range(packages)]
    objects = (
        " ".join(f"a{i}" for i in range(airplanes))
        + " \n          "
        + " ".join(f"c{c}" for c in range(cities))
        + " \n          "
        + " ".join(f"t{c}" for c in range(cities))
        + " \n          "
        + " ".join(locs)
        + " \n          "
        + " ".join(f"p{i}" for i in range(packages))
        + " \n"
    )
    goals = "\n".join(f"        (at p{i} {loc})" for i, loc in enumerate(goal))
    return (
        f"(define (problem logistics-c{cities}-s{size}-p{packages}-a{airplanes})\n"
        "(:domain logistics-strips)\n"
        f"(:objects {objects})\n(:init\n"
        + "\n".join("    " + line for line in lines)
        + f"\n)\n(:goal\n    (and\n{goals}\n    )\n)\n)\n"
    )


def _blocks(rng: random.Random) -> str:
    return blocksworld_problem(rng.randint(3, 5), rng)


def _mystery(rng: random.Random) -> str:
    return mystery_problem(rng.randint(3, 5), rng)


def _logistics(rng: random.Random) -> str:
    return logistics_problem(rng.randint(2, 3), rng.randint(1, 3), rng.randint(1, 4), rng.randint(1, 2), rng)


# Default size ranges follow PlanBench's instance sets (3-5 blocks; small Logistics worlds).
GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "blocksworld": _blocks,
    "mystery_blocksworld": _mystery,
    "logistics": _logistics,
}


def generate_problems(kind: str, n: int, seed: int) -> list[str]:
    """`n` problem texts of generator `kind`, the same for the same seed."""
    if kind not in GENERATORS:
        raise PlanningError(f"no instance generator for domain {kind!r}; known: {', '.join(GENERATORS)}")
    rng = random.Random(f"{kind}:{seed}")
    return [GENERATORS[kind](rng) for _ in range(n)]
