"""Every recorded PlanBench result file of a checkout, imported and replayed offline (issue 24's breadth check).

    nice .venv/bin/python benchmarks/bench_planbench_breadth.py ROOT [--only SUBSTRING] [--reading READER]
        [--markdown FILE] [--keep DIR] [--baseline-ref 045ed38 [--baseline-files 10]]

ROOT is a PlanBench checkout (karthikv792/LLMs-Planning). Every results JSON under `plan-bench/results/` and
`llm_planning_analysis/results*/` is imported with `import planbench FILE --planbench ROOT` into a fresh store,
replayed (`resume --replay`, no endpoint: a call that misses the cache fails its run) and exported. Per file it
prints: imported (or the importer's one line), the prompt style and reader recognised, runs replayed / runs,
LLM calls that left the cache, agreement of our final verdicts with PlanBench's label, and agreement of our sound
reading with the label (the same when the file is read by our own reader), and for PDDL backprompting (a window of
one exchange) how many of the replayed answers our sound verifier judged as PlanBench's validator did. Then the
totals the issue's acceptance counts: files imported, replayed fully offline (every run done, 0 calls), and at
>= 98% agreement.

Speed (issue 31 item 2): the wall time of the whole pass, and with `--baseline-ref REF` a baseline measured in the
same run: on a stratified sample of the files (`--baseline-files`, spread over the files' sizes), the CPU time of
`import planbench` + `resume --replay` + `export` run as commands, once with this tree's code and once with the
code of commit REF (a temporary `git worktree`, `benchmarks/baseline_ref.py`); their ratio, and the baseline's
time for every file estimated from it (the whole baseline would take half an hour).

The label of an instance is `act_correct` (backprompting), `llm_correct_binary` (t3), `llm_correct`, or
`correct` (older GPT-4 files), as `critiquebench.importers.planbench.file.label` reads it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from critiquebench.domains import Instance, get_domain
from critiquebench.domains.planning.tasks.domain import TaskDomain
from critiquebench.importers.planbench import history_window, import_file
from critiquebench.importers.planbench.file import ImportError_, label, load_json
from critiquebench.reports.task_disagreements import plan_steps, plan_why, state_why

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.baseline_ref import ref_command, ref_tree  # noqa: E402
from benchmarks.results import add_json_option, commit, record  # noqa: E402
from benchmarks.results import row as result_row  # noqa: E402 - `row` names the exported rows here

THRESHOLD = 0.98
CLI = [sys.executable, "-m", "critiquebench.cli"]


@dataclass
class Outcome:
    path: str
    imported: bool = False
    error: str = ""
    style: str = ""
    reading: str = ""
    runs: int = 0
    done: int = 0
    failed: int = 0
    calls: int = 0
    skipped: int = 0
    agree: int = 0
    labelled: int = 0
    sound_agree: int = 0
    disagreements: list[str] = field(default_factory=list)
    # backprompting: answers judged, and those our sound verifier judged otherwise than PlanBench's validator
    judged: int = 0
    judged_otherwise: list[str] = field(default_factory=list)
    # every instance whose final verdict parts from the label: what each side read, and why (`_explain`)
    details: list[dict[str, Any]] = field(default_factory=list)

    @property
    def offline(self) -> bool:
        return self.imported and self.runs > 0 and self.done == self.runs and self.calls == 0

    @property
    def ok(self) -> bool:
        return self.offline and self.labelled > 0 and self.agree >= THRESHOLD * self.labelled


def result_files(root: Path) -> list[Path]:
    found = sorted((root / "plan-bench" / "results").rglob("*.json"))
    for folder in sorted((root / "llm_planning_analysis").glob("results*")):
        found += sorted(folder.rglob("*.json"))
    return found


def run_file(root: Path, path: Path, store: Path, reading: str | None) -> Outcome:
    out = Outcome(str(path.relative_to(root)))
    try:
        done = import_file(path, store, "s", planbench=root, reading=reading)
    except (ImportError_, ValueError, OSError) as exc:
        out.error = str(exc).replace(str(path), "FILE").replace(str(root), "ROOT")
        return out
    out.imported = True
    out.skipped = len(done.unanswered)
    shown, task = done.replaying, done.task
    out.style = str(shown.prompt_style if shown is not None else done.config.domains[0].rpartition(":")[2])
    reading = shown.replay.reading if shown is not None else task.state_reading if task is not None else None
    out.reading = reading or "sound"
    # the replay runs as a user's would: its own process, no endpoint (a call missing the cache fails its run)
    resumed = subprocess.run([*CLI, "resume", "s", "--store", str(store), "--replay", "--no-progress"],
                             capture_output=True, text=True)
    key = done.config.domains[0]
    rows = _judge(out, root, path, store, key, done.config.domain_options.get(key, {}))
    if resumed.returncode not in (0, 1) and not rows:
        out.error = (resumed.stderr.strip().splitlines() or ["resume failed"])[-1][:200]
    return out


def _judge(out: Outcome, root: Path, path: Path, store: Path, key: str, options: dict[str, Any]) -> list[Any]:
    """The replayed study in `store` (domain `key` with `options`) exported and compared with the file's labels
    into `out`; the exported rows."""
    exported = subprocess.run([*CLI, "export", "s", "--store", str(store)], capture_output=True, text=True)
    rows = [json.loads(line) for line in exported.stdout.splitlines() if line.startswith("{")]
    with sqlite3.connect(store) as db:
        out.calls = db.execute("SELECT count(*) FROM llm_events WHERE kind != 'hit'").fetchone()[0]
        states = dict(db.execute("SELECT status, count(*) FROM runs WHERE study = 's' GROUP BY status").fetchall())
    out.runs = sum(states.values())
    out.done = states.get("done", 0)
    out.failed = out.runs - out.done
    final: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["round"] >= final.get(row["instance"], {"round": 0})["round"]:
            final[row["instance"]] = row
    data = load_json(path)
    recorded = [i for i in data["instances"] if isinstance(i, dict)]
    labels = {str(i.get("instance_id")): label(i) for i in recorded}
    if history_window(str(data.get("task", path.stem))) is not None:  # a windowed run: its rounds are its answers
        _compare_rounds(out, recorded, rows)
    judged = {i: r for i, r in final.items() if labels.get(i) is not None}
    parted = [i for i, r in judged.items() if bool(r["sound_valid"]) != labels[i]]
    sound = _sound_domain(key, options)
    # our sound reading judges every answer where the file has another reader, else only those explained below
    problems = _instances(sound, list(judged) if out.reading != "sound" else parted) if sound is not None else {}
    by_id = {str(i.get("instance_id")): i for i in recorded}
    for ident, row in sorted(judged.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0):
        theirs = labels[ident]
        out.labelled += 1
        ours = bool(row["sound_valid"])
        out.agree += ours == theirs
        if ours != theirs:
            out.disagreements.append(ident)
            out.details.append(_explain(sound, problems.get(ident), by_id[ident], row, theirs))
        if out.reading == "sound":
            out.sound_agree += ours == theirs
        else:
            out.sound_agree += _sound_verdict(sound, problems.get(ident), row["answer"]) == theirs
    return rows


def _compare_rounds(out: Outcome, recorded: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    """Each replayed answer of a windowed PDDL backprompting run: our sound verdict against PlanBench's validator's
    (`full_validator`) on the same answer: the step's stored `sound_verifier_json`, else invalid where feedback
    followed the answer, the file's label on the last."""
    by_id = {str(i.get("instance_id")): i for i in recorded if isinstance(i.get("messages"), list)}
    for row in rows:
        inst = by_id.get(row["instance"])
        if inst is None:
            continue
        k = row["round"] - 1
        answers = [m for m in inst["messages"] if isinstance(m, dict) and m.get("role") == "assistant"]
        step = (inst.get("step_wise_dict") or {}).get(str(k)) or {}
        stored = (step.get("sound_verifier_json") or {}).get("validation_info", {}).get("is_valid_plan")
        theirs = bool(stored) if stored is not None else (label(inst) if k == len(answers) - 1 else False)
        out.judged += 1
        if bool(row["sound_valid"]) != theirs:
            out.judged_otherwise.append(f"{row['instance']}#{row['round']}")


