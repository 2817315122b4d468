"""Start-up and set-up costs (issue 25): `critiquebench --help` CPU time, and a second clone's `scripts/setup.sh`.

    .venv/bin/python benchmarks/bench_setup.py            # --help only (seconds)
    .venv/bin/python benchmarks/bench_setup.py --setup    # also clone the repo and run scripts/setup.sh (minutes)

`--help`: CPU time (user + system) of the installed command as `/usr/bin/time` reports it, run from a scratch folder
as a user runs it, in the user's environment and with the bytecode `scripts/setup.sh` compiles: the median of
`--reps` runs (the best is noted; a best-of figure hid what a user pays, issue 44), against two baselines measured
in the same run and the same way: the interpreter importing typer alone (the floor
any typer CLI pays) and the interpreter importing every module the commands use, as every command did before
command modules imported lazily (the old cost of `--help`). Target: at most 0.3 s.

A study with nothing to do: `critiquebench run` of a study whose runs are all finished (a small Game of 24 study
run once first against the scripted server), CPU and wall time, median of `--reps`. Target: at most 1 s. Baseline:
`critiquebench --help` in the same run (what any command pays before its own work).

`--setup`: `git clone` of this checkout into a temporary folder, then its `bash scripts/setup.sh`, wall and CPU
time; the baseline, in the same run, is the light install a user with an endpoint does (a fresh venv and
`pip install` of the project's wheel with its core dependencies). The embedded model's llama-cpp-python comes
from the per-user wheel cache that the first set-up on this machine filled (the script says whether it did).
Target: under two minutes. The machine's load is printed beside the numbers, as it is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv" / "bin"
sys.path.insert(0, str(ROOT))
from benchmarks.results import add_json_option, record, row  # noqa: E402

SCRIPTED_REPLY = "(4 + 4) * (10 - 7) = 24\n[ANSWER END]"
EAGER = ("critiquebench.cli, critiquebench.graphs, critiquebench.reports.metrics, critiquebench.reports.tables, "
         "critiquebench.reports.intrinsic, critiquebench.studies.runner, critiquebench.studies.estimate, "
         "critiquebench.store.results, critiquebench.importers.planbench, critiquebench.confidence.features, "
         "critiquebench.llm.client")  # fmt: skip


def cpu_of(args: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process run to its end, as /usr/bin/time reports them."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        subprocess.run(["/usr/bin/time", "-o", out.name, "-f", "%U %S %e", *args], cwd=cwd, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        user, system, wall = (float(x) for x in out.read().split()[-3:])
    return user + system, wall


# The user's environment as it is (PYTHONDONTWRITEBYTECODE included, which the shared machine sets), with the
# project's bytecode compiled as scripts/setup.sh compiles it, so a checkout set up before that step is measured as
# one set up now. (Earlier runs wrote bytecode to a scratch PYTHONPYCACHEPREFIX instead, which a user never has.)
COMPILE = [str(VENV / "python"), "-m", "compileall", "-q", "-j", "0", "critiquebench", "domains", "nodes", "graphs",
           "store"]  # fmt: skip
AS_INSTALLED = dict(os.environ)


def median_cpu(args: list[str], reps: int, cwd: Path = ROOT) -> tuple[float, float, float]:
    """(median CPU, best CPU, median wall) over `reps` runs, after one run that is not counted."""
    subprocess.run(COMPILE, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    cpu_of(args, cwd=cwd, env=AS_INSTALLED)
    runs = [cpu_of(args, cwd=cwd, env=AS_INSTALLED) for _ in range(reps)]
    cpus = sorted(c for c, _ in runs)
    return statistics.median(cpus), cpus[0], statistics.median(w for _, w in runs)


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def bench_help(reps: int) -> list[dict]:
    python = str(VENV / "python")
    with tempfile.TemporaryDirectory(prefix="cb-help-") as scratch:
        help_cpu, help_best, _ = median_cpu([str(VENV / "critiquebench"), "--help"], reps, Path(scratch))
        floor, _, _ = median_cpu([python, "-c", "import typer"], reps, Path(scratch))
        eager, _, _ = median_cpu([python, "-c", f"import {EAGER}"], reps, Path(scratch))
    print(f"--help CPU, median of {reps} as /usr/bin/time measures it ({load()}):")
    verdict = "met" if help_cpu <= 0.3 else "MISSED"
    print(f"  critiquebench --help            {help_cpu:6.3f} s   target <= 0.3 s: {verdict} (best {help_best:.3f} s)")
    print(f"  baseline: import typer          {floor:6.3f} s   --help = {help_cpu / floor:.2f}x")
    print(f"  baseline: every command's deps  {eager:6.3f} s   --help = {help_cpu / eager:.2f}x (the old --help)")
    note = f"median of {reps}, /usr/bin/time user + system; best {help_best:.3f} s"
    return [
        row("CPU time of critiquebench --help", help_cpu, "s",
            baseline=("the interpreter importing typer alone", floor), ratio=help_cpu / floor,
            target="<= 0.3 s", met=help_cpu <= 0.3, note=note),
        row("CPU time of critiquebench --help", help_cpu, "s",
            baseline=("importing every module the commands use (the old --help)", eager), ratio=help_cpu / eager,
            note=note),
    ]  # fmt: skip


def bench_nothing_to_do(reps: int) -> list[dict]:
    """A finished study run again: everything a command does before and after its runs, and nothing else."""
    from tests.scripted_server import ScriptedServer

    cli = str(VENV / "critiquebench")
    with tempfile.TemporaryDirectory(prefix="cb-idle-") as scratch, ScriptedServer(reply=SCRIPTED_REPLY) as server:
        args = [cli, "run", "idle", "--domains", "game24", "--instances", "gen:3:1", "--schemes",
                "standard,sound-first:rounds=2", "--model", "scripted", "--base-url", server.base_url,
                "--store", "idle.sqlite", "--no-progress"]  # fmt: skip
        subprocess.run(args, cwd=scratch, check=True, capture_output=True)
        asked = server.requests
        cpu, best, wall = median_cpu(args, reps, Path(scratch))
        help_cpu, _, help_wall = median_cpu([cli, "--help"], reps, Path(scratch))
        assert server.requests == asked, "a finished study made LLM calls"
    print(f"a study with nothing to do, median of {reps} ({load()}):")
    verdict = "met" if cpu <= 1.0 else "MISSED"
    print(f"  critiquebench run (all done)    {cpu:6.3f} s CPU, {wall:6.3f} s wall   target <= 1 s CPU: {verdict}")
    print(f"  baseline: critiquebench --help  {help_cpu:6.3f} s CPU, {help_wall:6.3f} s wall   "
          f"run = {cpu / help_cpu:.2f}x")  # fmt: skip
    return [
        row("CPU time of a study with nothing to do (critiquebench run of a finished study)", cpu, "s",
            baseline=("critiquebench --help", help_cpu), ratio=cpu / help_cpu, target="<= 1 s", met=cpu <= 1.0,
            note=f"median of {reps}; best {best:.3f} s; wall {wall:.3f} s on a shared machine"),
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
    rows = bench_help(args.reps) + bench_nothing_to_do(args.reps)
    if args.setup:
        rows += bench_setup()
    record("bench_setup-setup" if args.setup else "bench_setup", rows, path=args.json)


if __name__ == "__main__":
    main()
