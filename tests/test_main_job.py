"""The main job (a study TOML with `[recorded]` files): GPT-4's recorded runs replayed with 0 calls, the live study
beside them, one summary. The live part talks to the scripted server, never the embedded model. Each run is a
process of its own, forked from a server that imported the CLI and what a study uses once (`forked_env`,
tests/forked_cli.py), not an interpreter importing them anew (1-2 s of CPU a run)."""

from __future__ import annotations

import re
import sqlite3
import subprocess
from pathlib import Path

from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer

REFERENCE = DATASETS / "planbench" / "reference"
# GPT-4's own colouring runs of the self-verification study (kstechly/gpt-and-i @ada66fc6)
COLORING = DATASETS / "self_verification/recorded/gpt-and-i@ada66fc6/llm-csp/responses/graph_coloring/gpt-4_chat"
COLORING_FILES = {"sp": "responses.json", "binary": "backprompting-passfail/responses.json",
                  "first": "backprompting-first/responses.json", "all": "backprompting-full/responses.json",
                  "llm": "backprompting-llm/responses.json", "k15": "backprompting-15top1/responses.json"}


def job_toml(folder: Path, base_url: str, dataset: Path, recorded: dict[str, Path]) -> Path:
    lines = [
        'domains = ["blocksworld"]',
        'schemes = ["standard", "sound-first:rounds=2", "llm-llm:rounds=2"]',
        'instances = "gen:1:1"',
        f'dataset = "{dataset}"',
        f'base_url = "{base_url}"',
        'model = "scripted"',
        "concurrency = 2",
        "[recorded]",
        *(f'{study} = "{path}"' for study, path in recorded.items()),
    ]
    path = folder / "job.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_job(toml: Path, store: Path, forked: dict[str, str], name: str = "main") -> subprocess.CompletedProcess[str]:
    # a wide terminal: the summary's cells are asserted beside their neighbours on one line, and at the piped
    # default (80 columns) the findings table is drawn in parts (tests/test_narrow_output.py)
    # run beside the TOML, away from the checkout: every file the job reads is found through the TOML's
    # `dataset =`, not through a ../shared/datasets that happens to sit beside the folder it runs in
    # `forked`: a fork server's environment (`forked_env`), its `critiquebench` first on PATH
    env = {**forked, "CRITIQUEBENCH_COLUMNS": "400"}
    env.pop("CRITIQUEBENCH_DATA", None)
    return subprocess.run(["critiquebench", "run", name, "--config", str(toml), "--store", str(store), "--no-progress"],
                          capture_output=True, text=True, timeout=600, env=env, cwd=toml.parent)  # fmt: skip


