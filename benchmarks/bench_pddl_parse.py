"""PDDL reading: `pddl_io` (plain problems read directly, the rest by the `pddl` package) vs the `pddl` package
alone and vs the hand-written reader it replaced, on every PlanBench and AutoPlanBench problem.

`pddl_io` reads a problem of the plain shape with `plain_problem.read_plain` and any other with the `pddl`
package; `plain=False` sends every one to the `pddl` package; the baseline is `benchmarks/baseline_pddl_reader.py`.
Every reader parses each domain once and then every problem of it, in the same process (the `pddl` parsers are
built before timing). Prints the time per problem of each and the ratios, and checks that all three give the same
`DomainModel` and the same `Task` for every file (`../shared/datasets`). A study parses each problem once per
process (the domain keeps parsed problems), so the difference is paid once per problem per run or replay.

    .venv/bin/python benchmarks/bench_pddl_parse.py [--repeat 3] [--data ../shared/datasets]
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
import types
from pathlib import Path

from critiquebench.domains.planning import pddl_io
from critiquebench.domains.planning.plain_problem import read_plain

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


# `pddl_io` with the plain reader off: every problem through the `pddl` package
PDDL_ONLY = types.SimpleNamespace(
    parse_domain_text=pddl_io.parse_domain_text,
    parse_problem_text=functools.partial(pddl_io.parse_problem_text, plain=False),
)


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
    package = min(timed(PDDL_ONLY, files, texts)[0] for _ in range(args.repeat))
    theirs = min(timed(baseline, files, texts)[0] for _ in range(args.repeat))
    _, problems, new = timed(pddl_io, files, texts)
    _, _, alone = timed(PDDL_ONLY, files, texts)
    _, _, old = timed(baseline, files, texts)
    same = sum(a == b == c for a, b, c in zip(new, alone, old, strict=True))
    plain = sum(read_plain(pddl_io.strip_comments(texts[p])) is not None for _, ps in files for p in ps)
    print(
        f"{len(files)} domains, {problems} problems ({plain} of the plain shape); identical models and tasks: "
        f"{same}/{len(new)}"
    )
    print(f"pddl_io:           {1000 * ours / problems:.2f} ms per problem")
    print(f"pddl package only: {1000 * package / problems:.2f} ms per problem ({package / ours:.1f}x pddl_io)")
    print(f"hand-written:      {1000 * theirs / problems:.2f} ms per problem")
    rows = [
        row("read time per problem, pddl_io (plain shape read directly, the rest by the pddl package)",
            1000 * ours / problems, "ms/problem", baseline=("the pddl package alone", 1000 * package / problems),
            ratio=package / ours, note=f"{len(files)} domains, {problems} problems, {plain} of the plain shape; "
            f"best of {args.repeat}; the ratio is pddl alone / pddl_io (a problem is parsed once per process)"),
        row("read time per problem, the pddl package alone (after pddl_io.normalise)", 1000 * package / problems,
            "ms/problem", baseline=("the hand-written reader it replaced", 1000 * theirs / problems),
            ratio=package / theirs, note="the ratio is pddl / hand-written"),
        row("identical domain models and tasks, all three readers", same, f"of {len(new)}",
            target="same models and tasks", met=same == len(new)),
    ]  # fmt: skip
    record("bench_pddl_parse", rows, path=args.json)


if __name__ == "__main__":
    main()
