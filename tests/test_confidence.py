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
    # violations: the lines of `VAL -v`'s output the code's parse_val_output counts for the one failed step
    # ("Plan failed because of unsatisfied precondition in:", "... has an unsatisfied precondition at time 2",
    # "Plan failed to execute"); the study's CSV holds 3 for such plans
    assert (attempt.plan_length, attempt.valid_prefix, attempt.violations) == (3, 2, 3)
    assert attempt.valid_share == pytest.approx(100 * 2 / 3)  # the code's percentage of happenings checked
    assert attempt.unmet_goals == 0
    assert not attempt.success
    executes = measure(domain, instance, f"(unstack {top} {below})\n(put-down {top})")
    assert (executes.valid_prefix, executes.valid_share, executes.violations) == (2, 100.0, 0)
    assert executes.unmet_goals > 0 and not executes.success  # a missed goal is no violation
    empty = measure(domain, instance, "I cannot solve this.")
    assert (empty.plan_length, empty.valid_share, empty.valid_prefix, empty.success) == (0, 0.0, 0, False)
    assert empty.unmet_goals > 0


def test_an_undefined_action_makes_the_plan_unreadable_as_val_reads_it(
    tmp_path: Path, scripted_server: Any, scripted_llm: Any
) -> None:
    """VAL builds the whole plan before it checks a step, and an undefined action throws out of the run
    (KCL-Planning/VAL Plan.cpp:1899-1904): nothing is checked and the plan fails, however good its other lines.
    The study's code runs VAL on the raw reply file; its plan_len counts every line starting with "("."""
    from critiquebench.domains import get_domain, load_instances
    from critiquebench.studies.execute import execute_run

    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    solution = "(unstack a b)\n(put-down a)\n(unstack d c)\n(put-down d)\n(pick-up c)\n(stack c a)"
    assert measure(domain, instance, solution).success
    for text, lines in (("(fly a b)\n(unstack d c)", 2), (f"(fly a b)\n{solution}", 7), ("(fly a b)", 1)):
        got = measure(domain, instance, text)
        assert (got.plan_length, got.valid_share, got.valid_prefix, got.violations) == (lines, 0.0, 0, 0), text
        assert not got.success and got.answer == text
    # VAL reads every parenthesised action of the raw file: on an untyped domain an object the problem lacks is
    # one of which nothing holds, so that step is checked and fails (the study's CSV scores "(unstack b2 btable)"
    # so); a reply cut off mid-action leaves a parenthesis open and VAL cannot parse the file at all
    fenced = "```\n(unstack a b)\n(put-down a)\n(unstack c table)\n```"
    got = measure(domain, instance, fenced)
    assert (got.plan_length, got.valid_share, got.valid_prefix, got.violations) == (3, 100.0, 3, 3)
    got = measure(domain, instance, "(unstack a b)\n(put-do")
    assert (got.plan_length, got.valid_share, got.valid_prefix, got.violations, got.success) == (2, 0.0, 0, 0, False)

    # a recorded verdict, not a crash: a refine run whose model answers with an undefined action gets the study's
    # request ("Plan invalid": VAL's output then holds none of the phrases its code looks for)
    scripted_server.reply = "(fly a b)\n(unstack d c)"
    store = tmp_path / "store.sqlite"
    out = execute_run(store, "undefined", domain, instance, "refine:rounds=2", 0, scripted_llm)
    assert (out.status, out.rounds, out.correct) == ("done", 2, False)
    from critiquebench.store.db import connect
    from critiquebench.store.results import attempts

    rows = attempts(connect(store), out.thread_id)
    assert rows[0]["feedback"] == "The plan you provided is invalid. Plan invalid. Please provide a corrected plan."


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
                "answer": "(noop a)\n(noop b)\n",
            })  # fmt: skip
    return rows


def test_leakage_is_measured_on_a_synthetic_dataset() -> None:
    """The paper's protocol scores near 1.0 from leakage alone; the leakage-free protocol scores near chance."""
    from critiquebench.confidence.models import evaluate

    results = evaluate(synthetic_rows(), models=("mn1", "mn4"), boot=200)
    got = {(r["protocol"], r["model"]): r for r in results}
    assert got[("paper", "mn1")]["f1"] >= 0.9 and got[("paper", "mn1")]["auc"] >= 0.95
    for model in ("mn1", "mn4"):
        paper, free = got[("paper", model)], got[("leakage-free", model)]
        # MN-4's -1000 padding, min-max scaled as the study's code does, squeezes every real value into the top
        # thousandth of [0, 1]: it learns the leak less well than MN-1, but still far above chance
        assert paper["auc"] >= 0.7 and paper["auc_low"] > free["auc_high"], (paper, free)
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


