"""Soak: a 320-run Game of 24 sampling study at 32 runs in flight, several times; every run must end done.

    nice .venv/bin/python benchmarks/bench_soak_threads.py [--attempts 5] [--runs 320] [--k 10] [--concurrency 32]

Issue 45 item 1: this study once lost a run to the process, not the model: `SystemError: AST constructor
recursion depth mismatch` from `ast.parse` in a worker thread (CPython 3.11 keeps the AST constructor's recursion
count in state all threads share: python/cpython#106905), in 2 of 6 attempts. Each attempt runs the installed
`critiquebench run` (the user's path) in its own process and a fresh SQLite store, against the scripted
OpenAI-compatible server on loopback (in this process, so its threads never share the study's GIL). The server
answers every sample with an arithmetic expression over the puzzle's own numbers (some reach 24, most do not),
so every sample goes through the sound verifier's parse, in 32 threads at once.

Figures per attempt (and their totals), written as JSON (`benchmarks/results/bench_soak_threads.json`):
runs, failed runs, runs not done, runs whose error names the process (retried once: see
`critiquebench.studies.execute.PROCESS_ERRORS`), tracebacks in the output, the exit code, LLM calls answered,
wall seconds and the study process's CPU seconds (user + system; the machine is shared, so CPU is the figure
that means something). Target: 0 failed runs in every attempt.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import add_json_option, record, row  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402

FIRST_PUZZLE = 901  # 24.csv's ranks 901-1000 are the paper's; further ranks are the same file's harder puzzles
_NUMBERS = re.compile(r"Input: (\d+) (\d+) (\d+) (\d+)")
# answer shapes over the puzzle's numbers a, b, c, d: every one parses, few reach 24
_SHAPES = ("{a}+{b}+{c}+{d}", "({a}+{b})*({c}-{d})", "{a}*{b}-{c}*{d}", "({a}*{b})/({c}+{d})", "{a}*({b}+{c})-{d}",
           "(({a}-{b})*{c})/{d}", "{a}+{b}*{c}-{d}")  # fmt: skip


def answer(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """A well-formed expression over the puzzle's numbers; the shape varies with the sample's prompt and
    temperature draw so the study's answers are not all alike."""
    text = str(messages[-1].get("content", ""))
    found = _NUMBERS.findall(text)
    if not found:
        return "1+2+3+4"
    a, b, c, d = found[-1]
    shape = _SHAPES[(hash(text) + answer.count) % len(_SHAPES)]
    answer.count += 1
    return shape.format(a=a, b=b, c=c, d=d) + "\n[ANSWER END]"


answer.count = 0  # type: ignore[attr-defined]


