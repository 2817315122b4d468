"""`import samples` row by row (issue 45 items 2 and 5): every row is imported or reported with its reason, and a
value Python cannot hold (a 401-digit label or temperature, a line nested 100,000 deep) is one line, not a
traceback. CSV takes cells as long as a JSON line's answers (csv's own limit is 131,072 characters)."""

from __future__ import annotations

import csv
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.test_study_cli import DATASETS


def _import(path: Path, store: Path) -> subprocess.CompletedProcess[str]:
    """The installed command in a process of its own, as a user runs it."""
    args = [sys.executable, "-m", "critiquebench", "import", "samples", str(path), "--domain", "game24",
            "--study", "s", "--store", str(store), "--dataset", str(DATASETS)]  # fmt: skip
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def _lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return (result.stdout + result.stderr).splitlines()


def _stored(store: Path) -> list[tuple[str, float | None]]:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT instance_id, temperature FROM recorded_samples ORDER BY instance_id").fetchall()


def test_a_first_row_without_temperature_loses_no_later_row(tmp_path: Path) -> None:
    rows = [{"instance": "901", "response": "a"}]
    rows += [{"instance": str(i), "response": "b", "temperature": 0.7} for i in range(902, 907)]
    path = tmp_path / "mix.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = _import(path, tmp_path / "st.sqlite")
    assert result.returncode == 0, result.stderr
    out = "\n".join(_lines(result))
    assert "imported 6 sample(s) of 6 instance(s)" in out
    assert "1 row(s) record no temperature: taken as the study's 0.7" in out
    assert _stored(tmp_path / "st.sqlite") == [(str(i), 0.7) for i in range(901, 907)]


def test_a_row_of_another_temperature_is_reported_by_line(tmp_path: Path) -> None:
    rows = [{"instance": "901", "response": "a"}, {"instance": "902", "response": "b", "temperature": 0.7},
            {"instance": "903", "response": "c", "temperature": 0.2}]  # fmt: skip
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = _import(path, tmp_path / "st.sqlite")
    assert result.returncode == 1
    assert "skipped line 3: temperature 0.2 is not the study's 0.7" in "\n".join(_lines(result))
    assert [i for i, _t in _stored(tmp_path / "st.sqlite")] == ["901", "902"]


def test_values_python_cannot_hold_are_one_line(tmp_path: Path) -> None:
    big = "1" + "0" * 400
    cases = {
        "label": f'{{"instance":"901","response":"a","label":{big}}}',
        "temperature": f'{{"instance":"901","response":"a","temperature":{big}}}',
        "nested": '{"instance":"901","response":"a","x":' + "[" * 100_000 + "]" * 100_000 + "}",
        "messages": '{"instance":"901","response":"a","messages":' + "[" * 100_000 + "]" * 100_000 + "}",
    }
    for name, line in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(line + "\n", encoding="utf-8")
        result = _import(path, tmp_path / f"{name}.sqlite")
        assert result.returncode == 2 and len(_lines(result)) == 1, (name, _lines(result)[-3:])
        assert _lines(result)[0].startswith("error: no sample could be imported: line 1: "), name
        assert "Traceback" not in result.stderr


def test_a_csv_cell_longer_than_csvs_own_limit_comes_in_whole(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    answer = "(1 + 2 + 3) * 4 " + "x" * 200_000
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerows([["instance", "response"], ["901", answer], ["902", "a"]])
    store = tmp_path / "st.sqlite"
    result = _import(path, store)
    assert result.returncode == 0, _lines(result)[-3:]
    assert "imported 2 sample(s) of 2 instance(s)" in result.stdout + result.stderr
    with sqlite3.connect(store) as db:  # a long text is kept once, in `texts`
        assert db.execute("SELECT max(length(text)) FROM texts").fetchone()[0] == len(answer)
