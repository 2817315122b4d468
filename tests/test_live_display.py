"""The live display, as a person at a terminal sees it: the study runs in a pseudo-terminal and its output is
played into a terminal emulator (pyte), whose screen is what is checked.

Retry warnings used to be written to stderr by a handler that held the stream from before the progress bars
started, between two redraws: a 4-bar display left bar lines all over the scrollback. The bars show the cost so
far at the model's price and the study's bar the retries the endpoint caused (issue 34 item 1)."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pyte

from tests.forked_process import ForkServer
from tests.scripted_server import ScriptedServer

CLI = Path(sys.executable).with_name("critiquebench")
SCHEMES = ("standard", "sound-first:rounds=2", "sampling:k=2", "self-consistency:k=2")
COLS, ROWS = 200, 300  # tall enough that nothing scrolls off: the whole session stays on the screen


def screen_of(
    argv: list[str], env: dict[str, str], timeout: float = 240, cols: int = COLS, fork_server: ForkServer | None = None
) -> tuple[int, list[str]]:
    """Run `argv` with stdout and stderr on a pseudo-terminal; its exit code and the emulated screen's lines.
    With `fork_server`, `argv` (`critiquebench ARGS...`) is a process forked from the preloaded CLI
    (tests/forked_process.py), on the same terminal."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, cols, 0, 0))
    if fork_server is None:
        proc: Any = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env,
                                     close_fds=True)  # fmt: skip
    else:
        proc = fork_server.popen(argv[1:], argv0=argv[0], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                                 env=env)  # fmt: skip
    os.close(slave)
    screen = pyte.Screen(cols, ROWS)
    stream = pyte.ByteStream(screen)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        stream.feed(chunk)
    os.close(master)
    code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    return code, [line.rstrip() for line in screen.display]


def study(
    server: ScriptedServer, store: Path, term: str, fork_server: ForkServer, cols: int = COLS
) -> tuple[int, list[str]]:
    argv = [str(CLI), "run", "live", "--domains", "game24", "--instances", "gen:6:1", "--schemes", ",".join(SCHEMES),
            "--temperature", "0.7", "--model", "scripted", "--base-url", server.base_url, "--store", str(store),
            "--concurrency", "4"]  # fmt: skip
    prices = store.with_name("prices.toml")  # a price for the scripted model: the bars show the cost so far
    prices.write_text('[models."scripted"]\ninput = 10.0\noutput = 20.0\nsource = "a test"\n')
    env = {**os.environ, "TERM": term, "LINES": str(ROWS), "CRITIQUEBENCH_PRICES": str(prices)}
    env.pop("NO_COLOR", None)
    env.pop("COLUMNS", None)  # rich measures the terminal itself
    return screen_of(argv, env, cols=cols, fork_server=fork_server)


def test_warnings_print_once_above_one_bar_per_scheme(tmp_path: Path, fork_server: ForkServer) -> None:
    with ScriptedServer(reply="1 + 2 + 3 + 18 = 24", fault_rate=0.3, faults=("429",), seed=3) as server:
        code, lines = study(server, tmp_path / "s.sqlite", "xterm-256color", fork_server)
        faulted = server.faulted
    assert code == 0, "\n".join(lines)
    assert faulted >= 3
    warnings = [i for i, line in enumerate(lines) if "retrying in" in line]
    bars = {spec: [i for i, line in enumerate(lines) if line.startswith(spec + " ") and "calls " in line]
            for spec in SCHEMES}  # fmt: skip
    assert all(len(rows) == 1 for rows in bars.values()), bars  # one bar per scheme, no stale copies
    assert len(warnings) == faulted, "\n".join(lines)  # each retry said once, each on a line of its own
    assert all(lines[i].lstrip().startswith("WARNING") and "━" not in lines[i] for i in warnings)
    assert max(warnings) < min(row for rows in bars.values() for row in rows)  # above the bars
    assert all("6/6" in lines[rows[0]] for rows in bars.values())
    assert all(" $0." in lines[rows[0]] for rows in bars.values())  # the cost so far at the user's price
    [total] = [line for line in lines if line.startswith("all schemes ")]  # the study's bar: the retries seen
    assert "24/24" in total and f"retries {faulted} failed calls 0 | $0." in total, total


def test_a_dumb_terminal_gets_one_summary_line_per_scheme(tmp_path: Path, fork_server: ForkServer) -> None:
    with ScriptedServer(reply="1 + 2 + 3 + 18 = 24") as server:
        code, lines = study(server, tmp_path / "s.sqlite", "dumb", fork_server)
    assert code == 0, "\n".join(lines)
    for spec in SCHEMES:
        [line] = [line for line in lines if line.startswith(spec + ": ")]
        assert line.startswith(f"{spec}: 6/6 runs, 0 correct, 0 failed; LLM calls ") and ", $0." in line
    assert "LLM calls: retries 0 failed calls 0" in lines
    assert not [line for line in lines for spec in SCHEMES if line.startswith(spec + " ") and "calls " in line]


def test_an_80_column_terminal_shows_every_schemes_count_and_time_left_and_tables_fit(
    tmp_path: Path, fork_server: ForkServer
) -> None:
    """Audit: at 100 columns the count and ETA were cut to "…", at 80 the bar went too, and the tables after the
    run were drawn 160 wide, wrapping mid-word. Counters are dropped whole from the end instead."""
    with ScriptedServer(reply="1 + 2 + 3 + 18 = 24") as server:
        code, lines = study(server, tmp_path / "s.sqlite", "xterm-256color", fork_server, cols=80)
    assert code == 0, "\n".join(lines)
    text = "\n".join(lines)
    assert "…" not in text, text
    for spec in SCHEMES:
        [bar] = [line for line in lines if line.startswith(spec + " ") and "━" in line]
        assert re.search(r" 6/6 +\d:\d\d:\d\d correct 0 failed 0", bar), bar
    [total] = [line for line in lines if line.startswith("all schemes ")]
    assert re.search(r" 24/24 +\d:\d\d:\d\d retries 0", total), total
    # the tables printed after the run fit the width (a line the terminal wrapped would end inside the box), each
    # scheme spec whole on its row; a table too wide is drawn in parts that repeat the domain and scheme, no
    # column left out
    boxed = [line for line in lines if line and line[0] in "┏┃┡│└"]
    assert boxed and all(line[-1] in "┓┃┩│┘" for line in boxed), text
    for spec in SCHEMES:
        assert any(re.search(rf"│ {re.escape(spec)} +│", line) for line in lines), text
    assert "Table 1 detail (part 1 of " in text and "Left out" not in text
    words = " ".join(text.split())  # the note is folded at the width
    assert "to fit 80 columns, each with the rows in the same order and repeating domain, scheme" in words
    assert all(any(re.search(rf"┃ {word} +┃", line) for line in lines) for word in ("planned", "unfinished")), text
