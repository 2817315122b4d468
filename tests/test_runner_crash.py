"""A run that raises something unexpected is recorded as failed, the study goes on, and a rerun retries it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from critiquebench.studies.config import build_config
from critiquebench.studies.runner import run_study


def test_unexpected_crashes_are_recorded_per_run_and_retried_by_a_rerun(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"  # a fresh file: the crash path must create what it writes to
    config = build_config("c", {}, {"domains": "game24", "instances": "gen:3:5", "schemes": "standard"})
    attempted: list[str] = []

    def crash(store_path: Path, study: str, domain: Any, instance: Any, spec: str, trial: int, llm: Any) -> Any:
        attempted.append(instance.id)
        raise RuntimeError("disk on fire")

    summary = run_study(store, config, llm=None, execute=crash)
    assert (summary.failed, summary.done) == (3, 0)
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT thread_id, status, error FROM runs ORDER BY thread_id").fetchall()
    assert rows == [
        (f"c/game24/standard/gen-5-{i}/0", "failed", "RuntimeError: disk on fire") for i in (1, 2, 3)
    ]
    run_study(store, config, llm=None, execute=crash)
    assert sorted(attempted) == sorted(["gen-5-1", "gen-5-2", "gen-5-3"] * 2)
