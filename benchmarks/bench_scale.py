"""Study throughput of the Ray executor beside the local one, against a scripted server at a fixed latency.

    .venv/bin/python benchmarks/bench_scale.py [--runs 192] [--rounds 5] [--concurrency 32] [--latency 0.05]
                                               [--workers 2]

The server runs in its own process. Both executors run the same study shape (game24, generated instances,
`sound-first` with `--rounds` rounds; the server always answers "OK", so every run makes `--rounds` calls) in
fresh SQLite stores, with `--concurrency` runs (hence calls) in flight. Ray's start-up and its workers' first
imports are excluded: a small warm-up study runs on the same workers first.

Printed: calls per second and the ratio to the ideal `concurrency / latency` for each executor (target for
Ray with 2 workers: >= 0.95x; for the local executor at 32 in flight: >= 0.5x), the local executor at each of
`--in-flight` (8, 32 and 64 calls in flight), and beside each the driver's CPU per call against a raw httpx POST
loop sending the study's own recorded requests to the same server with as many in flight, in the same run (issue
44's target: the study's driver CPU per call, start-up excluded by a warm-up study, at most 2x the raw loop's at
32 in flight). Then the per-run overhead of the Ray executor over the local one, measured with
runs one at a time against a server answering at once (the executors take turns; medians are compared).
Beside each figure: the CPU the whole pipeline spent per call (every process of this benchmark: the driver,
Ray's workers and services, the scripted server; read from /proc), and hence the CPU-bound ceiling:
`cores / CPU per call`, and for the local executor, whose Python work shares one GIL, at most
`1 / driver CPU per call`. No executor goes faster on this machine,
whatever the latency, so the ratio to that ceiling says how much of the machine the executor used. Last, two
floors: the same study run one run at a time (the pipeline's CPU per call without GIL or lock contention, the
best any spreading of runs over processes could do), and the one LLM client path alone: the bare ChatOpenAI
(plus the server) sending the study's own recorded requests, one at a time. Neither can pass
`cores / its CPU per call`. `--phases` instead breaks the local executor's CPU per call down by phase.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from benchmarks.results import add_json_option, record, row  # noqa: E402
from critiquebench.llm.client import LLMClient, LLMSettings, chat_model  # noqa: E402
from critiquebench.scale.ray_executor import RayExecutor  # noqa: E402
from critiquebench.store.cache import CallCache  # noqa: E402
from critiquebench.studies.config import build_config  # noqa: E402
from critiquebench.studies.runner import load_matrix, run_study  # noqa: E402
from tests.scripted_server import serve_in_subprocess  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK")
PER_RUN_BATCHES, PER_RUN_RUNS = 7, 12
PARTS = ("driver", "workers", "ray services", "server")
# the scripted server's listen queue: the raw loop opens twice as many connections as calls in flight at once, which
# overflow the standard library's 5 (some then came back reset: `Connection reset by peer` at 64 in flight)
BACKLOG = 512


def _tree_cpu() -> Counter[str]:
    """CPU seconds (user + system) so far of this process and its descendants, by part of the pipeline."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fp:
                fields = fp.read().rsplit(")", 1)[1].split()
        except OSError:  # exited meanwhile
            continue
        pid = int(entry)
        parent[pid], cpu[pid] = int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK
    me, parts = os.getpid(), Counter[str]()
    for pid in cpu:
        ancestor = pid
        while ancestor not in (me, 0, 1) and ancestor in parent:
            ancestor = parent[ancestor]
        if ancestor == me:
            parts[_part(pid, me)] += cpu[pid]
    return parts


