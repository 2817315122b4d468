"""Big answers in the store: a study whose answers total 30 MB, store size / answers' size and the viewer's static
export time, each long text stored once (today) against the layout before it (every text inline in the call
cache, the rounds and the runs), both measured in this run.

    .venv/bin/python benchmarks/bench_big_answers.py [--size 5000000] [--repeat 3]

The study is the reliability audit's 1c probe (`../shared/audits/reliability.md`): Game of 24 x standard,
sound-first:rounds=3 on 2 generated puzzles, 6 calls, every answer distinct and `--size` characters long (5 MB:
30 MB of answers), the scripted server on loopback. Each layout runs the installed command as a user does, in its
own process; the old layout is today's code with the texts' references switched off
(`critiquebench.store.texts._by_reference`), which writes what main wrote before (graph checkpoints already held
each text once then: the audit's 336 MB + 127 MB of WAL was before that). Then `view --output` exports each
store `--repeat` times (median), timed whole and, in a fresh process after its imports (most of the command's
start-up), the export alone. Target: store under 1.5x the answers.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import add_json_option, record, row  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402
from tests.test_store_layouts import big_replies  # noqa: E402

PYTHON = ROOT / ".venv" / "bin" / "python"
CLI = ROOT / ".venv" / "bin" / "critiquebench"
OLD_LAYOUT = ("import sys; import critiquebench.store.texts as t; t._by_reference = lambda text: False; "
              "from critiquebench.cli import app; sys.argv[0] = 'critiquebench'; app()")  # fmt: skip
EXPORT = ("import sys, time; from pathlib import Path; from critiquebench.viewer.site import export_static; "
          "start = time.perf_counter(); export_static(Path(sys.argv[1]), [], Path(sys.argv[2])); "
          "print(time.perf_counter() - start)")  # fmt: skip
TABLES = ("llm_calls", "attempts", "runs", "texts", "checkpoints", "writes")
MB = 1e6


def run_study(store: Path, size: int, old: bool) -> tuple[float, int]:
    """Wall seconds of `run` and the characters of the answers it was given."""
    reply, served = big_replies(size)
    command = [str(PYTHON), "-c", OLD_LAYOUT] if old else [str(CLI)]
    with ScriptedServer(reply=reply) as server:
        start = time.perf_counter()
        subprocess.run([*command, "run", "big", "--domains", "game24", "--instances", "gen:2:1", "--schemes",
                        "standard,sound-first:rounds=3", "--model", "fake", "--base-url", server.base_url,
                        "--store", str(store), "--no-progress"], check=True, capture_output=True)  # fmt: skip
        wall = time.perf_counter() - start
    return wall, sum(len(a) for a in served)


def table_bytes(store: Path) -> dict[str, int]:
    """Bytes of the pages of each table (and its indexes) in the store file."""
    with closing(sqlite3.connect(store)) as conn:
        try:
            rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        except sqlite3.OperationalError:  # SQLite built without dbstat
            return {}
        tables = {name: tbl for name, tbl in conn.execute("SELECT name, tbl_name FROM sqlite_master")}
    out: dict[str, int] = {}
    for name, size in rows:
        table = tables.get(name, name)
        out[table] = out.get(table, 0) + int(size)
    return out


def export_seconds(store: Path, repeat: int) -> tuple[float, float, int]:
    """Median wall seconds of `view --output`, median seconds of its export alone (`export_static` in a fresh
    process, after the imports that dominate the command's start-up), and the bytes it wrote."""
    walls, exports, written = [], [], 0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "site"
            start = time.perf_counter()
            subprocess.run([str(CLI), "view", "--store", str(store), "--output", str(out)], check=True,
                           capture_output=True)  # fmt: skip
            walls.append(time.perf_counter() - start)
            written = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
            shutil.rmtree(out)
            child = subprocess.run([str(PYTHON), "-c", EXPORT, str(store), str(out)], check=True,
                                   capture_output=True, text=True)  # fmt: skip
            exports.append(float(child.stdout.split()[-1]))
    return statistics.median(walls), statistics.median(exports), written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=5_000_000, help="characters of each answer")
    parser.add_argument("--repeat", type=int, default=3, help="exports of each store (median)")
    add_json_option(parser)
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for layout in ("old", "new"):
            store = Path(tmp) / f"{layout}.sqlite"
            wall, answers = run_study(store, args.size, old=layout == "old")
            wal = Path(f"{store}-wal")
            wal_bytes = wal.stat().st_size if wal.exists() else 0
            on_disk = store.stat().st_size + wal_bytes
            export, alone, written = export_seconds(store, args.repeat)
            results[layout] = dict(run=wall, answers=answers, disk=on_disk, wal=wal_bytes, export=export,
                                   alone=alone, written=written, tables=table_bytes(store))  # fmt: skip
    answers = results["new"]["answers"]
    print(f"answers: {answers / MB:.1f} MB (6 calls of {args.size / MB:g} MB, each distinct)")
    for layout, r in results.items():
        tables = ", ".join(f"{t} {r['tables'].get(t, 0) / MB:.1f}" for t in TABLES)
        wal = f" (WAL {r['wal'] / MB:.1f} MB)" if r["wal"] else ""
        print(f"{layout} layout: store {r['disk'] / MB:.1f} MB{wal} = "
              f"{r['disk'] / r['answers']:.2f}x the answers (MB by table: {tables}); run {r['run']:.1f} s; "
              f"view --output {r['export']:.2f} s (the export itself {r['alone']:.2f} s), {r['written'] / MB:.1f} MB "
              f"written; answers {r['answers'] / MB:.1f} MB")  # fmt: skip
    old, new = results["old"], results["new"]
    print(f"new / old: store {new['disk'] / old['disk']:.2f}x, run {new['run'] / old['run']:.2f}x, view --output "
          f"{new['export'] / old['export']:.2f}x (the export itself {new['alone'] / old['alone']:.2f}x)")
    met = new["disk"] < 1.5 * answers
    print(f"target store < 1.5x the answers: {'met' if met else 'MISSED'} ({new['disk'] / answers:.2f}x)")
    rows = [
        row("store size, each long text stored once", new["disk"] / MB, "MB", baseline=("the answers", answers / MB),
            ratio=new["disk"] / answers, target="< 1.5x the answers", met=met,
            note=f"6 calls of {args.size / MB:g} MB, each distinct"),
        row("store size, the layout before (every text inline)", old["disk"] / MB, "MB",
            baseline=("the answers", old["answers"] / MB), ratio=old["disk"] / old["answers"]),
        row("view --output time", new["export"], "s", baseline=("the layout before", old["export"]),
            ratio=new["export"] / old["export"], note=f"median of {args.repeat}"),
        row("the static export alone (after imports)", new["alone"], "s", baseline=("the layout before", old["alone"]),
            ratio=new["alone"] / old["alone"], note=f"median of {args.repeat}"),
        row("the study's run", new["run"], "s", baseline=("the layout before", old["run"]),
            ratio=new["run"] / old["run"]),
    ]  # fmt: skip
    record("bench_big_answers", rows, path=args.json)
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
