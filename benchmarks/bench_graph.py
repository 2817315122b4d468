"""Graph overhead per round (checkpoints included), beside the old design's, and checkpoint bytes per round.

    .venv/bin/python benchmarks/bench_graph.py [--instances 5] [--rounds 10] [--old-rev 4535135]

1. Two schemes with one LLM call per round (the scripted server answers after 50 ms and its answers are never
   right, so every run takes all rounds): `sound-binary` (generator -> sound verifier) and
   `llm-llm:critic=sound` (generator -> critic; the critic is the sound verifier, so it makes no LLM call),
   each run through `execute_run` (LangGraph + SQLite checkpoints + attempt rows) against a plain Python
   loop making the same calls (same messages, same client, a fresh cache each) and the same
   verifier/feedback work. Prints the added CPU time per round and as % of one 50 ms call (target: <= 2 ms).
   The same measurement of the old design (git revision `--old-rev`, the code before nodes stopped storing:
   nodes wrote rows and read their history from SQLite, the critic loop took three steps per round, answers
   were parsed up to three times) runs in a child process from that revision's files, so both figures come
   from one run on one machine.
2. Where the added time goes, with an in-process answerer in place of the HTTP client (so the client's own
   ~4 ms of CPU per call does not drown the figures): per round of `sound-binary`, the plain loop, the compiled
   graph streamed with no checkpointer, with the SQLite checkpointer, and the whole `execute_run` (claim,
   checkpoints, the attempt rows).
3. Checkpoint bytes (LangGraph's checkpoints + writes tables) of one thread for 5, 10 and 15 rounds, per round
   (target: flat, i.e. storage linear in rounds: earlier rounds live in a delta channel, written once).
The server runs in its own process so its work does not compete with the graph's for the GIL.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LATENCY = 0.05
DATASETS = ROOT.parent / "shared" / "datasets"
OLD_REV = "4535135"  # "App layer in rooms": the last revision before nodes stopped storing
LAYERS = ("domains", "nodes", "graphs", "store")


def use_tree(tree: Path | None) -> None:
    """Import critiquebench from `tree` (an old revision laid out as an installed package) or from ROOT."""
    if tree is not None:  # drop the editable install's finder, so `tree` is what `import critiquebench` finds
        sys.meta_path[:] = [f for f in sys.meta_path if "Editable" not in str(f)]
        sys.path_hooks[:] = [h for h in sys.path_hooks if "editable" not in str(h).lower()]
        sys.path_importer_cache.clear()
    sys.path.insert(0, str(tree or ROOT))


def plain_loop(domain: Any, instance: Any, llm: Any, rounds: int, level: str) -> None:
    """What the schemes do, without a graph, checkpoints or a store."""
    messages = domain.prompt(instance)
    for _ in range(rounds):
        text = llm.complete(messages).text
        verdict = domain.verify(instance, text)
        domain.canonical(instance, text)
        feedback = domain.feedback(instance, verdict, level)
        messages = [
            *messages,
            {"role": "assistant", "content": text},
            {"role": "user", "content": domain.backprompt(instance, feedback)},
        ]


def measure(base_url: str, tmp: Path, n_instances: int, rounds: int, reps: int = 3) -> dict[str, dict[str, float]]:
    """CPU and wall seconds per round of each scheme and of its plain loop, best of `reps` alternated reps."""
    from critiquebench.domains import get_domain, load_instances
    from critiquebench.llm.client import LLMClient, LLMSettings
    from critiquebench.store.cache import CallCache
    from critiquebench.studies.execute import execute_run

    domain = get_domain("game24")
    instances = load_instances(domain, f"901-{900 + n_instances}", DATASETS)

    def client(store: Path) -> Any:
        return LLMClient(LLMSettings(model="scripted", base_url=base_url, max_tokens=64), CallCache(store))

    warm = client(tmp / "warm.sqlite")
    plain_loop(domain, instances[0], warm, 1, "binary")
    execute_run(tmp / "warm.sqlite", "warm", domain, instances[0], "sound-binary:rounds=2", 0, warm)
    results = {}
    schemes = ((f"sound-binary:rounds={rounds}", "binary"), (f"llm-llm:rounds={rounds},critic=sound", "first"))
    for spec, level in schemes:
        wall: dict[str, list[float]] = {"loop": [], "graph": []}
        cpu: dict[str, list[float]] = {"loop": [], "graph": []}
        for rep in range(reps):  # alternate, so drift in machine load hits both sides; keep the best of each
            for side in ("loop", "graph"):
                store = tmp / f"{spec.split(':')[0]}-{side}{rep}.sqlite"
                llm = client(store)
                start, start_cpu = time.perf_counter(), time.process_time()
                for instance in instances:
                    if side == "loop":
                        plain_loop(domain, instance, llm, rounds, level)
                    else:
                        out = execute_run(store, "bench", domain, instance, spec, 0, llm)
                        assert out.status == "done" and out.rounds == rounds, out
                wall[side].append(time.perf_counter() - start)
                cpu[side].append(time.process_time() - start_cpu)
        n = len(instances) * rounds
        results[spec] = {f"{kind}_{side}": min(data[side]) / n for kind, data in (("wall", wall), ("cpu", cpu))
                         for side in ("loop", "graph")}  # fmt: skip
    return results


def old_tree(rev: str, tmp: Path) -> Path | None:
    """The files of revision `rev` laid out as the installed package (critiquebench/ with its layers inside)."""
    src, tree = tmp / "old-src", tmp / "old-tree"
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True)
    if archive.returncode != 0:
        print(f"  (old design: git revision {rev} is not available: {archive.stderr.decode().strip()})")
        return None
    src.mkdir()
    tar_path = tmp / "old.tar"
    tar_path.write_bytes(archive.stdout)
    with tarfile.open(tar_path) as tar:
        tar.extractall(src, filter="data")
    shutil.copytree(src / "critiquebench", tree / "critiquebench")
    for layer in LAYERS:
        shutil.copytree(src / layer, tree / "critiquebench" / layer)
    return tree


def measure_old(rev: str, base_url: str, tmp: Path, n_instances: int, rounds: int, reps: int) -> dict[str, Any] | None:
    tree = old_tree(rev, tmp)
    if tree is None:
        return None
    child = subprocess.run(
        [sys.executable, __file__, "--child", str(tree), "--base-url", base_url, "--instances", str(n_instances),
         "--rounds", str(rounds), "--reps", str(reps)],
        capture_output=True, text=True, cwd=tmp,
    )  # fmt: skip
    if child.returncode != 0:
        print(f"  (old design at {rev} could not run: {child.stderr.strip().splitlines()[-1:]})")
        return None
    return json.loads(child.stdout.strip().splitlines()[-1])


def overhead(base_url: str, tmp: Path, n_instances: int, rounds: int, old_rev: str, reps: int) -> list[dict]:
    from benchmarks.results import row

    (tmp / "new").mkdir()
    rows = []
    new = measure(base_url, tmp / "new", n_instances, rounds, reps)
    old = measure_old(old_rev, base_url, tmp, n_instances, rounds, reps)
    print(f"overhead per round: {n_instances} runs x {rounds} rounds, server latency {LATENCY * 1000:.0f} ms "
          "(CPU of this process; the server is another one)")  # fmt: skip
    for spec, figures in new.items():
        added = figures["cpu_graph"] - figures["cpu_loop"]
        line = (f"  {spec:34s} plain loop {figures['cpu_loop'] * 1000:5.2f} ms/round; this design "
                f"+{added * 1000:5.2f} ms/round ({added / LATENCY:5.1%} of a 50 ms call)")  # fmt: skip
        was = None
        if old and spec in old:
            was = old[spec]["cpu_graph"] - old[spec]["cpu_loop"]
            line += f"; old design ({old_rev}) +{was * 1000:5.2f} ms/round ({was / LATENCY:5.1%})"
        print(line + "  [target <= 2 ms]")
        wall = figures["wall_graph"] - figures["wall_loop"]
        print(f"  {'':34s} wall: +{wall * 1000:5.2f} ms/round")
        rows.append(row(f"CPU added per round over a plain loop, {spec}", added * 1000, "ms",
                        baseline=None if was is None else (f"the old design ({old_rev})", was * 1000),
                        ratio=None if not was else added / was, target="<= 2 ms", met=added <= 0.002,
                        note=f"{added / LATENCY:.1%} of a {LATENCY * 1000:.0f} ms call; plain loop "
                        f"{figures['cpu_loop'] * 1000:.2f} ms/round; wall {wall * 1000:+.2f} ms/round; "
                        f"{n_instances} runs x {rounds} rounds, best of {reps}"))  # fmt: skip
    return rows


@dataclass
class _Answer:
    text: str
    prompt_tokens: int = 10
    completion_tokens: int = 10
    cached: bool = False


class _Answerer:
    """Answers at once, in this process, with a wrong expression (so every run takes all its rounds)."""

    def complete(self, messages: Any, sample: int = 0, temperature: float | None = None) -> _Answer:
        return _Answer("(4 + 5) * (10 - 6) = 36")


def breakdown(tmp: Path, n_instances: int, rounds: int, reps: int) -> list[dict]:
    from benchmarks.results import row
    from critiquebench.domains import get_domain, load_instances
    from critiquebench.graphs import compiled, parse_spec
    from critiquebench.graphs.state import initial_state, recursion_limit
    from critiquebench.nodes.context import RunContext
    from critiquebench.store.checkpoints import open_saver
    from critiquebench.studies.execute import DURABILITY, execute_run

    domain = get_domain("game24")
    instances = load_instances(domain, f"901-{900 + n_instances}", DATASETS)
    spec = f"sound-binary:rounds={rounds}"
    graph = compiled(parse_spec(spec).label)

    def stream(saver: Any, instance: Any) -> None:
        run = graph if saver is None else graph.copy(update={"checkpointer": saver})
        config: Any = {"configurable": {"thread_id": instance.id}, "recursion_limit": recursion_limit(rounds)}
        extra = {} if saver is None else {"durability": DURABILITY}
        ctx = RunContext.create(domain, instance, _Answerer(), instance.id)
        for _ in run.stream(initial_state(instance.id), config, context=ctx, stream_mode="updates", **extra):
            pass

    def side(name: str, store: Path) -> None:
        if name == "loop":
            for instance in instances:
                plain_loop(domain, instance, _Answerer(), rounds, "binary")
        elif name == "graph":
            for instance in instances:
                stream(None, instance)
        elif name == "checkpointed":
            with open_saver(store) as saver:
                for instance in instances:
                    stream(saver, instance)
        else:
            for instance in instances:
                execute_run(store, "bench", domain, instance, spec, 0, _Answerer())

    names = ("loop", "graph", "checkpointed", "execute_run")
    side("execute_run", tmp / "warm-breakdown.sqlite")
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(reps):
        for name in names:
            start = time.process_time()
            side(name, tmp / f"breakdown-{name}{rep}.sqlite")
            cpu[name].append((time.process_time() - start) / (len(instances) * rounds))
    best = {name: min(cpu[name]) * 1000 for name in names}
    print(f"where the time goes: {spec}, an in-process answerer, CPU ms per round (best of {reps})")
    print(f"  plain loop {best['loop']:.2f}; graph, no checkpointer +{best['graph'] - best['loop']:.2f}; "
          f"with SQLite checkpoints +{best['checkpointed'] - best['loop']:.2f}; execute_run (claim, checkpoints, "
          f"attempt rows) +{best['execute_run'] - best['loop']:.2f}")  # fmt: skip
    steps = (("graph", "graph stepping, no checkpointer"), ("checkpointed", "graph with SQLite checkpoints"),
             ("execute_run", "execute_run (claim, checkpoints, attempt rows)"))  # fmt: skip
    return [
        row(f"CPU per round, {what}, {spec}, in-process answerer", best[name], "ms",
            baseline=("the plain loop", best["loop"]), ratio=best[name] / best["loop"],
            note=f"+{best[name] - best['loop']:.2f} ms per round over the plain loop; best of {reps}")
        for name, what in steps
    ]  # fmt: skip


def growth(base_url: str, tmp: Path) -> list[dict]:
    from benchmarks.results import row
    from critiquebench.domains import get_domain, load_instances
    from critiquebench.llm.client import LLMClient, LLMSettings
    from critiquebench.store.cache import CallCache
    from critiquebench.store.checkpoints import checkpoint_bytes
    from critiquebench.studies.execute import CHECKPOINTS_ENV, execute_run

    # live runs are checkpointed by LangGraph only when asked (`critiquebench.studies.execute`): these are
    os.environ[CHECKPOINTS_ENV] = "1"
    domain = get_domain("game24")
    instance = load_instances(domain, "901", DATASETS)[0]
    store = tmp / "growth.sqlite"
    llm = LLMClient(LLMSettings(model="scripted", base_url=base_url, max_tokens=64), CallCache(store))
    print("checkpoint storage of one thread (checkpoints + writes tables)")
    first, rows = None, []
    for rounds in (5, 10, 15):
        out = execute_run(store, "growth", domain, instance, f"llm-llm:rounds={rounds},critic=sound", 0, llm)
        per_round = checkpoint_bytes(store, out.thread_id) / rounds
        first = first or per_round
        print(f"  {rounds:2d} rounds  {per_round:8.0f} bytes/round  ({per_round / first:.2f}x the 5-round figure; "
              "target ~1.0x)")  # fmt: skip
        rows.append(row(f"checkpoint bytes per round, {rounds} rounds", per_round, "bytes/round",
                        baseline=("the 5-round figure", first), ratio=per_round / first,
                        target="~1.0x: storage linear in rounds", met=per_round / first <= 1.1))  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--old-rev", default=OLD_REV, help="git revision of the old design to measure beside")
    parser.add_argument("--reps", type=int, default=5, help="alternated repetitions; the best of each side counts")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)  # measure the tree at this path, print JSON
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the results here instead of "
                        "benchmarks/results/bench_graph.json")  # fmt: skip
    args = parser.parse_args()
    use_tree(args.child)
    if args.child is not None:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(measure(args.base_url, Path(tmp), args.instances, args.rounds, args.reps)))
        return
    from benchmarks.results import record
    from tests.scripted_server import serve_in_subprocess

    with serve_in_subprocess(LATENCY) as base_url, tempfile.TemporaryDirectory() as tmp:
        rows = overhead(base_url, Path(tmp), args.instances, args.rounds, args.old_rev, args.reps)
        rows += breakdown(Path(tmp), args.instances, args.rounds, args.reps)
        rows += growth(base_url, Path(tmp))
    record("bench_graph", rows, path=args.json)


if __name__ == "__main__":
    main()
