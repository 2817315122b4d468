"""`--cpu-report[=N]`: which tests cost the suite's CPU. Each test's CPU seconds (user + system, from its setup to
its teardown, its own process's and those of the child processes it waited for) and wall seconds are summed per
test file; the N costliest files and tests are printed at the end (25 unless N is given), with the totals.
`--cpu-report-json=PATH` also writes every test's figures to PATH. Works under pytest-xdist: each worker measures
its tests and the figures travel to the controller with the test's report.

What it cannot see: processes nobody waits for (daemons such as a Ray node's raylet, which `ray start` detaches),
and CPU used by another test's leftover threads while this test runs. A module- or session-scoped fixture's cost
lands on the test that first made it or last tore it down, hence on its file.
"""

from __future__ import annotations

import json
import resource
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

KEY = "cpu_report"  # the name of the report's user property carrying (cpu_self, cpu_children, wall)
_START = pytest.StashKey[tuple[float, float, float]]()
_SEEN: dict[str, tuple[float, float, float]] = {}  # test id -> (cpu_self, cpu_children, wall), as reports arrive


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cpu-report")
    group.addoption("--cpu-report", nargs="?", const=25, type=int, default=None, metavar="N",
                    help="print the N test files and tests using the most CPU (user+sys, children in)")  # fmt: skip
    group.addoption("--cpu-report-json", default=None, metavar="PATH", help="write each test's CPU and wall to PATH")


def _cpu() -> tuple[float, float]:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _enabled(config: pytest.Config) -> bool:
    return config.getoption("--cpu-report") is not None or bool(config.getoption("--cpu-report-json"))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    if _enabled(item.config):
        item.stash[_START] = (*_cpu(), time.perf_counter())
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    start = item.stash.get(_START, None)
    if call.when != "teardown" or start is None:
        return
    report = outcome.get_result()
    own, kids = _cpu()
    figures = (own - start[0], kids - start[1], time.perf_counter() - start[2])
    report.user_properties = [*report.user_properties, (KEY, figures)]  # a copy: the item's list stays as it was


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == KEY:
            _SEEN.setdefault(report.nodeid, tuple(value))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if not _SEEN or hasattr(config, "workerinput"):
        return
    path = config.getoption("--cpu-report-json")
    if path:
        Path(path).write_text(json.dumps(_SEEN, indent=0) + "\n", encoding="utf-8")
    top = config.getoption("--cpu-report")
    if top is None:
        return
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for nodeid, (own, kids, wall) in _SEEN.items():
        row = files[nodeid.split("::")[0]]
        row[0] += own
        row[1] += kids
        row[2] += wall
        row[3] += 1
    write = terminalreporter.write_line
    total = sum(own + kids for own, kids, _ in _SEEN.values())
    terminalreporter.section(f"CPU report: {len(_SEEN)} tests, {total:.0f} s CPU (user+sys, waited children in)")
    write(f"{'cpu s':>8} {'self':>8} {'child':>8} {'wall s':>8} {'tests':>5}  file")
    ranked = sorted(files.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
    for name, (own, kids, wall, count) in ranked[:top]:
        write(f"{own + kids:8.1f} {own:8.1f} {kids:8.1f} {wall:8.1f} {int(count):5d}  {name}")
    write("")
    write(f"{'cpu s':>8} {'self':>8} {'child':>8} {'wall s':>8}  test")
    for nodeid, (own, kids, wall) in sorted(_SEEN.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        write(f"{own + kids:8.1f} {own:8.1f} {kids:8.1f} {wall:8.1f}  {nodeid}")
