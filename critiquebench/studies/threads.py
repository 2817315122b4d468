"""A run's thread id: the key of its `runs` row, its rounds and its checkpoints."""

from __future__ import annotations


def thread_id_for(study: str, domain: str, spec: str, instance_id: str, trial: int) -> str:
    """The thread (and `runs` row) id of one run; `spec` is written in its canonical form."""
    from critiquebench.graphs import normalize_spec  # langgraph loads only when something runs

    return f"{study}/{domain}/{normalize_spec(spec)}/{instance_id}/{trial}"
