"""The intrinsic self-critique paper's generated test sets (paper 001): sets of distinct problems as large as
001:81-83 says ("The validation and test set each contain 1000 problems" for Blocksworld 3-7, Logistics and
Mini-Grid "each with its own test set of 600 problems"), each size of a set given an equal share unless it holds
fewer problems, disjoint from the set's shot pool; and `run --check-distinct`, the guard on any generated set.

How many problems a small size holds is counted here from the domains' rules (towers of blocks, trucks and
packages on places, a robot, a door and a key on cells), not from our generator's output.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.domains import get_domain
from critiquebench.domains.planning.generators import PAPER_SIZES, problem_key
from critiquebench.domains.planning.instances import training_pool
from tests.test_intrinsic import paper


def paper_set_sizes() -> dict[str, int]:
    """Each generated set's size as 001:81 states it (the Hard sets, which 001 gives no size, as their easier sets)."""
    line = paper(81)
    assert "The validation and test set each contain 1000 problems" in line
    assert "Logistics and Mini-Grid datasets, each with its own test set of 600 problems" in line
    return {"blocksworld_3_7": 1000, "logistics_star": 600, "logistics_hard": 600, "minigrid": 600,
            "minigrid_hard": 600}  # fmt: skip


def configurations(blocks: list[str]) -> list[frozenset[tuple[str, str]]]:
    """Every arrangement of `blocks` in towers on a table, as its set of (upper, lower) `on` facts."""
    out = set()
    for order in itertools.permutations(blocks):
        for cuts in itertools.product([False, True], repeat=len(blocks) - 1):
            on = {(order[i + 1], order[i]) for i in range(len(blocks) - 1) if not cuts[i]}
            out.add(frozenset(on))
    return list(out)


