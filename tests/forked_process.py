"""A `critiquebench` process for the tests about the process itself (signals, kills, two processes on one store, a
terminal, a file size limit) that starts in milliseconds: forked by tests/forked_cli.py's server, which imported
the CLI and what a study uses once, instead of an interpreter importing them anew (1-4 s of CPU a process).

`ForkedProcess` is that command seen from the test, with what the tests use of `subprocess.Popen`: `pid` is the
command's own pid (so a SIGKILL, a SIGINT or a claim's owner are the command's, as for the installed command, not
those of a wrapper that forwards signals); `poll`, `wait`, `communicate`, `send_signal`, `kill`, `returncode`
(negative: killed by that signal). The command is a child of the server, not of the test: its exit status comes
over the server's socket. `program="forked-python"` runs `["-c", SOURCE, *ARGS]` as `python -c` would.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.forked_cli import SOCKET_ENV

ROOT = Path(__file__).resolve().parents[1]
PIPE, DEVNULL, STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT


class ForkedProcess:
    """One command run by the fork server listening on `sock`, with `argv` (its arguments, not the program), `env`
    and `cwd`; `stdin`/`stdout`/`stderr` as for Popen (PIPE, DEVNULL, STDOUT for stderr, or a descriptor)."""

    def __init__(self, sock: str, argv: Sequence[str], *, env: dict[str, str], cwd: Path | str = ROOT,
                 program: str = "critiquebench", argv0: str | None = None, stdin: int | None = DEVNULL,
                 stdout: int | None = PIPE, stderr: int | None = PIPE, text: bool = True) -> None:  # fmt: skip
        self.args, self.text, self.returncode = [program, *argv], text, None
        self._buffer = b""
        self._waiting = threading.Lock()  # one reader of the socket (a test may wait in two threads)
        self._pipes: dict[str, int] = {}  # "stdout"/"stderr" -> the read end this process keeps
        given: list[int] = []  # the descriptors handed over: the command's 0, 1, 2
        to_close: list[int] = []  # the ends of them this process made and no longer needs once handed over
        for name, how in (("stdin", stdin), ("stdout", stdout), ("stderr", stderr)):
            if name == "stderr" and how == STDOUT:
                given.append(given[1])
            elif name != "stdin" and how == PIPE:
                read, write = os.pipe()
                self._pipes[name] = read
                given.append(write)
                to_close.append(write)
            elif how in (DEVNULL, None):  # None: nothing of this process's to share (its pytest-captured streams)
                fd = os.open(os.devnull, os.O_RDWR)
                given.append(fd)
                to_close.append(fd)
            elif how == PIPE:
                raise ValueError("stdin=PIPE is not served")
            else:
                given.append(int(how))  # type: ignore[arg-type]
        message = json.dumps({"program": program, "argv0": argv0 or program, "argv": list(argv), "cwd": str(cwd),
                              "env": env}).encode()  # fmt: skip
        self._sock = socket.socket(socket.AF_UNIX)
        try:
            self._sock.connect(sock)
            socket.send_fds(self._sock, [len(message).to_bytes(8, "big")], given)
            self._sock.sendall(message)
        finally:
            for fd in to_close:
                os.close(fd)
        self.pid = int(self._line(None))

    def _line(self, timeout: float | None) -> bytes:
        """The server's next line (the pid, then the exit status); TimeoutExpired when none came in `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._sock.settimeout(left)
            try:
                chunk = self._sock.recv(64)
            except (TimeoutError, BlockingIOError):  # (a timeout of 0 makes the socket non-blocking)
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0) from None
            if not chunk:
                raise RuntimeError(f"the fork server of tests/forked_cli.py lost the command {self.args}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def wait(self, timeout: float | None = None) -> int:
        if not self._waiting.acquire(timeout=-1 if timeout is None else timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        try:
            if self.returncode is None:
                self.returncode = int(self._line(timeout))
                self._sock.close()
        finally:
            self._waiting.release()
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self.wait(0)
            except subprocess.TimeoutExpired:
                pass
        return self.returncode

    def send_signal(self, number: int) -> None:
        if self.returncode is None:  # as Popen: a process known to be gone is not signalled
            try:
                os.kill(self.pid, number)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[Any, Any]:
        """Everything the command wrote to its pipes until it closed them, and its exit status."""
        deadline = None if timeout is None else time.monotonic() + timeout
        chunks: dict[str, list[bytes]] = {name: [] for name in self._pipes}
        with selectors.DefaultSelector() as selector:
            for name, fd in self._pipes.items():
                selector.register(fd, selectors.EVENT_READ, name)
            while selector.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
                for key, _ in selector.select(left):
                    data = os.read(key.fd, 65536)
                    if data:
                        chunks[key.data].append(data)
                    else:
                        selector.unregister(key.fd)
        for fd in self._pipes.values():
            os.close(fd)
        self._pipes.clear()
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        out = {name: b"".join(parts) for name, parts in chunks.items()}
        decoded = {name: data.decode(errors="replace") if self.text else data for name, data in out.items()}
        return decoded.get("stdout"), decoded.get("stderr")


class ForkServer:
    """The fork server of one pytest process (the `fork_server` fixture): `popen` starts a command."""

    def __init__(self, env: dict[str, str]) -> None:
        self.sock = env[SOCKET_ENV]

    def popen(self, argv: Sequence[str], *, env: dict[str, str] | None = None, **options: Any) -> ForkedProcess:
        """`critiquebench ARGV...` (or `program`), as `subprocess.Popen` would start it: with this process's
        environment as it is now unless `env` is given."""
        return ForkedProcess(self.sock, argv, env=dict(os.environ) if env is None else env, **options)

    def run(self, argv: Sequence[str], *, timeout: float = 300, **options: Any) -> subprocess.CompletedProcess[Any]:
        """`subprocess.run(..., capture_output=True)` of the command."""
        proc = self.popen(argv, **options)
        out, err = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(proc.args, proc.wait(), out, err)
