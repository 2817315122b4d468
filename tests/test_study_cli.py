"""Studies through the real CLI (`.venv/bin/critiquebench` subprocesses) against the scripted server."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import click.testing
import pytest
from typer.main import get_command

from critiquebench.cli import app
from critiquebench.domains.arith import solve
from critiquebench.store.db import connect
from tests.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / ".venv" / "bin" / "critiquebench"
DATASETS = ROOT.parent / "shared" / "datasets"
NUMBERS = {  # game24 ranks 901-906 from 24.csv; sum % 3 decides when the scripted model gets it right
    "901": [4, 5, 6, 10], "902": [1, 2, 4, 7], "903": [2, 5, 8, 11],
    "904": [3, 4, 4, 13], "905": [6, 7, 8, 9], "906": [1, 11, 11, 13],
}  # fmt: skip
SCHEMES = "standard,llm-llm:rounds=3,sound-first:rounds=3,sampling:k=3,self-consistency:k=3"


def game24_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """A deterministic model: it solves a puzzle once it has seen (sum of numbers % 3) earlier answers, and as
    a verifier it accepts expressions of even length (so it is right sometimes and wrong sometimes)."""
    last = messages[-1]["content"]
    if "Please check if the following expression" in last:
        expression = last.split("evaluates to 24: ", 1)[1].split("\n", 1)[0]
        ok = len(expression.replace(" ", "")) % 2 == 0
        return json.dumps({"feedback": "fine" if ok else "the numbers are wrong", "correct": ok})
    match = re.search(r"Input: (\d+) (\d+) (\d+) (\d+)", messages[0]["content"])
    if not match:
        return "OK"
    numbers = [int(n) for n in match.groups()]
    earlier = sum(1 for m in messages if m["role"] == "assistant")
    return (solve(numbers) or "1+2+3+4") if earlier >= sum(numbers) % 3 else "1 + 2 + 3 + 4"


@pytest.fixture
def server() -> Any:
    with ScriptedServer(reply=game24_reply) as srv:
        yield srv


def cli(*args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
    """The installed command in its own process (what a user runs)."""
    done = subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=300, cwd=ROOT)
    if check is not None:
        assert done.returncode == check, done.stderr[-2000:]
    return done


_built: list[Any] = []


def _command() -> Any:
    """The app's click command, built at the first `invoke`: typer's CliRunner builds the whole command tree again
    on every call (~20 ms of CPU; test_estimate_schemes' 64 commands paid ~1.3 s), which a user's process does
    once."""
    if not _built:
        _built.append(get_command(app))
    return _built[0]


def invoke(*args: str, check: int | None = 0) -> Any:
    """The same typer app in this process: quicker for commands that only read or reject input (typer's
    CliRunner is click's, on the command typer builds)."""
    result = click.testing.CliRunner().invoke(_command(), list(args))
    if check is not None:
        assert result.exit_code == check, (result.stdout, result.stderr, result.exception)
    return result


def run_args(name: str, store: Path, server: ScriptedServer, instances: str = "901-906",
             schemes: str = SCHEMES, concurrency: int = 2) -> list[str]:  # fmt: skip
    return ["run", name, "--domains", "game24", "--instances", instances, "--schemes", schemes,
            "--model", "scripted", "--base-url", server.base_url, "--dataset", str(DATASETS),
            "--concurrency", str(concurrency), "--store", str(store)]  # fmt: skip


def forked(fork_server: Any, *args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
    """The command in its own process, as `cli` runs it, forked from the preloaded CLI (the `fork_server`
    fixture, tests/forked_process.py): the same process a user runs, without 1-4 s of CPU importing."""
    done = fork_server.run(args, cwd=ROOT, timeout=300)
    if check is not None:
        assert done.returncode == check, done.stderr[-2000:]
    return done


def report(name: str, store: Path, *extra: str) -> list[dict[str, Any]]:
    return json.loads(invoke("report", name, "--store", str(store), "--format", "json", *extra).stdout)


def test_study_runs_reports_and_repeats_without_new_calls(
    server: ScriptedServer, tmp_path: Path, fork_server: Any
) -> None:
    store = tmp_path / "store.sqlite"
    first = forked(fork_server, *run_args("main", store, server))
    assert "Table 1" in first.stdout and "30 runs" in first.stderr
    rows = {r["scheme"]: r for r in report("main", store)}
    assert list(rows) == SCHEMES.split(",")
    right_first_time = sum(1 for n in NUMBERS.values() if sum(n) % 3 == 0)
    assert (rows["standard"]["correct"], rows["standard"]["total"]) == (right_first_time, 6)
    # The sound verifier backprompts until the answer is right: sum % 3 + 1 rounds each.
    assert rows["sound-first:rounds=3"]["correct"] == 6
    expected_rounds = sum(sum(n) % 3 + 1 for n in NUMBERS.values()) / 6
    assert rows["sound-first:rounds=3"]["mean_rounds"] == pytest.approx(expected_rounds)
    # Resampling the same prompt gets the same answer from this deterministic model.
    assert rows["sampling:k=3"]["correct"] == rows["self-consistency:k=3"]["correct"] == right_first_time
    assert rows["standard"]["llm_calls"] == 6 and rows["standard"]["prompt_tokens"] > 0
    calls = server.requests

    again = invoke(*run_args("main", store, server))  # same definition: resumes, nothing left to do
    assert "0 done now, 30 done before" in again.stderr and server.requests == calls
    twin = invoke(*run_args("twin", store, server))  # same definition, new study: every call is a cache hit
    assert "LLM calls: 0 new" in twin.stderr and server.requests == calls
    assert [r["accuracy"] for r in report("twin", store)] == [r["accuracy"] for r in rows.values()]

    changed = invoke(*run_args("main", store, server, instances="901-903"), check=2)
    assert "different definition" in changed.stderr and "instances" in changed.stderr
    assert "Traceback" not in changed.stderr

    listed = {s["name"]: s for s in json.loads(invoke("studies", "--json", "--store", str(store)).stdout)}
    assert (listed["main"]["done"], listed["main"]["total"], listed["main"]["domains"]) == (
        30,
        30,
        ["game24"],
    )
    compared = report("main", store, "--compare", "twin")
    assert all(r["delta"] == 0 for r in compared) and compared[0]["other_study"] == "twin"
    table2 = report("main", store, "--table", "2")
    assert table2[0]["table"] == "2" and table2[0]["n"] > 0

    exported = tmp_path / "rounds.jsonl"
    invoke("export", "main", "--store", str(store), "--output", str(exported))
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    attempts = (
        connect(store)
        .execute("SELECT COUNT(*) FROM attempts a JOIN runs r USING (thread_id) WHERE r.study = 'main'")
        .fetchone()[0]
    )
    assert len(lines) == attempts
    assert {"study", "domain", "scheme", "instance", "trial", "round", "prompt_tokens", "completion_tokens",
            "answer", "canonical", "sound_valid", "llm_verdict", "feedback"} <= set(lines[0])  # fmt: skip


def done_runs(store: Path, study: str) -> int:
    if not store.exists():
        return 0
    try:
        db = connect(store)
        row = db.execute("SELECT COUNT(*) FROM runs WHERE study = ? AND status = 'done'", [study]).fetchone()
        db.conn.close()
        return row[0]
    except Exception:  # tables not created yet
        return 0


def test_ctrl_c_stops_cleanly_and_resume_matches_an_uninterrupted_study(tmp_path: Path, fork_server: Any) -> None:
    schemes = "standard,sound-first:rounds=3"
    with ScriptedServer(reply=game24_reply, latency=0.05) as server:
        store = tmp_path / "interrupted.sqlite"
        proc = fork_server.popen(run_args("s", store, server, "901-930", schemes), cwd=ROOT)
        deadline = time.monotonic() + 120
        while done_runs(store, "s") < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err[-2000:]
        assert "stopping" in err and "critiquebench resume s" in err and "Traceback" not in err
        assert 3 <= done_runs(store, "s") < 60
        assert connect(store).execute("SELECT COUNT(*) FROM runs WHERE status = 'running'").fetchone()[0] == 0

        server.latency = 0.0  # it only had to leave the Ctrl-C a study midway: the rest need not wait 0.05 s a call
        resumed = forked(fork_server, "resume", "s", "--store", str(store))
        assert "Table 1" in resumed.stdout
        whole = tmp_path / "whole.sqlite"
        invoke(*run_args("s", whole, server, "901-930", schemes))

    def numbers(path: Path) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k != "cache_hits"} for r in report("s", path)]

    assert numbers(store) == numbers(whole)
    assert numbers(store)[0]["total"] == 30


def test_a_study_stopped_early_has_runs_of_every_scheme_within_one_of_each_other(
    tmp_path: Path, fork_server: Any
) -> None:
    """Runs used to go scheme by scheme: a Ctrl-C early in a study left the later schemes with no runs at all, so
    an interrupted study compared nothing. Now any prefix of a study has every scheme on the same instances."""
    schemes = "standard,sampling:k=2,sound-first:rounds=2,self-consistency:k=2"
    store = tmp_path / "early.sqlite"
    with ScriptedServer(reply=game24_reply, latency=0.05) as server:
        proc = fork_server.popen([*run_args("e", store, server, "901-940", schemes), "--temperature", "0.7"], cwd=ROOT)
        deadline = time.monotonic() + 120
        while done_runs(store, "e") < 16 and proc.poll() is None and time.monotonic() < deadline:  # 10% of 160
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    counts = dict(connect(store).execute("SELECT scheme, COUNT(*) FROM runs WHERE study = 'e' AND status = 'done' "
                                         "GROUP BY scheme").fetchall())  # fmt: skip
    assert len(counts) == 4 and sum(counts.values()) < 160, counts
    assert max(counts.values()) - min(counts.values()) <= 1, counts


def test_the_token_budget_is_the_studys_reserved_and_stops_runs_unfinished(tmp_path: Path) -> None:
    """At concurrency 16 every call used to pass the budget check before any had spent a token (16 calls for
    a budget of two or three); runs it stopped were failed (exit 1) and each resume started a fresh budget."""
    store = tmp_path / "store.sqlite"
    with ScriptedServer(reply=game24_reply, latency=0.2) as server:
        args = [*run_args("b", store, server, "901-916", "standard", concurrency=16), "--max-tokens", "64"]
        capped = invoke(*args, "--budget-tokens", "300", check=3)
        assert "stopped by the token budget" in capped.stderr and "--budget-tokens" in capped.stderr
        first = server.answered
        spent, limit = connect(store).execute("SELECT spent_tokens, limit_tokens FROM budgets").fetchone()
        per_call = spent / first
        # a call starts only while spent + reserved (prompt/4 + max_tokens each) < 300, else it waits for the
        # calls in flight, until the spent tokens reach 300: a few calls, not 16, and at most two past the limit
        assert 2 <= first <= 8 and limit == 300 and 300 <= spent < 300 + 2 * per_call, (first, spent)
        row = report("b", store)[0]
        assert (row["failed"], row["unfinished"], row["total"]) == (0, 16 - row["total"], row["total"])
        assert row["total"] == first  # every finished run made one call; the others wait, unfinished
        assert row["planned"] == 16  # the report of an unfinished study says how far each cell got
        text = " ".join(invoke("report", "b", "--store", str(store)).stdout.split())  # (the note folds at 80)
        assert f"unfinished study: finished runs of those planned per cell: standard on game24 {first}/16" in text
        for fmt in ("md", "csv"):  # every format of the report reads an unfinished study
            assert "16" in invoke("report", "b", "--format", fmt, "--store", str(store)).stdout

        again = invoke("resume", "b", "--store", str(store), check=3)  # the budget is spent: no new calls
        assert server.answered == first and "stopped by the token budget" in again.stderr
        server.latency = 0.0  # it only had to keep the capped calls in flight together: the rest need not wait 0.2 s
        invoke("resume", "b", "--budget-tokens", "100000", "--store", str(store))  # raised: the rest runs
        assert server.answered == 16
    row = report("b", store)[0]
    assert (row["total"], row["failed"], row["unfinished"], row["planned"]) == (16, 0, 0, 16)
    assert "unfinished study" not in invoke("report", "b", "--store", str(store)).stdout
    spent, limit = connect(store).execute("SELECT spent_tokens, limit_tokens FROM budgets").fetchone()
    assert limit == 100000 and spent == row["prompt_tokens"] + row["completion_tokens"]  # across both sessions


def test_bad_study_definitions_get_clear_errors(server: ScriptedServer, tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite")
    base = ["--model", "m", "--base-url", server.base_url, "--store", store, "--dataset", str(DATASETS)]
    cases = [
        (
            ["run", "x", "--domains", "chess", "--instances", "1", "--schemes", "standard", *base],
            "unknown domain",
        ),
        (["run", "x", "--domains", "game24", "--instances", "1", "--schemes", "sampling:q=3", *base], "'q'"),
        (["run", "x", "--domains", "game24", "--schemes", "standard", *base], "no instances"),
        (["resume", "ghost", "--store", store], "no store at"),  # the failed definitions above made none
    ]
    for args, message in cases:
        done = invoke(*args, check=2)
        assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert server.requests == 0


def test_study_from_a_toml_file_with_per_domain_instances(
    server: ScriptedServer, tmp_path: Path, fork_server: Any
) -> None:
    config = tmp_path / "study.toml"
    config.write_text(
        f'domains = ["game24", "coloring"]\nschemes = ["standard"]\nmodel = "scripted"\n'
        f'base_url = "{server.base_url}"\ndataset = "{DATASETS}"\nconcurrency = 2\nfigure = "fig.png"\n'
        '[instances]\ngame24 = "901-902"\ncoloring = "1,5"\n'
    )
    store = tmp_path / "store.sqlite"
    done = forked(fork_server, "run", "t", "--config", str(config), "--store", str(store), "--max-tokens", "64")
    assert "Figure 2 written" in done.stderr and (tmp_path / "fig.png").exists()
    rows = {r["domain"]: r["total"] for r in report("t", store)}
    assert rows == {"game24": 2, "coloring": 2}
    stored = json.loads(connect(store).execute("SELECT config FROM studies WHERE name = 't'").fetchone()[0])
    assert stored["max_tokens"] == 64 and stored["instances"] == {"game24": "901-902", "coloring": "1,5"}
    assert "api_key" not in json.dumps(stored).lower()


def test_a_scheme_without_a_prompt_for_a_domain_is_left_out_and_said(server: ScriptedServer, tmp_path: Path) -> None:
    """A cell the paper does not have (Game of 24's all-errors feedback, 000:238, with `paper_levels`) is left
    out and said."""
    store = tmp_path / "store.sqlite"
    toml = tmp_path / "mixed.toml"
    toml.write_text(f'domains = ["game24", "blocksworld"]\nschemes = ["standard", "sound-all:rounds=1"]\n'
                    f'dataset = "{DATASETS}"\n[instances]\ngame24 = "2"\nblocksworld = "2"\n'
                    '[domain_options.game24]\npaper_levels = true\n')  # fmt: skip
    args = ["run", "mixed", "--config", str(toml), "--model", "scripted", "--base-url", server.base_url, "--store",
            str(store)]  # fmt: skip
    said = "sound-all:rounds=1 on game24 left out: no all-errors feedback for Game of 24"
    dry = invoke(*args, "--dry-run")
    assert said in dry.stdout and ": 3 (0 finished before" in dry.stdout  # 2 standard runs, 1 sound-all run
    done = invoke(*args)
    assert said in done.stderr and "study mixed: 3 runs: 3 done now" in done.stderr
    with connect(store) as db:
        cells = {(r["domain"], r["scheme"]) for r in db.query("SELECT domain, scheme FROM runs")}
    assert cells == {("game24", "standard"), ("blocksworld", "standard"), ("blocksworld", "sound-all:rounds=1")}
    only = tmp_path / "only.toml"
    only.write_text(toml.read_text().replace('["game24", "blocksworld"]', '["game24"]').replace(
        '"standard", ', "").replace('blocksworld = "2"\n', ""))  # fmt: skip
    refused = invoke("run", "all-24", "--config", str(only), "--model", "scripted", "--base-url", server.base_url,
                     "--store", str(tmp_path / "other.sqlite"), check=2)  # fmt: skip
    assert refused.stderr.startswith("error: nothing can run: sound-all:rounds=1 on game24 left out: no all-errors")
    # one first answer per instance (blocksworld's is shared by both schemes); none refused
    assert server.requests == 2