def test_summary_shows_gpt4_numbers_from_the_cache_beside_the_live_study(
    tmp_path: Path, forked_env: dict[str, str]
) -> None:
    # the datasets sit beside the clone wherever the README's set-up is followed (CI too): missing is a failure
    assert REFERENCE.is_dir(), f"needs the PlanBench reference files in {REFERENCE} (../shared/datasets)"
    recorded = {
        "gpt4-oneshot": REFERENCE / "gpt-4_blocksworld_one_shot.json",
        "gpt4-backprompt": REFERENCE / "gpt-4_blocksworld_backprompting_first_error.json",
        "gpt4-verify": DATASETS / "planbench/tasks/blocksworld/gpt-4/task_3_plan_verification.json",
        "gpt4-logistics": REFERENCE / "gpt-4_logistics_backprompting_first_error.json",
        **{f"gpt4-coloring-{name}": COLORING / file for name, file in COLORING_FILES.items()},
    }
    store = tmp_path / "store.sqlite"
    with ScriptedServer(reply="[PLAN]\n[PLAN END]") as server:
        toml = job_toml(tmp_path, server.base_url, DATASETS, recorded)
        result = run_job(toml, store, forked_env)
        assert result.returncode == 0, result.stderr
        out = result.stdout
        assert "gpt-4: 31.4% (157/500)" in out and "0 new, 500 cached" in out
        assert "gpt-4: 82.0% (41/50)" in out and "0 new, 286 cached" in out
        assert "gpt-4: 70.0% (35/50)" in out and "0 new, 332 cached" in out  # Logistics backprompting
        # the live study's cells of the same domain and scheme family sit beside them
        assert "0.0% (0/1) (standard)" in out and "0.0% (0/1) (sound-first:rounds=2)" in out
        # Figure 2 carries GPT-4's backprompting curve over rounds: 41/50 by round 15
        assert "gpt-4 sound-first" in out and "n=15" in out
        assert "Table 2" in out and "scripted" in out  # the live llm-llm rounds judged by the LLM
        # GPT-4 as plan verifier (PlanBench t3): its real rates in Table 2
        assert "plan verification (binary)" in out and "94.6% (473/500)" in out and "1.4% (5/345)" in out
        coloring = " ".join(f"gpt4-coloring-{name}" for name in COLORING_FILES)
        assert f"view main gpt4-oneshot gpt4-backprompt gpt4-verify gpt4-logistics {coloring} --store {store}" in out
        # 000's Table 1 colouring row from GPT-4's own answers (graphs 1-200 for S.P.: 16/100 on 1-100)
        for right, cached in (("38.0% (38/100)", 1197), ("38.0% (38/100)", 1166), ("35.0% (35/100)", 1202),
                              ("1.0% (1/100)", 2926), ("40.0% (40/100)", 1095), ("13.0% (13/100)", 1500)):
            assert re.search(rf"gpt-4: {re.escape(right)} *│ +0 new, {cached} cached", out), (right, cached)
        # Figure 2's colouring curves from GPT-4's answers: B.F. reaches 38/100 by its 16th answer
        assert any(line.startswith("│ coloring") and line.rstrip(" │").endswith("38.0% (38/100)")
                   for line in out.splitlines())
        answered = server.answered
    with sqlite3.connect(store) as db:
        recorded_calls = db.execute(
            "SELECT count(*) FROM llm_events e WHERE kind != 'hit' AND model = 'gpt-4'"
        ).fetchone()[0]
    assert recorded_calls == 0
    assert answered > 0
    # a second run is answered from the store (the scripted server is gone): the same summary, no call
    again = run_job(toml, store, forked_env)
    assert again.returncode == 0, again.stderr
    assert "gpt-4: 82.0% (41/50)" in again.stdout and "LLM calls: 0 new" in again.stderr
    # every recorded study is found finished, as it was (the job neither imports nor plans them again)
    for study, runs in (("gpt4-oneshot", 500), ("gpt4-verify", 500), ("gpt4-coloring-k15", 200)):
        assert f"study {study}: {runs} runs: 0 done now, {runs} done before or elsewhere, 0 failed" in again.stderr
    # a run gone from a finished recorded study (lost, deleted by hand) is replayed again from the cache
    with sqlite3.connect(store) as db:
        db.execute("DELETE FROM runs WHERE thread_id = (SELECT min(thread_id) FROM runs WHERE study = ?)",
                   ["gpt4-coloring-sp"])  # fmt: skip
    third = run_job(toml, store, forked_env)
    assert third.returncode == 0, third.stderr
    assert "study gpt4-coloring-sp: 200 runs: 1 done now, 199 done before or elsewhere, 0 failed" in third.stderr
    assert "gpt-4: 13.0% (26/200)" in third.stdout and "study main: 3 runs: 0 done now" in third.stderr


def test_without_datasets_it_names_their_sources_and_runs_generated_instances(
    tmp_path: Path, forked_env: dict[str, str]
) -> None:
    missing = tmp_path / "no-datasets"
    recorded = {"gpt4-oneshot": missing / "planbench" / "reference" / "gpt-4_blocksworld_one_shot.json"}
    with ScriptedServer(reply="[PLAN]\n[PLAN END]") as server:
        result = run_job(job_toml(tmp_path, server.base_url, missing, recorded), tmp_path / "store.sqlite", forked_env)
    assert result.returncode == 0, result.stderr
    assert "karthikv792/LLMs-Planning" in result.stderr and "princeton-nlp/tree-of-thought-llm" in result.stderr
    assert "recorded study gpt4-oneshot: skipped" in result.stderr
    assert "study main-generated: 6 runs: 6 done now" in result.stderr
