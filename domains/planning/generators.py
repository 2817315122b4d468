"""Seeded problem generators in PlanBench's PDDL layout: Blocksworld, Mystery Blocksworld, Logistics, and the
intrinsic self-critique paper's sets (Blocksworld 3-7, Logistics-hard, Mini-Grid, Mini-Grid-hard).

Every generated problem is solvable by construction and its goal does not already hold initially. Mystery
problems are Blocksworld problems with PlanBench's consistent renaming of the domain's names.
"""

from __future__ import annotations

import functools
import random
import string
from collections.abc import Callable, Iterable, Sequence

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


def blocksworld_3_7_problem(n_blocks: int, rng: random.Random) -> str:
    """A Blocksworld problem in the layout of the intrinsic self-critique paper's Blocksworld 3-7 set (its traces,
    D.1 001:323-345): blocks b1..bN, the objects and the initial facts in random order, `(:goal (and` on one
    line. The towers are drawn as `blocksworld_problem` draws them."""
    text = blocksworld_problem(n_blocks, rng)
    names = {old: f"b{i}" for i, old in enumerate(string.ascii_lowercase[:n_blocks], start=1)}
    init = text[text.index("(:init\n") + 7 : text.index("\n)\n(:goal")].splitlines()
    goal = text[text.index("(and\n") + 5 : text.rindex(")\n)\n)")].splitlines()

    def rename(fact: str) -> str:
        words = fact.strip("()").split()
        return "(" + " ".join([words[0], *(names.get(w, w) for w in words[1:])]) + ")"

    objects = list(names.values())
    rng.shuffle(objects)
    facts = [rename(f) for f in init]
    rng.shuffle(facts)
    return (
        f"(define (problem BW-rand-{n_blocks})\n(:domain blocksworld-4ops)\n(:objects {' '.join(objects)})\n"
        "(:init\n" + "\n".join(facts) + "\n)\n(:goal (and\n" + "\n".join(rename(g) for g in goal) + "\n))\n)\n"
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
    locs = _logistics_locations(cities, size)
    trucks = tuple(rng.randrange(size) for _ in range(cities))
    start = [rng.choice(locs) for _ in range(packages)]
    planes = tuple(rng.randrange(cities) for _ in range(airplanes))
    goal = list(start)
    while goal == start:
        goal = [rng.choice(locs) for _ in range(packages)]
    return _logistics_text(cities, size, trucks, tuple(start), planes, tuple(goal))


@functools.cache
def _logistics_locations(cities: int, size: int) -> tuple[str, ...]:
    return tuple(f"l{c}-{i}" for c in range(cities) for i in range(size))


# A set draws the same small worlds again and again (Logistics*: ~67,000 draws for its 2072 problems): the text of
# a draw is rendered once and the repeat returns the same string, whose hash `_draw_distinct` already holds.
@functools.lru_cache(maxsize=8192)
def _logistics_text(
    cities: int, size: int, trucks: tuple[int, ...], start: tuple[str, ...], planes: tuple[int, ...],
    goal: tuple[str, ...],
) -> str:  # fmt: skip
    locs, packages, airplanes = _logistics_locations(cities, size), len(start), len(planes)
    lines = [f"(AIRPLANE a{i})" for i in range(airplanes)] + [f"(CITY c{c})" for c in range(cities)]
    lines += [f"(TRUCK t{c})" for c in range(cities)]
    lines += [f"(LOCATION {loc})\n    (in-city  {loc} c{loc[1]})" for loc in locs]
    lines += [f"(AIRPORT l{c}-0)" for c in range(cities)] + [f"(OBJ p{i})" for i in range(packages)]
    lines += [f"(at t{c} l{c}-{at})" for c, at in enumerate(trucks)]
    lines += [f"(at p{i} {loc})" for i, loc in enumerate(start)]
    lines += [f"(at a{i} l{at}-0)" for i, at in enumerate(planes)]
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


def minigrid_problem(rooms: int, width: int, height: int, rng: random.Random) -> str:
    """A Mini-Grid problem (after the intrinsic self-critique paper's Mini-Grid sets; its PDDL is not
    published, this encoding is ours, see domains/data/minigrid/domain.pddl): a row of `rooms` rooms of
    `width` x `height` cells joined by locked door cells; the key of each door lies in a room before it; the
    robot starts in the first room and must reach a goal cell in the last one. Cells are ``cell-X-Y``."""
    if not (2 <= rooms <= 4 and 2 <= width <= 4 and 2 <= height <= 4):
        raise PlanningError("minigrid generator supports 2..4 rooms of 2..4 x 2..4 cells")
    cells: set[tuple[int, int]] = set()
    room_cells: list[list[tuple[int, int]]] = []
    doors: list[tuple[int, int]] = []
    for r in range(rooms):
        x0 = r * (width + 1)
        room_cells.append([(x0 + dx, y) for dx in range(width) for y in range(height)])
        cells.update(room_cells[-1])
        if r < rooms - 1:
            doors.append((x0 + width, rng.randrange(height)))
    cells.update(doors)

    def name(c: tuple[int, int]) -> str:
        return f"cell-{c[0]}-{c[1]}"

    start = rng.choice(room_cells[0])
    goal = rng.choice(room_cells[-1])
    keys = [rng.choice([c for r in room_cells[: i + 1] for c in r]) for i in range(len(doors))]
    init = [f"(at-robot {name(start)})", "(hand-empty)"]
    for x, y in sorted(cells):
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if (nx, ny) in cells:
                init.append(f"(adjacent {name((x, y))} {name((nx, ny))})")
    init += [f"(open {name(c)})" for r in room_cells for c in r]
    init += [f"(locked {name(d)})" for d in doors]
    for i, (door, key) in enumerate(zip(doors, keys, strict=True)):
        init += [f"(key-at key{i + 1} {name(key)})", f"(fits key{i + 1} {name(door)})"]
    objects = (
        " ".join(name(c) for c in sorted(cells))
        + " - cell "
        + " ".join(f"key{i + 1}" for i in range(len(doors)))
        + " - key"
    )
    return (
        f"(define (problem minigrid-r{rooms}-{width}x{height})\n(:domain minigrid)\n(:objects {objects})\n(:init\n  "
        + "\n  ".join(init)
        + f"\n)\n(:goal (and (at-robot {name(goal)})))\n)\n"
    )


def _blocks(rng: random.Random) -> str:
    return blocksworld_problem(rng.randint(3, 5), rng)


def _mystery(rng: random.Random) -> str:
    return mystery_problem(rng.randint(3, 5), rng)


def _logistics(rng: random.Random) -> str:
    return logistics_problem(rng.randint(2, 3), rng.randint(1, 3), rng.randint(1, 4), rng.randint(1, 2), rng)


# The intrinsic self-critique paper's datasets: every size of each set, so a test can check each one (a set gives
# each size an equal share of its problems, `distinct_problems`). Blocksworld 3-7: 3 to 7 blocks (001:81).
# Logistics*: "up to four places and two packages" (001:161); Logistics-hard: "up to 4 cities, 2 places per city
# and 8 packages" (001:161). What the paper (and the dataset paper it cites, not among ours) leaves open is ours:
# one truck per city, one airplane, at least two places (a package must have somewhere to go), for Logistics* 1-2
# cities of 1-2 places (so at most four places) and 1-2 packages; for Logistics-hard 2-4 cities, since a single
# city needs no airplane and Logistics is "deliveries of packets between cities using trucks and planes"
# (001:63): one city would be the easy tail of a set 001 calls "more complex" (001:163), and 1-8 packages.
PAPER_SIZES: dict[str, tuple[tuple[int, ...], ...]] = {
    "blocksworld_3_7": tuple((n,) for n in range(3, 8)),
    "logistics_star": tuple((c, s, p, 1) for c in (1, 2) for s in (1, 2) for p in (1, 2) if c * s > 1),
    "logistics_hard": tuple((c, 2, p, 1) for c in range(2, 5) for p in range(1, 9)),
    "minigrid": tuple((2, w, h) for w in (2, 3) for h in (2, 3)),
    "minigrid_hard": tuple((3, w, h) for w in (2, 3) for h in (2, 3)),
}
_PAPER_MAKERS: dict[str, Callable[..., str]] = {
    "blocksworld_3_7": blocksworld_3_7_problem,
    "logistics_star": logistics_problem,
    "logistics_hard": logistics_problem,
    "minigrid": minigrid_problem,
    "minigrid_hard": minigrid_problem,
}


def sized_problem(kind: str, size: tuple[int, ...], rng: random.Random) -> str:
    """A problem of paper generator `kind` at `size` (one of `PAPER_SIZES[kind]`)."""
    return _PAPER_MAKERS[kind](*size, rng)


def _paper(kind: str) -> Callable[[random.Random], str]:
    return lambda rng: sized_problem(kind, rng.choice(PAPER_SIZES[kind]), rng)


# Default size ranges of the PlanBench domains follow PlanBench's instance sets (3-5 blocks; small Logistics
# worlds); the paper's sets have their own names.
GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "blocksworld": _blocks,
    "mystery_blocksworld": _mystery,
    "logistics": _logistics,
    **{kind: _paper(kind) for kind in PAPER_SIZES},
}