def study_dataset(exs: list[Any]) -> Any:
    """The runs as the study's `utils/dataset_generator.py` writes them: one row per problem, `gen{i}_*` columns
    per generation (None where the run made fewer), `plan_len` of the final plan, `num_attempts`."""
    import pandas as pd

    rows = []
    for e in exs:
        row: dict[str, Any] = {"num_attempts": len(e.seen), "plan_len": e.seen[-1]["plan_length"]}
        for i in range(1, 5):
            gen = e.seen[i - 1] if i <= len(e.seen) else None
            row[f"gen{i}_valid_action_percent"] = gen["valid_share"] if gen else None
            row[f"gen{i}_consecutive_valid_steps"] = gen["valid_prefix"] if gen else None
            row[f"gen{i}_logical_violations"] = gen["violations"] if gen else None
        rows.append(row)
    return pd.DataFrame(rows)


class PairRecorder:
    """An encoder of one's own, plugged in as `tests.test_confidence:PairRecorder`: it records the pairs."""

    name = "pair-recorder"
    seen: list[tuple[str, str]] = []

    def encode(self, texts: list[str]) -> Any:
        raise AssertionError("an encoder with encode_pairs gets pairs")

    def encode_pairs(self, pairs: list[tuple[str, str]]) -> Any:
        import numpy as np

        PairRecorder.seen = list(pairs)
        return np.array([[float(len(a)), float(len(b)), 1.0] for a, b in pairs])


def test_meta_networks_read_the_study_codes_inputs() -> None:
    """MN-1 and MN-4 inputs as the study's notebook (meta_model_llama.ipynb) builds them from its dataset:
    expected values come from its own column lists and padding, applied to the same runs."""
    import numpy as np

    from critiquebench.confidence.models import Featurizer, examples, fit

    exs, _ = examples(synthetic_rows(20), "paper")
    df = study_dataset(exs)
    # "PROGRESSION" cell: 3 features x 4 generations, then plan_len ("13 total"), NaN -> -1000
    gen_features = ["valid_action_percent", "consecutive_valid_steps", "logical_violations"]
    features = [f"gen{i}_{feat}" for i in range(1, 5) for feat in gen_features] + ["plan_len"]
    expected_mn4 = df[features].fillna(-1000).astype("float32").values
    # "1st Meta Network" cell: extract_last_attempt, the gen{num_attempts} features and plan_len
    expected_mn1 = np.array([[r[f"gen{int(r['num_attempts'])}_{f}"] for f in gen_features] + [r["plan_len"]]
                             for _, r in df.iterrows()], dtype="float32")  # fmt: skip
    mn4 = Featurizer("mn4").fit(exs).transform(exs)
    mn1 = Featurizer("mn1").fit(exs).transform(exs)
    assert mn4.shape == (20, 13) and mn1.shape == (20, 4)
    np.testing.assert_allclose(mn4, expected_mn4, rtol=1e-6)
    np.testing.assert_allclose(mn1, expected_mn1, rtol=1e-6)
    assert any(len(e.seen) < 4 for e in exs) and (mn4 == -1000).any()

    # MetaConfidenceNet: Linear(in, 64) -> ReLU -> BatchNorm1d(64) -> Dropout(0.2) -> Linear(64, 32) -> ReLU ->
    # Linear(32, 1); MinMaxScaler for MN-4 and StandardScaler for MN-1, as the notebook scales them
    for model, width, scaler in (("mn4", 13, "MinMaxScaler"), ("mn1", 4, "StandardScaler")):
        scaled = fit(model, "paper", 1, exs).classifier
        assert type(scaled.scaler).__name__ == scaler
        net = scaled.net
        assert net.layer_shapes() == [(width, 64), (64, 32), (32, 1)]
        assert (net.batch_norm, net.dropout, net.lr, net.batch_size, net.patience) == (True, 0.2, 1e-3, 32, 8)
        assert net.params["gamma"].shape == (64,)

    # MN-2/MN-3: the pair (problem, last reply with newlines made spaces) as the notebook's tokenizer(problem,
    # gen_N); MN-2's problem is the CSV's `problem` column, the problem's name (meta_model_llama.ipynb cell 26
    # reloads the CSV), MN-3's the PDDL text the Llama notebook put there (cell 14); a 128-unit head; MN-3
    # appends the four final features unscaled
    mn3 = Featurizer("mn3", encoder_name="tests.test_confidence:PairRecorder").fit(exs).transform(exs)
    assert PairRecorder.seen == [(e.seen[-1]["problem_text"], "(noop a) (noop b)") for e in exs]
    np.testing.assert_allclose(mn3[:, 3:], expected_mn1, rtol=1e-6)
    Featurizer("mn2", encoder_name="tests.test_confidence:PairRecorder").fit(exs).transform(exs)
    assert PairRecorder.seen == [(str(e.seen[-1]["problem"]), "(noop a) (noop b)") for e in exs]
    assert all(not str(e.seen[-1]["problem"]).startswith("(define") for e in exs)
    for model, width in (("mn2", 256), ("mn3", 260)):
        head = fit(model, "paper", 1, exs, encoder="hashing").classifier
        assert head.layer_shapes() == [(width, 128), (128, 1)]
        assert (head.batch_norm, head.dropout, head.batch_size) == (False, 0.3, 16)


