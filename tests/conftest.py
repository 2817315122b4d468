"""Shared pytest fixtures (a scripted OpenAI-compatible server on loopback and LLM clients wired to it, a local
Postgres), and the heavy resources' groups that let the suite run in parallel (pytest-xdist, `--dist loadgroup`).

A test that needs a heavy resource (a Ray instance, Chromium, a Jupyter kernel, a Postgres server, pip building
wheels or venvs, the embedded model, the fixed port an old store's recorded calls name) is found here, not listed
by hand: by the fixtures it uses, by what its module imports, by words in its own source, or by the resource's
marker set on it. It gets that marker (`-m "not ray"` deselects it) and, under `--dist loadgroup`, the xdist group
of that name: a group's tests run one after another on one worker, so two Ray instances, two browsers, two
servers on one fixed port never run at once, and a module-scoped browser, kernel or wheel is made once. A test
needing two resources runs in the first one's group (xdist would otherwise make a third group of the pair).
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from critiquebench.llm.client import LLMClient, LLMSettings
from critiquebench.store.cache import CallCache
from tests.cpu_report import (  # noqa: F401  (pytest finds hooks by name in this module)
    pytest_addoption,
    pytest_runtest_logreport,
    pytest_runtest_makereport,
    pytest_runtest_setup,
    pytest_terminal_summary,
)
from tests.scripted_server import ScriptedServer

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    """A running scripted server answering "OK"; set `.reply`, `.latency`, faults etc. in the test."""
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def call_cache(tmp_path: Path) -> CallCache:
    """An empty LLM call cache in a fresh store file."""
    return CallCache(tmp_path / "store.sqlite")


@pytest.fixture
def scripted_settings(scripted_server: ScriptedServer) -> LLMSettings:
    """Settings for the scripted server: fast retries, a short timeout."""
    return LLMSettings(
        model="scripted", base_url=scripted_server.base_url, timeout=2.0, backoff_s=0.01, max_backoff_s=0.05
    )


@pytest.fixture
def make_llm(scripted_settings: LLMSettings, call_cache: CallCache) -> Callable[..., LLMClient]:
    """`make_llm(**overrides)` -> an LLMClient on the scripted server and the test's cache."""

    def make(cache: CallCache | None = None, **overrides: Any) -> LLMClient:
        return LLMClient(replace(scripted_settings, **overrides), cache or call_cache)

    return make


@pytest.fixture
def scripted_llm(make_llm: Callable[..., LLMClient]) -> LLMClient:
    """An LLMClient on the scripted server (see `scripted_server`) with a fresh cache."""
    return make_llm()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A real local Postgres server for the session; scripts/setup.sh installs Debian's postgresql, so a server
    that cannot start here fails the tests that need it (with the reason) instead of skipping them."""
    from tests.pg_server import local_postgres, why_unavailable

    reason = why_unavailable()
    if reason:
        pytest.fail(reason)
    with local_postgres() as url:
        yield url


@pytest.fixture
def pg_store(postgres_server: str) -> str:
    """The URL of a fresh, empty Postgres store database."""
    from tests.pg_server import fresh_database

    return fresh_database(postgres_server)


@pytest.fixture(scope="session")
def forked_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment in which `critiquebench` (and `forked-python -c`) is a process forked from one server per
    worker that imported the CLI, every module of the project and the libraries a study uses (tests/forked_cli.py;
    ~8-10 s of CPU once, where a fresh command pays 1-5 s importing): for tests that run commands as a user does
    but are not about a fresh interpreter. Extend a copy of it with the command's own variables;
    `tests.forked_cli.run` runs one. `fork_server` starts commands from the same server."""
    from tests.forked_cli import forked_cli

    with forked_cli(tmp_path_factory.mktemp("forked"), dict(os.environ)) as env:
        yield env


@pytest.fixture(scope="session")
def fork_server(forked_env: dict[str, str]) -> Any:
    """`forked_env`'s server seen as processes (tests/forked_process.py): `fork_server.popen(ARGS)` starts a
    `critiquebench` process whose pid is the command's own, for the tests about the process itself (signals,
    kills, claims, a terminal); one server a worker serves both fixtures."""
    from tests.forked_process import ForkServer

    return ForkServer(forked_env)


