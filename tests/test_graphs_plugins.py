"""Critic plug-ins: a separately installed package adds a critic through the entry-point group, the CLI lists
it, and a scheme selects it by name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.llm.client import LLMClient
from critiquebench.nodes.critics import available_critics, make_critic
from critiquebench.store.db import connect
from critiquebench.store.results import attempts
from critiquebench.studies.execute import execute_run
from tests.conftest import DATASETS
from tests.forked_cli import SYS_PATH_ENV
from tests.scripted_server import ScriptedServer
from tests.test_graphs_support import ScriptedModel

PLUGIN = Path(__file__).resolve().parent / "plugin_example"
CLI = Path(sys.executable).with_name("critiquebench")
DIST = "critiquebench-partial-critic"


def pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The example plug-in pip-installed (from a copy, so no build files land in the repo) into a folder of its
    own on this process's path and on PYTHONPATH for the commands it starts: installed in the shared venv, it
    would show in every other test running meanwhile (the suite runs in parallel) that lists schemes or domains."""
    source = tmp_path_factory.mktemp("plugin") / "plugin_example"
    shutil.copytree(PLUGIN, source)
    site = tmp_path_factory.mktemp("plugin-site")
    pip("install", "--no-deps", "--no-build-isolation", "--no-index", "-q", "--target", str(site), str(source))
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.syspath_prepend(str(site))  # importlib.metadata finds the entry points of folders on sys.path
            patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
            yield
    finally:
        sys.modules.pop("critiquebench_partial_critic", None)
        sys.modules.pop("critiquebench_example_domain", None)
        sys.modules.pop("critiquebench_example_scheme", None)


