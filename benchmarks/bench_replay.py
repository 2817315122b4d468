"""Replay at machine speed (issue 31 item 2): GPT-4's 500 one-shot Blocksworld answers, imported and replayed,
against `critiquebench score` on the same 500 answers, and a study whose runs are all copied, each beside the
code of a baseline commit measured in the same run.

    nice .venv/bin/python benchmarks/bench_replay.py [--baseline-ref 045ed38] [--repeat 3] [--json PATH]

Runs the installed command as a user does, every figure the CPU time of the command's process (user + system),
the least of `--repeat` runs taken in turn (this machine's speed drifts by a fifth from one minute to the next;
the least is the run the least disturbed):

1. `critiquebench score` on the file's 500 answers (`{"id", "instance", "response"}` lines, PlanBench's
   reading, as the importer sets it);
2. `critiquebench import planbench FILE --replay`: import and replay in one command (500 runs, 0 calls);
3. the same in two commands, `critiquebench import planbench FILE`, then `critiquebench resume STUDY --replay`;
4. a study whose every run is copied from an identical finished one (`studies.reuse`: Game of 24 x standard on
   30 puzzles against a scripted server, then the same definition under another name), with
   `python -X importtime` telling whether LangGraph was imported;
5. steps 3 and 4 again, once, with the code of `--baseline-ref` (a temporary `git worktree`,
   `benchmarks/baseline_ref.py`; it has no `import --replay`).

Targets: import + replay <= 3x score's CPU; the replay <= 2 s of CPU; the copied study starts without LangGraph.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline_ref import ref_command, ref_tree  # noqa: E402
from benchmarks.results import add_json_option, record, row  # noqa: E402
from tests.scripted_server import serve_in_subprocess  # noqa: E402

DATASETS = ROOT.parent / "shared" / "datasets"
ONE_SHOT = DATASETS / "planbench" / "reference" / "gpt-4_blocksworld_one_shot.json"
BASELINE = "045ed38"  # the code before issue 31 item 2
TARGET_RATIO, TARGET_REPLAY_S = 3.0, 2.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_of(command: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    """CPU seconds of one command (user + system of its process and its children)."""
    before = _children_cpu()
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[-6:])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return _children_cpu() - before, done


def answers(path: Path) -> int:
    """The file's answers as `score` input lines; how many."""
    data = json.loads(ONE_SHOT.read_text())
    lines = [json.dumps({"id": i["instance_id"], "instance": i["instance_id"], "response": i["llm_raw_response"]})
             for i in data["instances"]]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def replay(cli: list[str], folder: Path) -> tuple[float, float, str]:
    """CPU of `import planbench` and of `resume --replay` of the one-shot file; the replay's summary line."""
    store = str(folder / "replay.sqlite")
    imported, _ = cpu_of([*cli, "import", "planbench", str(ONE_SHOT), "--study", "os", "--store", store])
    replayed, done = cpu_of([*cli, "resume", "os", "--replay", "--no-progress", "--store", store])
    summary = next(line for line in done.stderr.splitlines() if line.startswith("study os:"))
    return imported, replayed, summary


def one_command(cli: list[str], folder: Path) -> tuple[float, str]:
    """CPU of `import planbench --replay` of the one-shot file; its summary line."""
    store = str(folder / "one.sqlite")
    cpu, done = cpu_of([*cli, "import", "planbench", str(ONE_SHOT), "--study", "os", "--store", store, "--replay",
                        "--no-progress"])  # fmt: skip
    return cpu, next(line for line in done.stderr.splitlines() if line.startswith("study os:"))


