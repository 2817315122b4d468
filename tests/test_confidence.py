"""Confidence meta-networks: the attempt dataset, the leakage of the paper's protocol, and the CLI on real traces."""

from __future__ import annotations

import csv
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.confidence.features import COLUMNS, load_rows, measure, read_rows, runs, write_rows
from tests.conftest import DATASETS

REFERENCE = DATASETS / "planbench" / "reference"
BLOCKSWORLD = REFERENCE / "gpt-4_blocksworld_backprompting_first_error.json"
LOGISTICS = REFERENCE / "gpt-4_logistics_backprompting_first_error.json"


def cli(*args: str, check: bool = True) -> Any:
    """The command line, in this process (commands here only read, train or replay offline)."""
    result = CliRunner().invoke(app, list(args))
    if check and result.exit_code != 0:
        raise AssertionError(f"critiquebench {' '.join(args)} exited {result.exit_code}:\n{result.stderr}")
    return result


def test_features_of_one_answer() -> None:
    from critiquebench.domains import get_domain, load_instances

    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    top, below = next((f[1], f[2]) for f in sorted(domain.task(instance).init) if f[0] == "on")
    # Step 2 repeats the unstack (its preconditions no longer hold): VAL checks it, fails and stops there, so
    # step 3 (executable again) is never judged and the goal is never checked (004's code reads `VAL -v`).
    text = f"(unstack {top} {below})\n(unstack {top} {below})\n(put-down {top})"
    attempt = measure(domain, instance, text)
    assert (attempt.plan_length, attempt.valid_prefix, attempt.violations) == (3, 2, 1)
    assert attempt.valid_share == pytest.approx(100 * 2 / 3)  # the code's percentage of happenings checked
    assert attempt.unmet_goals == 0
    assert not attempt.success
    executes = measure(domain, instance, f"(unstack {top} {below})\n(put-down {top})")
    assert (executes.valid_prefix, executes.valid_share, executes.violations) == (2, 100.0, 0)
    assert executes.unmet_goals > 0 and not executes.success  # a missed goal is no violation
    empty = measure(domain, instance, "I cannot solve this.")
    assert (empty.plan_length, empty.valid_share, empty.valid_prefix, empty.success) == (0, 0.0, 0, False)
    assert empty.unmet_goals > 0


def test_recorded_conversations_become_attempt_datasets() -> None:
    """Both GPT-4 backprompting files, read turn by turn, without replay."""
    for path, domain, solved in ((BLOCKSWORLD, "blocksworld", 41), (LOGISTICS, "logistics", 34)):
        rows = load_rows(str(path))
        by_run = list(runs(rows))
        assert len(by_run) == 50 and {r["domain"] for r in rows} == {domain}
        assert sum(r[-1]["run_success"] for r in by_run) == solved
        for attempts in by_run:
            assert [a["iteration"] for a in attempts] == list(range(1, len(attempts) + 1))
            assert all(a["attempts"] == len(attempts) for a in attempts)
            # PlanBench stops at the first valid plan: only the last attempt can be valid
            assert not any(a["success"] for a in attempts[:-1])


def synthetic_rows(n_runs: int = 160, seed: int = 0, domain: str = "synthetic") -> list[dict[str, Any]]:
    """Runs whose outcome is decided by a coin before any attempt, with early stopping: a successful run stops at
    a valid plan (attempt 2-4), a failing one uses all 4 attempts. Attempt 1 is noise in both: the features a
    leakage-free model sees say nothing about the outcome."""
    rng = random.Random(seed)
    rows = []
    for i in range(n_runs):
        success = rng.random() < 0.5
        n = rng.randint(2, 4) if success else 4
        for it in range(1, n + 1):
            valid = success and it == n
            length = rng.randint(4, 12)
            bad = 0 if valid else rng.randint(1, 3)
            rows.append({
                "source": "synthetic", "domain": domain, "scheme": "refine", "problem": str(i), "trial": 0,
                "run": f"{domain}/{i}", "iteration": it, "valid_share": 100 * (length - bad) / length,
                "valid_prefix": length if valid else rng.randint(0, length - bad), "violations": bad,
                "unmet_goals": 0 if valid else rng.randint(0, 2), "plan_length": length, "success": valid,
                "attempts": n, "run_success": success, "problem_text": f"problem {i}", "plan": "(noop)",
            })  # fmt: skip
    return rows


