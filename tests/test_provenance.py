"""Exports say what each run was made with (issue 34 item 4): the endpoint, model, temperature and cap it ran
with (a study resumed on another endpoint keeps each earlier run's own), empty where its source recorded nothing
(a replayed PlanBench run), its cost, latency, times, version and input, the sound verifier's reason on every
round, one row per LLM call; and no API key anywhere."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pandas as pd
import pytest

from critiquebench.llm.prices import SHIPPED, PriceError, load_prices, read_prices
from critiquebench.reports.records import CALL_COLUMNS, RUN_COLUMNS
from critiquebench.studies.provenance import package_version
from tests import forked_cli
from tests import old_layout_store as old
from tests.scripted_server import ScriptedServer
from tests.test_store_layouts import FIXTURE_81C710B
from tests.test_study_cli import game24_reply, invoke

PLANBENCH_FILE = Path(__file__).parent / "data" / "planbench" / "zero_shot_nl_claude-3-opus.json"


def exported(store: Path, study: str, table: str, tmp_path: Path) -> pd.DataFrame:
    out = tmp_path / f"{study}-{table}.csv"
    invoke("export", study, "--table", table, "--output", str(out), "--store", str(store))
    text = out.read_text()
    assert "sekrit" not in text
    return pd.read_csv(out, keep_default_na=False, na_values=[""])


def test_a_study_resumed_on_another_endpoint_keeps_each_runs_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-sekrit-key-123")  # sent to the endpoint, never stored or exported
    store = tmp_path / "s.sqlite"
    args = ["--store", str(store), "--no-progress"]
    with ScriptedServer(reply=game24_reply) as first, ScriptedServer(reply=game24_reply) as second:
        # one call at a time, so the token budget stops the study after a few runs, all made at `first`
        invoke("run", "moved", "--domains", "game24", "--instances", "gen:6:1", "--schemes", "standard",
               "--model", "scripted", "--base-url", first.base_url + "?key=sekrit", "--concurrency", "1",
               "--budget-tokens", "150", "--temperature", "0.3", *args, check=3)  # fmt: skip
        earlier = first.answered
        invoke("resume", "moved", "--base-url", second.base_url, "--budget-tokens", "1000000", *args)
    assert 0 < earlier < 6 and second.answered == 6 - earlier
    runs = exported(store, "moved", "runs", tmp_path)
    assert len(runs) == 6 and set(runs["status"]) == {"done"}
    by_endpoint = runs.groupby("endpoint").size().to_dict()
    assert by_endpoint == {first.base_url + "?key=***": earlier, second.base_url: 6 - earlier}
    assert set(runs["temperature"]) == {0.3} and set(runs["max_tokens"]) == {512}
    assert runs["unrecorded"].isna().all() and set(runs["model"]) == {"scripted"}
    assert set(runs["version"]) == {package_version()}
    assert runs["started_at"].str.endswith("+00:00").all()
    assert (pd.to_datetime(runs["finished_at"]) >= pd.to_datetime(runs["started_at"])).all()
    assert (runs["latency_s"] > 0).all()
    assert runs["cost_usd"].isna().all()  # the scripted model has no price: empty, never invented
    assert runs["input"].str.contains("Input: ").all()
    calls = exported(store, "moved", "calls", tmp_path)
    assert list(calls.columns) == [c.name for c in CALL_COLUMNS] and len(calls) == 6
    assert set(calls["node"]) == {"generator"} and (calls["prompt_tokens"] > 0).all()
    for table in ("runs", "rounds", "calls"):  # no key in any export, in any format
        for fmt in ("jsonl", "csv"):
            out = tmp_path / f"k.{fmt}"
            invoke("export", "moved", "--table", table, "--format", fmt, "--output", str(out), "--store", str(store))
            assert "sekrit" not in out.read_text()
    for part in tmp_path.glob("s.sqlite*"):  # the store and its write-ahead log
        assert b"sekrit" not in part.read_bytes()


def test_a_replayed_planbench_run_leaves_temperature_and_cap_empty(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    invoke("import", "planbench", str(PLANBENCH_FILE), "--study", "recorded", "--store", str(store))
    invoke("resume", "recorded", "--replay", "--store", str(store), "--no-progress")
    runs = exported(store, "recorded", "runs", tmp_path)
    assert len(runs) > 0 and set(runs["status"]) == {"done"}
    assert runs["temperature"].isna().all() and runs["max_tokens"].isna().all()
    assert set(runs["unrecorded"]) == {"temperature,max_tokens"}
    from critiquebench.importers.planbench import read_planbench
    from critiquebench.importers.recording import content_source, recorded_endpoint

    run = read_planbench(PLANBENCH_FILE)  # the endpoint names where the answers came from: the file's calls
    assert set(runs["endpoint"]) == {recorded_endpoint(content_source("planbench", run.model, run.calls))}
    calls = exported(store, "recorded", "calls", tmp_path)
    assert calls["temperature"].isna().all() and calls["max_tokens"].isna().all()


def test_every_llm_llm_round_carries_the_sound_verifiers_reason(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        invoke("run", "critic", "--domains", "game24", "--instances", "gen:4:1", "--schemes", "llm-llm:rounds=3",
               "--model", "scripted", "--base-url", server.base_url, "--store", str(store),
               "--no-progress")  # fmt: skip
    rounds = exported(store, "critic", "rounds", tmp_path)
    invalid = rounds[rounds["sound_valid"] == False]  # noqa: E712 - a nullable column
    assert len(invalid) > 0 and invalid["sound_reason"].notna().all()
    assert rounds[rounds["sound_valid"] == True]["sound_reason"].isna().all()  # noqa: E712
    assert (rounds["latency_s"] > 0).all()


def test_a_store_written_before_provenance_opens_exports_and_resumes(tmp_path: Path) -> None:
    store = tmp_path / "old.sqlite"
    with gzip.open(FIXTURE_81C710B) as src, store.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    before = exported(store, old.STUDY, "runs", tmp_path)  # read-only: nothing added to the file
    assert list(before.columns) == [c.name for c in RUN_COLUMNS]
    assert before["started_at"].isna().all() and before["version"].isna().all()
    assert set(before["model"]) == {"fake"}  # the study's, as before: no run row recorded its own
    with ScriptedServer(reply=old.reply, port=old.PORT):
        invoke("resume", old.STUDY, "--budget-tokens", "1000000", "--store", str(store), "--no-progress")
    after = exported(store, old.STUDY, "runs", tmp_path).set_index(["scheme", "instance"])
    done_before = sorted(before[before["status"] == "done"].set_index(["scheme", "instance"]).index)
    assert len(done_before) == 4 and set(after["status"]) == {"done"}
    assert after.loc[done_before, "started_at"].isna().all()  # finished before: nothing invented
    assert after.drop(index=done_before)["started_at"].notna().all()


def test_the_price_table_prices_known_models_and_a_users_file_extends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert SHIPPED["gpt-4"].cost(1_000_000, 1_000_000) == 90.0
    mine = tmp_path / "prices.toml"
    mine.write_text('[models."scripted"]\ninput = 1.0\noutput = 2.0\nsource = "test"\n')
    monkeypatch.setenv("CRITIQUEBENCH_PRICES", str(mine))
    table = load_prices()
    assert table["scripted"].cost(1e6, 1e6) == 3.0 and "gpt-4" in table
    bad = tmp_path / "bad.toml"
    for text in ('[models."m"]\ninput = -1\noutput = 2\n', "model = 1\n", "[models.m]\ninput = 1\noutput = 1\nx = 2\n"):
        bad.write_text(text)
        with pytest.raises(PriceError, match=str(bad)):
            read_prices(bad)


def test_cost_splits_into_spent_and_would_cost_and_each_call_made_is_one_row_not_a_hit(
    tmp_path: Path, forked_light_env: dict[str, str]
) -> None:
    """Audit: runs' cost_usd summed cache hits (+43% over what was spent), `calls` repeated a cached call per run
    with no flag, and a fresh process's first call counted 1-4 s of client start-up as endpoint latency. Here a
    fresh CLI process against a 0.1 s endpoint: sound-first's first round reuses standard's call."""
    import os
    import subprocess
    import sys

    store, prices = tmp_path / "s.sqlite", tmp_path / "prices.toml"
    prices.write_text('[models."scripted"]\ninput = 2.0\noutput = 6.0\nsource = "test"\n')
    env = {**os.environ, "CRITIQUEBENCH_PRICES": str(prices)}
    cli = str(Path(sys.executable).parent / "critiquebench")
    with ScriptedServer(reply=game24_reply, latency=0.1) as server:
        done = subprocess.run([cli, "run", "split", "--domains", "game24", "--instances", "gen:4:1", "--schemes",
                               "standard,sound-first:rounds=2", "--model", "scripted", "--base-url", server.base_url,
                               "--store", str(store), "--no-progress"], env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    for table in ("runs", "calls"):  # reading commands: forked from one that imported the CLI (no fresh start-up)
        out = str(tmp_path / f"{table}.csv")
        forked_cli.run(
            ["critiquebench", "export", "split", "--table", table, "--output", out, "--store", str(store)],
            {**forked_light_env, "CRITIQUEBENCH_PRICES": str(prices)},
            timeout=300,
        ).check_returncode()
    runs = pd.read_csv(tmp_path / "runs.csv", keep_default_na=False, na_values=[""])
    calls = pd.read_csv(tmp_path / "calls.csv", keep_default_na=False, na_values=[""])
    made = calls[~calls["cache_hit"]]
    assert len(made) == server.answered == made["key"].nunique() == calls["key"].nunique()
    assert int((runs["llm_calls"] - runs["cache_hits"]).sum()) == len(made)  # each run's own count agrees
    assert int(calls["cache_hit"].sum()) == int(runs["cache_hits"].sum()) > 0
    price = (made["prompt_tokens"] * 2.0 + made["completion_tokens"] * 6.0).sum() / 1e6
    assert runs["spent_usd"].sum() == pytest.approx(price)
    assert runs["cost_usd"].sum() > runs["spent_usd"].sum()  # the hits, priced: what a fresh run would cost
    assert not runs["tokens_estimated"].any()
    # timed from the request: the first call of the process too (before: 1-4 s of the client's start-up)
    assert calls["latency_s"].between(0.1, 1.0).all(), calls["latency_s"].tolist()


def test_answers_never_timed_have_no_latency_and_their_cost_says_it_is_estimated(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    invoke("import", "planbench", str(PLANBENCH_FILE), "--study", "recorded", "--store", str(store))
    invoke("resume", "recorded", "--replay", "--store", str(store), "--no-progress")
    runs = exported(store, "recorded", "runs", tmp_path)
    calls = exported(store, "recorded", "calls", tmp_path)
    assert runs["latency_s"].isna().all() and calls["latency_s"].isna().all()  # was 0.0
    assert runs["tokens_estimated"].all() and calls["tokens_estimated"].all()
    assert calls["cache_hit"].all()  # replayed: no call was made
