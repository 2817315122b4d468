"""`critiquebench export`: a study's runs and rounds as JSON lines, CSV and Parquet, each really written in its
format with the documented columns (model, endpoint with secrets redacted, temperature, scheme parameters), read
back by pandas; a format it cannot write is a one-line error (exit 2) that writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from critiquebench.reports.records import COLUMNS
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import game24_reply, invoke

READ = {"jsonl": lambda p: pd.read_json(p, lines=True), "csv": pd.read_csv, "parquet": pd.read_parquet}


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A finished study whose endpoint URL carries a key in its query; (store, the URL as the user gave it)."""
    store = tmp_path_factory.mktemp("export") / "s.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        url = server.base_url + "?api-key=sekrit"
        invoke("run", "s", "--domains", "game24", "--instances", "gen:2:1", "--schemes",
               "standard,sampling:k=2,temperature=1.0", "--temperature", "0.5", "--model", "scripted",
               "--base-url", url, "--store", str(store))  # fmt: skip
    return store, url


@pytest.mark.parametrize("table", ["runs", "rounds"])
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_every_format_is_really_written_with_the_documented_columns(
    study: tuple[Path, str], tmp_path: Path, table: str, fmt: str
) -> None:
    store, url = study
    out = tmp_path / f"{table}.{fmt}"
    invoke("export", "s", "--table", table, "--format", fmt, "--output", str(out), "--store", str(store))
    raw = out.read_bytes()
    assert b"sekrit" not in raw
    if fmt == "parquet":
        assert raw[:4] == b"PAR1"
    elif fmt == "csv":
        assert raw.decode().splitlines()[0] == ",".join(c.name for c in COLUMNS[table])
    else:
        json.loads(raw.decode().splitlines()[0])
    frame = READ[fmt](out)
    assert list(frame.columns) == [c.name for c in COLUMNS[table]]
    assert set(frame["model"]) == {"scripted"}
    assert set(frame["endpoint"]) == {url.replace("sekrit", "***")}
    by_scheme = frame.groupby("scheme")["temperature"].agg(set).to_dict()
    assert by_scheme == {"standard": {0.5}, "sampling:k=2,temperature=1.0": {1.0}}
    assert {json.loads(p).get("k") for p in frame[frame["scheme_name"] == "sampling"]["params"]} == {2}
    if table == "runs":
        assert len(frame) == 4 and set(frame["status"]) == {"done"}
        assert frame["correct"].map(type).isin([bool]).all() or str(frame["correct"].dtype) == "bool"
    else:
        assert frame["round"].min() == 1 and frame["stopped"].sum() == 4


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_the_calls_table_is_written_in_every_format(study: tuple[Path, str], tmp_path: Path, fmt: str) -> None:
    store, _ = study
    out = tmp_path / f"calls.{fmt}"
    invoke("export", "s", "--table", "calls", "--format", fmt, "--output", str(out), "--store", str(store))
    assert b"sekrit" not in out.read_bytes()
    frame = READ[fmt](out)
    assert list(frame.columns) == [c.name for c in COLUMNS["calls"]]
    assert len(frame) > 0 and (frame["prompt_tokens"] > 0).all()


def test_the_format_follows_the_output_suffix(study: tuple[Path, str], tmp_path: Path) -> None:
    store, _ = study
    out = tmp_path / "runs.parquet"
    invoke("export", "s", "--table", "runs", "--output", str(out), "--store", str(store))
    assert out.read_bytes()[:4] == b"PAR1"


def test_a_format_it_cannot_write_is_one_line_and_writes_nothing(study: tuple[Path, str], tmp_path: Path) -> None:
    store, _ = study
    cases = [
        (["--format", "xlsx", "--output", str(tmp_path / "x.xlsx")],
         "--format must be one of jsonl, csv, parquet, not 'xlsx'"),
        (["--format", "parquet"], "Parquet is binary: give --output FILE.parquet"),
        (["--table", "messages", "--output", str(tmp_path / "x.csv")],
         "--table must be one of rounds, runs, calls, not 'messages'"),
    ]  # fmt: skip
    for extra, message in cases:
        done = invoke("export", "s", *extra, "--store", str(store), check=2)
        assert done.stdout == "" and done.stderr.strip() == f"error: {message}", done.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_output_whose_suffix_names_another_format_is_one_line_and_writes_nothing(
    study: tuple[Path, str], tmp_path: Path
) -> None:
    """Audit: `--output r.feather` wrote JSON lines and `--format csv --output c.parquet` wrote CSV, both exit 0."""
    store, _ = study
    cases = [
        (["export", "s", "--table", "runs", "--output", str(tmp_path / "r.feather")],
         "jsonl is written to a file ending in .jsonl or .ndjson, not .feather;"),
        (["export", "s", "--format", "csv", "--output", str(tmp_path / "c.parquet")],
         "csv is written to a file ending in .csv, not .parquet (a parquet suffix);"),
        (["report", "s", "--format", "md", "--output", str(tmp_path / "t.csv")],
         "md is written to a file ending in .md or .markdown, not .csv (a csv suffix);"),
        (["graph", "llm-llm", "--format", "ascii", "--output", str(tmp_path / "g.png")],
         "ascii is written to a file ending in .txt, not .png (a png suffix);"),
    ]  # fmt: skip
    for argv, message in cases:
        extra = ["--store", str(store)] if argv[0] != "graph" else []
        done = invoke(*argv, *extra, check=2)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], done.stderr
    assert list(tmp_path.iterdir()) == []
    ok = tmp_path / "runs.csv"  # the suffix and the format agree: written
    invoke("export", "s", "--table", "runs", "--format", "csv", "--output", str(ok), "--store", str(store))
    assert ok.read_text().startswith("study,")


def test_a_missing_price_file_is_one_line_naming_it_and_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Audit: a missing price file printed its error, then a stray second line `error: 2`."""
    missing = tmp_path / "nonexist.toml"
    monkeypatch.setenv("CRITIQUEBENCH_PRICES", str(missing))
    done = invoke("run", "x", "--domains", "game24", "--instances", "gen:2:1", "--schemes", "standard", "--model",
                  "m", "--base-url", "http://127.0.0.1:9/v1", "--dry-run", "--store", str(tmp_path / "s.sqlite"),
                  check=2)  # fmt: skip
    assert done.stderr.strip().splitlines() == [
        f"error: price file {missing} cannot be read (No such file or directory) ($CRITIQUEBENCH_PRICES)"]
