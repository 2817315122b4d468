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


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["export", "--help"], ["report", "--help"],
                                  ["verify-study", "--help"], ["cache", "--help"]])  # fmt: skip
def test_help_loads_none_of_the_heavy_modules(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE.format(args=args, heavy=HEAVY)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_importing_the_package_loads_only_the_package() -> None:
    code = "import sys, critiquebench; print(sorted(m for m in sys.modules if m.startswith('critiquebench')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "['critiquebench']"


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_is_the_installed_distribution_s_and_loads_nothing_heavy(flag: str) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE.format(args=[flag], heavy=HEAVY)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed, loaded = done.stdout.splitlines()
    assert printed == f"critiquebench {importlib.metadata.version('critiquebench')}"
    assert json.loads(loaded) == []


def test_the_package_s_version_attribute_is_the_distribution_s() -> None:
    import critiquebench

    assert critiquebench.__version__ == importlib.metadata.version("critiquebench")


def test_a_study_with_no_planning_domain_loads_no_planning_module(tmp_path: Path) -> None:
    """A Game of 24 study run and then run again with nothing to do never loads the planning package or its PDDL
    parser, nor, with nothing to do, yaml (a third of such a command's start-up; benchmarks/bench_setup.py)."""
    from tests.scripted_server import ScriptedServer

    planning = ("critiquebench.domains.planning", "pddl", "lark")
    with ScriptedServer(reply="(4 + 4) * (10 - 7) = 24\n[ANSWER END]") as server:
        args = ["run", "idle", "--domains", "game24", "--instances", "gen:2:1", "--schemes",
                "standard,sound-first:rounds=2", "--model", "scripted", "--base-url", server.base_url, "--store",
                str(tmp_path / "s.sqlite"), "--no-progress"]  # fmt: skip
        # the study's runs (their LLM client loads yaml through langchain), then nothing to do
        for heavy in (planning, (*planning, "yaml")):
            done = subprocess.run([sys.executable, "-c", PROBE.format(args=args, heavy=heavy)],
                                  capture_output=True, text=True, timeout=300)  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert "Table 1" in done.stdout
            assert json.loads(done.stdout.splitlines()[-1]) == []
        assert server.requests > 0


def test_the_list_of_commands_is_the_page_typer_builds_from_every_command() -> None:
    """`critiquebench --help` gives each command a stand-in callback before Typer builds the page (its options
    are not built: `cli._commands_listed_only`); the page must be the one Typer builds from the real commands."""
    env = {"COLUMNS": "80", "TERM": "dumb", "PATH": "/usr/bin:/bin"}
    quick = subprocess.run([sys.executable, "-c", "import sys; sys.argv = ['critiquebench', '--help']\n"
                            "from critiquebench.cli import main; main()"], capture_output=True, text=True,
                           env=env, timeout=120)  # fmt: skip
    whole = subprocess.run([sys.executable, "-c", "from critiquebench.cli import app; app(['--help'], "
                            "prog_name='critiquebench')"], capture_output=True, text=True, env=env,
                           timeout=120)  # fmt: skip
    assert quick.returncode == whole.returncode == 0, (quick.stderr, whole.stderr)
    assert "run" in quick.stdout and quick.stdout == whole.stdout


@pytest.mark.parametrize("args", [["run", "--help"], ["-v", "cache", "--help"], ["cache", "stats", "--help"],
                                  ["--help", "run"], ["rn", "x"], ["run"], ["--verbose", "studies"]])  # fmt: skip
def test_a_command_s_pages_and_errors_are_the_ones_typer_builds_from_every_command(args: list[str]) -> None:
    """A command runs from a copy of the app holding it alone (`cli._with_only`: Typer builds only its options):
    its help page, and the errors of a command line that names no command, are those of the whole app."""
    env = {"COLUMNS": "80", "TERM": "dumb", "PATH": "/usr/bin:/bin"}
    quick = subprocess.run([sys.executable, "-c", "import sys; sys.argv = ['critiquebench', *sys.argv[1:]]\n"
                            "from critiquebench.cli import main; main()", *args], capture_output=True, text=True,
                           env=env, timeout=120)  # fmt: skip
    whole = subprocess.run([sys.executable, "-c", "import sys; from critiquebench.cli import app; "
                            "app(sys.argv[1:], prog_name='critiquebench')", *args], capture_output=True, text=True,
                           env=env, timeout=120)  # fmt: skip
    assert (quick.returncode, quick.stdout, quick.stderr) == (whole.returncode, whole.stdout, whole.stderr)
    assert quick.stdout or quick.stderr
