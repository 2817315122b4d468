"""One line, never a traceback or a hang, for the inputs issue 45 listed (items 4, 5 and 7): a scheme plug-in that
declares garbage (listed with its error, the others still listed), a `calls()` that returns garbage or negative
counts, a `--domain-option` nested 3,000 deep, a bad `$CRITIQUEBENCH_PRICES` (negative, 1e308, 5,000 deep, a
FIFO), a FIFO as prompt file or `--output` with no reader. Each runs the command in its own process, as a user
does (forked from one that imported the CLI: tests/forked_cli.py), with a timeout: a hang fails the test instead of
stalling it."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import forked_cli
from tests.test_study_cli import DATASETS

DRY = ["run", "d", "--domains", "game24", "--instances", "901", "--model", "fake", "--base-url",
       "http://127.0.0.1:9/v1", "--dry-run"]  # fmt: skip
_FORKED: dict[str, dict[str, str]] = {}  # the environments of the fork servers (fixtures below)


@pytest.fixture(autouse=True)
def _forked(forked_light_env: dict[str, str]) -> Iterator[None]:
    """Each command a process of its own, forked from one that imported the CLI (`forked_light_env`), not a fresh
    interpreter paying 1-3 s of CPU to import."""
    _FORKED["plain"] = forked_light_env
    yield
    _FORKED.pop("plain")


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60,
        full: bool = False) -> tuple[int, list[str]]:  # fmt: skip
    """rc and output lines (stdout and stderr) of the command run in `cwd` (forked from the server with the
    plug-ins of `plugins` on its path if `env` sets PYTHONPATH: a fork keeps its server's; with `full`, from the
    one that imported LangGraph too: the test asks for `full_server`)."""
    server = "plugins" if env and "PYTHONPATH" in env else "full" if full else "plain"
    full = {**_FORKED[server], "CRITIQUEBENCH_DATA": str(DATASETS), **(env or {})}
    done = forked_cli.run(["critiquebench", *args], full, cwd=cwd, timeout=timeout)
    return done.returncode, (done.stdout + done.stderr).splitlines()


@pytest.fixture
def full_server(forked_env: dict[str, str]) -> Iterator[None]:
    """`cli(..., full=True)` forks from `forked_env`'s server, which imported LangGraph: `graph` imports it to draw,
    ~1.9 s of CPU forked from the light server, ~0.4 s from the full one (which the suite runs anyway)."""
    _FORKED["full"] = forked_env
    yield
    _FORKED.pop("full")


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder for PYTHONPATH: three scheme plug-ins named by a distribution's entry points (no install), and a
    fork server started with it as its PYTHONPATH."""
    root = tmp_path_factory.mktemp("plug")
    dist = root / "cbprobe-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cbprobe\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[critiquebench.schemes]\np-garbage-params = pl_garbage_params\np-calls-garbage = pl_calls_garbage\n"
        "p-calls-negative = pl_calls_negative\n"
    )
    (root / "pl_garbage_params.py").write_text('"""PARAMS is garbage."""\nPARAMS = 5\ndef build(**p): pass\n')
    body = textwrap.dedent(
        '''
        """calls() returns {what}."""
        from critiquebench.graphs.cost import Calls
        from critiquebench.graphs.loops import verified_loop
        from critiquebench.graphs.params import feedback, rounds
        PARAMS = (rounds(2), feedback("first"))
        def build(*, rounds, feedback):
            return verified_loop(rounds=rounds, level=feedback, history="last", style=None)
        def calls(params):
            return {value}
        '''
    )
    (root / "pl_calls_garbage.py").write_text(body.format(what="garbage", value='"lots"'))
    (root / "pl_calls_negative.py").write_text(body.format(what="negative counts", value="Calls(rounds=-10**12)"))
    env = {**os.environ, "PYTHONPATH": str(root)}
    with forked_cli.forked_cli(tmp_path_factory.mktemp("cli"), env, preload=forked_cli.MEDIUM) as forked:
        _FORKED["plugins"] = forked
        yield root
    _FORKED.pop("plugins")