def attempt(base_url: str, folder: Path, n: int, args: argparse.Namespace) -> dict[str, Any]:
    """One study in a fresh store: its exit code, output, run counts and the study process's CPU."""
    store = folder / f"soak{n}.sqlite"
    last = FIRST_PUZZLE + args.runs - 1
    cmd = [str(Path(sys.executable).with_name("critiquebench")), "run", f"soak{n}", "--domains", "game24",
           "--instances", f"{FIRST_PUZZLE}-{last}", "--schemes", f"sampling:k={args.k}", "--concurrency",
           str(args.concurrency), "--model", "scripted", "--base-url", base_url, "--store", str(store),
           "--dataset", str(args.dataset), "--no-progress", "--yes"]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = done.stdout + done.stderr
    with sqlite3.connect(store) as db:
        statuses = dict(db.execute("SELECT status, count(*) FROM runs WHERE study = ? GROUP BY 1", (f"soak{n}",)))
        errors = [e for (e,) in db.execute("SELECT error FROM runs WHERE error IS NOT NULL")]
        calls = db.execute("SELECT coalesce(sum(llm_calls), 0) FROM runs").fetchone()[0]
        checked = dict(db.execute("SELECT sound_valid, count(*) FROM attempts GROUP BY 1"))
    return {
        "attempt": n,
        "rc": done.returncode,
        "runs": sum(statuses.values()),
        "done": statuses.get("done", 0),
        "failed": statuses.get("failed", 0),
        "not_done": sum(v for k, v in statuses.items() if k != "done"),
        "process_errors": sum("process error" in e or "SystemError" in e for e in errors),
        "errors": sorted(set(errors))[:5],
        "tracebacks": output.count("Traceback (most recent call last)"),
        "retry_warnings": output.count("running it again"),
        "llm_calls": int(calls),
        "answers_valid": checked.get(1, 0),
        "answers_invalid": checked.get(0, 0),
        "wall_s": round(wall, 2),
        "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2),
        "output_lines": len(output.splitlines()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=5)
    parser.add_argument("--runs", type=int, default=320, help="puzzles (one run each) from rank 901 on")
    parser.add_argument("--k", type=int, default=10, help="samples per run")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "datasets")
    add_json_option(parser)
    args = parser.parse_args()
    attempts = []
    with ScriptedServer(answer) as server, tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        for n in range(1, args.attempts + 1):
            result = attempt(server.base_url, Path(tmp), n, args)
            attempts.append(result)
            print(f"attempt {n}: rc {result['rc']}, {result['runs']} runs, {result['failed']} failed, "
                  f"{result['not_done']} not done, {result['process_errors']} process errors, "
                  f"{result['retry_warnings']} retried, {result['tracebacks']} tracebacks, "
                  f"{result['llm_calls']} calls, "
                  f"{result['answers_valid']} + {result['answers_invalid']} answers valid + invalid, "
                  f"{result['wall_s']} s wall, {result['cpu_s']} s CPU", flush=True)  # fmt: skip
            for error in result["errors"]:
                print(f"    {error[:300]}")
    failed = sum(a["failed"] for a in attempts)
    not_done = sum(a["not_done"] for a in attempts)
    runs = sum(a["runs"] for a in attempts)
    clean = sum(a["failed"] == 0 and a["not_done"] == 0 and a["rc"] == 0 for a in attempts)
    python = sys.version.split()[0]
    shape = f"game24 {args.runs} puzzles x sampling:k={args.k}, {args.concurrency} in flight, Python {python}"
    rows = [
        row(f"attempt {a['attempt']}: failed runs", a["failed"], f"of {a['runs']} runs", target="0",
            met=a["failed"] == 0 and a["not_done"] == 0,
            note=f"rc {a['rc']}, {a['not_done']} not done, {a['retry_warnings']} retried, "
                 f"{a['tracebacks']} tracebacks, {a['llm_calls']} calls, {a['cpu_s']} s CPU, {a['wall_s']} s wall")
        for a in attempts
    ]  # fmt: skip
    rows += [
        row("attempts with every run done (rc 0)", clean, f"of {len(attempts)}", target="all attempts",
            met=clean == len(attempts), note=shape),
        row("failed runs, all attempts", failed, f"of {runs} runs", target="0", met=failed == 0),
        row("runs not done, all attempts", not_done, f"of {runs} runs", target="0", met=not_done == 0),
        row("runs retried for a process error", sum(a["retry_warnings"] for a in attempts), "runs",
            note="a SystemError in a run is run again once (python/cpython#106905)"),
        row("study CPU per attempt (median)", sorted(a["cpu_s"] for a in attempts)[len(attempts) // 2], "s CPU",
            note=f"user + system of the study process; {sum(a['llm_calls'] for a in attempts)} calls in all"),
    ]  # fmt: skip
    record("bench_soak_threads", rows, path=args.json)
    print(f"{failed} failed of {runs} runs in {len(attempts)} attempts; load {os.getloadavg()[0]:.1f}")
    sys.exit(0 if failed == 0 and not_done == 0 else 1)


if __name__ == "__main__":
    main()
