"""Every output path a command writes (`export --output`, `report --output`, `report --figure`, `cache export -o`,
`view --output`) aimed where it must not destroy or half-write anything (issue 35, item 1): the store the
command reads, another SQLite file, a read-only place and a full file system each give one line (exit 2) and
leave the store and the old output byte-identical; a FIFO with a reader gets the data written into it and
stays a FIFO (the viewer's folder refuses it in one line). Read-only and full places are small tmpfs mounts
where the test may mount one; elsewhere a path under a regular file stands in for a read-only place, and the
writer's `fsync` failing with ENOSPC for a full disk."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_server import ScriptedServer
from tests.test_study_cli import game24_reply, invoke

# command -> (its arguments with OUT for the output path and STORE for the store, the output's file name)
COMMANDS: dict[str, tuple[list[str], str]] = {
    "export": (["export", "s", "--output", "OUT", "--store", "STORE"], "rounds.jsonl"),
    "report": (["report", "s", "--output", "OUT", "--store", "STORE"], "report.txt"),
    "cache-export": (["cache", "export", "-o", "OUT", "--store", "STORE"], "calls.jsonl"),
    "figure": (["report", "s", "--figure", "OUT", "--store", "STORE"], "fig.png"),
    "view": (["view", "--output", "OUT", "--store", "STORE"], "site"),
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished study `s` (its store is copied by each test that aims an output at it)."""
    path = tmp_path_factory.mktemp("outputs") / "s.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        invoke("run", "s", "--domains", "game24", "--instances", "gen:2:1", "--schemes",
               "standard,sound-first:rounds=2", "--model", "scripted", "--base-url", server.base_url,
               "--store", str(path), "--no-progress")  # fmt: skip
    return path


def args(command: str, out: Path, store: Path) -> list[str]:
    return [str(out) if a == "OUT" else str(store) if a == "STORE" else a for a in COMMANDS[command][0]]