def test_a_plugin_that_declares_garbage_is_listed_with_its_error(plugins: Path, tmp_path: Path) -> None:
    rc, lines = cli("schemes", cwd=tmp_path, env={"PYTHONPATH": str(plugins)})
    assert rc == 0 and not any("Traceback" in line for line in lines)
    listed = [line.split(" ")[0].rstrip(":") for line in lines if not line.startswith((" ", "WARNING", "Set "))]
    assert {"standard", "sound-first", "p-calls-garbage", "p-calls-negative", "p-garbage-params"} <= set(listed)
    entries: list[str] = []  # an entry folded to 80 columns goes on in lines indented by 4 (`schemes`)
    for line in lines:
        if line.startswith("    ") and entries:
            entries[-1] += " " + line.strip()
        else:
            entries.append(line)
    assert any(line.startswith("p-garbage-params [plug-in: pl_garbage_params]: cannot be used: ")
               and "PARAMS must be a tuple of graphs.params.Param, not 5" in line for line in entries)  # fmt: skip
    rc, lines = cli("schemes", "--json", cwd=tmp_path, env={"PYTHONPATH": str(plugins)})
    out = "\n".join(line for line in lines if not line.startswith("WARNING"))
    broken = {s["name"]: s for s in json.loads(out) if "error" in s}
    assert list(broken) == ["p-garbage-params"]


@pytest.mark.parametrize("scheme", ["p-calls-garbage", "p-calls-negative"])
@pytest.mark.parametrize("dry", [True, False])
def test_calls_that_return_garbage_are_one_line(plugins: Path, tmp_path: Path, scheme: str, dry: bool) -> None:
    args = DRY if dry else DRY[:-1]
    rc, lines = cli(*args, "--schemes", scheme, "--store", str(tmp_path / "s.sqlite"), cwd=tmp_path,
                    env={"PYTHONPATH": str(plugins)})  # fmt: skip
    assert rc == 2 and len(lines) == 1, lines[-5:]
    assert lines[0].startswith(f"error: scheme '{scheme}' (pl_calls_") and "calls() gave" in lines[0]


def test_a_domain_option_nested_3000_deep_is_one_line(tmp_path: Path) -> None:
    deep = "[" * 3000 + "]" * 3000
    for args in (["prompt", "--domain", "game24", "--instance", "901"], [*DRY, "--schemes", "standard"]):
        rc, lines = cli(*args, "--domain-option", f"stop={deep}", cwd=tmp_path)
        assert rc == 2 and len(lines) == 1, lines[-3:]
        assert "nested too deeply to read" in lines[0] and len(lines[0]) < 300


def test_a_bad_price_file_is_one_line_in_a_dry_run_and_an_export(tmp_path: Path) -> None:
    files = {
        "neg.toml": "[models.recorded]\ninput = -1\noutput = 1\n",
        "huge.toml": "[models.recorded]\ninput = 1e308\noutput = 1e308\n",
        "deep.toml": "a = " + "[" * 5000 + "]" * 5000 + "\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    os.mkfifo(tmp_path / "prices.fifo")  # no process writes it: reading it must not wait
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"instance": "901", "response": "(1+2+3)*4"}\n')
    rc, _ = cli("import", "samples", str(samples), "--domain", "game24", "--study", "f", "--store", "st.sqlite",
                cwd=tmp_path)  # fmt: skip
    assert rc == 0
    for name in [*files, "prices.fifo"]:
        env = {"CRITIQUEBENCH_PRICES": name}
        for args in ([*DRY, "--schemes", "standard", "--model", "recorded"], ["export", "f", "--table", "runs",
                                                                              "--store", "st.sqlite"]):  # fmt: skip
            rc, lines = cli(*args, cwd=tmp_path, env=env, timeout=30)
            assert rc == 2 and len(lines) == 1, (name, args[0], lines[-3:])
            assert lines[0].startswith(f"error: price file {name}"), lines[0]


def test_the_highest_price_gives_finite_strict_json(tmp_path: Path) -> None:
    (tmp_path / "max.toml").write_text("[models.recorded]\ninput = 1000000\noutput = 1000000\n")
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"instance": "901", "response": "(1+2+3)*4"}\n')
    assert cli("import", "samples", str(samples), "--domain", "game24", "--study", "f", "--store", "st.sqlite",
               cwd=tmp_path)[0] == 0  # fmt: skip
    assert cli("resume", "f", "--replay", "--store", "st.sqlite", cwd=tmp_path)[0] == 0
    rc, lines = cli("export", "f", "--table", "runs", "--store", "st.sqlite", cwd=tmp_path,
                    env={"CRITIQUEBENCH_PRICES": "max.toml"})  # fmt: skip
    assert rc == 0
    row = json.loads(lines[0], parse_constant=lambda name: pytest.fail(f"not strict JSON: {name}"))
    assert row["cost_usd"] is None or 0 <= row["cost_usd"] < 1e12


