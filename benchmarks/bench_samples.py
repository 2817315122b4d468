"""Recorded samples at scale: `import samples` + `report --table pass-at-k` against `score` on the same file.

    .venv/bin/python benchmarks/bench_samples.py [--instances 1000] [--per-instance 100] [--k 1,5,15,100]

Generates instances x per-instance Game of 24 samples (default 100,000: puzzles 1-1000 of 24.csv, each sample a
right expression, a wrong one or no answer, written "Answer: EXPR = 24" and read with reader=lenient), then runs
the installed command as a user does, in the same run: `critiquebench score` on the file, `critiquebench import
samples` of it into a fresh store, and `critiquebench report NAME --table pass-at-k` (and `--table labels`).
Prints each command's wall and CPU seconds, import + report beside score (the ratio), and whether import +
report stays under a minute of CPU (the target). `--keep DIR` leaves the file and store there.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import add_json_option, record, row  # noqa: E402

CLI = ROOT / ".venv" / "bin" / "critiquebench"
DATASETS = ROOT.parent / "shared" / "datasets"
TARGET_CPU_S = 60.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def generate(path: Path, instances: int, per_instance: int, seed: int = 0) -> int:
    """Write the samples file; returns how many samples it holds."""
    from critiquebench.domains import get_domain, load_instances
    from critiquebench.domains.arith import solve

    rng = random.Random(seed)
    puzzles = load_instances(get_domain("game24"), f"1-{instances}", DATASETS)
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for puzzle in puzzles:
            numbers = puzzle.data["numbers"]
            right, wrong = solve(numbers), " + ".join(map(str, numbers))
            skill = rng.random()  # puzzles differ in how often the model gets them right
            for index in range(per_instance):
                draw = rng.random()
                text = right if draw < skill * 0.6 else wrong if draw < 0.9 else None
                response = "I cannot find one." if text is None else f"Answer: {text} = 24"
                row = {"instance": puzzle.id, "sample": index, "response": response, "model": "batch",
                       "temperature": 0.8, "label": text == right}  # fmt: skip
                out.write(json.dumps(row) + "\n")
                count += 1
    return count


def timed(*args: str) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall and CPU seconds of one installed-command run."""
    cpu, wall = _children_cpu(), time.perf_counter()
    done = subprocess.run([str(CLI), *args], capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args[:2])} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return wall, cpu, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--per-instance", type=int, default=100)
    parser.add_argument("--k", default="1,5,15,100")
    parser.add_argument("--keep", type=Path, default=None, help="Leave the samples file and the store here.")
    add_json_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        samples, store = folder / "samples.jsonl", folder / "samples.sqlite"
        store.unlink(missing_ok=True)
        started = time.perf_counter()
        count = generate(samples, args.instances, args.per_instance)
        print(f"generated {count:,} samples ({args.instances} puzzles x {args.per_instance}) in "
              f"{time.perf_counter() - started:.1f} s: {samples.stat().st_size / 1e6:.1f} MB")  # fmt: skip
        lenient = ["--domain-option", "reader=lenient", "--dataset", str(DATASETS)]
        s_wall, s_cpu, _ = timed("score", "--domain", "game24", *lenient, "--output", str(folder / "scored.jsonl"),
                                 str(samples))  # fmt: skip
        i_wall, i_cpu, imported = timed("import", "samples", str(samples), "--domain", "game24", "--study", "bench",
                                        "--k", args.k, "--store", str(store), *lenient)  # fmt: skip
        r_wall, r_cpu, report = timed("report", "bench", "--table", "pass-at-k", "--store", str(store))
        l_wall, l_cpu, _ = timed("report", "bench", "--table", "labels", "--format", "json", "--store", str(store))
    print(imported.stdout.strip().splitlines()[0])
    print(report.stdout.strip())
    both_wall, both_cpu = i_wall + r_wall, i_cpu + r_cpu
    print(f"score (judge every sample, write one line each): {s_wall:.1f} s wall, {s_cpu:.1f} s CPU")
    print(f"import samples (judge, cache every sample, store):  {i_wall:.1f} s wall, {i_cpu:.1f} s CPU")
    print(f"report --table pass-at-k:                           {r_wall:.1f} s wall, {r_cpu:.1f} s CPU")
    print(f"report --table labels (json):                       {l_wall:.1f} s wall, {l_cpu:.1f} s CPU")
    print(f"import + report: {both_wall:.1f} s wall, {both_cpu:.1f} s CPU = {both_cpu / s_cpu:.2f}x score's CPU "
          f"({both_wall / s_wall:.2f}x its wall); target < {TARGET_CPU_S:.0f} s CPU: "
          f"{'met' if both_cpu < TARGET_CPU_S else 'MISSED'}")  # fmt: skip
    size = f"{count:,} samples ({args.instances} x {args.per_instance})"
    record("bench_samples", [
        row(f"import samples + report --table pass-at-k, CPU ({size})", both_cpu, "s",
            baseline=("critiquebench score on the same file", s_cpu), ratio=both_cpu / s_cpu,
            target=f"< {TARGET_CPU_S:.0f} s CPU", met=both_cpu < TARGET_CPU_S),
        row("import samples, CPU", i_cpu, "s"),
        row("report --table pass-at-k, CPU", r_cpu, "s"),
        row("import + report, wall", both_wall, "s", baseline=("score, wall", s_wall), ratio=both_wall / s_wall),
    ], path=args.json)  # fmt: skip


if __name__ == "__main__":
    main()