def test_cli_lists_builtin_and_plugin_critics(plugin: None) -> None:
    done = subprocess.run([str(CLI), "critics", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    listed = {c["name"]: c for c in json.loads(done.stdout)}
    assert {"llm", "llm-cot", "sound", "partial"} <= set(listed)
    assert listed["llm"]["source"] == "built-in"
    assert listed["partial"]["source"] == f"critiquebench_partial_critic:make_critic ({DIST})"


def test_scheme_runs_with_the_plugin_critic(
    plugin: None, tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    domain = get_domain("game24")
    instance = load_instances(domain, "901", DATASETS)[0]
    scripted_server.reply = ScriptedModel([(domain, instance)], plan=[0, "c"])
    store = tmp_path / "store.sqlite"
    # The partial critic checks only the numbers, so the wrong first answer (right numbers) passes: a false
    # positive that ends the run after one round without any critic call to the LLM.
    out = execute_run(store, "p", domain, instance, "llm-llm:critic=partial", 0, scripted_llm)
    rows = attempts(connect(store), out.thread_id)
    assert (out.status, out.rounds, out.correct) == ("done", 1, False)
    assert (rows[0]["llm_verdict"], rows[0]["sound_valid"], rows[0]["llm_calls"]) == (1, 0, 1)
    # factory arguments travel as critic_<name>
    out = execute_run(
        store, "p", domain, instance, "llm-llm:critic=partial,critic_constraint=parse", 0, scripted_llm
    )
    assert out.status == "done" and "critic_constraint=parse" in out.thread_id


def test_plugin_critic_judges_numbers(plugin: None) -> None:
    domain = get_domain("game24")
    instance = load_instances(domain, "901", DATASETS)[0]
    critic = make_critic("partial", None, domain)
    a, b, c, d = instance.data["numbers"]
    assert critic(instance, f"{a} + {b} + {c} + {d}").says_valid
    assert not critic(instance, f"{a} + {b} + {c} + {d} + 1").says_valid
    assert "partial" in {c.name for c in available_critics()}


def test_unknown_critic_and_bad_critic_params_are_clear_errors(
    tmp_path: Path, scripted_llm: LLMClient
) -> None:
    domain = get_domain("game24")
    instance = load_instances(domain, "901", DATASETS)[0]
    with pytest.raises(ValueError, match="unknown critic 'nope'; available: llm, intrinsic, llm-cot, sound"):
        make_critic("nope", None, domain)
    with pytest.raises(ValueError, match="does not accept parameters"):
        make_critic("llm", None, domain, colour="red")
    with pytest.raises(ValueError, match="unknown critic 'nope'"):  # rejected before anything runs
        execute_run(tmp_path / "s.sqlite", "p", domain, instance, "llm-llm:critic=nope", 0, scripted_llm)


def test_a_package_adds_a_domain_through_the_entry_point(
    plugin: None, tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    from critiquebench.domains import available_domains

    assert ("game24-generated", f"critiquebench_example_domain:make_domain ({DIST})") in available_domains()
    domain = get_domain("game24-generated")
    instance = load_instances(domain, "gen:1:3")[0]
    assert (domain.name, instance.domain) == ("game24-generated", "game24-generated")
    out = execute_run(tmp_path / "s.sqlite", "s", domain, instance, "standard", 0, scripted_llm)
    assert out.status == "done" and out.thread_id == f"s/game24-generated/standard/{instance.id}/0"
    with pytest.raises(ValueError, match="unknown domain 'nope': use one of game24, .*game24-generated"):
        get_domain("nope")


@pytest.fixture
def plugin_env(plugin: None, forked_env: dict[str, str]) -> dict[str, str]:
    """The environment of `critiquebench` commands forked from the worker's preloaded server (`forked_env`), with
    the plug-in's folder on their path (tests/forked_cli.py's SYS_PATH_ENV, as PYTHONPATH for a fresh one)."""
    site = os.environ["PYTHONPATH"].split(os.pathsep)[0]  # the `plugin` fixture's folder
    return {**forked_env, "PYTHONPATH": os.environ["PYTHONPATH"], SYS_PATH_ENV: site}


def test_a_scheme_plugin_is_listed_drawn_run_resumed_and_reported_like_a_built_in(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    """A scheme defined outside the package (the example's `sound-window`: first-error feedback with a window of
    one exchange) runs through the CLI as a built-in one does: listed, drawn, costed, stopped by a budget,
    resumed, reported; its requests show the window. Its six commands are processes forked from one that imported
    the CLI (tests/forked_cli.py; ~2 s of CPU less each), which finds the plug-in installed after it started; the
    critics test above runs the installed command, which finds the plug-in's entry points in a fresh interpreter."""
    cli_path = shutil.which("critiquebench", path=plugin_env["PATH"])

    def cli(*args: str, check: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(cli_path), *args], capture_output=True, text=True, timeout=300, env=plugin_env)
        assert done.returncode == check, done.stderr[-3000:]
        return done

    listed = {s["name"]: s for s in json.loads(cli("schemes", "--json").stdout)}
    assert listed["sound-window"]["source"] == f"critiquebench_example_scheme ({DIST})"
    assert [p["name"] for p in listed["sound-window"]["params"]] == ["rounds", "feedback"]
    assert "verifier" in cli("graph", "sound-window:rounds=3", "--format", "mermaid").stdout
    store = tmp_path / "store.sqlite"
    with ScriptedServer(reply="1 + 2 + 3 + 4 = 24") as server:  # always wrong: every run takes its 3 rounds
        args = ["run", "w", "--domains", "game24", "--instances", "gen:4:1", "--schemes", "sound-window:rounds=3",
                "--model", "scripted", "--base-url", server.base_url, "--store", str(store), "--max-tokens", "32"]
        assert "new LLM calls: max 12" in cli(*args, "--dry-run").stdout
        cli(*args, "--budget-tokens", "150", check=3)  # the budget stops it part-way
        cli("resume", "w", "--store", str(store), "--budget-tokens", "100000")
        assert server.answered == 12
        third = server.calls[-1][0]
    # the window: the prompt, then only the last answer and its first-error feedback
    assert [m["role"] for m in third] == ["user", "assistant", "user"]
    rows = json.loads(cli("report", "w", "--store", str(store), "--format", "json").stdout)
    assert [(r["scheme"], r["total"], r["correct"], r["mean_rounds"]) for r in rows] == [
        ("sound-window:rounds=3", 4, 0, 3.0)
    ]
