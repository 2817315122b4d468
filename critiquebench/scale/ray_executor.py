"""The Ray executor: a study's runs as Ray tasks on worker processes (one machine or a cluster).

`RayExecutor.execute` has the signature of `studies.execute.execute_run`, so the study runner drives it
unchanged: the runner's `concurrency` threads each hand one run at a time to a worker and wait for it. Hence
progress, Ctrl-C, the summary and the exit codes are the local executor's, and at most `concurrency` runs
(so LLM calls: a run makes one call at a time) are in flight across all workers: the endpoint's limit holds
globally without a cross-process semaphore.

Workers are threaded Ray actors (`RunWorker`), each with its own store connections and LLM client (so its own
cache access), running up to ceil(concurrency / workers) runs at once: one run per actor task, many in flight
per worker. Claims in the store (see `store.claims`) keep two workers, or two drivers, off the same run, and
the in-flight call markers make an identical call once. A worker that dies (killed, crashed, its node lost) is
replaced and its runs are handed to workers again; they continue from their checkpoints, their claims and
call markers taken over at once on the same host (else when their leases expire).

Ray starts a local instance for the study (`workers` CPUs, no dashboard) unless an address is given
(`--ray-address` or `$RAY_ADDRESS`); the store must then be one every node reaches (Postgres). The embedded
model is served once, by the driver, and the workers call it at its loopback URL (so on one machine only).
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from critiquebench.domains.contract import Domain, Instance
from critiquebench.llm.client import LLMSettings
from critiquebench.store.db import Locator, store_name
from critiquebench.store.postgres import is_postgres
from critiquebench.studies.execute import RunOutcome
from critiquebench.studies.runner import StudyHalted

log = logging.getLogger(__name__)

RAY_ADDRESS_ENV = "RAY_ADDRESS"
NAMESPACE = "critiquebench"
MAX_REPLACEMENTS = 8  # a study whose workers keep dying stops handing out runs to them
HEALTH_S = 5.0  # a run's result is waited for this long at a time, then the cluster's liveness is checked
_NODES_TIMEOUT_S = 20.0  # a cluster whose control store does not answer in this time is taken for dead
# Ray's own switch for a single-machine instance: its node address (and so every server Ray starts, which binds
# to it) is the loopback address instead of the machine's network address.
_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


class ExecutorError(RuntimeError):
    """The Ray executor cannot start (Ray missing, cluster unreachable, store not shared)."""


class ClusterLost(StudyHalted):
    """The Ray cluster has no live node left (its raylet died, say): no worker can be started, so the study
    stops with one line; finished runs stay and a resume (with or without Ray) continues."""


def _quiet_driver(quiet: bool) -> bool:
    """Whether Ray's driver printed its cluster's error messages before; from now on it does not if `quiet`.

    Every driver of a cluster has a thread printing the raylet's messages to *stdout*, `log_to_driver=False` or
    not: a killed worker put a long "(raylet) A worker died or was killed ..." line above the study's Table 1 (and
    into a `--format csv` report). The executor says what happened in one line of its own (`_replace`) and keeps
    Ray's; Ray has no public switch for this thread, hence its module flag (the one its debugger sets)."""
    import ray._private.worker as driver

    was = not getattr(driver, "_worker_logs_enabled", True)
    driver._worker_logs_enabled = not quiet
    return was


