"""A run's thread id: the key of its `runs` row, its rounds and its checkpoints; and the spec read back from it."""

from __future__ import annotations

import json
from typing import Any


def thread_id_for(study: str, domain: str, spec: str, instance_id: str, trial: int) -> str:
    """The thread (and `runs` row) id of one run; `spec` is written in its canonical form."""
    from critiquebench.graphs import normalize_spec  # langgraph loads only when something runs

    return f"{study}/{domain}/{normalize_spec(spec)}/{instance_id}/{trial}"


def spec_of(row: dict[str, Any]) -> str:
    """The scheme spec a run was started with, read back from its thread id
    (f"{study}/{domain}/{spec}/{instance_id}/{trial}"), else rebuilt from scheme + params."""
    tid = row["thread_id"]
    prefix, suffix = f"{row['study']}/{row['domain']}/", f"/{row['instance_id']}/{row['trial']}"
    if tid.startswith(prefix) and tid.endswith(suffix) and len(tid) > len(prefix) + len(suffix):
        return tid[len(prefix) : -len(suffix)]
    params = json.loads(row.get("params") or "{}")
    if ":" in row["scheme"] or not params:
        return row["scheme"]
    return row["scheme"] + ":" + ",".join(f"{k}={v}" for k, v in sorted(params.items()))
