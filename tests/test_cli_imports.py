"""Commands import only what they use: `critiquebench --help` (and a command's --help) loads no store, graph,
LLM client or plotting module, and `import critiquebench` loads nothing but the package. (The CPU time this
saves is measured by benchmarks/bench_setup.py, not here.)"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("sqlite_utils", "langgraph", "langchain_core", "langchain_openai", "openai", "matplotlib", "numpy",
         "pandas", "critiquebench.store.db", "critiquebench.graphs", "critiquebench.domains",
         "critiquebench.reports.metrics", "critiquebench.studies.session", "critiquebench.llm.client")  # fmt: skip

PROBE = """
import json, sys
sys.argv = ["critiquebench", *{args!r}]
from critiquebench.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(name for name in {heavy!r} if name in sys.modules)))
"""


RUNNER = """
import json, os, sys, traceback
from critiquebench.cli import app, main
scenarios, folder = json.loads(sys.argv[1]), sys.argv[2]
for n, (how, args, heavy) in enumerate(scenarios):
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        continue
    for fd, name in ((1, "out"), (2, "err")):
        os.dup2(os.open(os.path.join(folder, f"{n}.{name}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    code = 0
    try:
        sys.argv = ["critiquebench", *args]
        if how == "main":
            main()
        else:
            app(args, prog_name="critiquebench")
    except SystemExit as exc:  # as the interpreter ends on it
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    if heavy is not None:
        print(json.dumps(sorted(name for name in heavy if name in sys.modules)))
    sys.stdout.flush()
    sys.stderr.flush()
    with open(os.path.join(folder, f"{n}.rc"), "w") as rc:
        rc.write(str(code))
    os._exit(code)
"""


def fresh_runs(scenarios: list[tuple[str, list[str], tuple[str, ...] | None]], folder: Path,
               env: dict[str, str] | None = None) -> list[tuple[int, str, str]]:  # fmt: skip
    """(exit status, stdout, stderr) of each scenario (`main` or the whole `app`, its arguments, and the modules
    whose loading its last stdout line reports), each run in a process forked from one fresh interpreter that
    imported nothing but `critiquebench.cli`, which every command's process imports first: the modules a scenario
    finds loaded are those a fresh `critiquebench` process would have, at ~0.05 s of CPU instead of ~0.5 s."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(scenarios), str(folder)], capture_output=True,
                          text=True, timeout=300, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [(int((folder / f"{n}.rc").read_text()), (folder / f"{n}.out").read_text(),
             (folder / f"{n}.err").read_text()) for n in range(len(scenarios))]  # fmt: skip


HELPS = [["--help"], ["run", "--help"], ["export", "--help"], ["report", "--help"], ["verify-study", "--help"],
         ["cache", "--help"]]  # fmt: skip
VERSIONS = ["--version", "-V"]
PAGES = [["run", "--help"], ["-v", "cache", "--help"], ["cache", "stats", "--help"], ["--help", "run"], ["rn", "x"],
         ["run"], ["--verbose", "studies"]]  # fmt: skip
PAGE_ENV = {"COLUMNS": "80", "TERM": "dumb", "PATH": "/usr/bin:/bin"}


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str]]:
    """Every `--help` and `--version` probe below, run once (`fresh_runs`), by its arguments."""
    scenarios = [("main", args, HEAVY) for args in [*HELPS, *([flag] for flag in VERSIONS)]]
    results = fresh_runs(scenarios, tmp_path_factory.mktemp("probes"))
    return {" ".join(args): result for (_, args, _), result in zip(scenarios, results, strict=True)}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[tuple[int, str, str], tuple[int, str, str]]]:
    """The `main` and the whole-app outcome of each command line of the two page tests below, by its arguments."""
    lines = [["--help"], *PAGES]
    scenarios = [(how, args, None) for args in lines for how in ("main", "app")]
    results = fresh_runs(scenarios, tmp_path_factory.mktemp("pages"), env=PAGE_ENV)
    return {" ".join(args): (results[2 * n], results[2 * n + 1]) for n, args in enumerate(lines)}


