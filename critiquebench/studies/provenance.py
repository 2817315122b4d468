"""What a run was actually run with, recorded on its `runs` row when it starts (`store.results.PROVENANCE`).

A study's definition says what it asks for; a run's row says what it got: the model, the endpoint (credentials
and secret-looking query values redacted, never a key), the temperature and length cap of the client that ran
it, and the critiquebench version and git commit of the code. A study resumed with another `--base-url` keeps,
on each run finished before, the endpoint that run was made on. Settings a run's source never recorded (a
replayed PlanBench file holds no temperature and no cap: its calls are keyed under the importer's labels) are
named in `unrecorded` and left empty, never shown as if they were facts.
"""

from __future__ import annotations

import functools
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# The PlanBench importer's endpoint: its files record neither the temperature nor the length cap (their keys are
# task, prompt_type, domain, engine, instances), so studies imported before `unrecorded` existed are read so.
_RECORDED_PLANBENCH = "recorded:planbench"
SAMPLING = ("temperature", "max_tokens")


def unrecorded_settings(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The sampling settings of study `config` (its stored definition) that its source did not record."""
    if config.get("unrecorded"):
        return tuple(config["unrecorded"])
    return SAMPLING if config.get("endpoint_id") == _RECORDED_PLANBENCH else ()


def endpoint_shown(settings: Any) -> str:
    """A client's endpoint as it may be stored and shown: a recorded source or the embedded model's identity,
    else its base URL redacted."""
    from critiquebench.llm.urls import redact_url

    if settings.endpoint_id:
        return str(settings.endpoint_id)
    base_url = settings.resolved_base_url()
    return redact_url(base_url) if base_url else "embedded"


def run_provenance(llm: Any, config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The provenance columns of a run starting now with client `llm` in the study `config` ({} for a client
    without settings, e.g. a test's stand-in)."""
    settings = getattr(llm, "settings", None)
    if settings is None:
        return {}
    unrecorded = unrecorded_settings(config or {})
    return {
        "model": settings.model,
        "endpoint": endpoint_shown(settings),
        "temperature": None if "temperature" in unrecorded else float(settings.temperature),
        "max_tokens": None if "max_tokens" in unrecorded else settings.max_tokens,
        "unrecorded": ",".join(unrecorded) or None,
        "started_at": time.time(),
        "version": package_version(),
        "git_commit": git_commit(),
    }


def package_version() -> str:
    from critiquebench import __version__

    return __version__


@functools.cache
def git_commit() -> str | None:
    """The commit of the git checkout critiquebench runs from, `-dirty` when tracked files differ from it; None
    for an installed copy outside a checkout (or without git; or inside another project's checkout, which does
    not track this file). Looked up once per process."""
    here = Path(__file__).resolve().parent
    try:
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", "__init__.py"], cwd=here,
                                 capture_output=True, text=True, timeout=10)  # fmt: skip
        if tracked.returncode != 0:
            return None
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=30)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
