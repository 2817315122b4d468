"""A study's LLM settings and clients, shared by the session (`studies.session`) and the processes that execute
runs for it (`critiquebench.scale.ray_executor`)."""

from __future__ import annotations

import os
from typing import Any

from critiquebench.store.db import Locator
from critiquebench.studies.config import ConfigError, StudyConfig, with_endpoint_secrets

BACKOFF_ENV = "CRITIQUEBENCH_BACKOFF_S"


def retry_backoff_s() -> float:
    """The first retry's delay in seconds (`$CRITIQUEBENCH_BACKOFF_S`, default 1; it doubles per attempt, with
    jitter, up to 60 s): an endpoint you own that recovers fast, or a test of how the retries end, can lower it."""
    try:
        return min(60.0, max(0.0, float(os.environ.get(BACKOFF_ENV) or 1.0)))
    except ValueError:
        return 1.0


class StudyError(RuntimeError):
    """The study cannot run (bad definition or data, endpoint unreachable, ...); the message is one line."""


def llm_settings(config: StudyConfig, replay: bool = False) -> Any:
    """The LLM client's settings for the study (endpoint secrets taken from the environment unless replaying)."""
    from critiquebench.llm.client import LLMSettings

    replay = replay or config.replay
    if not replay:
        try:
            config = with_endpoint_secrets(config)
        except ConfigError as exc:
            raise StudyError(str(exc)) from exc
    return LLMSettings(
        model=config.model,
        base_url=config.base_url,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        timeout=config.timeout,
        concurrency=config.concurrency,
        budget_tokens=config.budget_tokens,
        replay=replay,
        endpoint_id=config.endpoint_id,
        backoff_s=retry_backoff_s(),
    )


def worker_client(store: Locator, settings: Any) -> Any:
    """An LLM client over the store's call cache, for a process that executes runs handed to it (a Ray worker):
    the driver's session owns the budget, the embedded server and the summary."""
    from critiquebench.llm.client import LLMClient
    from critiquebench.store.cache import CallCache

    return LLMClient(settings, CallCache(store))
