"""What a benchmark measured, written as JSON (`benchmarks/results/<name>.json`) for the benchmark page to render.

Every `benchmarks/bench_*.py` prints its figures and hands the same figures to `record`, which adds where and
when they were measured (commit, date, machine, load average before and after, the command) and writes the file
atomically. `benchmarks/render.py` turns the files into the page, so no figure is ever typed by hand.

A file's name is the benchmark's: the script's stem (`bench_game24`), or the stem and a mode after a dash for a
variant that measures something else (`bench_setup-setup` for `bench_setup.py --setup`). `--json PATH` (added
by `add_json_option`) writes elsewhere, e.g. a temporary folder.

A row (build it with `row`): `measure` (what), `value` and `unit`, `baseline` (`{"what", "value"}` in the same
unit, measured in the same run, or null), `ratio` (the figure the target compares, or null), `target` (text or
null), `met` (true, false, or null when there is no target or it cannot be judged from this run) and an optional
`note`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"

# The load average when the benchmark started: its script imports this module before measuring anything.
LOAD_AT_START = os.getloadavg()

Row = dict[str, Any]


def row(
    measure: str,
    value: float,
    unit: str,
    *,
    baseline: tuple[str, float] | None = None,
    ratio: float | None = None,
    target: str | None = None,
    met: bool | None = None,
    note: str | None = None,
) -> Row:
    """One measured figure; `baseline` is (what, value) in the row's unit."""
    out: Row = {
        "measure": measure,
        "value": _number(value),
        "unit": unit,
        "baseline": None if baseline is None else {"what": baseline[0], "value": _number(baseline[1])},
        "ratio": None if ratio is None else _number(ratio),
        "target": target,
        "met": None if met is None else bool(met),
    }
    if note:
        out["note"] = note
    return out


def add_json_option(parser: argparse.ArgumentParser) -> None:
    default = RESULTS.relative_to(ROOT) / "<benchmark>.json"
    parser.add_argument("--json", type=Path, metavar="PATH", help=f"write the results here instead of {default}")


def record(name: str, rows: list[Row], *, path: Path | None = None, notes: str | None = None) -> Path:
    """Writes `rows` with the run's provenance to `path` (default `benchmarks/results/<name>.json`); returns it."""
    doc: dict[str, Any] = {
        "benchmark": name,
        "script": name.partition("-")[0] + ".py",
        "rows": rows,
        "commit": commit(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "load": {"before": _load(LOAD_AT_START), "after": _load(os.getloadavg())},
        "command": [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else [],
    }
    if notes:
        doc["notes"] = notes
    problems = validate(doc)
    if problems:  # a benchmark's own bug: say it before a bad file reaches the page
        raise ValueError(f"{name}: invalid results: {'; '.join(problems)}")
    target = path or RESULTS / f"{name}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=1)
            out.write("\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    print(f"results written to {target}")
    return target


def commit() -> str:
    """HEAD's id, with `-dirty` when tracked files differ from it (results files aside: they are the output)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        changed = ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)benchmarks/results"]
        status = subprocess.run(changed, cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("-dirty" if status.stdout.strip() else "")


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count() or 0, "python": platform.python_version(), "system": platform.system()}


def _load(averages: tuple[float, float, float]) -> list[float]:
    return [round(x, 2) for x in averages]


def _number(value: float) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"not a finite number: {value!r}")
    return value if isinstance(value, int) else float(f"{value:.6g}")


def validate(doc: Any) -> list[str]:
    """What is wrong with a results document (empty when nothing is)."""
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    problems = []
    for key, kind in (("benchmark", str), ("script", str), ("commit", str), ("date", str), ("rows", list),
                      ("machine", dict), ("load", dict), ("command", list)):  # fmt: skip
        if not isinstance(doc.get(key), kind):
            problems.append(f"{key}: missing or not a {kind.__name__}")
    if problems:
        return problems
    if not doc["rows"]:
        problems.append("rows: empty")
    try:
        datetime.datetime.fromisoformat(doc["date"])
    except ValueError:
        problems.append(f"date: not ISO 8601: {doc['date']!r}")
    machine_ = doc["machine"]
    if not (isinstance(machine_.get("cpu"), str) and isinstance(machine_.get("cores"), int)
            and isinstance(machine_.get("python"), str)):  # fmt: skip
        problems.append("machine: needs cpu, cores and python")
    for when in ("before", "after"):
        averages = doc["load"].get(when)
        if not (isinstance(averages, list) and len(averages) == 3 and all(_is_number(x) for x in averages)):
            problems.append(f"load.{when}: not three load averages")
    if not all(isinstance(arg, str) for arg in doc["command"]):
        problems.append("command: not a list of strings")
    for i, r in enumerate(doc["rows"]):
        problems += [f"rows[{i}]: {p}" for p in _row_problems(r)]
    return problems


def _row_problems(r: Any) -> list[str]:
    if not isinstance(r, dict):
        return ["not an object"]
    problems = []
    if not (isinstance(r.get("measure"), str) and r["measure"]):
        problems.append("measure: missing")
    if not _is_number(r.get("value")):
        problems.append("value: not a number")
    if not isinstance(r.get("unit"), str):
        problems.append("unit: not a string")
    base = r.get("baseline", "absent")
    if base is not None and not (isinstance(base, dict) and isinstance(base.get("what"), str)
                                 and _is_number(base.get("value"))):  # fmt: skip
        problems.append("baseline: neither null nor {what, value}")
    if "ratio" not in r or not (r["ratio"] is None or _is_number(r["ratio"])):
        problems.append("ratio: neither null nor a number")
    if "target" not in r or not (r["target"] is None or isinstance(r["target"], str)):
        problems.append("target: neither null nor text")
    if "met" not in r or not (r["met"] is None or isinstance(r["met"], bool)):
        problems.append("met: neither null nor a boolean")
    if not isinstance(r.get("note", ""), str):
        problems.append("note: not text")
    return problems


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)
