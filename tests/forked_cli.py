"""A `critiquebench` command that starts in milliseconds, for tests that run many shell commands (the docs
examples): each command is still a process of its own, forked from a server process that imported the CLI and
the libraries its commands use once, instead of an interpreter that imports them again (1-4 s of CPU a command).

`forked_cli(folder, env)` starts the server and writes `folder/critiquebench`, a small script to put first on
PATH (and `folder/forked-python`, which runs `-c SOURCE` as `python -c` would). The script hands the server its
arguments, working folder, environment and its stdin, stdout and stderr (the descriptors themselves, so pipes,
FIFOs, redirections and terminals behave as for the installed command); the server forks a process that runs
the command with them and answers with its pid, then its exit status; the script forwards SIGINT, SIGTERM,
SIGHUP and SIGQUIT to that pid and exits as the command did (a command killed by a signal kills the script by
the same signal). What a fork cannot give is a fresh interpreter: a command that needs one (a server started in
the background, Ray) is not run this way.
"""

from __future__ import annotations

import builtins
import gc
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOCKET_ENV = "CRITIQUEBENCH_TEST_FORK_SOCKET"
# What the commands import on their first use, imported once here (each also loads when first used, as usual): the
# project's every module, and the libraries its modules import inside functions (a study's first LangGraph graph,
# HTTP client, tracer and progress bar). Without the latter a forked command still paid 2.5-3.5 s of CPU importing.
PACKAGES = ("critiquebench", "critiquebench.domains", "critiquebench.graphs", "critiquebench.nodes",
            "critiquebench.store")  # fmt: skip
PRELOAD = (
    "critiquebench.cli", "langchain_openai", "pandas", "langgraph.graph", "langgraph.pregel",
    "langgraph.checkpoint.sqlite", "langchain_core.runnables.graph", "langchain_core.tracers.langchain",
    "langchain_core.tracers.run_collector", "langchain_core.tracers.stdout", "rich.progress", "rich.live",
    "rich.syntax", "rich._emoji_codes", "httpx", "openai.resources.chat", "openai.lib.streaming.chat",
    "openai.pagination", "openai.types.chat.completions", "langchain_core.messages.block_translators.langchain_v0",
    "typer._adapters",
)  # fmt: skip


PRELOAD_ENV = "CRITIQUEBENCH_TEST_FORK_PRELOAD"  # the server's own environment only: "all" or modules, comma-separated
ALSO_ENV = "CRITIQUEBENCH_TEST_FORK_ALSO"  # the server's own environment only: more modules, comma-separated
LIGHT = ("critiquebench.cli",)  # what the console script imports
# for commands that fail early or read a store: the CLI and what its reading commands import, no LLM client
MEDIUM = (*LIGHT, "critiquebench.reports.tables", "critiquebench.reports.export", "critiquebench.store.db",
          "critiquebench.domains", "critiquebench.studies.config", "sqlite_utils", "typer._adapters",
          "rich.console")  # fmt: skip


# the server's own environment only: "0" ends each command without the interpreter's finalization (see `_end`)
FINALIZE_ENV = "CRITIQUEBENCH_TEST_FORK_FINALIZE"
_FINALIZE = True  # the server's setting, inherited by every command it forks

# in a command's own environment: cap its address space (resource.RLIMIT_AS) at this many bytes, as a test's
# `preexec_fn` caps a command it starts itself (the script is that child; the command is the server's fork)
LIMIT_AS_ENV = "CRITIQUEBENCH_TEST_FORK_LIMIT_AS"

# in a command's own environment: folders (os.pathsep-separated) put on its sys.path after the script's folder, as
# PYTHONPATH puts them for a fresh interpreter (the server's sys.path was fixed when it started): a package installed
# into a folder of its own after the server started (a plug-in) is then importable and its entry points found
SYS_PATH_ENV = "CRITIQUEBENCH_TEST_FORK_SYS_PATH"


def preload(names: tuple[str, ...] | None = None) -> None:
    """Import `names`, else PRELOAD and every module of the project's packages (but their `__main__`, which
    would run)."""
    import importlib
    import pkgutil

    for name in PRELOAD if names is None else names:
        importlib.import_module(name)
    if names is not None:
        return
    for package in PACKAGES:
        for found in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
            if not found.name.endswith(".__main__"):
                importlib.import_module(found.name)


