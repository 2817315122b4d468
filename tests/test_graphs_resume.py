"""Kill a real study process with SIGKILL mid-call, resume it, and compare with an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from critiquebench.domains import get_domain, load_instances
from critiquebench.store.cache import CallCache
from critiquebench.store.db import connect

from critiquebench.llm.client import LLMClient, LLMSettings
from critiquebench.studies.execute import execute_run
from tests.conftest import DATASETS
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
        self.proc: subprocess.Popen[str] | None = None
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


def drive(killer: Killer, server: ScriptedServer, store: Path) -> int:
    script = store.parent / "driver.py"
    script.write_text(DRIVER)
    killer.proc = subprocess.Popen(
        [sys.executable, str(script), str(store), server.base_url, str(DATASETS), SELECTION],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, err = killer.proc.communicate(timeout=300)
    assert killer.proc.returncode in (0, -signal.SIGKILL), err[-2000:]
    return killer.proc.returncode


def snapshot(store: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    db = connect(store)
    runs = [
        {k: v for k, v in r.items() if k != "updated_at"} for r in db.query("SELECT * FROM runs ORDER BY 1")
    ]
    rows = list(db.query("SELECT * FROM attempts ORDER BY thread_id, round"))
    return runs, rows


def study(tmp_path: Path, name: str, kill_at: tuple[int, ...]) -> tuple[Killer, ScriptedServer, Path]:
    """The 20-instance llm-llm study in a fresh store; with `kill_at`, in a subprocess restarted after each
    kill, else in this process."""
    domain = get_domain("game24")
    instances = load_instances(domain, SELECTION, DATASETS)
    killer = Killer(ScriptedModel([(domain, i) for i in instances], plan=[0, 1, "c"]), kill_at)
    store = tmp_path / name / "store.sqlite"
    store.parent.mkdir()
    with ScriptedServer(killer) as server:
        if not kill_at:
            llm = LLMClient(
                LLMSettings(model="scripted", base_url=server.base_url, max_retries=0), CallCache(store)
            )
            for instance in instances:
                execute_run(store, "kill", domain, instance, "llm-llm", 0, llm)
            return killer, server, store
        codes = [drive(killer, server, store)]
        while codes[-1] != 0:
            assert len(codes) <= len(kill_at), "the driver was killed more often than planned"
            codes.append(drive(killer, server, store))
    return killer, server, store


def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    _, clean, clean_store = study(tmp_path, "clean", ())
    # asked call 17 is a generation; after its re-ask, asked call 63 is a critique (the 62nd distinct call)
    killer, killed, store = study(tmp_path, "killed", (17, 63))
    assert killer.killed == 2
    assert snapshot(store) == snapshot(clean_store)
    runs, _ = snapshot(store)
    assert len(runs) == 20 and {r["status"] for r in runs} == {"done"} and all(r["correct"] for r in runs)
    # no answered call was asked twice: everything answered before a kill came from the cache afterwards
    asked = [json.dumps(messages, sort_keys=True) for messages, _ in killed.calls]
    assert len(asked) == len(set(asked)) == clean.answered == 20 * 6
    assert killed.requests == killed.answered + 2  # only the two calls in flight at a kill were re-asked
