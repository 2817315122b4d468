"""Kill a real study process with SIGKILL mid-call, resume it, and compare with an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.llm.client import LLMClient, LLMSettings
from critiquebench.store.cache import CallCache
from critiquebench.store.checkpoints import open_saver
from critiquebench.store.db import connect, connect_raw
from critiquebench.store.results import ensure_schema
from critiquebench.studies.execute import CHECKPOINTS_ENV, execute_run
from tests.conftest import DATASETS
from tests.forked_process import ForkedProcess, ForkServer
from tests.scripted_server import ScriptedServer
from tests.test_graphs_support import ScriptedModel

ROOT = Path(__file__).resolve().parents[1]
SELECTION = "901-920"

DRIVER = """
import sys
from pathlib import Path
from critiquebench.domains import get_domain, load_instances
from critiquebench.studies.execute import execute_run
from critiquebench.llm.client import LLMClient, LLMSettings
from critiquebench.store.cache import CallCache

store, base_url, data, selection = sys.argv[1:5]
domain = get_domain("game24")
llm = LLMClient(LLMSettings(model="scripted", base_url=base_url, max_retries=0), CallCache(store))
for instance in load_instances(domain, selection, Path(data)):
    out = execute_run(store, "kill", domain, instance, "llm-llm", 0, llm)
    print(out.thread_id, out.status, out.resumed, flush=True)
"""


class Killer:
    """Reply function that SIGKILLs the driver when it asks its `kill_at`-th call (counted over the whole
    test) and never answers that call; every other call goes to the scripted model."""

    def __init__(self, model: ScriptedModel, kill_at: tuple[int, ...] = ()) -> None:
        self.model, self.kill_at = model, set(kill_at)
        self.asked, self.killed = 0, 0
        self.proc: ForkedProcess | None = None
        self._lock = threading.Lock()

    def __call__(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        with self._lock:
            self.asked += 1
            if self.asked in self.kill_at and self.proc is not None:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                self.killed += 1
                raise ConnectionAbortedError("driver killed mid-call; this call is never answered")
        return self.model(messages, params)


def drive(killer: Killer, server: ScriptedServer, store: Path, fork_server: ForkServer) -> int:
    """The driver in a process of its own, forked from the preloaded CLI (tests/forked_process.py): a SIGKILL
    ends it as it ends an interpreter started for it, without the 2-4 s of CPU that one spends importing."""
    killer.proc = fork_server.popen(["-c", DRIVER, str(store), server.base_url, str(DATASETS), SELECTION],
                                    program="forked-python", cwd=ROOT)  # fmt: skip
    _, err = killer.proc.communicate(timeout=300)
    assert killer.proc.returncode in (0, -signal.SIGKILL), err[-2000:]
    return killer.proc.returncode


def snapshot(store: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    db = connect(store)
    # when and where each session ran differs (times, the scripted server's port); what it made must not
    session = {"updated_at", "started_at", "endpoint"}
    runs = [{k: v for k, v in r.items() if k not in session} for r in db.query("SELECT * FROM runs ORDER BY 1")]
    rows = list(db.query("SELECT * FROM attempts ORDER BY thread_id, round"))
    steps = db.query("SELECT thread_id, round, node, calls, sound_reason FROM round_calls ORDER BY 1, 2, 3")
    # each step's calls (how many: a key names the endpoint, whose port differs) and sound reason, as exported
    return runs, rows + [{"step": {**step, "calls": len(json.loads(step["calls"]))}} for step in steps]


def study(
    tmp_path: Path, name: str, kill_at: tuple[int, ...], fork_server: ForkServer | None = None
) -> tuple[Killer, ScriptedServer, Path]:
    """The 20-instance llm-llm study in a fresh store; with `kill_at`, in a subprocess restarted after each
    kill, else in this process."""
    domain = get_domain("game24")
    instances = load_instances(domain, SELECTION, DATASETS)
    killer = Killer(ScriptedModel([(domain, i) for i in instances], plan=[0, 1, "c"]), kill_at)
    store = tmp_path / name / "store.sqlite"
    store.parent.mkdir()
    with ScriptedServer(killer) as server:
        if not kill_at:
            llm = LLMClient(LLMSettings(model="scripted", base_url=server.base_url, max_retries=0), CallCache(store))
            for instance in instances:
                execute_run(store, "kill", domain, instance, "llm-llm", 0, llm)
            return killer, server, store
        assert fork_server is not None
        codes = [drive(killer, server, store, fork_server)]
        while codes[-1] != 0:
            assert len(codes) <= len(kill_at), "the driver was killed more often than planned"
            codes.append(drive(killer, server, store, fork_server))
    return killer, server, store


def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path: Path, fork_server: ForkServer) -> None:
    _, clean, clean_store = study(tmp_path, "clean", ())
    # asked call 17 is a generation; after its re-ask, asked call 63 is a critique (the 62nd distinct call)
    killer, killed, store = study(tmp_path, "killed", (17, 63), fork_server)
    assert killer.killed == 2
    assert snapshot(store) == snapshot(clean_store)
    runs, _ = snapshot(store)
    assert len(runs) == 20 and {r["status"] for r in runs} == {"done"} and all(r["correct"] for r in runs)
    # no answered call was asked twice: everything answered before a kill came from the cache afterwards
    asked = [json.dumps(messages, sort_keys=True) for messages, _ in killed.calls]
    assert len(asked) == len(set(asked)) == clean.answered == 20 * 6
    assert killed.requests == killed.answered + 2  # only the two calls in flight at a kill were re-asked


KILL_IN_STORE = """
import os
import signal
import sys
from pathlib import Path