def _run_one(job: tuple[Path, Path, Path, int, str | None, bool]) -> Outcome:
    """`run_file` on file number `n` in a folder of this process's own: the domain folders a process lays out
    from the checkout beside its stores are its own, never written by two processes at once."""
    root, path, work, n, reading, drop = job
    folder = work / str(os.getpid())
    folder.mkdir(exist_ok=True)
    store = folder / f"{n}.sqlite"
    try:
        return run_file(root, path, store, reading)
    finally:
        if drop:
            for leftover in folder.glob(f"{n}.sqlite*"):
                leftover.unlink()


READING_OPTIONS = ("reading", "recorded_feedback", "state_reading")


def _sound_domain(key: str, options: dict[str, Any]) -> Any:
    """The study's domain with our own reader and validator: its options without PlanBench's reading, whether
    stored flat (older imports, t7's `state_reading`) or in the `replay` record."""
    kept = {k: v for k, v in options.items() if k not in READING_OPTIONS}
    if isinstance(kept.get("replay"), dict):
        kept["replay"] = {k: v for k, v in kept["replay"].items() if k not in READING_OPTIONS}
    try:
        return get_domain(key, **kept)
    except (ValueError, OSError):
        return None


def _explain(sound: Any, inst: Any, record: dict[str, Any], row: dict[str, Any], label_: bool) -> dict[str, Any]:
    """One instance whose final verdict parts from PlanBench's label: both verdicts, what PlanBench read (its
    stored `extracted_llm_plan`), what we read, the end of the answer, and why (`task_disagreements`' classes)."""
    answer = str(row.get("answer") or "")
    stored = record.get("extracted_llm_plan")
    cfg = getattr(getattr(sound, "base", sound), "cfg", None)
    if isinstance(sound, TaskDomain) and sound.task.name == "t7" and cfg is not None:
        why = state_why(answer, cfg, record, not label_)
    elif isinstance(sound, TaskDomain) and sound.task.name == "t3":
        why = "verdict read otherwise"
    else:
        steps = plan_steps(stored, cfg)
        right = _sound_verdict(sound, inst, "\n".join(steps)) if stored is not None and inst is not None else None
        why = plan_why(answer, stored, row.get("canonical"), right, label_, cfg)
    facts = isinstance(stored, list) and not plan_steps(stored)  # t7 stores facts ("on_b_c"), the others plans
    read = ", ".join(map(str, stored)) if facts else " ".join(plan_steps(stored))
    return {"instance": str(row["instance"]), "label": label_, "replay": bool(row["sound_valid"]), "why": why,
            "planbench_read": read[:300], "we_read": _steps_or_text(row.get("canonical"))[:300],
            "answer": " ".join(answer.split())[-200:]}  # fmt: skip