def test_json_text_writes_null_for_non_finite_numbers() -> None:
    from critiquebench.outputs import json_text

    written = json_text({"a": float("inf"), "b": [float("nan"), 1.5], "c": "x"})
    assert written == '{"a": null, "b": [null, 1.5], "c": "x"}'


@pytest.mark.usefixtures("full_server")
def test_fifos_without_a_peer_are_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "prompts.fifo")
    rc, lines = cli("prompt", "--domain", "game24", "--instance", "901", "--domain-option", "prompts=prompts.fifo",
                    cwd=tmp_path, timeout=30)  # fmt: skip
    assert (rc, lines) == (2, ["error: cannot read prompt file prompts.fifo: it is a FIFO, not a regular file"])
    os.mkfifo(tmp_path / "out.fifo")
    rc, lines = cli("graph", "standard", "--output", "out.fifo", cwd=tmp_path, timeout=30, full=True)
    assert rc == 2 and lines == ["error: cannot write out.fifo: it is a FIFO no process reads; start its reader first"]


@pytest.mark.usefixtures("full_server")
def test_a_fifo_with_a_reader_is_still_written_into(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)  # opens it first: a reader waits
    held = -1
    try:
        # A reader blocked in open() holds no descriptor /proc could show: it is there once a non-blocking open
        # for writing, the command's own check, stops failing (ENXIO). The writer the test holds meanwhile keeps
        # cat from seeing the end of the FIFO before the command has written into it.
        deadline = time.monotonic() + 30
        while held < 0:
            try:
                held = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:  # ENXIO: no reader yet
                assert exc.errno == errno.ENXIO and reader.poll() is None and time.monotonic() < deadline, exc
                time.sleep(0.005)
        rc, lines = cli("graph", "standard", "--output", "out.fifo", cwd=tmp_path, timeout=30, full=True)
        os.close(held)
        held = -1
        out, _ = reader.communicate(timeout=30)
    finally:
        if held >= 0:
            os.close(held)
        reader.kill()
    assert rc == 0, lines
    assert b"generator" in out and fifo.is_fifo()


@pytest.mark.parametrize("vertices", ["[1,1]", "[30,30]", "[1.5,2.5]", "[true,true]", "[1,1000000000]", '[1,"a"]'])
def test_coloring_sizes_that_cannot_be_generated_are_one_line(tmp_path: Path, vertices: str) -> None:
    """Before: the rejection loop drew for ever (9.4 GB in 120 s for [1,1000000000])."""
    rc, lines = cli("run", "c", "--domains", "coloring", "--instances", "gen:2:1", "--schemes", "standard",
                    "--model", "fake", "--base-url", "http://127.0.0.1:9/v1", "--dry-run", "--domain-option",
                    f"vertices={vertices}", cwd=tmp_path, timeout=60)  # fmt: skip
    assert rc == 2 and len(lines) == 1, lines[-3:]
    assert "vertices must be two whole numbers (low, high) with 2 <= low <= high <= 14" in lines[0]


def test_a_study_file_with_an_impossible_size_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text('domains = ["coloring"]\nschemes = ["standard"]\nmodel = "fake"\n'
                                     'base_url = "http://127.0.0.1:9/v1"\n[instances]\ncoloring = "gen:2:1"\n'
                                     "[domain_options.coloring]\nvertices = [1, 1]\n")  # fmt: skip
    rc, lines = cli("run", "c", "--config", "c.toml", "--dry-run", cwd=tmp_path, timeout=60)
    assert rc == 2 and len(lines) == 1 and "2 <= low <= high <= 14" in lines[0], lines[-3:]


def test_the_largest_allowed_size_is_generated() -> None:
    from critiquebench.domains import get_domain

    assert [i.data["n"] for i in get_domain("coloring", vertices=[14, 14]).generate(2, 1)] == [14, 14]
