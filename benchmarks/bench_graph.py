"""Graph overhead per round (checkpoints included) and checkpoint bytes per round.

    .venv/bin/python benchmarks/bench_graph.py [--instances 5] [--rounds 10]

1. The sound-binary scheme (one LLM call per round; the scripted server answers after 50 ms and its answers
   are never right, so every run takes all rounds) run through `execute_run` (LangGraph + SQLite checkpoints +
   attempt rows), against a plain Python loop making the same calls (same messages, same client, a fresh cache
   each) and the same verifier/feedback work. Prints the added time per round and as % of one 50 ms call
   (target < 5%).
2. Checkpoint bytes (LangGraph's checkpoints + writes tables) of one thread for 5, 10 and 15 rounds, per round
   (target: flat, i.e. storage linear in rounds, because the state holds only the last attempt).
The server runs in its own process so its work does not compete with the graph's for the GIL.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from critiquebench.domains import get_domain, load_instances  # noqa: E402
from critiquebench.domains.base import Domain, Instance  # noqa: E402
from critiquebench.store.cache import CallCache  # noqa: E402
from critiquebench.store.checkpoints import checkpoint_bytes  # noqa: E402

from critiquebench.llm.client import LLMClient, LLMSettings  # noqa: E402
from critiquebench.studies.execute import execute_run  # noqa: E402
from tests.scripted_server import serve_in_subprocess  # noqa: E402

LATENCY = 0.05
DATASETS = ROOT.parent / "shared" / "datasets"


def plain_loop(domain: Domain, instance: Instance, llm: LLMClient, rounds: int) -> None:
    """What sound-binary does, without a graph, checkpoints or a store."""
    messages = domain.prompt(instance)
    for _ in range(rounds):
        text = llm.complete(messages).text
        verdict = domain.verify(instance, text)
        domain.canonical(instance, text)
        feedback = domain.feedback(instance, verdict, "binary")
        messages = [
            *messages,
            {"role": "assistant", "content": text},
            {"role": "user", "content": domain.backprompt(instance, feedback)},
        ]


def client(base_url: str, store: Path) -> LLMClient:
    return LLMClient(LLMSettings(model="scripted", base_url=base_url, max_tokens=64), CallCache(store))


def overhead(base_url: str, tmp: Path, instances: list[Instance], domain: Domain, rounds: int) -> None:
    spec = f"sound-binary:rounds={rounds}"
    warm = client(base_url, tmp / "warm.sqlite")
    plain_loop(domain, instances[0], warm, 1)
    execute_run(tmp / "warm.sqlite", "warm", domain, instances[0], "sound-binary:rounds=2", 0, warm)
    wall: dict[str, list[float]] = {"loop": [], "graph": []}
    cpu: dict[str, list[float]] = {"loop": [], "graph": []}
    for rep in range(3):  # alternate, so drift in machine load hits both sides; keep the best of each
        for side in ("loop", "graph"):
            store = tmp / f"{side}{rep}.sqlite"
            llm = client(base_url, store)
            start, start_cpu = time.perf_counter(), time.process_time()
            for instance in instances:
                if side == "loop":
                    plain_loop(domain, instance, llm, rounds)
                else:
                    out = execute_run(store, "bench", domain, instance, spec, 0, llm)
                    assert out.status == "done" and out.rounds == rounds, out
            wall[side].append(time.perf_counter() - start)
            cpu[side].append(time.process_time() - start_cpu)
    n = len(instances) * rounds
    print(
        f"overhead: {len(instances)} runs x {rounds} rounds of {spec}, server latency {LATENCY * 1000:.0f} ms"
    )
    for label, data in (("wall", wall), ("cpu", cpu)):
        loop, graph = min(data["loop"]) / n, min(data["graph"]) / n
        added = graph - loop
        print(
            f"  {label:4s} plain loop {loop * 1000:7.2f} ms/round, graph + checkpoints {graph * 1000:7.2f} "
            f"ms/round: added {added * 1000:6.2f} ms/round = {added / LATENCY:6.1%} of a 50 ms call "
            "(target < 5%)"
        )
    print(
        "  (cpu: this process's CPU time, steadier than wall time under load; the server is another process)"
    )


def growth(base_url: str, tmp: Path, instance: Instance, domain: Domain) -> None:
    store = tmp / "growth.sqlite"
    llm = client(base_url, store)
    print("checkpoint storage of one thread (checkpoints + writes tables)")
    first = None
    for rounds in (5, 10, 15):
        out = execute_run(store, "growth", domain, instance, f"llm-llm:rounds={rounds},critic=sound", 0, llm)
        per_round = checkpoint_bytes(store, out.thread_id) / rounds
        first = first or per_round
        print(
            f"  {rounds:2d} rounds  {per_round:8.0f} bytes/round  ({per_round / first:.2f}x the 5-round "
            f"figure; "
            "target ~1.0x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    domain = get_domain("game24")
    instances = load_instances(domain, f"901-{900 + args.instances}", DATASETS)
    with serve_in_subprocess(LATENCY) as base_url, tempfile.TemporaryDirectory() as tmp:
        overhead(base_url, Path(tmp), instances, domain, args.rounds)
        growth(base_url, Path(tmp), instances[0], domain)


if __name__ == "__main__":
    main()
