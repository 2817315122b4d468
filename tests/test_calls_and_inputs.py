"""Endpoints that cannot hang a study, usage numbers that cannot lose answers or run a budget backwards, and
inputs that cannot blow a study up (issue 35: the probes C2, C6, C7, C21, C28-C30 and A13 of the reliability
audit), each through the command a user runs against the scripted server."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from critiquebench.llm.client import LLMCallError, LLMClient, LLMSettings
from critiquebench.store.cache import CallCache
from critiquebench.store.db import connect
from tests.conftest import DATASETS
from tests.forked_cli import run
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import game24_reply, invoke, report, run_args

GRIPPER = DATASETS / "autoplanbench" / "gripper"
MEMORY_LIMIT = 4 << 30  # address space of a command under test: the unbounded grounding passed 5 GB in 90 s
# Retries 1 ms apart, doubling (0.063 s over 6 retries instead of up to 63 s): how the retries end is the same.
QUICK_RETRIES = {"CRITIQUEBENCH_BACKOFF_S": "0.001"}


def limited(forked: dict[str, str], *args: str, timeout: float = 120,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """The command in its own process (forked from the preloaded CLI: `forked_env`) with its address space
    capped, stopped after `timeout` seconds (a hang fails)."""
    return run(["critiquebench", *args], {**forked, **(env or {})}, timeout=timeout, limit_as=MEMORY_LIMIT)


def one_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[-3000:]
    return lines[0]


# ---- calls: a deadline on the whole reply -------------------------------------------------------------------


def test_a_reply_that_trickles_fails_at_the_deadline(tmp_path: Path) -> None:
    """One byte every 0.04 s never lets a read wait 0.2 s: the call still ends at 0.2 s, and says why. (A deadline
    this short is cut the same way as a long one: a trickle of a fifth of it, as at 0.1 s a byte for 0.5 s.)"""
    import langchain_openai  # noqa: F401 - imported before the clock starts: its second of CPU was 5 on a busy machine

    with ScriptedServer(fault_rate=1.0, faults=("trickle",)) as server, CallCache(tmp_path / "s.sqlite") as cache:
        server.trickle_s = 0.04
        client = LLMClient(LLMSettings(model="m", base_url=server.base_url, timeout=0.2, max_retries=0), cache)
        started = time.monotonic()
        with pytest.raises(LLMCallError, match=r"no complete reply within 0\.2 s") as failed:
            client.complete([{"role": "user", "content": "hi"}])
        ended = time.monotonic()
        took, since_asked = ended - started, ended - server.arrivals[0]
    assert "after 1 attempt" in str(failed.value)
    assert took >= 0.2, took
    # cut at the deadline, not for ever: timed from the request's arrival, as building the chat model at the first
    # call took 3-4 s of a machine loaded with 2 workers and a CPU hog
    assert since_asked < 3.0, (took, since_asked)


def test_a_study_against_a_trickling_endpoint_finishes_with_its_run_failed(
    tmp_path: Path, forked_env: dict[str, str]
) -> None:
    store = tmp_path / "s.sqlite"
    # the shortest deadline that still sees bytes come in between reads (one every 0.04 s): 7 attempts wait 1.4 s,
    # where 0.5 s each waited 3.5 s for the same ending
    with ScriptedServer(fault_rate=1.0, faults=("trickle",)) as server:
        server.trickle_s = 0.04
        started = time.monotonic()
        done = limited(forked_env, *run_args("t", store, server, "901", "standard"), "--timeout", "0.2", timeout=200,
                       env=QUICK_RETRIES)  # fmt: skip
        took = time.monotonic() - started
        requests = server.requests
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "no complete reply within 0.2 s" in done.stderr
    assert requests == 7  # the first attempt and 6 retries, each cut at 0.2 s; then the run is failed
    assert took < 120, took  # 1.4 s of attempts and under 0.1 s of backoff, not for ever
    row = report("t", store)[0]
    assert (row["failed"], row["unfinished"]) == (1, 0)


def test_the_first_retry_delay_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from critiquebench.studies.clients import llm_settings
    from critiquebench.studies.config import StudyConfig

    config = StudyConfig(name="b", domains=("game24",), instances={"game24": "901"}, schemes=("standard",), model="m",
                         base_url="http://127.0.0.1:9/v1")  # fmt: skip
    assert llm_settings(config).backoff_s == 1.0  # the default: 1 s, doubling up to 60 s
    for value, expected in (("0.01", 0.01), ("-3", 0.0), ("1e9", 60.0), ("soon", 1.0)):
        monkeypatch.setenv("CRITIQUEBENCH_BACKOFF_S", value)
        assert llm_settings(config).backoff_s == expected, value


# ---- calls: reported usage that is not a count --------------------------------------------------------------


@pytest.mark.parametrize("count", [10**30, -1_000_000], ids=["huge", "negative"])
def test_absurd_usage_is_stored_once_and_the_budget_still_stops(tmp_path: Path, count: int,
                                                                forked_env: dict[str, str]) -> None:  # fmt: skip
    usage = {"prompt_tokens": count, "completion_tokens": count, "total_tokens": 2 * count}
    store = tmp_path / "s.sqlite"
    with ScriptedServer(reply=game24_reply, usage=usage) as server:
        args = run_args("u", store, server, "901-906", "standard", concurrency=1)
        capped = limited(forked_env, *args, "--budget-tokens", "50", timeout=120)  # used to hang (huge) or never stop
        assert capped.returncode == 3, capped.stderr[-2000:]
        assert "Traceback" not in capped.stderr and "stopped by the token budget" in capped.stderr
        assert capped.stderr.count("reports token usage that is not a count") == 1
        first = server.answered
        limit, spent, reserved = (
            connect(store).execute("SELECT limit_tokens, spent_tokens, reserved_tokens FROM budgets").fetchone()
        )
        # estimated at ~45 tokens a call: the calls stop once 50 are spent, not never (negative) or never again
        assert first < 6 and limit == 50 and 50 <= spent < 200 and reserved == 0, (first, spent, reserved)

        invoke("resume", "u", "--budget-tokens", "100000", "--store", str(store))
        assert server.answered == 6
        again = limited(forked_env, *args, "--budget-tokens", "100000")  # every answer was stored: none is paid twice
        assert again.returncode == 0 and server.answered == 6, again.stderr[-2000:]
    with connect(store) as db:
        assert db.execute("SELECT COUNT(*), MIN(tokens_estimated) FROM llm_calls").fetchone() == (6, 1)
        notes = [r[0] for r in db.execute("SELECT error FROM llm_events WHERE kind = 'call'")]
    assert len(notes) == 6 and all("not counts" in n for n in notes), notes


# ---- planning inputs -----------------------------------------------------------------------------------------


def gripper_folder(root: Path, problems: int, action: str = "") -> Path:
    """AutoPlanBench's gripper with `problems` of its problems (no plans) and `action` added to its domain."""
    folder = root / "gripper-plus"
    (folder / "instances").mkdir(parents=True)
    domain = (GRIPPER / "domain.pddl").read_text()
    end = domain.rstrip().rindex(")")
    (folder / "domain.pddl").write_text(domain[:end] + action + domain[end:])
    for k in range(1, problems + 1):
        text = (GRIPPER / "orig_problems" / f"instance-{k}.pddl").read_text()
        (folder / "instances" / f"instance-{k}.pddl").write_text(text)
    return folder