def _steps_or_text(read: Any) -> str:
    """A parsed answer as one line: its plan's steps, else its text (a state, a verdict)."""
    return " ".join(plan_steps(read)) or " ".join(str(read or "").split())


def _instances(domain: Any, idents: list[str]) -> dict[str, Any]:
    """The file's instances, loaded at once (one load of each instance alone lays out its whole folder's pool:
    500 loads of one took this pass more CPU than the replays)."""
    try:
        return {inst.id: inst for inst in domain.load(",".join(idents), domain.folder)}
    except (ValueError, OSError, AttributeError):
        found = {}
        for ident in idents:  # one unknown id fails a joint load: the rest are still judged
            try:
                [found[ident]] = domain.load(ident, domain.folder)
            except (ValueError, OSError, AttributeError):
                continue
        return found


def _sound_verdict(domain: Any, inst: Any, answer: str | None) -> bool:
    if inst is None:
        return False
    return bool(domain.verify(Instance(inst.domain, inst.id, inst.data), answer or "").valid)


def task_name(path: Path) -> str:
    """The PlanBench task of a results file by its name: t1 ... t8_3 (backprompting files are t1's)."""
    found = re.search(r"task_(\d)(?:_(\d)_(?!history))?", path.stem)
    return "t" + "_".join(g for g in found.groups() if g) if found else "?"