@pytest.fixture(scope="session")
def forked_light_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """`forked_env` for commands that read, reject input or dry-run (no LLM client): a server that imported the
    CLI and its reading commands' modules only (tests/forked_cli.py's MEDIUM, ~1 s of CPU once). Such a command
    costs less forked from it (~0.25 s of CPU) than from `forked_env`'s larger heap (~0.6 s: pages it touches
    are copied) or from a fresh interpreter (~0.6-1.5 s)."""
    from tests.forked_cli import MEDIUM, forked_cli

    with forked_cli(tmp_path_factory.mktemp("forked-light"), dict(os.environ), preload=MEDIUM) as env:
        yield env


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs site built once (`mkdocs build --strict`) for the tests that check or open it: the strict build's
    test and the offline test share one worker (xdist group `browser`), hence this build (~20 s of CPU)."""
    import subprocess
    import sys

    site = tmp_path_factory.mktemp("docs") / "site"
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
                           cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})  # fmt: skip
    assert built.returncode == 0, built.stderr[-4000:]
    return site


# the xdist group of the tests that read `gpt4_colouring_loops`: one worker imports the files for them all
GPT4_COLOURING = "gpt4_colouring"


@pytest.fixture(scope="session")
def gpt4_colouring_loops(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """GPT-4's six recorded colouring loop files of the self-verification study (gpt-and-i@ada66fc6, the
    datasets' `graph_coloring/gpt-4_chat`) imported and replayed once (~10 s of CPU), as `critiquebench import
    self-verification FOLDER --study gpt4 --replay` in this process: studies gpt4-standard, -15top1, -llm,
    -passfail, -first and -full. Yields (the store, the command's result); a test copies the store
    (`copied_store`) before it opens it. Its tests share the xdist group `GPT4_COLOURING`."""
    from tests.test_study_cli import invoke

    loops = DATASETS / "self_verification/recorded/gpt-and-i@ada66fc6/llm-csp/responses/graph_coloring/gpt-4_chat"
    store = tmp_path_factory.mktemp("gpt4-colouring") / "s.sqlite"
    result = invoke("import", "self-verification", str(loops), "--study", "gpt4", "--store", str(store),
                    "--dataset", str(DATASETS), "--replay", "--no-progress")  # fmt: skip
    return store, result


# the xdist group of the tests that read `published_report`: one worker computes it for them all
PUBLISHED = "published_report"


@pytest.fixture(scope="session")
def published_report() -> str:
    """The output of `critiquebench report --published --dataset DATASETS --format json` (in this process),
    computed once (~3 s of CPU: every recorded run the papers' numbers are checked against) for the tests that
    read it, each parsing its own rows from it; they share the xdist group `PUBLISHED`."""
    from tests.test_study_cli import invoke

    return str(invoke("report", "--published", "--dataset", str(DATASETS), "--format", "json").stdout)


def copied_store(store: Path, folder: Path) -> Path:
    """A copy of the SQLite store `store` (its -wal file too, if one is left) in `folder`, for a test to open."""
    import shutil

    for suffix in ("", "-wal"):
        if Path(f"{store}{suffix}").exists():
            shutil.copy(f"{store}{suffix}", folder / f"{store.name}{suffix}")
    return folder / store.name


@dataclass(frozen=True)
class Heavy:
    """How to tell that a test needs a heavy resource; any one clue is enough."""

    why: str  # the marker's help line
    fixtures: frozenset[str] = frozenset()  # it uses one of these fixtures
    imports: tuple[str, ...] = ()  # its module imports one of these (a package, or a module of tests/)
    words: str | None = None  # a regex its own source (the test function's) matches


# Order matters: a test needing two resources runs in the first one's group. Exclusive resources come first:
# two local Ray instances on one machine disturb each other, and one fixed port serves one server at a time.
# fmt: off
HEAVY: dict[str, Heavy] = {
    "ray": Heavy("starts or joins a local Ray instance", frozenset({"ray_address"}), ("ray",),
                 r"""["']ray["']|\bray (start|stop|status)\b|--ray-address"""),
    "fixed_port": Heavy("serves a scripted endpoint on a fixed port (tests/old_layout_store.py's PORT)",
                        imports=("tests.old_layout_store",)),
    "embedded": Heavy("runs the real embedded model (slow)", words=r"\bopen_llm\(|llama_cpp|--embedded"),
    "browser": Heavy("drives Chromium through Playwright", frozenset({"browser", "page"}), ("playwright",)),
    "kernel": Heavy("runs code in a Jupyter kernel", frozenset({"kernel"}), ("jupyter_client", "ipykernel")),
    "venv": Heavy("builds a wheel, a venv or pip-installs a package", frozenset({"wheel", "fresh_venv", "plugin"}),
                  words=r"""["']-m["'],\s*["']venv["']|["']pip["'],\s*["'](install|wheel)["']"""),
    "postgres": Heavy("uses a local Postgres server (one per worker)", frozenset({"postgres_server", "pg_store"}),
                      words=r"\blocal_postgres\("),
}
# fmt: on


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker per CPU this process may use (xdist's own counts physical cores, 1 on many 2-vCPU
    machines), and at least 2: much of the suite waits on the processes and servers it starts."""
    return max(2, len(os.sched_getaffinity(0)))


def pytest_configure(config: pytest.Config) -> None:
    for name, heavy in HEAVY.items():
        config.addinivalue_line("markers", f"{name}: {heavy.why}")


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    """Keep pytest's assert-rewritten bytecode of the test modules (tests/__pycache__/*-pytest-*.pyc) even where
    PYTHONDONTWRITEBYTECODE is set: pytest then rewrites every test module again in every worker of every run
    (~10 s of CPU a worker, half its collection). Only while collecting, so commands the tests start still see
    the user's setting; `scripts/setup.sh` collects once so that a fresh clone's first run has them too."""
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = before


def _imports(module: ModuleType | None) -> set[str]:
    """Names of the modules `module` imported, whole or in part (`import ray`, `from playwright import sync_api`,
    `from tests import old_layout_store as old`, `from ray.util import x`)."""
    found = set()
    for value in vars(module).values() if module else ():
        name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
        if isinstance(name, str):
            found.add(name)
    return found


def _needs(item: pytest.Item, module_imports: set[str]) -> str | None:
    """The first heavy resource `item` needs, if any."""
    fixtures = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    fixtures -= set(callspec.params) if callspec else set()  # a parameter named `page` is no browser page
    function = getattr(item, "function", None)
    try:
        source = inspect.getsource(function) if function else ""
    except (OSError, TypeError):
        source = ""
    for name, heavy in HEAVY.items():
        if item.get_closest_marker(name) or fixtures & heavy.fixtures:
            return name
        if any(m == p or m.startswith(p + ".") for p in heavy.imports for m in module_imports):
            return name
        if heavy.words and re.search(heavy.words, source):
            return name
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark and group every test needing a heavy resource, and put the groups first: xdist hands out the
    biggest groups first and single tests in this order, so long groups start early rather than last."""
    imports: dict[str, set[str]] = {}
    grouped: dict[int, int] = {}
    for item in items:
        module = getattr(item, "module", None)
        key = getattr(module, "__name__", "")
        if key not in imports:
            imports[key] = _imports(module)
        name = _needs(item, imports[key])
        if name:
            item.add_marker(getattr(pytest.mark, name))
            item.add_marker(pytest.mark.xdist_group(name))
            grouped[id(item)] = list(HEAVY).index(name)
        _name_group(config, item)
    items.sort(key=lambda item: grouped.get(id(item), len(HEAVY)))


def _name_group(config: pytest.Config, item: pytest.Item) -> None:
    """On an xdist worker under `--dist loadgroup`: end the test's id with `@GROUP`, which is how the controller
    learns its group. xdist (3.8) writes that suffix to `item._nodeid`, which pytest >= 9.2 no longer reads (the id
    is `item._id`), so every group was silently ignored: heavy tests ran on both workers at once, each building its
    own browser, wheel and venvs. Where pytest still reads `_nodeid`, xdist's own suffix is left to work."""
    marks = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    if not marks or not config.getoption("loadgroup", False) or not hasattr(item, "_id"):
        return
    from _pytest.nodeid import NodeId

    item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(sorted(marks))}")
