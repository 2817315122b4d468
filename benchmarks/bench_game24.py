"""Game of 24 checking speed: our verifier vs the original study's sympy check, measured in the same run.

The study checked answers with `sympy.simplify(expression) == 24` after a regex count of the numbers
(kstechly/gpt-and-i, `domain_utils/game24.py`). That evaluates its input as code, which is why it appears here
only, on expressions we built ourselves from the 24.csv puzzles, and never in the package.

Usage: .venv/bin/python benchmarks/bench_game24.py [--puzzles 100] [--dataset ../shared/datasets]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

import sympy

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.contract import Instance

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.results import add_json_option, record, row  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def study_check(numbers: list[int], response: str) -> bool:
    """The study's check_answer, trimmed to its verdict (trusted input only)."""
    expression = response.strip().split("\n")[0].lower().split("=")[0]
    if sorted(re.findall(r"\d+", expression)) != sorted(str(n) for n in numbers):
        return False
    try:
        return bool(sympy.simplify(expression) == 24)
    except Exception:  # noqa: BLE001 - the study's bare except: malformed
        return False


def workload(instances: list[Instance], rng: random.Random) -> list[tuple[Instance, str]]:
    """For each puzzle: its correct expression, two wrong ones and a malformed one."""
    game24 = get_domain("game24")
    items = []
    for instance in instances:
        correct = game24.candidate(instance, "correct", rng)
        items += [
            (instance, correct),
            (instance, game24.candidate(instance, "ablated_op", rng)),
            (instance, game24.candidate(instance, "random", rng)),
            (instance, "(" + correct + "+"),
        ]
    return items


def timed(check, items: list[tuple[Instance, str]], repeat: int) -> tuple[float, list[bool]]:
    best, results = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        results = [check(instance, text) for instance, text in items]
        best = min(best, time.perf_counter() - start)
    return best / len(items), results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--puzzles", type=int, default=100, help="puzzles from rank 901 on (4 checks each)")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATA)
    add_json_option(parser)
    args = parser.parse_args()
    game24 = get_domain("game24")
    instances = load_instances(game24, f"901-{900 + args.puzzles}", args.dataset)
    items = workload(instances, random.Random(0))
    sympy.simplify("1+1")  # load sympy's lazy machinery outside the timed loop
    ours, our_verdicts = timed(lambda i, t: game24.verify(i, t).valid, items, repeat=5)
    theirs, their_verdicts = timed(lambda i, t: study_check(i.data["numbers"], t), items, repeat=1)
    agree = sum(a == b for a, b in zip(our_verdicts, their_verdicts, strict=True))
    print(f"{len(items)} checks ({len(instances)} puzzles x correct/ablated_op/random/malformed)")
    print(f"ours (ast + Fraction):      {ours * 1e6:10.1f} us/check")
    print(f"study (sympy.simplify):     {theirs * 1e6:10.1f} us/check")
    print(f"speed-up:                   {theirs / ours:10.1f}x  (target >= 10x)")
    print(f"verdicts agree:             {agree}/{len(items)}  ({sum(our_verdicts)} valid by ours)")
    rows = [
        row("check time, ours (ast + Fraction)", ours * 1e6, "µs/check",
            baseline=("the study's sympy.simplify", theirs * 1e6), ratio=theirs / ours, target="speed-up >= 10x",
            met=theirs / ours >= 10,
            note=f"{len(items)} checks: {len(instances)} puzzles x correct/ablated_op/random/malformed"),
        row("verdicts that agree with the study's", agree, f"of {len(items)}", target="all agree",
            met=agree == len(items), note=f"{sum(our_verdicts)} valid by ours"),
    ]  # fmt: skip
    record("bench_game24", rows, path=args.json)


if __name__ == "__main__":
    main()
