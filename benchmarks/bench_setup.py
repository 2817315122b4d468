"""Start-up and set-up costs (issue 25): `critiquebench --help` CPU time, and a second clone's `scripts/setup.sh`.

    .venv/bin/python benchmarks/bench_setup.py            # --help only (seconds)
    .venv/bin/python benchmarks/bench_setup.py --setup    # also clone the repo and run scripts/setup.sh (minutes)

`--help`: CPU time (user + system) of the installed command, best of `--reps`, against two baselines measured in
the same run: the interpreter importing typer alone (the floor any typer CLI pays) and the interpreter importing
every module the commands use, as every command did before command modules imported lazily (the old cost of
`--help`). Target: under 0.3 s.

`--setup`: `git clone` of this checkout into a temporary folder, then its `bash scripts/setup.sh`, wall and CPU
time; the baseline, in the same run, is the light install a user with an endpoint does (a fresh venv and
`pip install` of the project's wheel with its core dependencies). The embedded model's llama-cpp-python comes
from the per-user wheel cache that the first set-up on this machine filled (the script says whether it did).
Target: under two minutes. The machine's load is printed beside the numbers, as it is shared.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv" / "bin"
sys.path.insert(0, str(ROOT))
from benchmarks.results import add_json_option, record, row  # noqa: E402

EAGER = ("critiquebench.cli, critiquebench.graphs, critiquebench.reports.metrics, critiquebench.reports.tables, "
         "critiquebench.reports.intrinsic, critiquebench.studies.runner, critiquebench.studies.estimate, "
         "critiquebench.store.results, critiquebench.importers.planbench, critiquebench.confidence.features, "
         "critiquebench.llm.client")  # fmt: skip


def cpu_of(args: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def best_cpu(args: list[str], reps: int) -> float:
    return min(cpu_of(args)[0] for _ in range(reps))


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def bench_help(reps: int) -> list[dict]:
    python = str(VENV / "python")
    help_cpu = best_cpu([str(VENV / "critiquebench"), "--help"], reps)
    floor = best_cpu([python, "-c", "import typer"], reps)
    eager = best_cpu([python, "-c", f"import {EAGER}"], reps)
    print(f"--help CPU, best of {reps} ({load()}):")
    verdict = "met" if help_cpu < 0.3 else "MISSED"
    print(f"  critiquebench --help            {help_cpu:6.3f} s   target < 0.3 s: {verdict}")
    print(f"  baseline: import typer          {floor:6.3f} s   --help = {help_cpu / floor:.2f}x")
    print(f"  baseline: every command's deps  {eager:6.3f} s   --help = {help_cpu / eager:.2f}x (the old --help)")
    return [
        row("CPU time of critiquebench --help", help_cpu, "s",
            baseline=("the interpreter importing typer alone", floor), ratio=help_cpu / floor,
            target="< 0.3 s", met=help_cpu < 0.3, note=f"best of {reps}"),
        row("CPU time of critiquebench --help", help_cpu, "s",
            baseline=("importing every module the commands use (the old --help)", eager), ratio=help_cpu / eager,
            note=f"best of {reps}"),
    ]  # fmt: skip


def _cache_note() -> str:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "critiquebench" / "wheels"
    found = sorted(cache.glob("llama-cpp-python-*/llama_cpp_python-*.whl"))
    return f"llama-cpp-python from the wheel cache ({found[-1].name})" if found else "NO cached llama-cpp-python wheel"


def bench_setup() -> list[dict]:
    note = _cache_note()
    with tempfile.TemporaryDirectory(prefix="cb-setup-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        # the clone sits where the README expects it: its datasets are ../shared/datasets of the original
        env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTUAL_ENV")}
        setup_cpu, setup_wall = cpu_of(["bash", "scripts/setup.sh"], cwd=clone, env=env)
        ok = subprocess.run([str(clone / ".venv" / "bin" / "critiquebench"), "--help"], capture_output=True).returncode
        llama = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-c", "import llama_cpp, llama_cpp.server"],
                               capture_output=True).returncode  # fmt: skip
        wheel_dir = Path(tmp) / "dist"
        subprocess.run([str(VENV / "python"), "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                        "-w", str(wheel_dir), str(clone)], check=True, capture_output=True)  # fmt: skip
        light = Path(tmp) / "light"
        light_cpu, light_wall = cpu_of([sys.executable, "-m", "venv", str(light)])
        wheel = next(wheel_dir.glob("*.whl"))
        cpu, wall = cpu_of([str(light / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)])
        light_cpu, light_wall = light_cpu + cpu, light_wall + wall
    print(f"second clone's set-up ({note}; {load()}):")
    print(f"  bash scripts/setup.sh           {setup_wall:6.1f} s wall, {setup_cpu:6.1f} s CPU   target < 120 s: "
          f"{'met' if setup_wall < 120 else 'MISSED'}; --help exit {ok}, import llama_cpp exit {llama}")  # fmt: skip
    print(f"  baseline: light install         {light_wall:6.1f} s wall, {light_cpu:6.1f} s CPU   set-up = "
          f"{setup_wall / light_wall:.2f}x wall")  # fmt: skip
    return [
        row("a second clone's bash scripts/setup.sh, wall time", setup_wall, "s",
            baseline=("the light install (fresh venv, pip install of the wheel)", light_wall),
            ratio=setup_wall / light_wall, target="< 2 min", met=setup_wall < 120,
            note=f"{note}; --help exit {ok}, import llama_cpp exit {llama}"),
        row("a second clone's bash scripts/setup.sh, CPU time", setup_cpu, "s",
            baseline=("the light install", light_cpu), ratio=setup_cpu / light_cpu),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--setup", action="store_true", help="also time a second clone's scripts/setup.sh")
    add_json_option(parser)
    args = parser.parse_args()
    rows = bench_help(args.reps)
    if args.setup:
        rows += bench_setup()
    record("bench_setup-setup" if args.setup else "bench_setup", rows, path=args.json)


if __name__ == "__main__":
    main()
