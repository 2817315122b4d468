"""A study whose every call is cached (the same definition under another name) against its first run.

    .venv/bin/python benchmarks/bench_reuse.py [--instances 300] [--latency 0.05]

Runs the installed command as a user does: study `first` (Game of 24 x standard, sound-first:rounds=3,
sampling:k=3, so 900 runs for 300 puzzles, at concurrency 4 against a scripted server answering after 50 ms),
then study `twin` with the same definition under another name, then `first` again (already finished: what
remains is the fixed cost of starting the command, importing the libraries and checking the store). Prints the
wall times and the ratio first / twin (target >= 10x). Before finished runs were reused (critiquebench.studies.
reuse), `twin` stepped every run through its graph and checkpoints with cache hits: 80% of the first run's time.
The server runs in its own process so its work does not compete with the command's.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import add_json_option, record, row  # noqa: E402
from tests.scripted_server import serve_in_subprocess  # noqa: E402

CLI = ROOT / ".venv" / "bin" / "critiquebench"
DATASETS = ROOT.parent / "shared" / "datasets"
SCHEMES = "standard,sound-first:rounds=3,sampling:k=3"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(name: str, store: Path, base_url: str, instances: int) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds of the command, and its summary line."""
    args = [str(CLI), "run", name, "--domains", "game24", "--instances", f"901-{900 + instances}",
            "--schemes", SCHEMES, "--model", "scripted", "--base-url", base_url, "--dataset", str(DATASETS),
            "--concurrency", "4", "--max-tokens", "64", "--store", str(store), "--no-progress"]  # fmt: skip
    started, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    elapsed, cpu = time.perf_counter() - started, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    summary = next(line for line in done.stderr.splitlines() if line.startswith(f"study {name}:"))
    return elapsed, cpu, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=300, help="Game of 24 puzzles (3 runs each)")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the scripted server takes per call")
    add_json_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, serve_in_subprocess(args.latency) as base_url:
        store = Path(tmp) / "store.sqlite"
        first, first_cpu, first_summary = timed_run("first", store, base_url, args.instances)
        twin, twin_cpu, twin_summary = timed_run("twin", store, base_url, args.instances)
        fixed, fixed_cpu, _ = timed_run("first", store, base_url, args.instances)
    runs = 3 * args.instances
    print(first_summary)
    print(twin_summary)
    for label, wall, cpu in (("first run", first, first_cpu), ("twin (every call cached)", twin, twin_cpu)):
        print(f"{label:<27} {wall:6.2f} s wall, {cpu:5.2f} s CPU ({1000 * wall / runs:.1f} ms per run)")
    print(f"{'fixed cost (nothing to do)':<27} {fixed:6.2f} s wall, {fixed_cpu:5.2f} s CPU (start-up, imports, checks)")
    ratio = first / twin
    print(f"first / twin: {ratio:.1f}x (target >= 10x): {'met' if ratio >= 10 else 'MISSED'}")
    shape = f"{runs} runs ({args.instances} Game of 24 puzzles x {SCHEMES}), server at {args.latency * 1000:.0f} ms"
    rows = [
        row("wall time of a study whose every call is cached (the twin)", twin, "s",
            baseline=("its first run", first), ratio=ratio, target="first / twin >= 10x", met=ratio >= 10,
            note=shape),
        row("CPU time of the twin", twin_cpu, "s", baseline=("its first run", first_cpu), ratio=first_cpu / twin_cpu),
        row("fixed cost of the command with nothing to do (wall)", fixed, "s",
            note=f"{fixed_cpu:.2f} s CPU: start-up, imports, checks"),
    ]  # fmt: skip
    record("bench_reuse", rows, path=args.json)


if __name__ == "__main__":
    main()