SCRIPT = '''#!{python} -IS
"""{name}, run by the fork server of tests/forked_cli.py."""
import json, os, signal, socket, sys

sock = socket.socket(socket.AF_UNIX)
sock.connect(os.environ["{socket_env}"])
message = json.dumps({{"program": "{name}", "argv0": sys.argv[0], "argv": sys.argv[1:], "cwd": os.getcwd(),
                      "env": dict(os.environ)}})
message = message.encode()
socket.send_fds(sock, [len(message).to_bytes(8, "big")], [0, 1, 2])
sock.sendall(message)
reader = sock.makefile("r")
pid = int(reader.readline())


def forward(number, frame):
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
    signal.signal(sig, forward)
line = reader.readline()
if not line:
    sys.exit("the fork server of tests/forked_cli.py lost the command")
status = int(line)
if status < 0:  # killed by a signal: end the same way
    signal.signal(-status, signal.SIG_DFL)
    os.kill(os.getpid(), -status)
sys.exit(status)
'''


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    header, fds, _, _ = socket.recv_fds(conn, 8, 3)
    size, data = int.from_bytes(header, "big"), b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("the script hung up")
        data += chunk
    return json.loads(data), fds


def _run_command(request: dict, fds: list[int]) -> None:
    """In the forked command process: become the command; end as the interpreter ends a process (atexit, threads
    and stream flushes as usual), by a SystemExit that leaves through `serve`."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    limit = os.environ.pop(LIMIT_AS_ENV, None)
    if limit is not None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    sys.path[0] = str(Path(sys.executable).parent)  # as for the console script, not `-c`'s working folder
    extra = os.environ.pop(SYS_PATH_ENV, None)
    if extra:
        sys.path[1:1] = extra.split(os.pathsep)
    try:
        if request["program"] == "forked-python":  # `python -c SOURCE ARGS...`, as the interpreter runs it
            option, source, *rest = request["argv"]
            if option != "-c":
                raise SystemExit(f"{request['argv0']}: only -c SOURCE is served")
            sys.argv, sys.path[0] = ["-c", *rest], ""
            code = compile(source, "<string>", "exec")
            exec(code, {"__name__": "__main__", "__builtins__": builtins})  # noqa: S102 - the test's own source
        else:
            sys.argv = [request["argv0"], *request["argv"]]
            from critiquebench.cli import main

            main()
    except SystemExit as done:
        if _FINALIZE:
            raise
        _end(done.code)
    except BaseException:  # what the interpreter does with an exception nothing caught
        traceback.print_exc()
        if _FINALIZE:
            raise SystemExit(1) from None
        _end(1)
    if _FINALIZE:
        raise SystemExit(0)
    _end(0)


def _end(code: object) -> None:
    """End the command as the interpreter ends a process up to its finalization: the exit status SystemExit's
    code gives (a code that is not a number printed to stderr, status 1), non-daemon threads joined, atexit
    functions run, stdout and stderr flushed (status 120 if that fails), then `os._exit`. What is left out is the
    finalization's module teardown and last collection: they touch every object the server preloaded, copying
    its whole heap page by page into the command (~0.28 s of CPU for each command, more than a short command's
    own work), and have nothing left to write once the streams are flushed and atexit has run."""
    import atexit

    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        with suppress(Exception):
            print(code, file=sys.stderr)
        status = 1
    threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter calls first at exit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None or stream.closed:  # as the interpreter: a closed stream is not flushed
            continue
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - as the interpreter: a failed flush at exit is status 120
            status = 120
    os._exit(status & 0xFF)


def _handle(conn: socket.socket) -> None:
    """In a forked handler: fork the command, tell the script its pid, wait, send its exit status."""
    request, fds = _receive(conn)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _run_command(request, fds)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    try:
        conn.sendall(f"{code}\n".encode())
    except OSError:  # the script was killed
        pass
    os._exit(0)


def serve() -> None:
    """The server's main loop (`python -c "from tests.forked_cli import serve; serve()"`)."""
    wanted = os.environ.pop(PRELOAD_ENV, "all")
    preload(None if wanted == "all" else tuple(n for n in wanted.split(",") if n))
    preload(tuple(n for n in os.environ.pop(ALSO_ENV, "").split(",") if n))
    global _FINALIZE
    _FINALIZE = os.environ.pop(FINALIZE_ENV, "1") != "0"
    server_pid = os.getpid()
    # The preloaded objects never die: kept out of the collector's sight, a command's collections neither walk
    # them nor write their headers, which would copy every page of the shared heap into each command.
    gc.freeze()
    if threading.active_count() != 1:  # a fork copies one thread: a lock another thread holds would never free
        raise SystemExit(f"a preloaded module started threads: {threading.enumerate()}")
    path = os.environ[SOCKET_ENV]
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.rename(path + ".tmp", path)  # the socket appears once it accepts
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
    handlers: set[int] = set()
    try:
        parent = os.getppid()
        listener.settimeout(1.0)
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if os.getppid() != parent:  # the test process is gone (killed): so is the need for a server
                    raise SystemExit(0) from None
                continue
            conn.setblocking(True)
            for pid in [p for p in handlers if os.waitpid(p, os.WNOHANG)[0]]:  # waited for: their CPU is counted
                handlers.discard(pid)
            pid = os.fork()
            if pid == 0:
                listener.close()
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                try:
                    _handle(conn)
                except SystemExit:
                    raise  # the command process ends here
                except BaseException:  # the handler failed: the script says so
                    traceback.print_exc()
                    os._exit(70)
            handlers.add(pid)
            conn.close()
    finally:  # SIGTERM: wait for the commands still running, so that their CPU time reaches the test's counts
        if os.getpid() == server_pid:
            for pid in handlers:
                os.waitpid(pid, 0)