JUGGLE = """
   (:action juggle
       :parameters (?a ?b ?c ?d ?e ?f)
       :precondition (and (at ?a ?b))
       :effect (and (at ?c ?d) (not (at ?e ?f))))
"""


def test_an_action_of_six_parameters_stops_in_one_line_within_bounded_time_and_memory(
    tmp_path: Path, forked_env: dict[str, str]
) -> None:
    folder = gripper_folder(tmp_path, 4, JUGGLE)
    started = time.monotonic()
    shown = limited(forked_env, "prompt", "--domain", str(folder), "--instance", "1", timeout=60)
    assert shown.returncode == 2
    line = one_line(shown.stderr)
    assert "'juggle' of 6 parameters" in line and "200,000" in line and "plans" in line
    with ScriptedServer() as server:
        store = tmp_path / "s.sqlite"
        done = limited(forked_env, "run", "j", "--domains", str(folder), "--instances", "1", "--schemes", "standard",
                       "--model", "m", "--base-url", server.base_url, "--store", str(store), timeout=60)  # fmt: skip
        assert server.requests == 0
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.count("'juggle' of 6 parameters") == 2  # the run's line and the study's summary
    assert time.monotonic() - started < 60


def test_a_folder_of_one_problem_runs_with_the_examples_it_has(tmp_path: Path, forked_env: dict[str, str]) -> None:
    folder = gripper_folder(tmp_path, 1)
    with ScriptedServer() as server:
        done = limited(forked_env, "run", "one", "--domains", str(folder), "--instances", "1", "--schemes", "standard",
                       "--model", "m", "--base-url", server.base_url, "--store", str(tmp_path / "s.db"))  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.answered == 1 and "The domain definition" in server.calls[0][0][-1]["content"]
    assert done.stderr.count("holds 0 other problem(s), so its pddl prompts show 0 example(s)") == 1