def test_leakage_is_measured_on_a_synthetic_dataset() -> None:
    """The paper's protocol scores near 1.0 from leakage alone; the leakage-free protocol scores near chance."""
    from critiquebench.confidence.models import evaluate

    results = evaluate(synthetic_rows(), models=("mn1", "mn4"), boot=200)
    got = {(r["protocol"], r["model"]): r for r in results}
    for model in ("mn1", "mn4"):
        paper, free = got[("paper", model)], got[("leakage-free", model)]
        assert paper["f1"] >= 0.95 and paper["auc"] >= 0.95, paper
        assert 0.3 <= free["auc"] <= 0.7, free
        assert free["auc_low"] < 0.5 < free["auc_high"], free  # chance lies inside the interval
        assert free["settled"] == 0 and free["n"] == 160
    # the same on an external test set (another "domain")
    external = evaluate(synthetic_rows(seed=0), synthetic_rows(seed=1, domain="other"), models=("mn1",), boot=200)
    paper, free = external
    assert paper["auc"] >= 0.95 and 0.3 <= free["auc"] <= 0.7


def test_features_file_round_trip_and_train_predict_cli(tmp_path: Path) -> None:
    rows = synthetic_rows(60)
    features = tmp_path / "synthetic.csv"
    with features.open("w", encoding="utf-8", newline="") as fp:
        assert write_rows(rows, fp, "csv") == len(rows)
    back = read_rows(features)
    assert [r["valid_share"] for r in back] == pytest.approx([r["valid_share"] for r in rows])
    assert [r["run_success"] for r in back] == [r["run_success"] for r in rows]

    model = tmp_path / "mn1.pkl"
    cli("confidence", "train", str(features), "--model", "mn1", "--output", str(model))
    out = json.loads(cli("confidence", "predict", str(model), str(features), "--format", "json").stdout)
    assert len(out) == 60 and all(0.0 <= o["p_success"] <= 1.0 and o["seen"] == 1 for o in out)

    bad = tmp_path / "not-a-model.pkl"
    bad.write_text("hello")
    result = cli("confidence", "predict", str(bad), str(features), check=False)
    assert result.exit_code == 2 and result.stderr.startswith("error:") and "Traceback" not in result.stderr
    result = cli("confidence", "eval", str(features), "--models", "mn9", check=False)
    assert result.exit_code == 2 and "unknown model" in result.stderr

    # one file with two domains: hold one out as the external test set
    two = tmp_path / "two.jsonl"
    with two.open("w", encoding="utf-8") as fp:
        write_rows(rows + synthetic_rows(40, seed=1, domain="other"), fp)
    out = json.loads(cli("confidence", "eval", str(two), "--test-domain", "other", "--models", "mn1",
                         "--bootstrap", "50", "--format", "json").stdout)  # fmt: skip
    assert [(r["protocol"], r["n"]) for r in out] == [("paper", 40), ("leakage-free", 40)]
    result = cli("confidence", "eval", str(features), "--test-domain", "other", check=False)
    assert result.exit_code == 2 and "must be one of several domains" in result.stderr


