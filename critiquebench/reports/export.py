"""The store's studies as a listing (`studies`); a study's runs and rounds as tables are `reports.records`."""

from __future__ import annotations

from typing import Any

import sqlite_utils

from critiquebench.store.reads import run_counts, study_configs
from critiquebench.store.results import ensure_schema


def list_studies(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """name, kind, domains, schemes, done, failed, total (planned runs; None before the first run)."""
    ensure_schema(db)
    counts = run_counts(db)
    out = []
    for name, config in study_configs(db):
        done, failed = counts.get(name, (0, 0))
        if config.get("kind") == "verify":
            from critiquebench.store.verify import verify_counts

            done, failed = verify_counts(db, name)
        out.append(
            {
                "name": name,
                "kind": config.get("kind", "loop"),
                "domains": config.get("domains", []),
                "schemes": config.get("schemes", []),
                "done": done,
                "failed": failed,
                "total": config.get("planned_runs"),
            }
        )
    return out