def test_an_error_quoting_a_huge_problem_is_cut_with_a_count(tmp_path: Path, forked_env: dict[str, str]) -> None:
    folder = gripper_folder(tmp_path, 2)
    problem = folder / "instances" / "instance-1.pddl"
    names = " ".join(f"ball{i}" for i in range(10_000))  # ~90 kB, 40 times the line's limit
    problem.write_text(problem.read_text().replace("ball1 ball2 ball3 ball4 ball5 - object", f"{names} ball1 - object"))
    shown = limited(forked_env, "prompt", "--domain", str(folder), "--instance", "1")
    assert shown.returncode == 2
    line = one_line(shown.stderr)
    assert len(line) < 2200 and "characters left out" in line and "duplicate name 'ball1'" in line, line[-300:]


def test_a_config_nested_thousands_deep_is_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    done = invoke("run", "d", "--config", str(deep), "--store", str(tmp_path / "s.sqlite"), check=2)
    assert "deep.toml is nested too deeply" in one_line(done.stderr)
    assert not (tmp_path / "s.sqlite").exists()


# ---- prompt files ----------------------------------------------------------------------------------------------

GENERATE = 'extends = "self_verification"\n[game24.generate]\nsource = "ours"\nnote = "test"\ntext = "{}"\n'


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Make 24 from ${numbers} ${secret_field}.", "uses field $secret_field, which is never filled"),
        ("Make 24 from the numbers; end with [ANSWER END].", "lacks field $numbers: every instance would get"),
    ],
    ids=["unknown-field", "no-instance-field"],
)
def test_a_prompt_file_with_a_wrong_field_stops_run_before_the_first_call(tmp_path: Path, text: str, says: str) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(GENERATE.format(text))
    with ScriptedServer(reply=game24_reply) as server:
        done: Any = invoke(*run_args("p", tmp_path / "s.sqlite", server, "901-902", "standard"), "--prompts",
                           str(mine), check=2)  # fmt: skip
        assert server.requests == 0
    line = one_line(done.stderr)
    assert "mine.toml" in line and "'game24.generate'" in line and says in line
    shown = invoke("prompt", "--domain", "game24", "--instance", "901", "--prompts", str(mine), check=2)
    assert line.endswith(one_line(shown.stderr).removeprefix("error: "))  # run names the domain first
