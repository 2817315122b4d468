"""Client overhead and throughput of LLMClient against a scripted server answering after a fixed 50 ms.

    .venv/bin/python benchmarks/bench_llm_client.py [--calls 100] [--concurrency 16]

Baseline: raw httpx POSTs of the same request body. The server runs in its own process, so its work does not
compete with the client's for the GIL. Targets: < 5 ms added per call; throughput >= 0.9x of
concurrency / latency.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from critiquebench.nodes.llm import LLMClient, LLMSettings  # noqa: E402
from critiquebench.store.cache import CallCache  # noqa: E402

LATENCY = 0.05


def _messages(i: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You solve puzzles."},
        {"role": "user", "content": f"Solve puzzle {i}"},
    ]


def _timed(fn: Callable[[int], object], indices: range, workers: int = 1) -> float:
    start = time.perf_counter()
    if workers == 1:
        for i in indices:
            fn(i)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(fn, indices))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.scripted_server", str(LATENCY)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            run(base_url, Path(tmp), args.calls, args.concurrency)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(10)


def run(base_url: str, tmp: Path, calls: int, concurrency: int) -> None:
    settings = LLMSettings(model="scripted", base_url=base_url, concurrency=concurrency, max_tokens=64)
    llm = LLMClient(settings, CallCache(tmp / "bench.sqlite"))
    http = httpx.Client(base_url=base_url, limits=httpx.Limits(max_connections=concurrency * 2))

    def raw(i: int) -> object:
        body = {"model": "scripted", "messages": _messages(i), "temperature": 0.0, "max_tokens": 64, "n": 1}
        response = http.post("/chat/completions", json=body, headers={"Authorization": "Bearer sk-no-key"})
        return response.json()["choices"][0]["message"]["content"]

    def ours(i: int) -> object:
        return llm.complete(_messages(i)).text

    raw(-1), ours(-1)  # warm up connections and imports
    baseline = _timed(raw, range(calls)) / calls
    client = _timed(ours, range(calls)) / calls
    hits = _timed(ours, range(calls)) / calls  # same prompts again: answered from the cache
    added_ms = (client - baseline) * 1000
    print(f"sequential, {calls} calls, server latency {LATENCY * 1000:.0f} ms")
    print(f"  raw httpx POST      {baseline * 1000:7.2f} ms/call")
    print(f"  LLMClient (miss)    {client * 1000:7.2f} ms/call   added {added_ms:5.2f} ms (target < 5)")
    print(f"  LLMClient (hit)     {hits * 1000:7.2f} ms/call")

    n = concurrency * 20
    ideal = concurrency / LATENCY
    raw_rate = n / _timed(raw, range(calls, calls + n), concurrency)
    our_rate = n / _timed(ours, range(calls + n, calls + 2 * n), concurrency)
    print(f"throughput, {n} calls at concurrency {concurrency} (ideal {ideal:.0f} calls/s)")
    print(f"  raw httpx POST      {raw_rate:7.1f} calls/s   {raw_rate / ideal:.2f}x ideal")
    print(
        f"  LLMClient           {our_rate:7.1f} calls/s   {our_rate / ideal:.2f}x ideal (target >= 0.9)"
        f"   {our_rate / raw_rate:.2f}x raw"
    )


if __name__ == "__main__":
    main()