# The size of each of the paper's test sets: Blocksworld 3-7's validation and test sets "each contain 1000
# problems" (001:81), Logistics and Mini-Grid "each with its own test set of 600 problems" (001:81); the Hard sets
# get no size of their own (001:163-168), so 600 as their easier sets. Other generators: 1000, the largest.
PAPER_SET_SIZE: dict[str, int] = {
    "blocksworld_3_7": 1000,
    "logistics_star": 600,
    "logistics_hard": 600,
    "minigrid": 600,
    "minigrid_hard": 600,
}
TEST_SET = 1000
# Consecutive draws that found no new problem after which a size (or a generator) counts as having no more, and
# gives its share to the others: MISSES, or MISS_FACTOR times the problems it has given, whichever is more (with S
# problems drawn alike, 20*S misses leave one unfound with a chance of e^-20). The draws are not uniform over a
# size's problems (random towers favour some states), so the bounds are generous: they find every one of the
# sizes that run out (3 blocks: 132; a one-package, two-city Logistics* world: 96; the smallest Mini-Grid: 128;
# Logistics*'s 2072 in all), which tests/test_intrinsic_sets.py counts from the domains' rules; a paper's set is
# built in well under a second.
MISSES, MISS_FACTOR = 2000, 20


def set_size(kind: str) -> int:
    """How many test problems a generated set of `kind` holds: the paper's test set (`PAPER_SET_SIZE`)."""
    return PAPER_SET_SIZE.get(kind, TEST_SET)


