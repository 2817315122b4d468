"""A recorded PlanBench run's replay options are one typed record (issue 40, "0 string-keyed replay options").

The importer builds a `Replay` (inside `Replaying`, with the prompt style and intro), the study's definition stores
it as one table (`domain_options.NAME.replay`), and `Replay.parse` reads it back: a value it cannot read is one
line naming the option; a definition stored by an older import (the record's fields as flat keys) still replays,
and importing the same file into it again is the same study.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from critiquebench.domains import get_domain
from critiquebench.domains.planning import PlanningError, Replay, ReplayedPlanning
from critiquebench.domains.planning.replay import REPLAY_OPTIONS, stored_options
from tests.test_planbench_backprompting_pddl import CHECKOUT, FIXTURES, O1, imported, invoke, recorded, replay_rows


def stored_config(store: Path) -> dict:
    with sqlite3.connect(store) as db:
        return json.loads(db.execute("SELECT config FROM studies WHERE name = 's'").fetchone()[0])


def test_every_field_of_the_record_survives_the_study_definition() -> None:
    record = Replay(example_plans={"1": ["(a)"]}, newline=True, translations={"d": ["(b)"]}, reading="planbench",
                    recorded_feedback={"1": {"d": "fix it", "e": None}}, system=False, domain_names={"1": "abc"},
                    example="4", ends={"1": 4})  # fmt: skip
    assert {*record.to_options()} == set(REPLAY_OPTIONS)
    assert Replay.parse(json.loads(json.dumps(record.to_options()))) == record
    assert Replay().to_options() == {}


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        ("planbench", r"replay options: a table of example_plans, .* expected, not 'planbench'"),
        ({"reader": "planbench"}, r"replay options: unknown reader \(known: example_plans, .*\); import the"),
        ({"reading": "planbench-typo"}, r"replay option reading: one of planbench, .* expected, not 'planbench-typo'"),
        ({"newline": "yes"}, r"replay option newline: true or false expected, not 'yes'"),
        ({"example_plans": {"1": "(a)"}}, r"replay option example_plans: a table of id -> PDDL lines expected"),
        ({"recorded_feedback": {"1": ["x"]}}, r"replay option recorded_feedback: a table of id -> digest -> text"),
        ({"ends": {"74": 0}}, r"replay option ends: a table of id -> count expected"),
    ],
)
def test_a_stored_value_the_record_cannot_read_is_one_line_naming_the_option(stored: object, message: str) -> None:
    with pytest.raises(PlanningError, match=message) as caught:
        get_domain("blocksworld", replay=stored)
    assert "\n" not in str(caught.value)


def test_both_forms_at_once_are_refused() -> None:
    with pytest.raises(PlanningError, match="given twice"):
        get_domain("blocksworld", replay={"newline": True}, reading="planbench-whole")


def test_the_import_stores_one_table_and_an_older_definition_still_replays_and_reimports(tmp_path: Path) -> None:
    store, _ = imported(tmp_path, O1)
    config = stored_config(store)
    [(key, options)] = config["domain_options"].items()
    assert set(options) == {"prompt_style", "replay"}
    assert set(options["replay"]) == {"recorded_feedback", "system"}
    assert isinstance(get_domain(key, **options), ReplayedPlanning)
    # the definition an import made before the record had its table: its fields as flat keys
    flat = {"prompt_style": options["prompt_style"], **options["replay"]}
    assert stored_options(flat) == options
    config["domain_options"] = {key: flat}
    with sqlite3.connect(store) as db:
        db.execute("UPDATE studies SET config = ? WHERE name = 's'", [json.dumps(config)])
    rows = replay_rows(store)  # 0 calls left the cache, every run done
    for ident, inst in recorded(O1).items():
        answers = [m["content"] for m in inst["messages"] if m["role"] == "assistant"]
        assert [r["answer"] for r in rows[ident]] == answers
    again = invoke("import", "planbench", str(FIXTURES / O1), "--planbench", str(CHECKOUT), "--study", "s",
                   "--store", str(store))
    assert again.exit_code == 0, again.output
    assert "imported 0 recorded call(s)" in again.output
    assert stored_config(store)["domain_options"] == {key: flat}  # kept as stored: its runs stay its own
