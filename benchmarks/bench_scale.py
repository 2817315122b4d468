"""Study throughput of the Ray executor beside the local one, against a scripted server at a fixed latency.

    .venv/bin/python benchmarks/bench_scale.py [--runs 192] [--rounds 5] [--concurrency 32] [--latency 0.05]
                                               [--workers 2]

The server runs in its own process. Both executors run the same study shape (game24, generated instances,
`sound-first` with `--rounds` rounds; the server always answers "OK", so every run makes `--rounds` calls) in
fresh SQLite stores, with `--concurrency` runs (hence calls) in flight. Ray's start-up and its workers' first
imports are excluded: a small warm-up study runs on the same workers first.

Printed: calls per second and the ratio to the ideal `concurrency / latency` for each executor (target for
Ray with 2 workers: >= 0.95x), and the per-run overhead of the Ray executor over the local one, measured with
runs one at a time against a server answering at once.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from critiquebench.store.cache import CallCache  # noqa: E402

from critiquebench.llm.client import LLMClient, LLMSettings  # noqa: E402
from critiquebench.scale.ray_executor import RayExecutor  # noqa: E402
from critiquebench.studies.config import build_config  # noqa: E402
from critiquebench.studies.runner import load_matrix, run_study  # noqa: E402
from tests.scripted_server import serve_in_subprocess  # noqa: E402


def _study(name: str, runs: int, rounds: int, concurrency: int) -> Any:
    flags = {"domains": "game24", "instances": f"gen:{runs}:7", "schemes": f"sound-first:rounds={rounds}",
             "concurrency": concurrency, "model": "scripted"}  # fmt: skip
    return build_config(name, {}, flags)


def _timed_study(store: Path, config: Any, settings: LLMSettings, executor: Any) -> tuple[float, int]:
    """(wall seconds, LLM calls answered) of running the study's matrix."""
    llm = LLMClient(settings, CallCache(store))
    tasks = load_matrix(config)
    start = time.perf_counter()
    summary = run_study(store, config, llm, tasks=tasks, execute=executor.execute if executor else None)
    wall = time.perf_counter() - start
    assert summary.ok, summary.errors[:3]
    usage = executor.usage() if executor else llm.usage()
    return wall, int(usage["calls"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=192)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    ideal = args.concurrency / args.latency
    print(f"load average {os.getloadavg()[0]:.2f}; ideal {ideal:.0f} calls/s "
          f"({args.concurrency} in flight / {args.latency * 1000:.0f} ms)")  # fmt: skip

    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, serve_in_subprocess(latency=args.latency) as slow:
        settings = LLMSettings(model="scripted", base_url=slow, concurrency=args.concurrency, timeout=30.0)
        for kind in ("local", "ray"):
            store = Path(tmp) / f"{kind}.sqlite"
            executor = (
                RayExecutor(store, settings, concurrency=args.concurrency, workers=args.workers)
                if kind == "ray"
                else nullcontext(None)
            )
            with executor as ex:
                _timed_study(store, _study("warm", 2 * args.workers, 1, args.concurrency), settings, ex)
                wall, calls = _timed_study(store, _study("s", args.runs, args.rounds, args.concurrency), settings, ex)
            results[kind] = calls / wall
            print(f"{kind:>5}: {calls} calls in {wall:.2f} s = {calls / wall:.0f} calls/s = "
                  f"{calls / wall / ideal:.2f}x of ideal")  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp, serve_in_subprocess(latency=0.0) as fast:
        settings = LLMSettings(model="scripted", base_url=fast, concurrency=1, timeout=30.0)
        per_run: dict[str, float] = {}
        for kind in ("local", "ray"):
            store = Path(tmp) / f"{kind}.sqlite"
            executor = RayExecutor(store, settings, concurrency=1, workers=1) if kind == "ray" else nullcontext(None)
            with executor as ex:
                _timed_study(store, _study("warm", 2, 1, 1), settings, ex)
                wall, _ = _timed_study(store, _study("seq", 40, 1, 1), settings, ex)
            per_run[kind] = wall / 40
        overhead = (per_run["ray"] - per_run["local"]) * 1000
        print(f"per-run time, one at a time, 0 ms server: local {per_run['local'] * 1000:.1f} ms, "
              f"ray {per_run['ray'] * 1000:.1f} ms: Ray adds {overhead:+.1f} ms per run")  # fmt: skip
    print(f"ray / local throughput: {results['ray'] / results['local']:.2f}x; "
          f"ray at {results['ray'] / ideal:.2f}x of ideal (target >= 0.95x)")  # fmt: skip


if __name__ == "__main__":
    main()