def copied_start(cli: list[str], folder: Path, base_url: str) -> tuple[float, bool, str]:
    """CPU of starting a study whose 30 runs are all copied, whether LangGraph was imported, its summary."""
    store = str(folder / "copied.sqlite")

    def study(name: str, timed: bool) -> tuple[float, subprocess.CompletedProcess[str]]:
        args = ["run", name, "--domains", "game24", "--instances", "901-930", "--schemes", "standard",
                "--model", "scripted", "--base-url", base_url, "--dataset", str(DATASETS), "--store", store,
                "--no-progress"]  # fmt: skip
        prefix = [cli[0], "-X", "importtime", *cli[1:]] if timed else cli
        return cpu_of([*prefix, *args])

    study("first", timed=False)
    cpu, done = study("twin", timed=True)
    langgraph = any(line.split("|")[-1].strip().startswith("langgraph") for line in done.stderr.splitlines()
                    if line.startswith("import time:"))  # fmt: skip
    summary = next(line for line in done.stderr.splitlines() if line.startswith("study twin:"))
    return cpu, langgraph, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-ref", default=BASELINE, help="the commit whose code is the baseline")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each of our commands; the least is kept")
    add_json_option(parser)
    args = parser.parse_args()
    ours = [sys.executable, "-m", "critiquebench.cli"]
    runs: dict[str, list[float]] = {"score": [], "one": [], "import": [], "replay": [], "start": []}
    imported_langgraph = False
    with tempfile.TemporaryDirectory() as tmp, serve_in_subprocess(0.0) as base_url:
        folder = Path(tmp)
        count = answers(folder / "answers.jsonl")
        for turn in range(max(1, args.repeat)):  # in turn, so that a slower minute slows each figure alike
            here = folder / f"now{turn}"
            here.mkdir()
            score, _ = cpu_of([*ours, "score", str(folder / "answers.jsonl"), "--domain", "blocksworld", "--dataset",
                               str(DATASETS / "planbench" / "blocksworld"), "--domain-option",
                               "reading=planbench-whole", "--output", str(here / "scored.jsonl")])  # fmt: skip
            one, one_summary = one_command(ours, here)
            imported, replayed, summary = replay(ours, here)
            start, langgraph, start_summary = copied_start(ours, here, base_url)
            imported_langgraph = imported_langgraph or langgraph
            for name, value in (("score", score), ("one", one), ("import", imported), ("replay", replayed),
                                ("start", start)):  # fmt: skip
                runs[name].append(value)
        with ref_tree(args.baseline_ref) as tree:
            then = ref_command(tree)
            (folder / "then").mkdir()
            b_imported, b_replayed, b_summary = replay(then, folder / "then")
            b_start, b_langgraph, _ = copied_start(then, folder / "then", base_url)
    score, one, imported, replayed, start = (min(runs[k]) for k in ("score", "one", "import", "replay", "start"))
    langgraph = imported_langgraph
    both, b_both = imported + replayed, b_imported + b_replayed
    ref, spread = args.baseline_ref, f"least of {len(runs['score'])} runs"
    print(one_summary)
    print(summary)
    print(f"score ({count} answers):          {score:6.2f} s CPU   ({spread}: {_runs(runs['score'])})")
    met_one = "met" if one <= TARGET_RATIO * score else "MISSED"
    print(f"import --replay (one command):  {one:6.2f} s CPU = {one / score:.2f}x score's (target <= "
          f"{TARGET_RATIO:.0f}x: {met_one}); {ref} (two commands): {b_both / score:.2f}x   ({_runs(runs['one'])})")
    print(f"import planbench:               {imported:6.2f} s CPU   ({ref}: {b_imported:.2f} s)")
    print(f"resume --replay (500 runs):     {replayed:6.2f} s CPU   ({ref}: {b_replayed:.2f} s, "
          f"{b_replayed / replayed:.1f}x)")  # fmt: skip
    met_two = "met" if both <= TARGET_RATIO * score else "MISSED"
    print(f"import, then resume --replay:   {both:6.2f} s CPU = {both / score:.2f}x score's (target <= "
          f"{TARGET_RATIO:.0f}x: {met_two}); {ref}: {b_both / score:.2f}x")  # fmt: skip
    print(start_summary)
    print(f"a study whose runs are all copied: {start:.2f} s CPU, LangGraph imported: {langgraph} "
          f"({ref}: {b_start:.2f} s, LangGraph imported: {b_langgraph})")  # fmt: skip
    rows = [
        row("import --replay of GPT-4's 500 one-shot Blocksworld answers (one command), CPU", one, "s",
            baseline=("critiquebench score on the same 500 answers", score), ratio=one / score,
            target=f"<= {TARGET_RATIO:.0f}x score", met=one <= TARGET_RATIO * score,
            note=f"{spread}; {ref} (import, then resume --replay): {b_both:.2f} s, {b_both / score:.1f}x score"),
        row("import, then resume --replay (two commands), CPU", both, "s",
            baseline=("critiquebench score on the same 500 answers", score), ratio=both / score,
            target=f"<= {TARGET_RATIO:.0f}x score", met=both <= TARGET_RATIO * score,
            note=f"{spread} of each; {ref}: {b_both:.2f} s, {b_both / score:.1f}x score"),
        row("resume --replay of the 500 runs, CPU", replayed, "s", baseline=(f"{ref}'s code", b_replayed),
            ratio=b_replayed / replayed, target=f"<= {TARGET_REPLAY_S:.0f} s", met=replayed <= TARGET_REPLAY_S),
        row("import planbench of the file, CPU", imported, "s", baseline=(f"{ref}'s code", b_imported),
            ratio=b_imported / imported),
        row("start of a study whose 30 runs are all copied, CPU", start, "s", baseline=(f"{ref}'s code", b_start),
            ratio=b_start / start, target="LangGraph not imported", met=not langgraph,
            note=f"LangGraph imported: {langgraph} ({ref}: {b_langgraph})"),
    ]  # fmt: skip
    record("bench_replay", rows, path=args.json)


def _runs(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


if __name__ == "__main__":
    main()