def _machine_busy() -> float:
    """CPU seconds the whole machine has spent busy (not idle or waiting for I/O), from /proc/stat."""
    with open("/proc/stat") as fp:
        ticks = [int(x) for x in fp.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / _TICK


def _part(pid: int, me: int) -> str:
    if pid == me:
        return "driver"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fp:
            cmdline = fp.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "ray services"
    if "scripted_server" in cmdline:
        return "server"
    return "workers" if "RunWorker" in cmdline else "ray services"  # Ray titles an actor's process by its class


def _study(name: str, runs: int, rounds: int, concurrency: int, seed: int = 7) -> Any:
    flags = {"domains": "game24", "instances": f"gen:{runs}:{seed}", "schemes": f"sound-first:rounds={rounds}",
             "concurrency": concurrency, "model": "scripted"}  # fmt: skip
    return build_config(name, {}, flags)


def _timed_study(store: Path, config: Any, settings: LLMSettings, executor: Any) -> tuple[float, int, Counter[str]]:
    """(wall seconds, LLM calls answered, CPU seconds by part) of running the study's matrix."""
    llm = LLMClient(settings, CallCache(store))
    tasks = load_matrix(config)
    cpu, machine = _tree_cpu(), _machine_busy()
    start = time.perf_counter()
    summary = run_study(store, config, llm, tasks=tasks, execute=executor.execute if executor else None)
    wall = time.perf_counter() - start
    spent = _tree_cpu()
    spent.subtract(cpu)
    spent["machine"] = _machine_busy() - machine  # every process's, ours and other jobs', for comparison
    assert summary.ok, summary.errors[:3]
    usage = executor.usage() if executor else llm.usage()
    return wall, int(usage["calls"]), spent


def _recorded_requests(store: Path, limit: int) -> list[list[dict[str, str]]]:
    """Message lists the study sent (every round, so prompts with their history), from the store's cache."""
    cache = CallCache(store)
    return [record.messages for record, _ in zip(cache.iter_records(), range(limit), strict=False)]


def _raw_loop(base_url: str, requests: list[list[dict[str, str]]], calls: int, in_flight: int) -> tuple[float, float]:
    """(wall seconds, driver CPU seconds) of `calls` raw httpx POSTs of the study's recorded `requests` (in turn)
    with `in_flight` at a time, one keep-alive connection per thread: the floor of what sending them costs."""
    limits = httpx.Limits(max_connections=in_flight * 2, max_keepalive_connections=in_flight * 2)
    with httpx.Client(base_url=base_url, limits=limits, timeout=30.0) as http:

        def post(i: int) -> str:
            body = {"model": "scripted", "messages": requests[i % len(requests)], "temperature": 0.0,
                    "max_tokens": 512, "n": 1}  # fmt: skip
            reply = http.post("/chat/completions", json=body, headers={"Authorization": "Bearer sk-no-key"})
            return str(reply.json()["choices"][0]["message"]["content"])

        with ThreadPoolExecutor(in_flight) as pool:
            list(pool.map(post, range(in_flight * 2)))  # the connections, before the clock starts
            cpu = _tree_cpu()
            start = time.perf_counter()
            list(pool.map(post, range(calls)))
            wall = time.perf_counter() - start
            spent = _tree_cpu()
    spent.subtract(cpu)
    return wall, spent["driver"]


def _client_floor(base_url: str, requests: list[list[dict[str, str]]]) -> float:
    """CPU seconds per call of the bare ChatOpenAI and the server, sending `requests` one at a time."""
    chat = chat_model(LLMSettings(model="scripted", base_url=base_url), base_url)
    chat.invoke(requests[0])  # the first call pays for imports and the connection
    before = _tree_cpu()
    for messages in requests:
        chat.invoke(messages)
    spent = _tree_cpu()
    spent.subtract(before)
    return (spent["driver"] + spent["server"]) / len(requests)


def _phases(runs: int, rounds: int, concurrency: int, latency: float) -> None:
    """The local executor's study with per-phase CPU timers (they cost CPU themselves: no throughput here)."""
    from benchmarks.phase_timers import PhaseTimers

    timers = PhaseTimers().install()
    with tempfile.TemporaryDirectory() as tmp, serve_in_subprocess(latency=latency, backlog=BACKLOG) as url:
        settings = LLMSettings(model="scripted", base_url=url, concurrency=concurrency, timeout=30.0)
        store = Path(tmp) / "phases.sqlite"
        _timed_study(store, _study("warm", 4, 1, concurrency), settings, None)
        timers.start()
        _, calls, cpu = _timed_study(store, _study("s", runs, rounds, concurrency), settings, None)
        timers.report(calls)
        print(f"  {cpu['server'] / calls * 1000:6.2f} ms  the scripted server (its own process)")


def _async_path(flights: list[int], latency: float, calls: int, json_path: Path | None) -> None:
    """Issue 44's prescription measured: the LLM client's path (ChatOpenAI's `_generate` in each of `in flight`
    threads, as `LLMClient` sends) beside ChatOpenAI's async twin `_agenerate` on one event loop in one daemon
    thread shared by every calling thread (`asyncio.run_coroutine_threadsafe`, each caller waiting on its future)
    and the raw httpx POST loop, each at each number of calls in flight, sending the study's own requests.

    The async side gets every shortcut the sync one has (the reply read as a dict, the text-message payload) and
    one more: `_agenerate` hands the reply's parsing to the loop's default executor, which here runs it inline (a
    thread hop per call otherwise). It has no whole-request deadline (the sync side's `deadline_client`)."""
    import asyncio
    import threading
    from concurrent.futures import Future, ThreadPoolExecutor

    from critiquebench.llm.client import _ask, _DictParse

    class Inline(ThreadPoolExecutor):
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
            done: Future[Any] = Future()
            try:
                done.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                done.set_exception(exc)
            return done

    class DictRawAsync:  # `_DictRawResponses`' async twin
        def __init__(self, raw: Any) -> None:
            self._raw = raw

        async def create(self, **payload: Any) -> Any:
            return _DictParse(await self._raw.create(**payload))

        def __getattr__(self, name: str) -> Any:
            return getattr(self._raw, name)

    class DictAsync:
        def __init__(self, completions: Any) -> None:
            self._completions, self.with_raw_response = completions, DictRawAsync(completions.with_raw_response)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._completions, name)

    loop = asyncio.new_event_loop()
    loop.set_default_executor(Inline(1))
    threading.Thread(target=loop.run_forever, name="llm-loop", daemon=True).start()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, serve_in_subprocess(latency=latency, backlog=BACKLOG) as url:
        settings = LLMSettings(model="scripted", base_url=url, concurrency=32, timeout=30.0)
        store = Path(tmp) / "requests.sqlite"
        _timed_study(store, _study("requests", 24, 5, 32), settings, None)
        requests = _recorded_requests(store, 300)
        chat = chat_model(settings, url)
        chat.async_client = DictAsync(chat.async_client)

        def sync_call(i: int) -> str:
            return str(_ask(chat, requests[i % len(requests)], {}).text)

        def async_call(i: int) -> str:
            future = asyncio.run_coroutine_threadsafe(chat._agenerate(requests[i % len(requests)]), loop)
            return str(future.result().generations[0].message.text)

        for in_flight in flights:
            measured: dict[str, tuple[float, float]] = {}
            with ThreadPoolExecutor(in_flight) as pool:
                for name, call in (("sync", sync_call), ("async", async_call)):
                    assert set(pool.map(call, range(in_flight * 2))) == {"OK"}  # connections, before the clock
                    cpu, start = _tree_cpu(), time.perf_counter()
                    assert set(pool.map(call, range(calls))) == {"OK"}
                    wall = time.perf_counter() - start
                    spent = _tree_cpu()
                    spent.subtract(cpu)
                    measured[name] = (calls / wall, spent["driver"] / calls * 1000)
            raw_wall, raw_cpu = _raw_loop(url, requests, calls, in_flight)
            raw_ms = raw_cpu / calls * 1000
            (sync_rate, sync_ms), (async_rate, async_ms) = measured["sync"], measured["async"]
            print(f"{in_flight:2d} in flight: the client's path (threads) {sync_ms:.2f} ms CPU per call, "
                  f"{sync_rate:.0f} calls/s; async on one shared loop {async_ms:.2f} ms ({async_ms / sync_ms:.2f}x), "
                  f"{async_rate:.0f} calls/s; raw httpx POST loop {raw_ms:.2f} ms, "
                  f"{calls / raw_wall:.0f} calls/s")  # fmt: skip
            rows += [
                row(f"driver CPU per call, ChatOpenAI async path on one shared loop, {in_flight} in flight", async_ms,
                    "ms", baseline=("ChatOpenAI's sync path in threads (the client's)", sync_ms),
                    ratio=async_ms / sync_ms, note=f"raw httpx POST loop {raw_ms:.2f} ms"),
                row(f"throughput, ChatOpenAI async path on one shared loop, {in_flight} in flight", async_rate,
                    "calls/s", baseline=("ChatOpenAI's sync path in threads (the client's)", sync_rate),
                    ratio=async_rate / sync_rate, note=f"ideal {in_flight / latency:.0f} calls/s"),
            ]  # fmt: skip
    loop.call_soon_threadsafe(loop.stop)
    record("bench_scale-async", rows, path=json_path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=192)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--in-flight", default="8,32,64",
                        help="the local executor's study (and the raw loop) at each of these calls in flight")
    parser.add_argument("--phases", action="store_true",
                        help="only break the local executor's CPU per call down by phase (benchmarks/phase_timers.py)")
    parser.add_argument("--async-path", action="store_true",
                        help="only compare the client's path with ChatOpenAI's async one on a shared event loop")
    add_json_option(parser)
    args = parser.parse_args()
    if args.async_path:
        flights = sorted({int(x) for x in args.in_flight.split(",") if x.strip()})
        _async_path(flights, args.latency, args.runs * args.rounds, args.json)
        return
    if args.phases:
        _phases(args.runs, args.rounds, args.concurrency, args.latency)
        return
    ideal = args.concurrency / args.latency
    cores = len(os.sched_getaffinity(0))
    load_before = os.getloadavg()[0]
    print(f"load average {os.getloadavg()[0]:.2f} before the run; {cores} CPUs; ideal {ideal:.0f} calls/s "
          f"({args.concurrency} in flight / {args.latency * 1000:.0f} ms)")  # fmt: skip

    flights = sorted({int(x) for x in args.in_flight.split(",") if x.strip()})
    local: dict[int, tuple[float, int, float]] = {}  # in flight -> (wall, calls, driver CPU) of the local study
    results: dict[str, float] = {}
    ceilings: dict[str, float] = {}
    requests: list[list[dict[str, str]]] = []
    rows = []
    with tempfile.TemporaryDirectory() as tmp, serve_in_subprocess(latency=args.latency, backlog=BACKLOG) as slow:
        settings = LLMSettings(model="scripted", base_url=slow, concurrency=args.concurrency, timeout=30.0)
        for kind in ("local", "ray"):
            store = Path(tmp) / f"{kind}.sqlite"
            executor = (
                RayExecutor(store, settings, concurrency=args.concurrency, workers=args.workers)
                if kind == "ray"
                else nullcontext(None)
            )
            with executor as ex:
                _, warm_calls, _ = _timed_study(store, _study("warm", 2 * args.workers, 1, args.concurrency),
                                                settings, ex)  # fmt: skip
                wall, calls, cpu = _timed_study(store, _study("s", args.runs, args.rounds, args.concurrency),
                                                settings, ex)  # fmt: skip
                if ex is not None:  # the executor's usage is cumulative over both studies
                    calls -= warm_calls
            machine = cpu.pop("machine")
            rate, per_call = calls / wall, sum(cpu.values()) / calls
            results[kind] = rate
            # processes that can each use one core: the driver alone (local), or the Ray workers
            busiest, processes = ("driver", 1) if kind == "local" else ("workers", args.workers)
            ceilings[kind] = min(cores / per_call, processes * calls / cpu[busiest])
            if kind == "local":
                requests = _recorded_requests(store, 300)
            parts = ", ".join(f"{p} {cpu[p] / calls * 1000:.2f}" for p in PARTS if cpu[p] > 0)
            rows.append(row(f"study throughput, {kind} executor" + (f", {args.workers} workers" if ex else ""), rate,
                            "calls/s", baseline=(f"ideal ({args.concurrency} in flight / {args.latency * 1000:.0f} ms)",
                                                 ideal), ratio=rate / ideal,
                            # the local executor's target is judged on its row by calls in flight, below
                            target=">= 0.95x of ideal" if ex else None, met=rate / ideal >= 0.95 if ex else None,
                            note=f"CPU per call {per_call * 1000:.2f} ms ({parts}): CPU ceiling "
                            f"{ceilings[kind] / ideal:.2f}x of ideal on {cores} cores; the machine was "
                            f"{machine / wall / cores:.0%} busy"))  # fmt: skip
            print(f"{kind:>5}: {calls} calls in {wall:.2f} s = {rate:.0f} calls/s = {rate / ideal:.2f}x of ideal\n"
                  f"       CPU per call {per_call * 1000:.2f} ms ({parts}) -> CPU ceiling on {cores} cores "
                  f"{ceilings[kind]:.0f} calls/s = {ceilings[kind] / ideal:.2f}x of ideal; "
                  f"throughput at {rate / ceilings[kind]:.2f}x of that ceiling\n"
                  f"       the machine was {machine / wall / cores:.0%} busy, this pipeline "
                  f"{per_call * calls / wall / cores:.0%} of its {cores} cores")  # fmt: skip
            if kind == "local":
                local[args.concurrency] = (wall, calls, cpu["driver"])
        # the local executor at other numbers of calls in flight, each in a fresh store after a warm-up study
        for in_flight in flights:
            if in_flight in local:
                continue
            store = Path(tmp) / f"local-{in_flight}.sqlite"
            at = replace(settings, concurrency=in_flight)
            _timed_study(store, _study("warm", 4, 1, in_flight), at, None)
            wall, calls, cpu = _timed_study(store, _study("s", args.runs, args.rounds, in_flight), at, None)
            local[in_flight] = (wall, calls, cpu["driver"])
        # the floor at each: raw httpx POSTs of the study's recorded requests, as many at a time
        for in_flight in flights:
            wall, calls, driver = local[in_flight]
            raw_wall, raw_cpu = _raw_loop(slow, requests, calls, in_flight)
            rate, at_ideal = calls / wall, in_flight / args.latency
            study_ms, raw_ms = driver / calls * 1000, raw_cpu / calls * 1000
            judged = in_flight == 32
            print(f"local, {in_flight:2d} in flight: {rate:6.0f} calls/s = {rate / at_ideal:.2f}x of ideal "
                  f"({at_ideal:.0f}); driver CPU {study_ms:.2f} ms per call, raw httpx POST loop {raw_ms:.2f} ms "
                  f"({raw_ms and study_ms / raw_ms:.2f}x; raw {calls / raw_wall:.0f} calls/s = "
                  f"{calls / raw_wall / at_ideal:.2f}x of ideal)")  # fmt: skip
            rows += [
                row(f"study throughput, local executor, {in_flight} in flight", rate, "calls/s",
                    baseline=(f"ideal ({in_flight} in flight / {args.latency * 1000:.0f} ms)", at_ideal),
                    ratio=rate / at_ideal, target=">= 0.5x of ideal" if judged else None,
                    met=rate / at_ideal >= 0.5 if judged else None,
                    note=f"{calls} calls; the raw httpx POST loop: {calls / raw_wall:.0f} calls/s = "
                    f"{calls / raw_wall / at_ideal:.2f}x of ideal"),
                row(f"driver CPU per call, local executor, {in_flight} in flight", study_ms, "ms",
                    baseline=(f"raw httpx POST loop, the study's requests, {in_flight} in flight", raw_ms),
                    ratio=study_ms / raw_ms if raw_ms else None, target="<= 2x" if judged else None,
                    met=study_ms <= 2 * raw_ms if judged else None,
                    note="start-up excluded (a warm-up study first); CPU time (user + system) of this process"),
            ]  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp, serve_in_subprocess(latency=0.0, backlog=BACKLOG) as fast:
        settings = LLMSettings(model="scripted", base_url=fast, concurrency=1, timeout=30.0)
        # the two executors take turns, batch by batch, and medians are compared: load from other jobs comes in
        # bursts that would otherwise land on one side
        per_run: dict[str, list[float]] = {"local": [], "ray": []}
        store = Path(tmp) / "seq.sqlite"
        with RayExecutor(store, settings, concurrency=1, workers=1) as ray_ex:
            for kind, ex in (("local", None), ("ray", ray_ex)):
                _timed_study(store, _study(f"warm-{kind}", 2, 1, 1), settings, ex)
            for batch in range(PER_RUN_BATCHES):
                for kind, ex in (("local", None), ("ray", ray_ex)):
                    config = _study(f"seq-{kind}-{batch}", PER_RUN_RUNS, 1, 1, seed=100 + batch * 2 + (kind == "ray"))
                    wall, _, _ = _timed_study(store, config, settings, ex)
                    per_run[kind].append(wall / PER_RUN_RUNS)
        local, ray = (statistics.median(per_run[k]) for k in ("local", "ray"))
        print(f"per-run time, one at a time, 0 ms server (median of {PER_RUN_BATCHES} alternating batches of "
              f"{PER_RUN_RUNS} runs): local {local * 1000:.1f} ms, ray {ray * 1000:.1f} ms: Ray adds "
              f"{(ray - local) * 1000:+.1f} ms per run")  # fmt: skip
        store = Path(tmp) / "alone.sqlite"
        config = _study("alone", max(8, args.runs // 8), args.rounds, 1)
        _, calls, cpu = _timed_study(store, config, settings, None)
        alone = (cpu["driver"] + cpu["server"]) / calls
        print(f"the same study one run at a time (no GIL or lock contention), 0 ms server: {alone * 1000:.2f} ms CPU "
              f"per call: at most {cores / alone:.0f} calls/s = {cores / alone / ideal:.2f}x of ideal on {cores} "
              "cores, however the runs were spread")  # fmt: skip
        floor = _client_floor(fast, requests)
        rows += [
            row("per-run time, one at a time, 0 ms server, Ray executor", ray * 1000, "ms",
                baseline=("the local executor", local * 1000), ratio=ray / local,
                note=f"median of {PER_RUN_BATCHES} alternating batches of {PER_RUN_RUNS} runs"),
            row("CPU per call, the study one run at a time", alone * 1000, "ms",
                baseline=("bare ChatOpenAI + server alone", floor * 1000), ratio=alone / floor),
        ]  # fmt: skip
        print(f"the LLM client alone: bare ChatOpenAI + server {floor * 1000:.2f} ms CPU per call (the study's "
              f"{len(requests)} recorded requests): at most {cores / floor:.0f} calls/s = "
              f"{cores / floor / ideal:.2f}x of ideal on {cores} cores with nothing else running")  # fmt: skip
    need = 0.95 * ideal / ceilings["ray"]  # the CPU 0.95x of ideal takes, in multiples of what this machine has
    print(f"ray / local throughput: {results['ray'] / results['local']:.2f}x; ray at {results['ray'] / ideal:.2f}x "
          f"of ideal (target >= 0.95x); its CPU ceiling is {ceilings['ray'] / ideal:.2f}x of ideal, so 0.95x "
          + (f"is out of reach here: it takes about {need * cores:.1f} free cores (and as many workers) at this "
             f"CPU per call, or a latency of at least {args.latency * need * 1000:.0f} ms with {args.concurrency} "
             "in flight"
             if need > 1 else "is within reach"))  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.2f} after the run (other jobs on these cores lower every figure)")
    rows.append(row("Ray throughput", results["ray"], "calls/s", baseline=("the local executor", results["local"]),
                    ratio=results["ray"] / results["local"]))  # fmt: skip
    busy = max(load_before, os.getloadavg()[0])
    notes = None
    if busy > cores:  # other jobs held the cores: calls/s says how much CPU they left, not what the driver can do
        notes = (f"the machine was shared (load average up to {busy:.1f} on {cores} cores): the throughput figures "
                 "are bounded by the CPU other jobs left and are not the executor's; the CPU-per-call figures and "
                 "their ratios to the raw loop measured beside them are the comparable ones")  # fmt: skip
    record("bench_scale", rows, path=args.json, notes=notes)


if __name__ == "__main__":
    main()
