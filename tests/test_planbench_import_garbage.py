"""A PlanBench results file is untrusted data: every malformed one is refused with one line naming the file, the
instance and the field, and leaves the store as it was (issue 26 item 6: the 25 files of the reliability
probe, `../shared/audits/reliability.md` section 4e, rebuilt from a recorded file)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app

GOOD = Path(__file__).parent / "data" / "planbench" / "zero_shot_nl_claude-3-opus.json"


def recorded() -> dict[str, Any]:
    return json.loads(GOOD.read_text())


def edited(change: Callable[[dict[str, Any]], Any]) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        data = recorded()
        replaced = change(data)
        path = folder / "results.json"
        path.write_text(json.dumps(data if replaced is None else replaced))
        return path

    return write


def raw(content: bytes) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / "results.json"
        path.write_bytes(content)
        return path

    return write


def conversation(messages: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["instances"][0]["messages"] = messages

    return change


def _set(index: int, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["instances"][index][key] = value

    return change


def _drop(index: int, key: str) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["instances"][index].pop(key) and None


# (case, file maker, words the one line must hold)
BAD: list[tuple[str, Callable[[Path], Path], tuple[str, ...]]] = [
    ("instances of numbers", edited(lambda d: d.update(instances=[1, 2, 3])), ("instances[0]", "not an object")),
    ("instances of strings", edited(lambda d: d.update(instances=["x"])), ("instances[0]", "string")),
    ("query a number", edited(_set(0, "query", 42)), ("instance 1", "'query'")),
    ("messages a string", edited(conversation("hello")), ("instance 1", "'messages'")),
    ("message without role", edited(conversation([{"content": "hi"}])), ("instance 1", "messages[0]", "'role'")),
    ("examples with bad messages", edited(lambda d: d["instances"][0].update(messages=5, example_instance_ids=[1])),
     ("instance 1", "'messages'")),
    ("deep JSON", raw(b"[" * 200_000 + b"]" * 200_000), ("nested too deeply",)),
    ("not UTF-8", raw(b'{"instances": ["\xff"]}'), ("not UTF-8",)),
    ("empty file", raw(b""), ("not JSON",)),
    ("truncated JSON", lambda folder: raw(GOOD.read_bytes()[:500])(folder), ("not JSON",)),
    ("instances a dict", edited(lambda d: d.update(instances={"a": 1})), ("no 'instances' list",)),
    ("top-level list", edited(lambda d: [d]), ("top level is a list",)),
    ("string instance_id", edited(_set(0, "instance_id", "2")), ("instances[0]", "'instance_id'", "integer")),
    ("missing instance_id", edited(_drop(0, "instance_id")), ("instances[0]", "'instance_id'")),
    ("no assistant turn", edited(conversation([{"role": "user", "content": "plan?"}])),
     ("instance 1", "no assistant turn")),
    ("duplicate ids", edited(_set(1, "instance_id", 1)), ("instance 1", "appears twice")),
    ("fractional id", edited(_set(0, "instance_id", 2.7)), ("instances[0]", "integer")),
    ("negative id", edited(_set(0, "instance_id", -5)), ("instances[0]", "out of range")),
    ("huge id", edited(_set(0, "instance_id", 10**30)), ("instances[0]", "out of range")),
    ("domain a path", edited(lambda d: d.update(domain="../../../etc")), ("'domain'",)),
    ("domain a number", edited(lambda d: d.update(domain=5)), ("'domain'", "number 5")),
    ("engine an object", edited(lambda d: d.update(engine={"a": 1})), ("'engine'",)),
    ("role a number", edited(conversation([{"role": 7, "content": "x"}])), ("messages[0]", "'role'")),
    ("assistant content null", edited(conversation([{"role": "user", "content": "plan?"},
                                                    {"role": "assistant", "content": None}])),
     ("instance 1", "messages[1]", "'content'")),
    ("answer a number", edited(_set(0, "llm_raw_response", 7)), ("instance 1", "'llm_raw_response'")),
]


@pytest.mark.parametrize(("case", "make", "words"), BAD, ids=[c for c, _, _ in BAD])
def test_a_malformed_file_is_one_line_naming_the_instance_and_field_and_stores_nothing(
    tmp_path: Path, case: str, make: Callable[[Path], Path], words: tuple[str, ...]
) -> None:
    path = make(tmp_path)
    store = tmp_path / "s.sqlite"
    result = CliRunner().invoke(app, ["import", "planbench", str(path), "--study", "s", "--store", str(store)])
    assert result.exit_code == 2, (case, result.output, result.exception)
    assert isinstance(result.exception, SystemExit)  # no traceback
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"error: {path}: "), line
    for word in words:
        assert word in line, (case, line)
    if store.exists():
        with sqlite3.connect(store) as db:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            assert "llm_calls" not in tables or db.execute("SELECT count(*) FROM llm_calls").fetchone()[0] == 0


def test_an_unanswered_instance_is_skipped_and_counted_never_recorded_as_the_text_none(tmp_path: Path) -> None:
    data = recorded()
    for inst in data["instances"][:2]:
        inst["llm_raw_response"] = None
        inst.pop("llm_correct")  # PlanBench never judged it
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(data))
    store = tmp_path / "s.sqlite"
    result = CliRunner().invoke(app, ["import", "planbench", str(path), "--study", "s", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "skipped 2 instance(s) with no recorded answer, as PlanBench does: 1, 2" in result.output
    assert "on 2 blocksworld instance(s)" in result.output
    with sqlite3.connect(store) as db:
        answers = [r[0] for r in db.execute("SELECT response FROM llm_calls")]
    assert len(answers) == 2 and "None" not in answers