@pytest.mark.parametrize("args", HELPS)
def test_help_loads_none_of_the_heavy_modules(args: list[str], probed: dict[str, tuple[int, str, str]]) -> None:
    returncode, stdout, stderr = probed[" ".join(args)]
    assert returncode == 0, stderr
    assert "Usage" in stdout
    assert json.loads(stdout.splitlines()[-1]) == []


def test_importing_the_package_loads_only_the_package() -> None:
    code = "import sys, critiquebench; print(sorted(m for m in sys.modules if m.startswith('critiquebench')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "['critiquebench']"


@pytest.mark.parametrize("flag", VERSIONS)
def test_version_is_the_installed_distribution_s_and_loads_nothing_heavy(
    flag: str, probed: dict[str, tuple[int, str, str]]
) -> None:
    returncode, stdout, stderr = probed[flag]
    assert returncode == 0, stderr
    printed, loaded = stdout.splitlines()
    assert printed == f"critiquebench {importlib.metadata.version('critiquebench')}"
    assert json.loads(loaded) == []


def test_the_package_s_version_attribute_is_the_distribution_s() -> None:
    import critiquebench

    assert critiquebench.__version__ == importlib.metadata.version("critiquebench")


def test_a_study_with_no_planning_domain_loads_no_planning_module(tmp_path: Path) -> None:
    """A Game of 24 study run and then run again with nothing to do never loads the planning package or its PDDL
    parser, nor, with nothing to do, yaml (a third of such a command's start-up; benchmarks/bench_setup.py) or
    Pydantic: Typer's adapters import it, and `critiquebench run` with plain values (the bench_setup case, and
    `--max-tokens`/`--dataset` of bench_reuse) needs none of it (critiquebench/cli/coercion.py). One study for
    both facts: each costs two fresh interpreters running a study."""
    from tests.scripted_server import ScriptedServer

    planning = ("critiquebench.domains.planning", "pddl", "lark")
    with ScriptedServer(reply="(4 + 4) * (10 - 7) = 24\n[ANSWER END]") as server:
        args = ["run", "idle", "--domains", "game24", "--instances", "gen:2:1", "--schemes",
                "standard,sound-first:rounds=2", "--model", "scripted", "--base-url", server.base_url, "--store",
                str(tmp_path / "s.sqlite"), "--no-progress", "--max-tokens", "64", "--dataset", str(tmp_path),
                "--concurrency", "4"]  # fmt: skip
        # the study's runs (their LLM client loads yaml through langchain), then nothing to do
        for heavy in (planning, (*planning, "yaml", "pydantic")):
            done = subprocess.run([sys.executable, "-c", PROBE.format(args=args, heavy=heavy)],
                                  capture_output=True, text=True, timeout=300)  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert "Table 1" in done.stdout
            assert json.loads(done.stdout.splitlines()[-1]) == [], heavy
        assert server.requests > 0


def test_the_list_of_commands_is_the_page_typer_builds_from_every_command(
    pages: dict[str, tuple[tuple[int, str, str], tuple[int, str, str]]],
) -> None:
    """`critiquebench --help` gives each command a stand-in callback before Typer builds the page (its options
    are not built: `cli._commands_listed_only`); the page must be the one Typer builds from the real commands."""
    quick, whole = pages["--help"]
    assert quick[0] == whole[0] == 0, (quick[2], whole[2])
    assert "run" in quick[1] and quick[1] == whole[1]


@pytest.mark.parametrize("args", PAGES)
def test_a_command_s_pages_and_errors_are_the_ones_typer_builds_from_every_command(
    args: list[str], pages: dict[str, tuple[tuple[int, str, str], tuple[int, str, str]]]
) -> None:
    """A command runs from a copy of the app holding it alone (`cli._with_only`: Typer builds only its options):
    its help page, and the errors of a command line that names no command, are those of the whole app."""
    quick, whole = pages[" ".join(args)]
    assert quick == whole
    assert quick[1] or quick[2]