def generate_problems(kind: str, n: int, seed: int) -> list[str]:
    """`n` problem texts of generator `kind`, the same for the same seed, distinct as long as the generator has
    that many (`distinct_problems`); past that the set repeats its problems in order, which `check_distinct`
    reports."""
    if kind not in GENERATORS:
        raise PlanningError(f"no instance generator for domain {kind!r}; known: {', '.join(GENERATORS)}")
    found = distinct_problems(kind, n, seed)
    return [found[i % len(found)] for i in range(n)]


def distinct_problems(kind: str, n: int, seed: int) -> tuple[str, ...]:
    """Up to `n` distinct problems of `kind` (fewer only when the generator holds fewer), the first `n` of the
    same set for every `n` up to the paper's set size plus one (the set's example problem 0): a paper set is built
    whole, each of its sizes drawn from a stream of its own with an equal share (a size that runs out gives the rest
    to the others), then shuffled; other generators keep the first `n` distinct problems of their stream."""
    total = max(n, set_size(kind) + 1)
    return _distinct(kind, total, seed)[:n] if kind in PAPER_SIZES else _distinct(kind, n, seed)


@functools.lru_cache(maxsize=32)
def _distinct(kind: str, total: int, seed: int) -> tuple[str, ...]:
    if kind not in PAPER_SIZES:
        return tuple(_draw_distinct(GENERATORS[kind], random.Random(f"{kind}:{seed}"), total, set()))
    sizes = PAPER_SIZES[kind]
    seen: set[tuple[str, ...]] = set()
    rngs = {size: random.Random(f"{kind}:{seed}:{size}") for size in sizes}
    chosen: dict[tuple[int, ...], list[str]] = {size: [] for size in sizes}
    open_sizes = list(sizes)
    while open_sizes and (need := total - sum(map(len, chosen.values()))) > 0:
        share, extra = divmod(need, len(open_sizes))
        for i, size in enumerate(list(open_sizes)):
            want = share + (i < extra)
            make = functools.partial(sized_problem, kind, size)
            got = _draw_distinct(make, rngs[size], want, seen, len(chosen[size]))
            chosen[size] += got
            if len(got) < want:
                open_sizes.remove(size)
    out = [text for size in sizes for text in chosen[size]]
    random.Random(f"{kind}:{seed}:order").shuffle(out)
    return tuple(out)


