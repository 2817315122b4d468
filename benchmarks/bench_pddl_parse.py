"""PDDL reading: the `pddl` package (through `domains.planning.pddl_io`) vs the hand-written s-expression reader
it replaced (`benchmarks/baseline_pddl_reader.py`, kept here as the baseline), on every problem of PlanBench's
domains and of the AutoPlanBench domains (`../shared/datasets`).

Both readers parse each domain once and then every problem of it, in the same process; the `pddl` side's
parsers are built before timing (their grammar takes 0.2 s once per process). Prints the time per problem of
each and the ratio, and checks that both readers give the same `DomainModel` and the same `Task` for every file.
A study parses each problem once per process (the domain keeps parsed problems), so the difference is paid
once per problem per run or replay.

    .venv/bin/python benchmarks/bench_pddl_parse.py [--repeat 3] [--data ../shared/datasets]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from critiquebench.domains.planning import pddl_io

sys.path.insert(0, str(Path(__file__).resolve().parent))
import baseline_pddl_reader as baseline  # noqa: E402 - the hand-written reader, beside this file

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.results import add_json_option, record, row  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def corpus(data: Path) -> list[tuple[Path, list[Path]]]:
    """(domain file, its problem files) of every PlanBench and AutoPlanBench domain."""
    out = []
    for domain in sorted([*data.glob("planbench/*/domain.pddl"), *data.glob("autoplanbench/*/domain.pddl")]):
        problems = sorted(p for p in domain.parent.rglob("*.pddl") if p != domain)
        out.append((domain, problems))
    return out


def timed(read: object, files: list[tuple[Path, list[Path]]], texts: dict[Path, str]) -> tuple[float, int, list]:
    parsed = []
    started = time.perf_counter()
    for domain, problems in files:
        model = read.parse_domain_text(texts[domain], str(domain))  # type: ignore[attr-defined]
        parsed.append(model)
        parsed += [read.parse_problem_text(texts[p], model, str(p)) for p in problems]  # type: ignore[attr-defined]
    return time.perf_counter() - started, sum(len(p) for _, p in files), parsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    add_json_option(parser)
    args = parser.parse_args()
    files = corpus(args.data)
    texts = {path: path.read_text(encoding="utf-8") for d, ps in files for path in (d, *ps)}
    timed(pddl_io, files[:1], texts)  # builds the `pddl` parsers
    ours = min(timed(pddl_io, files, texts)[0] for _ in range(args.repeat))
    theirs = min(timed(baseline, files, texts)[0] for _ in range(args.repeat))
    _, problems, new = timed(pddl_io, files, texts)
    _, _, old = timed(baseline, files, texts)
    same = sum(a == b for a, b in zip(new, old, strict=True))
    print(f"{len(files)} domains, {problems} problems; identical models and tasks: {same}/{len(new)}")
    print(f"pddl package:      {1000 * ours / problems:.2f} ms per problem")
    print(f"hand-written:      {1000 * theirs / problems:.2f} ms per problem")
    print(f"ratio pddl / hand: {ours / theirs:.1f}x")
    rows = [
        row("read time per problem, the pddl package (after pddl_io.normalise)", 1000 * ours / problems,
            "ms/problem", baseline=("the hand-written reader it replaced", 1000 * theirs / problems),
            ratio=ours / theirs, note=f"{len(files)} domains, {problems} problems; best of {args.repeat}; "
            "the ratio is pddl / hand-written (a problem is parsed once per process)"),
        row("identical domain models and tasks", same, f"of {len(new)}", target="same models and tasks",
            met=same == len(new)),
    ]  # fmt: skip
    record("bench_pddl_parse", rows, path=args.json)


if __name__ == "__main__":
    main()
