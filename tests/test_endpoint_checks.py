"""Endpoint mistakes stop a study before its first run with one line naming the fix (the real command against
the scripted server, which answers as real servers do: `strict_paths`, `api_key`, `models`); `resume --base-url`
moves a stored study to the right endpoint and finishes it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import forked_cli
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import game24_reply


@pytest.fixture(autouse=True)
def _forked(forked_env: dict[str, str]) -> Iterator[None]:
    """Each command a process of its own, forked from the preloaded CLI (`forked_env`), not a fresh interpreter
    paying ~5 s of CPU to import what a study needs."""
    _FORKED.update(forked_env)
    yield
    _FORKED.clear()


_FORKED: dict[str, str] = {}


def cli(*args: str, key: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in _FORKED.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    if key is not None:
        env["OPENAI_API_KEY"] = key
    return forked_cli.run(["critiquebench", *args], env, timeout=300)


def run(store: Path, url: str, model: str = "scripted", key: str | None = None) -> subprocess.CompletedProcess[str]:
    return cli("run", "e", "--domains", "game24", "--instances", "gen:2:1", "--schemes",
               "standard,sound-first:rounds=2", "--model", model, "--base-url", url, "--store", str(store),
               "--no-progress", key=key)  # fmt: skip


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a stopped study prints (exit 2, nothing on stdout)."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


def finished(store: Path) -> int:
    (study,) = json.loads(cli("studies", "--json", "--store", str(store)).stdout)
    return study["done"]


def test_a_base_url_without_v1_stops_before_the_first_run_and_resume_base_url_finishes(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=game24_reply, strict_paths=True) as server:
        line = error_line(run(store, server.root_url))
        assert f"critiquebench resume e --base-url {server.base_url}" in line, line
        assert server.requests == 0  # no chat request: nothing was spent
        assert finished(store) == 0
        fixed = cli("resume", "e", "--base-url", server.base_url, "--store", str(store), "--no-progress")
        assert fixed.returncode == 0, fixed.stderr
        assert finished(store) == 4
        assert "Table 1" in fixed.stdout


def test_a_missing_or_wrong_key_stops_before_the_first_run_naming_the_variable(tmp_path: Path) -> None:
    with ScriptedServer(reply=game24_reply, strict_paths=True, api_key="sk-right") as server:
        unset = error_line(run(tmp_path / "a.sqlite", server.base_url))
        assert "OPENAI_API_KEY is not set" in unset and "401" in unset, unset
        wrong = error_line(run(tmp_path / "b.sqlite", server.base_url, key="sk-wrong"))
        assert "refused the API key in $OPENAI_API_KEY" in wrong and "sk-wrong" not in wrong, wrong
        assert server.requests == 0
        right = run(tmp_path / "b.sqlite", server.base_url, key="sk-right")
        assert right.returncode == 0, right.stderr


def test_a_model_the_server_does_not_serve_stops_and_lists_the_served_ones(tmp_path: Path) -> None:
    # llama.cpp's server answers any model name with its one model: only its list tells the mistake
    with ScriptedServer(reply=game24_reply, strict_paths=True, models=["my-smollm"]) as server:
        line = error_line(run(tmp_path / "s.sqlite", server.base_url, model="gpt-4o-mini"))
        assert "'gpt-4o-mini' is not served" in line and "pass --model my-smollm" in line, line
        assert server.requests == 0
        # the study has no runs yet, so the corrected definition replaces it under the same name
        right = run(tmp_path / "s.sqlite", server.base_url, model="my-smollm")
        assert right.returncode == 0, right.stderr