def test_the_study_network_learns_and_stops_early() -> None:
    """network.StudyNet (the code's MetaConfidenceNet in numpy) separates a separable set, and stops when the
    validation loss has not fallen by 0.001 for 8 epochs."""
    import numpy as np

    from critiquebench.confidence.network import StudyNet

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = (x[:, 0] + x[:, 1] > 0).astype(int)
    net = StudyNet(epochs=100, validation=0.15 / 0.85).fit(x, y)
    p = net.predict_proba(x)
    assert p.shape == (200, 2) and np.allclose(p.sum(axis=1), 1.0)
    assert np.mean((p[:, 1] >= 0.5) == y) >= 0.9
    noise = StudyNet(epochs=100, validation=0.15 / 0.85).fit(x, rng.integers(0, 2, 200))
    assert noise.epochs_run < 100  # nothing to learn: the validation loss stops falling


def test_table_2_mean_confidence_per_problem_type(tmp_path: Path) -> None:
    """004's Table 2 (004:236-250): one row per problem type with the mean MN-4 confidence over its runs;
    Blocksworld's rows by block count ("blocksworld 4 blocks" ... "10 blocks"), other domains by domain, in every
    --format."""
    rows = synthetic_rows(30, seed=3, domain="other")
    for blocks in (10, 4, 5):  # the problems of one Blocksworld study, of three sizes
        objects = " ".join(f"b{i}" for i in range(1, blocks + 1))
        for row in synthetic_rows(12, seed=blocks, domain="blocksworld"):
            rows.append({**row, "run": f"{row['run']}-{blocks}", "problem": f"{blocks}-{row['problem']}",
                         "problem_text": f"(define (problem p) (:domain blocksworld) (:objects {objects})\n"
                                         "(:init (handempty)) (:goal (and (handempty))))"})  # fmt: skip
    features = tmp_path / "types.csv"
    with features.open("w", encoding="utf-8", newline="") as fp:
        write_rows(rows, fp, "csv")
    model = tmp_path / "mn4.pkl"
    cli("confidence", "train", str(features), "--model", "mn4", "--protocol", "paper", "--output", str(model))
    per_run = json.loads(cli("confidence", "predict", str(model), str(features), "--format", "json").stdout)
    table = json.loads(cli("confidence", "predict", str(model), str(features), "--by-type", "--format", "json").stdout)
    kinds = ["blocksworld 4 blocks", "blocksworld 5 blocks", "blocksworld 10 blocks", "other"]
    assert [t["type"] for t in table] == kinds and [t["runs"] for t in table] == [12, 12, 12, 30]
    for t in table:
        mine = [o["p_success"] for o in per_run if o["type"] == t["type"]]
        assert t["mean_confidence"] == pytest.approx(sum(mine) / len(mine), abs=1e-4)
        assert t["succeeded"] == sum(1 for o in per_run if o["type"] == t["type"] and o["run_success"])
    shown = cli("confidence", "predict", str(model), str(features), "--by-type").stdout
    assert "mean confidence per problem type" in shown
    assert [line.split("│")[1].strip() for line in shown.splitlines() if "blocks " in line or "other" in line] == kinds


def test_object_count_of_typed_and_untyped_problems() -> None:
    from critiquebench.confidence.features import object_count

    assert object_count("(define (problem p) (:objects a b c d))") == 4
    assert object_count("(:OBJECTS\n  b1 b2 - block t - table\n)") == 3
    assert object_count("no objects here") is None