def digest(path: Path) -> str:
    """The bytes of a file, or of every file under a folder, as one digest."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    h = hashlib.sha256()
    for file in files:
        h.update(str(file.relative_to(path) if path.is_dir() else "").encode() + b"\0" + file.read_bytes())
    return h.hexdigest()


def one_error_line(result: Any, path: Path, cause: str) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(path) in lines[0] and cause in lines[0], lines
    return lines[0]


def old_output(out: Path, command: str) -> None:
    """What an earlier run of the command left at `out` (a folder for the viewer)."""
    if command == "view":
        (out / "data").mkdir(parents=True)
        (out / "index.html").write_text("old page")
        (out / "data" / "index.js").write_text("old data")
    else:
        out.write_bytes(b"old output\n")


@contextmanager
def tmpfs(folder: Path, options: str) -> Iterator[bool]:
    """`folder` as a small tmpfs while the block runs; False (nothing mounted) where the test cannot mount."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    except OSError:  # no mount command
        done = None
    if done is None or done.returncode != 0:
        yield False
        return
    try:
        yield True
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder: Path) -> None:
    """Fill the file system of `folder` to the last byte."""
    with (folder / "filler").open("wb", buffering=0) as fp:
        try:
            while True:
                fp.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_named_like_the_store_or_any_sqlite_file_is_refused(
    store: Path, tmp_path: Path, command: str
) -> None:
    own = tmp_path / "own.sqlite"
    own.write_bytes(store.read_bytes())
    other = tmp_path / "other.db"  # another SQLite file, of any name
    other.write_bytes(store.read_bytes())
    before = digest(own)
    line = one_error_line(invoke(*args(command, own, own), check=None), own, "is the store this command reads")
    assert line.endswith("give another file")
    line = one_error_line(invoke(*args(command, other, own), check=None), other, "is a SQLite file")
    assert digest(own) == before == digest(other)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db", "own.sqlite"]  # no temporary file left


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_read_only_place_is_one_line_and_the_old_output_stays(store: Path, tmp_path: Path, command: str) -> None:
    place = tmp_path / "ro"
    name = COMMANDS[command][1]
    before = digest(store)
    with tmpfs(place, "size=1m") as mounted:
        if mounted:
            old_output(place / name, command)
            old = digest(place / name)
            subprocess.run(["mount", "-o", "remount,ro", str(place)], check=True)
            out, cause = place / name, "Read-only file system"
        else:  # as root no permission bit stops a write: a path under a regular file cannot be written either
            place.rmdir()
            place.write_text("a file")
            out, cause = place / name, "Not a directory"
        one_error_line(invoke(*args(command, out, store), check=None), out, cause)
        if mounted:
            assert digest(out) == old and sorted(p.name for p in place.iterdir()) == [name]
    assert digest(store) == before


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_full_file_system_is_one_line_and_the_old_output_stays(
    store: Path, tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    place = tmp_path / "full"
    name = COMMANDS[command][1]
    before = digest(store)
    with tmpfs(place, "size=256k") as mounted:
        old_output(place / name, command)
        old = digest(place / name)
        if mounted:
            fill(place)
        elif command == "view":  # as the Postgres tests do: what the set-up promises fails loudly, never skips
            pytest.fail(
                "cannot mount a tmpfs here (the README's set-up runs as root, where it can): the viewer's "
                "files are not fsynced one by one, so only a real full disk shows their failure"
            )
        else:  # simulated: the writer's fsync fails as on a full disk
            import critiquebench.outputs

            def full(fd: int) -> None:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            monkeypatch.setattr(critiquebench.outputs.os, "fsync", full)
        out = place / name
        one_error_line(invoke(*args(command, out, store), check=None), out, "No space left on device")
        assert digest(out) == old
        assert sorted(p.name for p in place.iterdir()) == sorted([name, *(["filler"] if mounted else [])])
    assert digest(store) == before


@contextmanager
def fifo_reader(path: Path) -> Iterator[list[bytes]]:
    """A FIFO at `path` with a reader thread; after the block, what it read (the block must open it to write, or
    the reader is released with nothing)."""
    os.mkfifo(path)
    got: list[bytes] = []

    def read() -> None:
        with path.open("rb") as fp:
            got.append(fp.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    _blocked_in_open(reader)
    try:
        yield got
    finally:
        if reader.is_alive() and not got:
            try:  # nobody opened it to write: let the reader's open return (it then reads nothing)
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        reader.join(10)
        assert not reader.is_alive()


def _blocked_in_open(reader: threading.Thread) -> None:
    """Wait until `reader` waits in its FIFO's open() for a writer (Linux names that wait `wait_for_partner`): a
    command checking for a reader before the thread got there would rightly say none reads (seen under load)."""
    wchan = Path(f"/proc/self/task/{reader.native_id}/wchan")
    deadline = time.monotonic() + 10
    while reader.is_alive() and time.monotonic() < deadline:
        try:
            if wchan.read_text() == "wait_for_partner":
                return
        except OSError:  # no /proc: nothing to watch, the command may race the reader as before
            return
        time.sleep(0.001)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_fifo_gets_the_data_written_into_it_and_stays_a_fifo(store: Path, tmp_path: Path, command: str) -> None:
    out = tmp_path / COMMANDS[command][1]
    before = digest(store)
    with fifo_reader(out) as got:
        result = invoke(*args(command, out, store), check=None)
    assert stat.S_ISFIFO(out.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]
    if command == "view":  # the viewer writes a folder of files: a FIFO is no folder
        one_error_line(result, out, "it is a FIFO, not a folder")
        assert got in ([], [b""])
    else:
        assert result.exit_code == 0, (result.stdout, result.stderr)
        data = got[0]
        if command == "figure":
            assert data.startswith(b"\x89PNG\r\n")
        elif command == "report":
            assert "Table 1: accuracy (s)" in data.decode()
        else:
            assert len(data.decode().splitlines()) >= 2 and data.decode().startswith("{")
    assert digest(store) == before


def test_an_ordinary_file_is_replaced_whole_keeping_its_mode_and_a_symlink_keeps_pointing_at_it(
    store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rounds.jsonl"
    out.write_text("old output\n")
    out.chmod(0o640)
    link = tmp_path / "latest.jsonl"
    link.symlink_to(out.name)
    invoke("export", "s", "--output", str(link), "--store", str(store))
    assert link.is_symlink() and out.read_text().startswith('{"study": "s"')
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    fresh = tmp_path / "fresh.jsonl"
    invoke("export", "s", "--output", str(fresh), "--store", str(store))
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~current_umask()  # as `open(path, "w")` makes it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.jsonl", "latest.jsonl", "rounds.jsonl"]


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_figure_format_matplotlib_cannot_write_is_one_line_before_the_report(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "fig.sqlite"
    result = invoke("report", "s", "--figure", str(out), "--store", str(store), check=None)
    line = one_error_line(result, out, "a figure is written as")
    assert "png" in line and not out.exists() and result.stdout == ""


# --- spreadsheet formulas and Markdown tables (issue 35 item 5)

FORMULAS = ['=HYPERLINK("http://x","y")', "@SUM(A1:A9)", "+cmd|' /C calc'!A0", "-2+26", "-24"]


def test_csv_cells_that_start_like_a_formula_are_text_and_negative_numbers_stay_numbers(tmp_path: Path) -> None:
    import csv
    import itertools

    answers = itertools.cycle(FORMULAS)
    store = tmp_path / "f.sqlite"
    with ScriptedServer(reply=lambda messages, params: next(answers)) as server:
        invoke("run", "f", "--domains", "game24", "--instances", "gen:5:1", "--schemes", "standard", "--model",
               "scripted", "--base-url", server.base_url, "--concurrency", "1", "--store", str(store),
               "--no-progress", check=None)  # fmt: skip
    out = tmp_path / "rounds.csv"
    invoke("export", "f", "--output", str(out), "--store", str(store))
    with out.open(newline="") as fp:
        cells = {row["answer"] for row in csv.DictReader(fp)}
    assert cells == {"'" + FORMULAS[0], "'" + FORMULAS[1], "'" + FORMULAS[2], "'-2+26", "-24"}
    jsonl = invoke("export", "f", "--store", str(store)).stdout  # JSON lines hold the answers as they came
    assert all(f'"answer": {json.dumps(f)}' in jsonl for f in FORMULAS)


def test_markdown_tables_escape_pipes_and_html_and_csv_reports_neutralise_formulas() -> None:
    from critiquebench.reports.metrics import Table1Row
    from critiquebench.reports.tables import render

    domain = "=cmd|' calc'!A0 <img src=x onerror=alert(1)>"
    row = Table1Row(study="s", domain=domain, scheme="standard", correct=1, total=2, accuracy=0.5, ci_low=0.1,
                    ci_high=0.9, mean_rounds=1.0, mean_tokens=10.0, prompt_tokens=5, completion_tokens=5,
                    llm_calls=2, cache_hits=0, failed=0, unfinished=0)  # fmt: skip
    md = render([row], "md")
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)>" in md
    tables = [block.splitlines() for block in md.split("\n\n") if block.startswith("|")]
    assert len(tables) == 2  # Table 1 (the domain in its header row) and its detail (the domain in a cell)
    for lines in tables:  # a `|` in a name never splits a cell: every row has the header's number of cells
        assert len({line.replace("\\|", "").count("|") for line in lines}) == 1, lines
    assert tables[0][0] == "| scheme | =cmd\\|' calc'!A0 &lt;img src=x onerror=alert(1)> |"
    import csv

    (cells,) = list(csv.DictReader(render([row], "csv").splitlines()))
    assert cells["domain"] == "'" + domain and cells["accuracy"] == "0.5"


def test_graph_and_score_outputs_refuse_a_sqlite_file_and_write_into_a_fifo(store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(store.read_bytes())
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"id": 1, "instance": "901", "response": "(4 + 5 + 6) + 10"}\n')
    commands = {
        "graph": ["graph", "llm-llm", "--output"],
        "score": ["score", str(answers), "--domain", "game24", "--output"],
    }
    for name, command in commands.items():
        one_error_line(invoke(*command, str(copy), check=None), copy, "is a SQLite file")
        fifo = tmp_path / f"{name}.fifo"
        with fifo_reader(fifo) as got:
            invoke(*command, str(fifo))
        assert stat.S_ISFIFO(fifo.lstat().st_mode) and got[0].strip()
    assert digest(copy) == digest(store)
