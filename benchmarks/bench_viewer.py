"""The viewer in the browser: page load to Table 1 shown for a store of 10,000 runs (target < 2 s), and opening a
15-round transcript (target < 1 s). The baseline, measured in the same run, is the same page on a 20-run store.
With --big: a store holding 30 MB of answers (2 runs x 3 rounds of 5 MB, each call cached with the earlier
answers in its history, each long text stored once): page load, and opening a 3-round transcript (target < 1 s);
the baseline is the same store with 1 kB answers, and beside it the same store with every text inline (as
stores were written before `store.texts`).

    .venv/bin/python benchmarks/bench_viewer.py [--runs 10000] [--repeat 3] [--big]

Drives the system's Chromium through Playwright (as the tests do); the store is generated (4 domains x 5
schemes x instances; iterative schemes have 1-15 rounds, llm-llm rounds carry an LLM verdict and a critique).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from critiquebench.store.db import connect
from critiquebench.store.results import ensure_schema, save_study
from critiquebench.viewer.site import ViewerServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.results import add_json_option, record, row  # noqa: E402

DOMAINS = ("game24", "coloring", "blocksworld", "mystery_blocksworld")
SCHEMES = ("standard", "llm-llm", "sound-first", "sampling:k=15", "self-consistency:k=15")
STUDY = "bench"


def make_store(path: Path, runs: int, seed: int = 0) -> int:
    """A store with `runs` finished runs of study `bench`; returns the rowid of a 15-round run."""
    rng = random.Random(seed)
    db = connect(path)
    ensure_schema(db)
    per_cell = max(1, runs // (len(DOMAINS) * len(SCHEMES)))
    save_study(db, STUDY, {"name": STUDY, "domains": list(DOMAINS), "schemes": list(SCHEMES), "model": "bench",
                           "instances": {d: f"1-{per_cell}" for d in DOMAINS}, "planned_runs": runs})  # fmt: skip
    run_rows, attempt_rows = [], []
    for scheme in SCHEMES:
        for domain in DOMAINS:
            for i in range(1, per_cell + 1):
                tid = f"{STUDY}/{domain}/{scheme}/{i}/0"
                rounds = 1 if scheme in ("standard", "self-consistency:k=15") else rng.randint(1, 15)
                if domain == "game24" and scheme == "llm-llm" and i == 1:
                    rounds = 15
                valid = [rng.random() < 0.2 for _ in range(rounds)]
                for r in range(1, rounds + 1):
                    verdict = (rng.random() < 0.5) if scheme == "llm-llm" else None
                    ok = valid[r - 1]
                    critique = None if verdict is None else "critique " * 30
                    attempt_rows.append((tid, r, f"answer {i}.{r} " + "x" * 200, f"canon {r}", "ok" if ok else "bad",
                                         int(ok), "feedback " * 20, None if verdict is None else int(verdict),
                                         critique, int(r == rounds), 300, 60, 1, 0))  # fmt: skip
                run_rows.append((tid, STUDY, domain, scheme, str(i), "done", rounds, int(valid[-1]), rounds,
                                 300 * rounds, 60 * rounds, rounds))  # fmt: skip
    db.conn.execute("BEGIN")
    db.conn.executemany(
        "INSERT INTO runs (thread_id, study, domain, scheme, instance_id, status, final_round, correct, rounds, "
        "prompt_tokens, completion_tokens, llm_calls) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", run_rows)  # fmt: skip
    db.conn.executemany(
        "INSERT INTO attempts (thread_id, round, answer, canonical, sound_status, sound_valid, feedback, "
        "llm_verdict, llm_critique, stopped, prompt_tokens, completion_tokens, llm_calls, cache_hits) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", attempt_rows)  # fmt: skip
    db.conn.execute("COMMIT")
    rowid = db.execute("SELECT rowid FROM runs WHERE thread_id = ?", [f"{STUDY}/game24/llm-llm/1/0"]).fetchone()[0]
    db.conn.close()
    return rowid


def make_big_store(path: Path, runs: int = 2, rounds: int = 3, size: int = 5_000_000, inline: bool = False) -> int:
    """A store with `runs` sound-first runs of `rounds` rounds whose every answer is `size` characters (the
    reliability audit's 5 MB answers: 30 MB of answers by default), each answer's call in the call cache with
    the run's earlier answers in its history, as a feedback loop sends them; returns a run's rowid. Each long
    text is stored once (`store.texts`), or with `inline` in every row that holds it (stores written before)."""
    import json

    from critiquebench.store.cache import CallCache
    from critiquebench.store.texts import stored, stored_messages

    db = connect(path)
    ensure_schema(db)
    CallCache(db)
    save_study(db, STUDY, {"name": STUDY, "domains": ["game24"], "schemes": ["sound-first"], "model": "bench",
                           "instances": {"game24": f"1-{runs}"}, "planned_runs": runs})  # fmt: skip
    def text(value: str) -> str:
        return value if inline else stored(db, value)

    def messages(history: list[dict[str, str]]) -> str:
        return json.dumps(history if inline else stored_messages(db, history))

    db.conn.execute("BEGIN")
    for i in range(1, runs + 1):
        tid = f"{STUDY}/game24/sound-first/{i}/0"
        history = [{"role": "user", "content": f"Use 1 2 3 {i} to make 24."}]
        for r in range(1, rounds + 1):
            answer = f"({i}.{r}) " + "".join(chr(97 + (j * 7 + r + i) % 26) for j in range(64)) * (size // 64)
            db.conn.execute(
                "INSERT INTO attempts (thread_id, round, answer, canonical, sound_status, sound_valid, feedback, "
                "stopped, prompt_tokens, completion_tokens, llm_calls) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (tid, r, text(answer), None, "invalid", 0, "not 24", int(r == rounds), 100, size // 4, 1))  # fmt: skip
            db.conn.execute(
                "INSERT INTO llm_calls (key, model, endpoint, messages, params, sample, response, created_at) "
                "VALUES (?,?,?,?,?,?,?,?)", (f"k{i}.{r}", "bench", "e", messages(history), "{}", 0, text(answer), 0))
            if "round_calls" in db.table_names():  # the calls of each round, as a run records them now
                db.conn.execute("INSERT INTO round_calls (thread_id, round, node, calls, sound_reason) "
                                "VALUES (?,?,?,?,?)", (tid, r, "generator", json.dumps([f"k{i}.{r}"]), "not 24"))
            history = [*history, {"role": "assistant", "content": answer}, {"role": "user", "content": "not 24"}]
        db.conn.execute(
            "INSERT INTO runs (thread_id, study, domain, scheme, instance_id, status, final_round, final_answer, "
            "correct, rounds, prompt_tokens, completion_tokens, llm_calls) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (tid, STUDY, "game24", "sound-first", str(i), "done", rounds, text(answer), 0, rounds, 100 * rounds,
             size // 4 * rounds, rounds))  # fmt: skip
    db.conn.execute("COMMIT")
    rowid = db.execute("SELECT rowid FROM runs WHERE thread_id = ?", [f"{STUDY}/game24/sound-first/1/0"]).fetchone()[0]
    db.conn.close()
    return rowid


def measure(browser: object, store: Path, run_id: int, repeat: int, rounds: int = 15, cell: str = "game24|llm-llm"
            ) -> tuple[float, float]:  # fmt: skip
    """Median seconds: page load until Table 1's cells are shown; hash change until the run's `rounds` rounds
    are shown."""
    loads, opens = [], []
    with ViewerServer(store, []) as server:
        for _ in range(repeat):
            page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
            start = time.perf_counter()
            page.goto(server.url + f"#study={STUDY}")
            page.wait_for_selector("#table1 td.cell")
            loads.append(time.perf_counter() - start)
            start = time.perf_counter()
            page.evaluate(f"location.hash = 'study={STUDY}&cell={cell}&run={run_id}'")
            # a locator, not wait_for_function: the page's CSP forbids the eval that polling a string needs
            page.locator("#transcript .round").nth(rounds - 1).wait_for(timeout=120_000)
            opens.append(time.perf_counter() - start)
            page.close()
    return statistics.median(loads), statistics.median(opens)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big", action="store_true",
                        help="instead: a store of 30 MB of answers (2 runs x 3 rounds of 5 MB), baseline the same "
                             "runs with 1 kB answers")  # fmt: skip
    add_json_option(parser)
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("playwright is not installed: run scripts/setup.sh")
        return 2
    chromium = shutil.which("chromium")
    if not chromium:
        print("no system chromium: run scripts/setup.sh")
        return 2
    if args.big:
        return big_answers(chromium, args.repeat, args.json)
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big.sqlite", Path(tmp) / "small.sqlite"
        t = time.perf_counter()
        big_run = make_store(big, args.runs)
        small_run = make_store(small, 20)
        print(f"generated a store of {args.runs} runs in {time.perf_counter() - t:.1f} s")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            base_load, base_open = measure(browser, small, small_run, args.repeat)
            load, open_ = measure(browser, big, big_run, args.repeat)
            browser.close()
    print(f"page load to Table 1 shown: {load * 1000:.0f} ms for {args.runs} runs "
          f"(baseline {base_load * 1000:.0f} ms for 20 runs: {load / base_load:.2f}x); target < 2000 ms: "
          f"{'met' if load < 2 else 'MISSED'}")  # fmt: skip
    print(f"open a 15-round transcript: {open_ * 1000:.0f} ms (baseline {base_open * 1000:.0f} ms: "
          f"{open_ / base_open:.2f}x); target < 1000 ms: {'met' if open_ < 1 else 'MISSED'}")  # fmt: skip
    rows = [
        row(f"page load to Table 1 shown, {args.runs} runs", load * 1000, "ms",
            baseline=("the same page on a 20-run store", base_load * 1000), ratio=load / base_load,
            target="< 2000 ms", met=load < 2, note=f"median of {args.repeat}"),
        row("opening a 15-round transcript", open_ * 1000, "ms",
            baseline=("the same on a 20-run store", base_open * 1000), ratio=open_ / base_open,
            target="< 1000 ms", met=open_ < 1, note=f"median of {args.repeat}"),
    ]  # fmt: skip
    record("bench_viewer", rows, path=args.json)
    return 0


def big_answers(chromium: str, repeat: int, json_path: Path | None = None) -> int:
    """Big answers (issue 26 item 10): page load and opening a 3-round transcript of 5 MB answers."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        big, old, small = Path(tmp) / "big.sqlite", Path(tmp) / "old.sqlite", Path(tmp) / "small.sqlite"
        big_run, old_run = make_big_store(big), make_big_store(old, inline=True)
        small_run = make_big_store(small, size=1000)
        size, old_size = (sum(p.stat().st_size for p in Path(tmp).glob(f"{n}.sqlite*")) / 1e6 for n in ("big", "old"))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            base_load, base_open = measure(browser, small, small_run, repeat, 3, "game24|sound-first")
            load, open_ = measure(browser, big, big_run, repeat, 3, "game24|sound-first")
            old_load, old_open = measure(browser, old, old_run, repeat, 3, "game24|sound-first")
            browser.close()
    print(f"store of 30 MB of answers ({size:.0f} MB on disk; {old_size:.0f} MB with every text inline, as written "
          f"before): page load to Table 1 shown {load * 1000:.0f} ms (baseline, 1 kB answers: "
          f"{base_load * 1000:.0f} ms: {load / base_load:.2f}x; texts inline {old_load * 1000:.0f} ms)")  # fmt: skip
    print(f"open a 3-round transcript of 5 MB answers: {open_ * 1000:.0f} ms (baseline {base_open * 1000:.0f} ms: "
          f"{open_ / base_open:.2f}x; texts inline {old_open * 1000:.0f} ms); target < 1000 ms: "
          f"{'met' if open_ < 1 else 'MISSED'}")  # fmt: skip
    stores = f"{size:.0f} MB on disk; {old_size:.0f} MB with every text inline; median of {repeat}"
    rows = [
        row("page load to Table 1 shown, a store of 30 MB of answers", load * 1000, "ms",
            baseline=("the same store with 1 kB answers", base_load * 1000), ratio=load / base_load,
            note=f"texts inline: {old_load * 1000:.0f} ms; {stores}"),
        row("opening a 3-round transcript of 5 MB answers", open_ * 1000, "ms",
            baseline=("the same store with 1 kB answers", base_open * 1000), ratio=open_ / base_open,
            target="< 1000 ms", met=open_ < 1, note=f"texts inline: {old_open * 1000:.0f} ms; {stores}"),
    ]  # fmt: skip
    record("bench_viewer-big", rows, path=json_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
