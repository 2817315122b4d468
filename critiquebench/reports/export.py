"""The store's studies as a listing, and a study's rounds as JSON lines (`studies`, `export`)."""

from __future__ import annotations

import json
from typing import IO, Any

import sqlite_utils

from critiquebench.reports.metrics import spec_of
from critiquebench.store.reads import run_counts, study_configs, study_rounds
from critiquebench.store.results import ensure_schema


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def export_rounds(db: sqlite_utils.Database, study: str, fp: IO[str]) -> int:
    """Write one JSON line per round of every run of `study`; return how many lines."""
    count = 0
    for row in study_rounds(db, study):
        line = {
            "study": row["study"],
            "domain": row["domain"],
            "scheme": spec_of(row),
            "instance": row["instance_id"],
            "trial": row["trial"],
            "round": row["round"],
            "prompt_tokens": row["prompt_tokens"],
            "completion_tokens": row["completion_tokens"],
            "llm_calls": row["llm_calls"],
            "cache_hits": row["cache_hits"],
            "answer": row["answer"],
            "canonical": row["canonical"],
            "sound_status": row["sound_status"],
            "sound_valid": _flag(row["sound_valid"]),
            "llm_verdict": _flag(row["llm_verdict"]),
            "llm_critique": row["llm_critique"],
            "feedback": row["feedback"],
            "stopped": bool(row["stopped"]),
        }
        fp.write(json.dumps(line, ensure_ascii=False) + "\n")
        count += 1
    return count


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