import critiquebench.store.checkpoints as checkpoints
import critiquebench.store.db as store_db
from critiquebench.domains import get_domain, load_instances
from critiquebench.llm.client import LLMClient, LLMSettings
from critiquebench.store.cache import CallCache
from critiquebench.studies.execute import execute_run

connect_raw = checkpoints.connect_raw


def saver_connection(*args, **kwargs):
    # the store's trigger calls kill_here() from inside the checkpointer's statement: the process dies there
    conn = connect_raw(*args, **kwargs)
    conn.create_function("kill_here", 0, lambda: os.kill(os.getpid(), signal.SIGKILL))
    return conn


checkpoints.connect_raw = saver_connection
store_db.connect_raw = saver_connection  # the run's own rows too (a kill between a step's checkpoint and its rows)
store, base_url, data, spec = sys.argv[1:5]
domain = get_domain("game24")
llm = LLMClient(LLMSettings(model="scripted", base_url=base_url, max_retries=0), CallCache(store))
execute_run(store, "kill", domain, load_instances(domain, "901", Path(data))[0], spec, 0, llm)
"""
SPEC = "llm-llm:rounds=3"
# Where the checkpointer is when the process dies, as a trigger on its tables (llm-llm: the first step writes the
# initial state, then each round a generation and a critique write `round`/`attempt`/`past`/`next` and a branch).
KILL_POINTS = {
    "midway through the first step's writes": "BEFORE INSERT ON writes WHEN NEW.channel = 'attempt'",
    "midway through a generation's writes": (
        "BEFORE INSERT ON writes WHEN NEW.channel = 'attempt' "
        "AND (SELECT COUNT(*) FROM writes WHERE channel = 'attempt') = 1"
    ),
    # a step's writes all stored, its checkpoint not yet
    "between the first step's writes and its checkpoint": (
        "BEFORE INSERT ON checkpoints WHEN EXISTS (SELECT 1 FROM writes w "
        "WHERE w.checkpoint_id = NEW.parent_checkpoint_id AND w.channel = 'attempt')"
    ),
    "between a critique's writes and its checkpoint": (
        "BEFORE INSERT ON checkpoints WHEN EXISTS (SELECT 1 FROM writes w "
        "WHERE w.checkpoint_id = NEW.parent_checkpoint_id AND w.channel = 'past')"
    ),
    # a step's checkpoint stored, its rows (attempt, round_calls: one transaction) not yet (probe B1, rel48)
    "between a critique's checkpoint and its rows": "BEFORE INSERT ON round_calls WHEN NEW.node = 'critic'",
    "between a generation's checkpoint and its rows": "BEFORE INSERT ON round_calls WHEN NEW.node = 'generator'",
}


# Where a run stepped without checkpoints (the default) is when the process dies: a step's rows and its count of
# steps recorded are one transaction, after the step's calls are cached.
DIRECT_KILL_POINTS = {
    "between a generation's calls and its rows": "BEFORE INSERT ON round_calls WHEN NEW.node = 'generator' "
    "AND NEW.round = 2",
    "between a critique's calls and its rows": "BEFORE INSERT ON round_calls WHEN NEW.node = 'critic' "
    "AND NEW.round = 2",
    "between a step's rows and its count": "BEFORE UPDATE OF steps ON runs WHEN NEW.steps = 2",
}


@pytest.mark.parametrize("where", list(KILL_POINTS))
def test_a_kill_while_a_checkpoint_is_stored_resumes_to_the_uninterrupted_result(
    tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch, fork_server: ForkServer
) -> None:
    """A SIGKILL can land anywhere in the checkpointer's work; the resumed run must end as an uninterrupted one.
    (Partial writes of a step once resumed as a finished step without `attempt`, and a step whose writes were
    stored without its checkpoint was taken for an old graph's dead end: KeyError 'attempt' / 'answer'.)"""
    monkeypatch.setenv(CHECKPOINTS_ENV, "1")  # every run here, the killed driver's too, through LangGraph
    kill_and_resume(tmp_path, KILL_POINTS[where], fork_server)


@pytest.mark.parametrize("where", list(DIRECT_KILL_POINTS))
def test_a_kill_in_a_step_of_a_run_without_checkpoints_resumes_to_the_uninterrupted_result(
    tmp_path: Path, where: str, fork_server: ForkServer
) -> None:
    """A run stepped without checkpoints resumes by stepping again from its cached calls: the rows of the steps
    recorded stay, the step the kill cut short is done again (its call a cache hit), and the round in progress
    keeps the usage it had, so the one cache hit counted is that step's."""
    store = kill_and_resume(tmp_path, DIRECT_KILL_POINTS[where], fork_server)
    db = connect(store)
    assert db.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 0
    hits = db.execute("SELECT SUM(cache_hits), (SELECT cache_hits FROM runs) FROM attempts").fetchone()
    assert hits == (1, 1)


def test_a_kill_after_a_sound_verifiers_step_resumes_to_the_uninterrupted_result(
    tmp_path: Path, fork_server: ForkServer
) -> None:
    """A call-free step's rows (the sound verifier's) go in with the next step's: a kill as the next generation's
    rows are written loses the verifier's with them, and the resume does that step again (no call) and the
    generation (its call a cache hit): the rows are an uninterrupted run's, with the one cache hit counted."""
    trigger = "BEFORE INSERT ON round_calls WHEN NEW.node = 'generator' AND NEW.round = 2"
    store = kill_and_resume(tmp_path, trigger, fork_server, spec="sound-first:rounds=3")
    hits = connect(store).execute("SELECT SUM(cache_hits), (SELECT cache_hits FROM runs) FROM attempts").fetchone()
    assert hits == (1, 1)


def kill_and_resume(tmp_path: Path, trigger_sql: str, fork_server: ForkServer, spec: str = SPEC) -> Path:
    """Run the study's one llm-llm run in a driver SIGKILLed where `trigger_sql` fires (a process forked from
    the preloaded CLI, with this process's environment), resume it here, and check it ends as an uninterrupted
    run; the killed store."""
    domain = get_domain("game24")
    instance = load_instances(domain, "901", DATASETS)[0]
    clean_store, store = tmp_path / "clean.sqlite", tmp_path / "killed.sqlite"
    with ScriptedServer(ScriptedModel([(domain, instance)], plan=[0, 1, "c"])) as server:
        clean = execute_run(clean_store, "kill", domain, instance, spec, 0, scripted(server, clean_store))
    assert clean.status == "done"

    with open_saver(store):  # the checkpointer's tables, to put the trigger on
        pass
    ensure_schema(connect(store))  # and the run's own
    trigger = connect_raw(store)
    trigger.execute(f"CREATE TRIGGER kill {trigger_sql} BEGIN SELECT kill_here(); END")
    with ScriptedServer(ScriptedModel([(domain, instance)], plan=[0, 1, "c"])) as server:
        child = fork_server.run(["-c", KILL_IN_STORE, str(store), server.base_url, str(DATASETS), spec],
                                program="forked-python", cwd=ROOT, timeout=300)  # fmt: skip
        assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
        trigger.execute("DROP TRIGGER kill")
        trigger.close()
        outcome = execute_run(store, "kill", domain, instance, spec, 0, scripted(server, store))
    assert (outcome.status, outcome.error) == ("done", None)
    (runs, rows), (clean_runs, clean_rows) = results(store), results(clean_store)
    assert runs == clean_runs
    assert [r for r in rows if "step" not in r] == [r for r in clean_rows if "step" not in r]
    steps, clean_steps = [r["step"] for r in rows if "step" in r], [r["step"] for r in clean_rows if "step" in r]
    assert steps == clean_steps, [(a, b) for a, b in zip(steps, clean_steps, strict=False) if a != b]
    return store


def results(store: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The run's rows as a report reads them (without timestamps and cache hits: a resumed run re-asks from the
    cache what it had asked before the kill)."""
    runs, rows = snapshot(store)
    return [{k: v for k, v in r.items() if k != "cache_hits"} for r in runs], [
        {k: v for k, v in r.items() if k != "cache_hits"} for r in rows
    ]


def scripted(server: ScriptedServer, store: Path) -> LLMClient:
    return LLMClient(LLMSettings(model="scripted", base_url=server.base_url, max_retries=0), CallCache(store))