def blocksworld_problems(n: int) -> int:
    """Start arrangement x goal `on` facts: the goal names at least one `on` fact and does not already hold.

    Arrangements of n blocks in k towers are the Lah number C(n-1, k-1) n!/k!; an arrangement with e = n - k
    `on` facts already holds 2^e goals (every subset of its facts, the empty one included), so it is the start of
    (all arrangements) - 2^e problems. Enumerating pairs instead costs the square of 37,633 arrangements at 7
    blocks; `test_the_counting_rule_equals_enumeration` checks the rule against enumeration where that is cheap."""
    lah = {k: math.comb(n - 1, k - 1) * math.factorial(n) // math.factorial(k) for k in range(1, n + 1)}
    total = sum(lah.values())
    return sum(count * (total - 2 ** (n - k)) for k, count in lah.items())


def enumerated_blocksworld_problems(n: int) -> int:
    states = configurations([f"b{i}" for i in range(n)])
    return sum(1 for start in states for goal in states if goal and not goal <= start)


def logistics_problems(cities: int, places: int, packages: int, airplanes: int) -> int:
    """A truck on a place of its city, an airplane on an airport, packages on places, a goal moving some."""
    where = cities * places
    return places**cities * cities**airplanes * where**packages * (where**packages - 1)


def minigrid_problems(rooms: int, width: int, height: int) -> int:
    """Robot in the first room, goal in the last, a door cell in each wall, each key in a room before its door."""
    cells = width * height
    keys = 1
    for door in range(1, rooms):
        keys *= height * door * cells  # the door's row, its key's cell in the rooms before it
    return cells * cells * keys


def holds(kind: str, size: tuple[int, ...]) -> int:
    if kind == "blocksworld_3_7":
        return blocksworld_problems(*size)
    if kind.startswith("logistics"):
        return logistics_problems(*size)
    return minigrid_problems(*size)


def size_of(kind: str, text: str) -> tuple[int, ...]:
    name = re.search(r"\(problem (\S+)\)", text)
    assert name is not None
    return tuple(int(x) for x in re.findall(r"\d+", name.group(1)))  # BW-rand-3, logistics-c2-s2-p1-a1, minigrid-r2-2x3


@pytest.mark.parametrize("kind", sorted(PAPER_SIZES))
def test_every_generated_set_of_001_is_its_size_in_distinct_problems_disjoint_from_its_pool(kind: str) -> None:
    n = paper_set_sizes()[kind]
    domain = get_domain(kind)
    instances = domain.generate(n, 1)
    problems = [i.data["problem"] for i in instances]
    assert len(problems) == n and len({problem_key(p) for p in problems}) == n
    pool = {problem_key(e["problem"]) for i in instances for e in training_pool(i)}
    assert len(pool) == 64 and not pool & {problem_key(p) for p in problems}
    assert [i.data["problem"] for i in domain.generate(5, 1)] == problems[:5]  # gen:5:1 is the set's first five

    # the paper's sizes, each an equal share, or all its problems where it holds fewer (example problem 0 aside)
    counts = Counter(size_of(kind, p) for p in problems)
    sizes = list(PAPER_SIZES[kind])
    assert set(counts) == set(sizes)
    full = [s for s in sizes if counts[s] < max(counts.values()) - 2]
    assert all(counts[s] in (holds(kind, s), holds(kind, s) - 1) for s in full)
    shares = [counts[s] for s in sizes if s not in full]
    assert max(shares) - min(shares) <= 2


@pytest.mark.parametrize("kind", sorted(PAPER_SIZES))
def test_the_shot_pool_lacks_the_sizes_the_test_set_uses_up(kind: str) -> None:
    """The difference from 001's "sampled from the respective training set" (001:130) that
    docs/papers/intrinsic-self-critique.md states: a size whose every problem is in the test set has none in the
    64-problem shot pool (Blocksworld 3-7: no 3 blocks; Mini-Grid: no 2 x 2 rooms; Logistics*: its largest size
    alone)."""
    n = paper_set_sizes()[kind]
    instances = get_domain(kind).generate(n, 1)
    tested = Counter(size_of(kind, i.data["problem"]) for i in instances)
    pooled = Counter(size_of(kind, e["problem"]) for e in training_pool(instances[0]))
    used_up = {s for s in PAPER_SIZES[kind] if tested[s] >= holds(kind, s) - 1}  # problem 0 is the example
    assert used_up.isdisjoint(pooled)
    assert sum(pooled.values()) == 64
    if kind == "blocksworld_3_7":
        assert (3,) in used_up and min(pooled) == (4,)
    if kind == "logistics_star":
        assert set(pooled) == {(2, 2, 2, 1)}  # every shot of a one-city problem shows two cities
    if kind == "minigrid":
        assert (2, 2, 2) in used_up and (2, 2, 2) not in pooled


def test_the_counting_rule_equals_enumeration() -> None:
    assert [blocksworld_problems(n) for n in (1, 2, 3, 4)] == [enumerated_blocksworld_problems(n) for n in (1, 2, 3, 4)]


def test_the_sizes_that_run_out_are_the_small_ones() -> None:
    """What the sets hold of their smallest sizes, counted from the domains' rules (documented in
    docs/papers/intrinsic-self-critique.md)."""
    assert blocksworld_problems(3) == 132
    assert [logistics_problems(*s) for s in PAPER_SIZES["logistics_star"]] == [4, 24, 4, 24, 96, 1920]
    assert minigrid_problems(2, 2, 2) == 128


def test_check_distinct_passes_a_papers_set_and_names_the_count_where_a_generator_runs_out(tmp_path: Path) -> None:
    args = ["run", "t", "--schemes", "standard", "--store", str(tmp_path / "s.sqlite"), "--check-distinct"]
    ok = CliRunner().invoke(
        app, [*args, "--dry-run", "--domains", "logistics_star,minigrid", "--instances", "gen:600:1"]
    )
    assert ok.exit_code == 0, ok.stderr
    assert "check-distinct: gen:600:1: logistics_star: 600 distinct problems, none in the 64-problem shot pool" in (
        ok.stderr
    )
    assert "check-distinct: gen:600:1: minigrid: 600 distinct problems" in ok.stderr
    most = sum(logistics_problems(*s) for s in PAPER_SIZES["logistics_star"])  # 2072
    failed = CliRunner().invoke(app, [*args, "--domains", "logistics_star", "--instances", f"gen:{most + 10}:1"])
    assert failed.exit_code == 2 and not (tmp_path / "s.sqlite").exists()  # stopped before any run or call
    (line,) = failed.stderr.strip().splitlines()
    assert line.startswith(f"error: check-distinct: gen:{most + 10}:1: logistics_star: only {most} distinct problems")
    assert line.endswith(f"ask for at most {most}")
