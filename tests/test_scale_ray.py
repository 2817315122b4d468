"""The Ray executor on a real local Ray instance and a real Postgres store: a worker SIGKILLed mid-study."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import ray  # the scale extra, installed by scripts/setup.sh: a missing extra fails here instead of skipping

from tests.scripted_server import ScriptedServer
from tests.test_scale_claims import asked, done_runs, numbers
from tests.test_study_cli import CLI, ROOT, game24_reply, invoke, run_args

SCHEMES = "standard,sound-first:rounds=3"


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """One small local Ray instance for the module; studies join it with --ray-address."""
    ray.init(num_cpus=2, include_dashboard=False, namespace="critiquebench", log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def worker_pids() -> list[int]:
    names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith("worker-")]
    pids = []
    for name in names:
        try:
            pids.append(ray.get(ray.get_actor(name, namespace="critiquebench").pid.remote(), timeout=10))
        except Exception:  # noqa: BLE001 - a worker that just went away
            continue
    return pids


def test_a_ray_study_survives_a_killed_worker(ray_address: str, pg_store: str, tmp_path: Any) -> None:
    # 0.2 s a call: the 36 runs left when the worker dies take seconds, so the kill lands mid-study even when the
    # machine is loaded (at 0.05 s the study sometimes finished before the kill and no worker was replaced)
    with ScriptedServer(reply=game24_reply, latency=0.2) as server:
        args = [*run_args("r", pg_store, server, "901-920", SCHEMES, concurrency=4),  # type: ignore[arg-type]
                "--executor", "ray", "--workers", "2", "--ray-address", ray_address]  # fmt: skip
        proc = subprocess.Popen([str(CLI), *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # the same study run whole without Ray (the report and calls to compare with), while the command starts
        local = tmp_path / "local.sqlite"
        pool = ThreadPoolExecutor(1, thread_name_prefix="clean-run")
        clean = pool.submit(clean_run, local)
        deadline = time.monotonic() + 180
        pids: list[int] = []  # the workers' pids are asked for before the runs, not when the kill is due
        while len(pids) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # each look asks the control store and the workers: not in a tight loop
            pids = worker_pids()
        assert len(pids) == 2 and os.getpid() not in pids, pids
        while done_runs(pg_store, "r") < 4 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(pids[0], signal.SIGKILL)
        killed_at = done_runs(pg_store, "r")
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-3000:]
        assert killed_at < 40, "the study ended before its worker was killed"
        assert "Table 1" in out and "(raylet)" not in out, out[:3000]  # Ray's messages stay off the report
        # the user sees our one line about the worker and the summary: no traceback, nothing of Ray's
        ours = ("WARNING critiquebench.scale.ray_executor: worker ", "study r: 40 runs: ")
        assert all(line.startswith(ours) for line in err.splitlines() if line.strip()), err
        assert "died; starting a new one" in err, err
        assert done_runs(pg_store, "r") == 40
        ray_calls = asked(server)
    clean_calls = clean.result(timeout=240)
    pool.shutdown()
    assert numbers(pg_store, "r") == numbers(local, "r")
    # no call paid twice beyond the (at most 4) in flight when the worker died
    assert sorted(set(ray_calls)) == sorted(clean_calls)
    assert len(clean_calls) <= len(ray_calls) <= len(clean_calls) + 4


def clean_run(local: Path) -> list[str]:
    """The calls the study asks run whole by the local executor, its results in `local`."""
    with ScriptedServer(reply=game24_reply) as clean:
        invoke(*run_args("r", local, clean, "901-920", SCHEMES, concurrency=4))
        return asked(clean)