def rejudged(root: Path, files: list[Path], kept: Path, chosen: set[int]) -> list[tuple[int, Outcome]]:
    """The stores a run kept (`--keep`: `kept` is its `pb-breadth-*` folder, file number N's store `*/N.sqlite`)
    judged again, with no import or replay: every file's agreement and disagreements as `run_file` finds them. A
    file without a stored study is imported again only to give the importer's one line."""
    found = []
    for n, path in enumerate(files):
        if n not in chosen:
            continue
        out = Outcome(str(path.relative_to(root)))
        stores = sorted(kept.glob(f"*/{n}.sqlite"))
        config = None
        if stores:
            with sqlite3.connect(stores[0]) as db:
                config = db.execute("SELECT config FROM studies WHERE name = 's'").fetchone()
        if config is None:
            with tempfile.TemporaryDirectory(prefix="pb-rejudge-") as tmp:
                try:
                    import_file(path, Path(tmp) / "s.sqlite", "s", planbench=root)
                except (ImportError_, ValueError, OSError) as exc:
                    out.error = str(exc).replace(str(path), "FILE").replace(str(root), "ROOT")
            found.append((n, out))
            continue
        definition = json.loads(config[0])
        key = definition["domains"][0]
        options = definition.get("domain_options", {}).get(key, {})
        replay = options.get("replay") or {}
        out.imported = True
        out.style = str(options.get("prompt_style") or key.rpartition(":")[2])
        out.reading = replay.get("reading") or options.get("state_reading") or "sound"
        _judge(out, root, path, stores[0], key, options)
        found.append((n, out))
    return found


def files_section(numbered: list[tuple[int, Outcome]]) -> list[dict[str, Any]]:
    """Per file, what docs/generate.py lays out on the PlanBench page: its task, reader, agreement and every
    instance whose final verdict parts from PlanBench's label, with why."""
    return [
        {"n": n, "file": o.path, "task": task_name(Path(o.path)), "imported": o.imported, "error": o.error[:300],
         "style": o.style, "reading": o.reading, "offline": o.offline, "agree": o.agree, "labelled": o.labelled,
         "sound_agree": o.sound_agree, "disagreements": o.details}
        for n, o in numbered
    ]  # fmt: skip


def add_files(path: Path, numbered: list[tuple[int, Outcome]], note: str | None = None) -> None:
    """The results file at `path` with its per-file section (`files_section`); the files of `numbered` replace
    those of the same number already there, so a run kept can be judged again a part at a time."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    new = files_section(numbered)
    done = {f["n"] for f in new}
    doc["files"] = sorted([f for f in doc.get("files", []) if f["n"] not in done] + new, key=lambda f: f["n"])
    if note:
        doc["files_note"] = note
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def stratified(files: list[Path], count: int) -> list[Path]:
    """`count` of `files` spread over their sizes: the middle file of each of `count` bins by size."""
    by_size = sorted(files, key=lambda p: (p.stat().st_size, str(p)))
    if count >= len(by_size):
        return by_size
    return [by_size[(2 * i + 1) * len(by_size) // (2 * count)] for i in range(count)]


def timed_sample(root: Path, sample: list[Path], ref: str, reading: str | None) -> tuple[float, float]:
    """CPU seconds of import + replay + export of every file of `sample` as commands: this tree's code, then
    commit `ref`'s."""
    ours = [sys.executable, "-m", "critiquebench.cli"]
    with tempfile.TemporaryDirectory(prefix="pb-baseline-") as tmp, ref_tree(ref) as tree:
        now = sum(_commands_cpu(ours, root, path, Path(tmp) / f"now-{n}.sqlite", reading)
                  for n, path in enumerate(sample))  # fmt: skip
        then = sum(_commands_cpu(ref_command(tree), root, path, Path(tmp) / f"then-{n}.sqlite", reading)
                   for n, path in enumerate(sample))  # fmt: skip
    return now, then


