"""A Ray cluster of several nodes on this machine, for tests and benchmarks: each node started with `ray start`
as a process group of its own (a head, then nodes joining it), each with its own CPUs and a resource naming it.

    with ray_cluster(nodes=2) as cluster:   # this process joins it as the driver
        RayExecutor(store, settings, concurrency=4, workers=2, address=cluster.address)
        cluster.kill(1)                      # the second node goes at once: raylet, workers and all

Stopping signals those process groups alone, never other Ray instances of the machine (`ray stop` would).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

RAY = [sys.executable, "-m", "ray.scripts.scripts"]  # the `ray` command of this interpreter's Ray
START_S = 120.0
# How often Ray's control store checks each node's raylet: every 3 s by default, a node dead after 5 failed checks,
# so a killed node was taken for dead 15-25 s later while its runs waited. A killed raylet refuses each check at
# once: checked every second it is dead in ~5 s. A live one still has Ray's timeout to answer each check.
FAST_HEALTH_CHECKS = {"RAY_health_check_period_ms": "1000"}
# Faster still, for tests that wait on a node's death: checked twice a second, dead after 3 failed checks in a row
# (Ray's default: 5), so a killed raylet is taken for dead in ~1.5 s. A live raylet keeps Ray's own timeout for
# each answer (RAY_health_check_timeout_ms, 10 s), so a loaded machine does not lose a live node.
QUICK_NODE_DEATH = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "3"}


@dataclass
class Cluster:
    address: str
    nodes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def kill(self, index: int, sig: int = signal.SIGKILL) -> None:
        """Stop node `index` (0: the head) by signalling its process group."""
        _kill(self.nodes[index], sig)


@contextmanager
def ray_cluster(
    nodes: int = 2,
    cpus: int = 1,
    *,
    health_checks: Mapping[str, str] = FAST_HEALTH_CHECKS,
    stop: int = signal.SIGTERM,
    log_monitor: bool = True,
) -> Iterator[Cluster]:
    """A cluster of `nodes` nodes of `cpus` CPUs each; this process is connected to it as the driver.

    `health_checks`: Ray's settings for its nodes' health checks (how soon a lost node is taken for dead). `stop`:
    the signal that ends each node's process group at the end; SIGKILL, when nothing reads what the nodes would
    write on a graceful stop, ends them at once (a SIGTERMed head drains for up to ~35 s), and then waits until
    no process of theirs is left. `log_monitor=False`: no node starts the process that sends its workers' output
    to drivers (~1.3 s of CPU a node; a driver connected with `log_to_driver=False` never reads it)."""
    import ray

    # Ray's single-machine switch (loopback only) refuses a second node, so the nodes take the machine's address,
    # and so must the driver: its Ray read the switch when it was imported (perhaps with it off).
    switch = ray._private.ray_constants.ENABLE_RAY_CLUSTER
    ray._private.ray_constants.ENABLE_RAY_CLUSTER = True
    address = f"{ray._private.services.get_node_ip_address()}:{_free_port()}"
    cluster = Cluster(address)
    temp = tempfile.mkdtemp(prefix="cb-ray-", dir="/tmp")  # Ray's socket paths must stay short
    flags = () if log_monitor else ("--include-log-monitor=false",)
    try:
        cluster.nodes.append(_start(cpus, *flags, "--head", f"--port={address.rsplit(':', 1)[1]}",
                                    "--include-dashboard=false", f"--temp-dir={temp}", env=health_checks))  # fmt: skip
        deadline = time.monotonic() + START_S
        while not _listening(address):  # the head's control store answers
            assert time.monotonic() < deadline and cluster.nodes[0].poll() is None, "the head node did not start"
            time.sleep(0.3)
        # the other nodes join the control store while the driver connects: the two waits overlap
        for _ in range(1, nodes):
            cluster.nodes.append(_start(cpus, *flags, f"--address={address}", env=health_checks))
        ray.init(address=address, namespace="critiquebench", log_to_driver=False)
        while sum(bool(n["Alive"]) for n in ray.nodes()) < nodes:
            assert time.monotonic() < deadline and cluster.nodes[0].poll() is None, "the cluster did not start"
            for i, node in enumerate(cluster.nodes[1:], 1):
                if node.poll() is not None:  # on a loaded machine a joining raylet sometimes quits: once more
                    cluster.nodes[i] = _start(cpus, *flags, f"--address={address}", env=health_checks)
            time.sleep(0.2)
        yield cluster
    finally:
        ray.shutdown()
        # Ray's workers run in sessions of their own: found first, they go with their nodes
        family = _descendants({node.pid for node in cluster.nodes}) if stop == signal.SIGKILL else set()
        for node in reversed(cluster.nodes):
            _kill(node, stop)
        _stop_all(family)
        ray._private.ray_constants.ENABLE_RAY_CLUSTER = switch
        shutil.rmtree(temp, ignore_errors=True)


def _start(cpus: int, *args: str, env: Mapping[str, str] = FAST_HEALTH_CHECKS) -> subprocess.Popen[bytes]:
    # token auth is left off, as for a cluster that lives a minute; RAY_ADDRESS would point `ray start` elsewhere
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1", "RAY_AUTH_MODE": "disabled", **env}
    env.pop("RAY_ADDRESS", None)
    name = f'--resources={{"node-{time.monotonic_ns()}": 1}}'  # a resource of its own, naming the node
    # every port a node would take at a fixed default (its dashboard agent's: two nodes, or another Ray instance of
    # the machine, would clash and the agent's death takes the raylet with it) is a free one of its own
    ports = [f"--dashboard-agent-listen-port={_free_port()}", f"--metrics-export-port={_free_port()}"]
    small = "--object-store-memory=100000000"  # runs pass small objects; the default takes 30% of the memory
    command = [*RAY, "start", *args, *ports, small, f"--num-cpus={cpus}", name, "--disable-usage-stats", "--block"]
    quiet = subprocess.DEVNULL
    return subprocess.Popen(command, env=env, start_new_session=True, stdout=quiet, stderr=quiet)


def _kill(node: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(node.pid, sig)
        node.wait(40)  # SIGTERM: the node drains, then stops its processes
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(node.pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    node.wait(10)


def _processes() -> dict[int, tuple[str, int]]:
    """pid -> (state, parent pid) of every process (from /proc/PID/stat)."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            found[int(entry.name)] = (fields[0], int(fields[1]))
    return found


def _descendants(roots: set[int]) -> set[int]:
    """`roots` and every process below them."""
    children: dict[int, list[int]] = {}
    for pid, (_, parent) in _processes().items():
        children.setdefault(parent, []).append(pid)
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def _stop_all(pids: set[int], timeout: float = 20.0) -> None:
    """SIGKILL what is left of `pids` and wait until none of them runs (a zombie waiting for its new parent to reap
    it runs no more)."""
    deadline = time.monotonic() + timeout
    while pids:
        alive = _processes()
        pids = {pid for pid in pids if alive.get(pid, ("Z", 0))[0] != "Z"}
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not pids or time.monotonic() > deadline:
            return
        time.sleep(0.05)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return True
    except OSError:
        return False
