"""The Ray executor on a real two-node cluster on this machine (`tests/ray_nodes.py`: a head and a second node,
each started with `ray start` as a process group of its own, with its own CPU and resources). Runs land on both
nodes, the report equals the local executor's, and killing the second node mid-study loses no finished run."""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import ray  # the scale extra, installed by scripts/setup.sh: a missing extra fails here instead of skipping

from critiquebench.llm.client import LLMClient, LLMSettings
from critiquebench.scale.ray_executor import RayExecutor
from critiquebench.store.cache import CallCache
from critiquebench.store.db import connect
from critiquebench.store.results import ensure_schema, save_study
from critiquebench.studies.config import build_config
from critiquebench.studies.runner import load_matrix, run_study
from tests.ray_nodes import QUICK_NODE_DEATH, ray_cluster
from tests.scripted_server import ScriptedServer
from tests.test_scale_claims import done_runs, numbers
from tests.test_study_cli import game24_reply

RUNS = 16  # generated game24 instances; `sound-first` with 3 rounds: up to 3 calls each


def _study(store: Path, config: Any) -> list[Any]:
    """The study's runs, its definition saved in `store` first (as `critiquebench run` saves it)."""
    tasks = load_matrix(config)
    db = connect(store)
    try:
        ensure_schema(db)
        save_study(db, config.name, {**config.to_dict(), "planned_runs": len(tasks)})
    finally:
        db.conn.close()
    return tasks


def test_a_two_node_cluster_runs_the_study_and_survives_losing_a_node(tmp_path: Path) -> None:
    flags = {"domains": "game24", "instances": f"gen:{RUNS}:3", "schemes": "sound-first:rounds=3", "concurrency": 4,
             "model": "scripted"}  # fmt: skip
    config = build_config("c", {}, flags)
    cluster_store = tmp_path / "cluster.sqlite"  # one file both nodes reach: they share this machine
    killed: dict[str, int] = {}

    def kill_second_node(ex: RayExecutor, kill: threading.Event) -> None:
        # once both nodes have finished runs, the second node goes (its raylet and workers at once)
        while not kill.is_set() and (len(ex.runs_per_node()) < 2 or done_runs(cluster_store, "c") < 4):
            time.sleep(0.02)
        killed["done before"] = done_runs(cluster_store, "c")
        killed["nodes"] = len(ex.runs_per_node())
        cluster.kill(1)

    def local_run(store: Path) -> bool:
        with ScriptedServer(reply=game24_reply) as clean:
            settings = LLMSettings(model="scripted", base_url=clean.base_url, concurrency=4, timeout=30.0)
            llm = LLMClient(settings, CallCache(store))
            return run_study(store, config, llm, tasks=_study(store, config)).ok

    # the local executor's run (the report to compare with) is done while the cluster starts, mostly waiting
    local_store = tmp_path / "local.sqlite"
    pool = ThreadPoolExecutor(1, thread_name_prefix="local-run")
    local = pool.submit(local_run, local_store)
    # the killed node is taken for dead in ~1.5 s; nothing reads what the nodes would write when stopped gracefully,
    # nor their workers' output
    nodes = ray_cluster(nodes=2, health_checks=QUICK_NODE_DEATH, stop=signal.SIGKILL, log_monitor=False)
    # 0.25 s a call: a run takes a second or so, so the second node has runs under way when it goes (at 0.05 s
    # they had often all come back before the kill took effect, and none was lost to be done elsewhere)
    with ScriptedServer(reply=game24_reply, latency=0.25) as server, nodes as cluster:
        assert sum(bool(n["Alive"]) for n in ray.nodes()) == 2
        settings = LLMSettings(model="scripted", base_url=server.base_url, concurrency=4, timeout=30.0)
        with RayExecutor(cluster_store, settings, concurrency=4, workers=2, address=cluster.address) as ex:
            # both workers up (one per node) before the first run: on a loaded machine the second one started
            # seconds after the first, which had done most of the study by then and left the kill no runs to lose
            assert len(ex.worker_pids()) == 2
            stop = threading.Event()
            killer = threading.Thread(target=kill_second_node, args=(ex, stop), daemon=True)
            killer.start()
            llm = LLMClient(settings, CallCache(cluster_store))
            summary = run_study(cluster_store, config, llm, tasks=_study(cluster_store, config), execute=ex.execute)
            stop.set()
            killer.join(60)
    assert summary.ok, summary.errors[:3]
    assert killed["nodes"] == 2  # runs landed on both nodes before one was lost
    assert 4 <= killed["done before"] < RUNS  # the node died mid-study
    assert done_runs(cluster_store, "c") == RUNS  # its finished runs kept, its unfinished ones done elsewhere
    assert local.result(timeout=120)
    pool.shutdown()
    assert numbers(cluster_store, "c") == numbers(local_store, "c")