class _RunWorker:
    """One worker process: executes runs with its own store connections and LLM client."""

    def __init__(self, store: Locator, settings: LLMSettings, domain_options: Mapping[str, Any]) -> None:
        # A worker is started to make calls, so it imports the LLM SDK now (langchain-openai and openai: ~1 s of
        # CPU, seconds of wall on a loaded machine), while the driver starts its study, not in its first run:
        # workers of a cluster, started at once, were then ready seconds apart, the first one doing most of the
        # study meanwhile. (The driver's own client still imports it at its first call only.)
        import langchain_openai  # noqa: F401
        import ray

        import critiquebench.llm.deadline  # noqa: F401 - the SDK's HTTP client
        from critiquebench.studies.clients import worker_client

        self.store = store
        self.node = ray.get_runtime_context().get_node_id()
        self.llm = worker_client(store, settings)
        self.options = {k: dict(v) for k, v in domain_options.items()}
        self._domains: dict[str, Domain] = {}
        self._lock = threading.Lock()

    def pid(self) -> int:
        return os.getpid()

    def run(self, study: str, domain: str, instance: Instance, spec: str, trial: int) -> tuple[RunOutcome, dict, str]:
        """The run's outcome, this worker's cumulative LLM usage, and the id of the Ray node it ran on."""
        from critiquebench.studies.execute import execute_run

        outcome = execute_run(self.store, study, self._domain(domain), instance, spec, trial, self.llm)
        return outcome, self.llm.usage(), self.node

    def _domain(self, name: str) -> Domain:
        from critiquebench.domains import get_domain

        with self._lock:
            if name not in self._domains:
                self._domains[name] = get_domain(name, **self.options.get(name, {}))
            return self._domains[name]