def _draw_distinct(
    make: Callable[[random.Random], str], rng: random.Random, want: int, seen: set, have: int = 0
) -> list[str]:
    """Up to `want` problems from `make` not in `seen` (which grows), stopping after `MISSES` misses in a row (or
    `MISS_FACTOR` times the problems found, with the `have` found before)."""
    out: list[str] = []
    drawn: set[str] = set()  # texts drawn before: their keys are in `seen` (most misses repeat a text verbatim)
    misses = 0
    while len(out) < want and misses < max(MISSES, MISS_FACTOR * (have + len(out))):
        text = make(rng)
        if text in drawn:
            misses += 1
            continue
        drawn.add(text)
        key = problem_key(text)
        if key in seen:
            misses += 1
            continue
        seen.add(key)
        out.append(text)
        misses = 0
    return out


def check_distinct(kind: str, problems: Sequence[str], pool: Sequence[str]) -> tuple[bool, str]:
    """The guard on a generated set (`run --check-distinct`): whether its problems are distinct and none is in its
    shot pool, with one line saying so (the count of distinct problems the generator holds when it has too few)."""
    keys = [problem_key(p) for p in problems]
    distinct = len(set(keys))
    shared = len(set(keys) & {problem_key(p) for p in pool})
    if distinct < len(keys):
        return False, (
            f"{kind}: only {distinct} distinct problems of the {len(keys)} asked for (its generator's sizes hold no "
            f"more; the rest repeat them): ask for at most {distinct}"
        )
    if shared:
        return False, f"{kind}: {shared} of the {len(keys)} problems are also in the {len(pool)}-problem shot pool"
    return True, f"{kind}: {distinct} distinct problems, none in the {len(pool)}-problem shot pool"


@functools.lru_cache(maxsize=4096)  # a set's 1001 problems are keyed again by its pool, `check_distinct`, ...
def problem_key(text: str) -> tuple[str, ...]:
    """A problem's lines without layout or order (objects in any order too), each with the section it is in
    (objects, init, goal: the same fact in the start and in the goal is not the same line): two texts of the same
    problem have the same key."""
    lines = []
    section = ""
    for ln in text.splitlines():
        words = ln.split()
        if words and words[0].startswith("(:"):
            section = words[0]
        if words and words[0] == "(:objects":
            words = ["(:objects", *sorted(w.strip(")") for w in words[1:] if w.strip(")")), ")"]
        if words:
            lines.append(section + " " + " ".join(words))
    return tuple(sorted(lines))


def training_problems(kind: str, size: int, seed: int, exclude: Iterable[str] = ()) -> list[str]:
    """`size` distinct problems of generator `kind` from a stream of their own (not the test stream of
    `generate_problems`), none of them one of `exclude` (the test problems): the training set that examples
    are drawn from. Fewer when the generator's space runs out (tiny worlds)."""
    if kind not in GENERATORS:
        raise PlanningError(f"no instance generator for domain {kind!r}; known: {', '.join(GENERATORS)}")
    return list(_training(kind, size, seed, tuple(exclude)))


@functools.lru_cache(maxsize=32)  # every `generate` of a paper set's seed draws the same pool
def _training(kind: str, size: int, seed: int, exclude: tuple[str, ...]) -> tuple[str, ...]:
    rng = random.Random(f"{kind}:train:{seed}")
    seen = {problem_key(t) for t in exclude}
    out: list[str] = []
    for _ in range(100 * size):
        if len(out) >= size:
            break
        text = GENERATORS[kind](rng)
        key = problem_key(text)
        if key not in seen:
            seen.add(key)
            out.append(text)
    return tuple(out)