@contextmanager
def forked_cli(
    folder: Path,
    env: dict[str, str],
    preload: tuple[str, ...] | None = None,
    also: tuple[str, ...] = (),
    finalize: bool = True,
) -> Iterator[dict[str, str]]:
    """Start the server with `env`; yield `env` with `folder` (holding the `critiquebench` script) first on PATH
    and the server's socket named. The server and any command still running are stopped at the end. The server
    imports `preload` (e.g. `LIGHT`), else everything a study uses (~8 s of CPU, worth it for many studies), and
    then `also` (libraries several of the caller's commands import inside functions, e.g. scikit-learn); each
    command imports the rest it needs, as the installed command does. With `finalize=False` a command ends
    without the interpreter's finalization (`_end`: threads joined, atexit run, streams flushed, then
    `os._exit`), ~0.28 s of CPU less per command: for tests that run many commands and check what they print,
    write and exit with, not how the interpreter tears itself down."""
    folder.mkdir(parents=True, exist_ok=True)
    sock = folder / "cli.sock"
    for name in ("critiquebench", "forked-python"):
        script = folder / name
        script.write_text(SCRIPT.format(python=sys.executable, socket_env=SOCKET_ENV, name=name), encoding="utf-8")
        script.chmod(0o755)
    env = {**env, SOCKET_ENV: str(sock), "PATH": f"{folder}{os.pathsep}{env.get('PATH', '')}"}
    log = folder / "server.log"
    with open(log, "wb") as out:
        wanted = {PRELOAD_ENV: "all" if preload is None else ",".join(preload), ALSO_ENV: ",".join(also),
                  FINALIZE_ENV: "1" if finalize else "0"}  # fmt: skip
        server = subprocess.Popen([sys.executable, "-c", "from tests.forked_cli import serve; serve()"],
                                  env={**env, **wanted}, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                  start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not sock.exists():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the fork server did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.05)
        yield env
    finally:
        server.terminate()
        try:
            server.wait(60)
        finally:
            with suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)  # any command left running
            server.wait()


def run(args: list[str], env: dict[str, str], *, timeout: float = 300, cwd: Path | str = ROOT,
        input: str | None = None, limit_as: int | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """`subprocess.run(args, capture_output=True, text=True, ...)` for a command served by `forked_cli` (`env` is
    the one it yielded, extended as the test needs), with its address space capped at `limit_as` bytes if given.
    A command still running at `timeout` is stopped (SIGTERM forwarded to it, then SIGKILL) and TimeoutExpired
    raised, as subprocess.run does; killing the script alone would leave the command running in the server."""
    if limit_as is not None:
        env = {**env, LIMIT_AS_ENV: str(limit_as)}
    with subprocess.Popen(args, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                          env=env) as proc:  # fmt: skip
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()  # the script forwards it to the command
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
            raise
    return subprocess.CompletedProcess(args, proc.returncode, out, err)
