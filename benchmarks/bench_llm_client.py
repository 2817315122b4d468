"""Client overhead and throughput of LLMClient against a scripted server answering after a fixed latency.

    .venv/bin/python benchmarks/bench_llm_client.py [--calls 50] [--rounds 3] [--concurrency 16] [--latency 0.05]

The server runs in its own process, so its work does not compete with the client's for the GIL. Three paths
send the same requests to it: raw httpx POSTs (the floor), the bare ChatOpenAI that LLMClient wraps (what the
one client path costs before our code), and LLMClient with a fresh cache (every call a miss). The paths take
turns for `--rounds` rounds and medians are printed, so load from other processes hits them alike.

Targets: < 5 ms added per call over raw httpx; throughput at concurrency 16 >= 0.9x of concurrency / latency.
All Python work of the client threads runs under one GIL, so throughput cannot exceed 1 / (CPU time per call):
the "cpu-bound ceiling" column shows that limit for each path.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from benchmarks.results import add_json_option, record, row  # noqa: E402
from critiquebench.llm.client import LLMClient, LLMSettings, chat_model  # noqa: E402
from critiquebench.store.cache import CallCache  # noqa: E402
from tests.scripted_server import serve_in_subprocess  # noqa: E402

Call = Callable[[int], object]


def _messages(i: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You solve puzzles."},
        {"role": "user", "content": f"Solve puzzle {i}"},
    ]


def _timed(fn: Call, indices: range, workers: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) to make the calls `indices` over `workers` threads."""
    cpu, start = time.process_time(), time.perf_counter()
    if workers == 1:
        for i in indices:
            fn(i)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(fn, indices))
    return time.perf_counter() - start, time.process_time() - cpu


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50, help="sequential calls per path and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.05, help="server latency in seconds")
    add_json_option(parser)
    args = parser.parse_args()
    print(f"load average before: {_load()}")
    with serve_in_subprocess(args.latency) as base_url, tempfile.TemporaryDirectory() as tmp:
        rows = run(base_url, Path(tmp), args.calls, args.rounds, args.concurrency, args.latency)
    print(f"load average after:  {_load()}")
    record("bench_llm_client", rows, path=args.json)