def _commands_cpu(cli: list[str], root: Path, path: Path, store: Path, reading: str | None) -> float:
    """CPU seconds (user + system) of `import planbench`, `resume --replay` and `export` of one file."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    given = ["--reading", reading] if reading else []
    steps = [["import", "planbench", str(path), "--planbench", str(root), "--study", "s", *given],
             ["resume", "s", "--replay", "--no-progress"], ["export", "s"]]  # fmt: skip
    for step in steps:
        done = subprocess.run([*cli, *step, "--store", str(store)], capture_output=True, text=True, check=False)
        if step[0] == "import" and done.returncode != 0:
            break  # a file the importer refuses costs its one line, with either code
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}% ({n}/{d})" if d else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path, help="a PlanBench checkout")
    parser.add_argument("--only", default="", help="only files whose path holds this text")
    parser.add_argument("--files", default="", help="only these files of the list (0-based: 100-170, or 3,7,20-25)")
    parser.add_argument("--reading", default=None, help="read every file with this reader (default: the producing one)")
    parser.add_argument("--markdown", type=Path, help="also write the per-file table to this file")
    parser.add_argument("--keep", type=Path, help="keep the per-file stores under this folder")
    parser.add_argument("--jobs", type=int, default=2, help="files replayed at a time (default 2: the machine's cores)")
    parser.add_argument("--baseline-ref", default="", help="also time this commit's code on a sample of the files")
    parser.add_argument("--baseline-files", type=int, default=10, help="files in the baseline's sample")
    parser.add_argument(
        "--rejudge", type=Path, metavar="KEPT", help="no import or replay: judge again the stores a run kept (its "
        "--keep DIR/pb-breadth-*) and add the per-file section to that run's results file (--json), rows unchanged"
    )  # fmt: skip
    add_json_option(parser)
    args = parser.parse_args()
    root = args.root.resolve()
    files = [p for p in result_files(root) if args.only in str(p)]
    chosen: set[int] = set()
    for part in filter(None, args.files.split(",")):
        first, _, last = part.partition("-")
        chosen.update(range(int(first), int(last or first) + 1))
    chosen = chosen or set(range(len(files)))
    if args.rejudge:
        results = args.json or Path(__file__).parent / "results" / "bench_planbench_breadth.json"
        numbered = rejudged(root, files, args.rejudge.resolve(), chosen)
        agree = sum(o.agree for _, o in numbered)
        labelled = sum(o.labelled for _, o in numbered)
        print(f"{len(numbered)} files judged again: {agree} of {labelled} instances agree with PlanBench's label")
        add_files(results, numbered, note=f"judged again from the stores the run kept, by the code of {commit()}")
        return
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    header = (
        "| # | file | imported | style | reading | runs replayed | calls | agreement with label | sound reading "
        "| answers judged as PlanBench's validator |"
    )
    lines = [header, "|---|---|---|---|---|---|---|---|---|---|"]
    print(header, flush=True)
    # one folder for every file's store: the domain folders laid out from the checkout are shared beside them
    # (a process keeps the domains it built by name)
    work = Path(tempfile.mkdtemp(prefix="pb-breadth-", dir=args.keep))
    todo = [(root, path, work, n, args.reading, args.keep is None) for n, path in enumerate(files) if n in chosen]
    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    numbered: list[tuple[int, Outcome]] = []
    for (_, _, _, n, _, _), out in zip(todo, pool.map(_run_one, todo) if pool else map(_run_one, todo), strict=True):
        outcomes.append(out)
        numbered.append((n, out))
        imported = "yes" + (f" ({out.skipped} unanswered skipped)" if out.skipped else "") if out.imported else (
            f"no: {out.error[:300]}"
        )
        line = (
            f"| {n} | {out.path} | {imported} | {out.style} | {out.reading} | {out.done}/{out.runs} | {out.calls} | "
            f"{pct(out.agree, out.labelled)} | {pct(out.sound_agree, out.labelled)} | "
            f"{pct(out.judged - len(out.judged_otherwise), out.judged)} |"
        )
        if out.judged_otherwise:
            line += " judged otherwise: " + ", ".join(out.judged_otherwise[:8])
        if out.disagreements and not out.ok:
            line += " disagree: " + ", ".join(out.disagreements[:8])
        lines.append(line)
        print(line, flush=True)
    if pool is not None:
        pool.shutdown()
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() + children.ru_utime + children.ru_stime  # every process of the pass
    total = len(outcomes)
    imported = sum(o.imported for o in outcomes)
    offline = sum(o.offline for o in outcomes)
    ok = sum(o.ok for o in outcomes)
    agree, labelled = sum(o.agree for o in outcomes), sum(o.labelled for o in outcomes)
    calls = sum(o.calls for o in outcomes)
    summary = [
        "",
        f"files: {total}; imported {imported}/{total}; replayed fully offline (all runs done, 0 calls) "
        f"{offline}/{total}; >= {THRESHOLD:.0%} agreement with PlanBench's label {ok}/{total}",
        f"instances compared {labelled}, agreeing {pct(agree, labelled)}; LLM calls made by replays: {calls}; "
        f"wall time {time.perf_counter() - started:.0f} s ({args.jobs} file(s) at a time), CPU time {cpu:.0f} s",
    ]
    print("\n".join(summary))
    if args.markdown:
        args.markdown.write_text("\n".join(lines + summary) + "\n")
    whole = not (args.only or args.files)  # the targets count the whole checkout, not a selection of its files
    of = f"of {total} files"
    judged = sum(o.judged for o in outcomes)
    rows = [
        result_row("files imported", imported, of),
        result_row("files replayed fully offline (every run done, 0 LLM calls)", offline, of,
            target=">= 165 replayed" if whole else None, met=offline >= 165 if whole else None),
        result_row(f"files at >= {THRESHOLD:.0%} agreement with PlanBench's label", ok, of,
            target=">= 160 at 98%" if whole else None, met=ok >= 160 if whole else None),
        result_row("instances whose final verdict agrees with PlanBench's label", agree, f"of {labelled}",
            ratio=agree / labelled if labelled else None),
        result_row("PDDL backprompting answers judged as PlanBench's validator judged them",
            judged - sum(len(o.judged_otherwise) for o in outcomes), f"of {judged}"),
        result_row("LLM calls made by the replays", calls, "calls", target="0", met=calls == 0),
        result_row("CPU time of every process of the pass", cpu, "s"),
    ]  # fmt: skip
    wall = time.perf_counter() - started
    if args.baseline_ref:
        sample = stratified([files[n] for n in sorted(chosen) if n < len(files)], args.baseline_files)
        ours, theirs = timed_sample(root, sample, args.baseline_ref, args.reading)
        ratio = theirs / ours if ours else 0.0
        print(f"baseline {args.baseline_ref} on {len(sample)} sampled files: {theirs:.1f} s CPU against {ours:.1f} s "
              f"with this code ({ratio:.1f}x); the whole pass estimated at {cpu * ratio:.0f} s of CPU with "
              f"{args.baseline_ref}'s code against {cpu:.0f} s measured")  # fmt: skip
        rows += [
            result_row(f"CPU of import + replay + export on {len(sample)} sampled files", ours, "s",
                baseline=(f"{args.baseline_ref}'s code on the same files", theirs), ratio=ratio,
                note=", ".join(str(p.relative_to(root)) for p in sample)),
            result_row("CPU time of the whole pass, against the baseline estimated from the sample", cpu, "s",
                baseline=(f"{args.baseline_ref}'s code (this pass's CPU x the sample's ratio)", cpu * ratio),
                ratio=ratio),
        ]  # fmt: skip
    rows.append(result_row("wall time of the whole pass", wall, "s", note=f"{args.jobs} file(s) at a time",
                           target="<= 300 s" if whole else None, met=wall <= 300 if whole else None))  # fmt: skip
    selection = None if whole else "a selection of the checkout's files: the targets do not apply"
    # a results file named as a variant (bench_planbench_breadth-NAME.json, e.g. a selection's) names itself so
    name = args.json.stem if args.json and args.json.stem.startswith("bench_planbench_breadth-") else None
    written = record(name or "bench_planbench_breadth", rows, path=args.json, notes=selection)
    add_files(written, numbered)
    sys.exit(0)


if __name__ == "__main__":
    main()
