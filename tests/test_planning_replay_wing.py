"""The PlanBench replay wing (issue 31 item 1): a live planning study is live planning only.

Replay options (`domains/planning/replay.py`) make a `ReplayedPlanning`; a live study's domain is a plain
`PlanningDomain` and never constructs the `Replay` record. The record's construction is counted (and let through)
while a live study runs on the scripted server; an import of a PlanBench run, which needs it, is the control.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

import critiquebench as cb
from critiquebench.domains.planning import PlanningDomain, Replay, ReplayedPlanning, load_planning_domain
from critiquebench.domains.planning.replay import REPLAY_OPTIONS
from critiquebench.domains.planning.styles import STYLES
from critiquebench.importers.planbench import import_file
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer

REFERENCE = DATASETS / "planbench" / "reference"


@pytest.fixture
def constructed(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every `Replay` built while the test runs (its keyword options)."""
    built: list[dict[str, Any]] = []
    original = Replay.__init__

    def counted(self: Replay, *args: Any, **kwargs: Any) -> None:
        built.append(kwargs)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Replay, "__init__", counted)
    return built


def test_a_live_planning_study_never_constructs_the_replay_record(
    constructed: list[dict[str, Any]], tmp_path: Path
) -> None:
    with ScriptedServer(reply="(unstack a b)\n[PLAN END]") as server:
        result = cb.run("live", domains="blocksworld,mystery_blocksworld", instances="2-3",
                        schemes="standard,sound-first:rounds=2", model="scripted", base_url=server.base_url,
                        dataset=DATASETS, store=tmp_path / "s.sqlite")  # fmt: skip
    assert result.ok and len(result.runs()) == 8
    assert constructed == []
    assert type(load_planning_domain("blocksworld")) is PlanningDomain


def test_importing_a_planbench_run_builds_the_replayed_domain(
    constructed: list[dict[str, Any]], tmp_path: Path
) -> None:
    """The control: the 2023 GPT-4 Mystery backprompting run is read by PlanBench's reader, a replay option."""
    done = import_file(REFERENCE / "gpt-4_mystery_backprompting_first_error.json", tmp_path / "s.sqlite", "m")
    assert done.replaying is not None and done.replaying.replay.reading == "planbench-whole"
    assert done.options["replay"]["reading"] == "planbench-whole"  # as the study's definition stores it
    assert constructed
    assert isinstance(load_planning_domain("mystery_blocksworld", reading="planbench-whole"), ReplayedPlanning)


def test_the_live_domain_takes_no_replay_option() -> None:
    live = {f.name for f in fields(PlanningDomain) if f.init} - {"name", "folder"}
    assert len(live) <= 12 and not live & set(REPLAY_OPTIONS)
    with pytest.raises(TypeError):
        PlanningDomain("blocksworld", Path("."), recorded_feedback={})  # type: ignore[call-arg]


def test_every_prompt_style_is_one_row_of_the_table() -> None:
    from critiquebench.domains.planning import planbench_prompts
    from critiquebench.domains.planning.prompts import PROMPT_STYLES

    assert set(STYLES) == set(PROMPT_STYLES)
    assert {n for n, row in STYLES.items() if row.planbench} == set(planbench_prompts.PLANBENCH_STYLES)
    assert {n for n, row in STYLES.items() if row.planbench and row.pddl_answer} == set(
        planbench_prompts.PDDL_ANSWER_STYLES
    )