def run(base_url: str, tmp: Path, calls: int, rounds: int, concurrency: int, latency: float) -> list[dict]:
    """Prints the figures; returns them as results rows."""
    settings = LLMSettings(model="scripted", base_url=base_url, concurrency=concurrency, max_tokens=64)
    llm = LLMClient(settings, CallCache(tmp / "bench.sqlite"))
    bare = chat_model(settings, base_url)
    limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency * 2)
    http = httpx.Client(base_url=base_url, limits=limits)

    def raw(i: int) -> object:
        body = {"model": "scripted", "messages": _messages(i), "temperature": 0.0, "max_tokens": 64, "n": 1}
        response = http.post("/chat/completions", json=body, headers={"Authorization": "Bearer sk-no-key"})
        return response.json()["choices"][0]["message"]["content"]

    paths: dict[str, Call] = {
        "raw httpx POST": raw,
        "ChatOpenAI.invoke": lambda i: bare.invoke(_messages(i)).text,
        "LLMClient (miss)": lambda i: llm.complete(_messages(i)).text,
    }
    starts = itertools.count(0, 100_000)  # disjoint blocks of prompts: LLMClient never sees one twice

    def block(n: int) -> range:
        start = next(starts)
        return range(start, start + n)

    for fn in paths.values():  # imports, and one keep-alive connection per worker in every pool
        _timed(fn, block(concurrency), concurrency)

    seq: dict[str, list[tuple[float, float]]] = {name: [] for name in paths}
    par: dict[str, list[tuple[float, float]]] = {name: [] for name in paths}
    seen = block(calls)
    for r in range(rounds):
        for name, fn in paths.items():
            indices = seen if (r == 0 and name.startswith("LLMClient")) else block(calls)
            seq[name].append(_timed(fn, indices, 1))
    hit_wall, _ = _timed(paths["LLMClient (miss)"], seen, 1)  # the same prompts again: cache hits
    n = concurrency * 20
    for _ in range(rounds):
        for name, fn in paths.items():
            par[name].append(_timed(fn, block(n), concurrency))

    def per_call_ms(samples: list[tuple[float, float]], count: int) -> tuple[float, float]:
        return (
            statistics.median(w for w, _ in samples) / count * 1000,
            statistics.median(c for _, c in samples) / count * 1000,
        )

    print(
        f"sequential: {calls} calls x {rounds} rounds per path, server latency {latency * 1000:.0f} ms "
        "(medians; cpu = this process's CPU time)"
    )
    raw_ms, _ = per_call_ms(seq["raw httpx POST"], calls)
    bare_ms, _ = per_call_ms(seq["ChatOpenAI.invoke"], calls)
    client_ms, client_cpu = per_call_ms(seq["LLMClient (miss)"], calls)
    rows = [
        row(f"LLMClient time per call (cache miss), sequential, {latency * 1000:.0f} ms server", client_ms, "ms",
            baseline=("raw httpx POST", raw_ms), ratio=client_ms / raw_ms, target="< 5 ms added per call",
            met=client_ms - raw_ms < 5,
            note=f"+{client_ms - raw_ms:.2f} ms over raw, +{client_ms - bare_ms:.2f} ms over bare ChatOpenAI.invoke "
            f"({bare_ms:.2f} ms); CPU {client_cpu:.2f} ms per call; medians of {rounds} rounds of {calls} calls"),
    ]  # fmt: skip
    for name in paths:
        wall, cpu = per_call_ms(seq[name], calls)
        note = ""
        if name != "raw httpx POST":
            note = f"   added {wall - raw_ms:5.2f} ms vs raw"
        if name.startswith("LLMClient"):
            note += f" (target < 5), {wall - bare_ms:5.2f} ms vs bare ChatOpenAI"
        print(f"  {name:20s} {wall:7.2f} ms/call   cpu {cpu:5.2f} ms/call{note}")
    print(f"  {'LLMClient (hit)':20s} {hit_wall / calls * 1000:7.2f} ms/call")
    rows.append(row("LLMClient time per call (cache hit)", hit_wall / calls * 1000, "ms"))

    ideal = concurrency / latency
    print(f"throughput: {n} calls at concurrency {concurrency} x {rounds} rounds (ideal {ideal:.0f} calls/s)")
    rates = {name: statistics.median(n / w for w, _ in samples) for name, samples in par.items()}
    for name, samples in par.items():
        cpu_ms = statistics.median(c for _, c in samples) / n * 1000
        ceiling = 1000 / cpu_ms / ideal
        note = ""
        if name.startswith("LLMClient"):
            note = (
                f" (target >= 0.9)   {rates[name] / rates['raw httpx POST']:.2f}x raw, "
                f"{rates[name] / rates['ChatOpenAI.invoke']:.2f}x bare ChatOpenAI"
            )
        print(
            f"  {name:20s} {rates[name]:7.1f} calls/s   {rates[name] / ideal:.2f}x ideal   "
            f"cpu {cpu_ms:5.2f} ms/call, cpu-bound ceiling {ceiling:.2f}x ideal{note}"
        )
        client = name.startswith("LLMClient")
        rows.append(row(f"throughput at concurrency {concurrency}, {name}", rates[name], "calls/s",
                        baseline=(f"ideal ({concurrency} / {latency * 1000:.0f} ms)", ideal),
                        ratio=rates[name] / ideal, target=">= 0.9x ideal" if client else None,
                        met=rates[name] / ideal >= 0.9 if client else None,
                        note=f"CPU {cpu_ms:.2f} ms per call: CPU-bound ceiling {ceiling:.2f}x ideal; "
                        f"medians of {rounds} rounds of {n} calls"))  # fmt: skip
    return rows


if __name__ == "__main__":
    main()