class RayExecutor:
    """Executes runs on Ray workers; use as a context manager around `run_study(..., execute=ex.execute)`."""

    def __init__(
        self,
        store: Locator,
        settings: LLMSettings,
        *,
        concurrency: int,
        workers: int = 2,
        address: str | None = None,
        domain_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.store, self.workers = store, max(1, workers)
        self.address = address or os.environ.get(RAY_ADDRESS_ENV) or None
        if self.address and not is_postgres(store):
            log.warning("store %s is a local file: workers on other machines cannot reach it", store_name(store))
        self.per_worker = max(1, math.ceil(concurrency / self.workers))
        # the runner bounds runs in flight globally; each worker's client only needs room for its share
        self.settings = replace(settings, concurrency=self.per_worker)
        self.domain_options = dict(domain_options or {})
        self._lock = threading.Lock()
        self._actors: list[Any] = []
        self._load: list[int] = []
        self._usage: dict[int, dict[str, Any]] = {}  # latest cumulative usage per actor generation
        self._generation = 0
        self._replaced = 0
        self._started_ray = False
        self._quiet = False  # whether Ray's driver was quiet before this executor (see `_quiet_driver`)
        self._per_node: Counter[str] = Counter()  # runs executed (not skipped) per Ray node id

    def __enter__(self) -> RayExecutor:
        if not self.address:  # the local instance serves this machine only: nothing of it listens outside
            os.environ.setdefault(_LOOPBACK_ENV, "0")  # read when Ray is imported (and by the processes it starts)
        # Ray says at every start that its token authentication is on (it stays on): not a line for our users
        logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)
        try:
            import ray
        except ImportError as exc:
            raise ExecutorError(
                "--executor ray needs the scale extra: pip install '.[scale]' in the critiquebench checkout"
            ) from exc
        if not ray.is_initialized():
            try:
                if self.address:  # Ray's logging left alone: its "Connecting to ..." lines are not our users'
                    ray.init(address=self.address, namespace=NAMESPACE, log_to_driver=False, configure_logging=False)
                else:
                    ray.init(num_cpus=self.workers, include_dashboard=False, namespace=NAMESPACE,
                             log_to_driver=False, configure_logging=False, _node_ip_address="127.0.0.1")  # fmt: skip
                    self._started_ray = True
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorError(f"cannot start or reach Ray ({self.address or 'local'}): {exc}") from exc
            if self._started_ray and ray.util.get_node_ip_address() != "127.0.0.1":
                log.warning("the local Ray instance listens on %s, not only on 127.0.0.1 (Ray was imported before "
                            "the executor started it)", ray.util.get_node_ip_address())  # fmt: skip
        self._quiet = _quiet_driver(True)
        self._remote = ray.remote(_RunWorker)
        for i in range(self.workers):
            self._actors.append(self._spawn(i))
            self._load.append(0)
        return self

    def __exit__(self, *exc: object) -> None:
        import ray

        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        if self._started_ray:
            ray.shutdown()
        _quiet_driver(self._quiet)

    def _spawn(self, index: int) -> Any:
        self._generation += 1
        return self._remote.options(
            name=f"worker-{os.getpid()}-{index}-{self._generation}",
            namespace=NAMESPACE,
            max_concurrency=self.per_worker,
            num_cpus=0 if self.address else 1,
            scheduling_strategy=self._placement(index),
        ).remote(self.store, self.settings, self.domain_options)

    def _placement(self, index: int) -> Any:
        """Where worker `index` goes: on a cluster, the live nodes in turn (Ray's SPREAD, and a soft affinity
        too, put both workers on one node of two); a worker replacing one of a lost node goes to a live one."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        alive = sorted(str(n["NodeID"]) for n in ray.nodes() if n.get("Alive"))
        if len(alive) < 2:
            return "SPREAD"
        return NodeAffinitySchedulingStrategy(alive[index % len(alive)], soft=False)

    def usage(self) -> dict[str, Any]:
        """LLM usage summed over the workers (of a replaced worker: up to its last finished run)."""
        with self._lock:
            usages = list(self._usage.values())
        keys = ("calls", "hits", "failed", "prompt_tokens", "completion_tokens", "retries")
        return {k: sum(int(u.get(k) or 0) for u in usages) for k in keys}

    def runs_per_node(self) -> dict[str, int]:
        """Runs executed so far (not found done or claimed elsewhere), by the id of the Ray node that ran them."""
        with self._lock:
            return dict(self._per_node)

    def worker_pids(self) -> list[int]:
        import ray

        return [int(pid) for pid in ray.get([a.pid.remote() for a in self._actors])]

    def execute(
        self,
        store_path: Locator,
        study: str,
        domain: Domain,
        instance: Instance,
        spec: str,
        trial: int,
        llm: Any = None,
    ) -> RunOutcome:
        """Run one run on the least busy worker; a worker dying under it hands it to its replacement."""
        from ray.exceptions import RayActorError

        while True:
            with self._lock:
                index = min(range(len(self._actors)), key=self._load.__getitem__)
                actor = self._actors[index]
                self._load[index] += 1
            try:
                outcome, usage, node = self._wait(actor.run.remote(study, domain.name, instance, spec, trial))
            except RayActorError:
                self._replace(index, actor)
                continue
            finally:
                with self._lock:
                    self._load[index] -= 1
            with self._lock:
                self._usage[id(actor)] = usage
                if not outcome.skipped:
                    self._per_node[node] += 1
            return outcome

    def _wait(self, ref: Any) -> Any:
        """The result of a run's task. A lost node never answers (its tasks and the workers meant to replace
        them wait for a place to run): between waits, a cluster with no live node ends the study."""
        import ray
        from ray.exceptions import GetTimeoutError

        while True:
            try:
                return ray.get(ref, timeout=HEALTH_S)
            except GetTimeoutError:
                self._check_alive()

    def _check_alive(self) -> None:
        """Raise ClusterLost when no node of the cluster is alive (or its control store does not answer)."""
        import ray

        answer: dict[str, Any] = {}

        def ask() -> None:
            try:
                answer["nodes"] = ray.nodes()
            except Exception as exc:  # noqa: BLE001 - a control store that cannot answer is the answer
                answer["error"] = exc

        asking = threading.Thread(target=ask, name="ray-health", daemon=True)
        asking.start()
        asking.join(_NODES_TIMEOUT_S)
        nodes = answer.get("nodes")
        if nodes is None:
            why = f"its control store does not answer ({answer.get('error') or 'no reply'})"
        elif not any(node.get("Alive") for node in nodes):
            why = "no node is alive (its raylet died?)"
        else:
            return
        where = self.address or "local"
        raise ClusterLost(f"the Ray cluster ({where}) is gone: {why}; finished runs are kept")

    def _replace(self, index: int, dead: Any) -> None:
        self._check_alive()  # a worker whose node died cannot be replaced on it
        with self._lock:
            if self._actors[index] is not dead:
                return  # another thread replaced it already
            if self._replaced >= MAX_REPLACEMENTS:
                raise ExecutorError(f"workers died {self._replaced} times; giving up on this study")
            self._replaced += 1
            log.warning("worker %d died; starting a new one (its runs continue from their checkpoints)", index)
            self._actors[index] = self._spawn(index)
