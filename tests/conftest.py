"""Shared pytest fixtures: a scripted OpenAI-compatible server on loopback and LLM clients wired to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from critiquebench.llm.client import LLMClient, LLMSettings
from critiquebench.store.cache import CallCache
from tests.scripted_server import ScriptedServer

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    """A running scripted server answering "OK"; set `.reply`, `.latency`, faults etc. in the test."""
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def call_cache(tmp_path: Path) -> CallCache:
    """An empty LLM call cache in a fresh store file."""
    return CallCache(tmp_path / "store.sqlite")


@pytest.fixture
def scripted_settings(scripted_server: ScriptedServer) -> LLMSettings:
    """Settings for the scripted server: fast retries, a short timeout."""
    return LLMSettings(
        model="scripted", base_url=scripted_server.base_url, timeout=2.0, backoff_s=0.01, max_backoff_s=0.05
    )


@pytest.fixture
def make_llm(scripted_settings: LLMSettings, call_cache: CallCache) -> Callable[..., LLMClient]:
    """`make_llm(**overrides)` -> an LLMClient on the scripted server and the test's cache."""

    def make(cache: CallCache | None = None, **overrides: Any) -> LLMClient:
        return LLMClient(replace(scripted_settings, **overrides), cache or call_cache)

    return make


@pytest.fixture
def scripted_llm(make_llm: Callable[..., LLMClient]) -> LLMClient:
    """An LLMClient on the scripted server (see `scripted_server`) with a fresh cache."""
    return make_llm()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A real local Postgres server for the session; scripts/setup.sh installs Debian's postgresql, so a server
    that cannot start here fails the tests that need it (with the reason) instead of skipping them."""
    from tests.pg_server import local_postgres, why_unavailable

    reason = why_unavailable()
    if reason:
        pytest.fail(reason)
    with local_postgres() as url:
        yield url


@pytest.fixture
def pg_store(postgres_server: str) -> str:
    """The URL of a fresh, empty Postgres store database."""
    from tests.pg_server import fresh_database

    return fresh_database(postgres_server)