def test_replayed_gpt4_study_export_and_eval(tmp_path: Path) -> None:
    """The replayed GPT-4 Blocksworld backprompting study: its attempt dataset, then both protocols in one table
    (train Blocksworld, external test Logistics)."""
    store = str(tmp_path / "store.sqlite")
    cli("import", "planbench", str(BLOCKSWORLD), "--study", "gpt4-bw", "--store", store)
    cli("resume", "gpt4-bw", "--store", store, "--no-progress")
    out = tmp_path / "bw.csv"
    cli("export", "gpt4-bw", "--features", "--format", "csv", "--output", str(out), "--store", store)
    with out.open(encoding="utf-8", newline="") as fp:
        table = list(csv.DictReader(fp))
    assert list(table[0]) == list(COLUMNS)
    assert len(table) == 286  # every recorded turn is one attempt
    finals = {r["run"]: r for r in table if r["iteration"] == r["attempts"]}
    assert len(finals) == 50 and Counter(r["run_success"] for r in finals.values())["True"] == 41
    assert all(r["success"] == r["run_success"] for r in finals.values())

    result = cli("export", "gpt4-bw", "--features", "--format", "xml", "--store", store, check=False)
    assert result.exit_code == 2 and result.stderr.startswith("error:")

    text = cli("confidence", "eval", "gpt4-bw", "--test", str(LOGISTICS), "--store", store,
               "--models", "base,mn1,mn4", "--bootstrap", "200").stdout  # fmt: skip
    assert "paper" in text and "leakage-free k=1" in text and "AUC" in text
    from critiquebench.confidence.models import evaluate

    paper, free = evaluate(load_rows("gpt4-bw", Path(store)), load_rows(str(LOGISTICS)), models=("mn1",), boot=0)
    assert paper["n"] == 50 and paper["positives"] == 34  # Logistics: 34 of 50 runs end with a valid plan
    assert paper["auc"] > free["auc"]


def test_bundled_encoder_loads_offline() -> None:
    """The MN-2/MN-3 encoder's weights ship in the wheel: it loads and embeds with every socket refused."""
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network disabled in this test')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from critiquebench.confidence.encoders import get_encoder\n"
        "import numpy as np\n"
        "enc = get_encoder()\n"
        "v = enc.encode(['(unstack a b) (put-down a)', '(unstack c d) (put-down c)', 'the weather in Paris'])\n"
        "cos = lambda x, y: float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))\n"
        "print(enc.name, v.shape[0], v.shape[1], cos(v[0], v[1]) > cos(v[0], v[2]))\n"
    )
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["wordllama-l2-supercat-256", "3", "256", "True"]


def test_meta_networks_read_the_papers_inputs() -> None:
    """MN-1: the final attempt's four features (004:167-174); MN-4: four features of each of four attempts,
    zeros where a run stopped earlier (004:182-189); no iteration index, no presence flag."""
    from critiquebench.confidence.models import Featurizer, examples

    exs, _ = examples(synthetic_rows(20), "paper")
    mn1 = Featurizer("mn1").fit(exs).transform(exs)
    mn4 = Featurizer("mn4").fit(exs).transform(exs)
    assert mn1.shape == (20, 4) and mn4.shape == (20, 16)
    short = next(i for i, e in enumerate(exs) if len(e.seen) == 2)
    last = exs[short].seen[-1]
    assert list(mn1[short]) == [last["valid_share"], last["valid_prefix"], last["violations"], last["plan_length"]]
    assert list(mn4[short][8:]) == [0.0] * 8


def test_table_2_mean_confidence_per_problem_type(tmp_path: Path) -> None:
    """004's Table 2: one row per problem type with the mean MN-4 confidence over its runs."""
    rows = synthetic_rows(30) + synthetic_rows(20, seed=3, domain="other")
    features = tmp_path / "two.csv"
    with features.open("w", encoding="utf-8", newline="") as fp:
        write_rows(rows, fp, "csv")
    model = tmp_path / "mn4.pkl"
    cli("confidence", "train", str(features), "--model", "mn4", "--protocol", "paper", "--output", str(model))
    per_run = json.loads(cli("confidence", "predict", str(model), str(features), "--format", "json").stdout)
    table = json.loads(cli("confidence", "predict", str(model), str(features), "--by-type", "--format", "json").stdout)
    assert [t["type"] for t in table] == ["other", "synthetic"] and [t["runs"] for t in table] == [20, 30]
    for t in table:
        mine = [o["p_success"] for o in per_run if o["domain"] == t["type"]]
        assert t["mean_confidence"] == pytest.approx(sum(mine) / len(mine), abs=1e-4)
        assert t["succeeded"] == sum(1 for o in per_run if o["domain"] == t["type"] and o["run_success"])
    shown = cli("confidence", "predict", str(model), str(features), "--by-type").stdout
    assert "mean confidence per problem type" in shown and "synthetic" in shown
