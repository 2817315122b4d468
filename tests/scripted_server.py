"""A scripted OpenAI-compatible chat server on loopback, for tests and benchmarks needing a real endpoint.

    with ScriptedServer(reply=[("capital of France", "Paris")], default="I don't know") as server:
        settings = LLMSettings(model="scripted", base_url=server.base_url)
        ...
        assert server.answered == 1

Endpoint checks (all off by default, so the server answers any path ending in a route, any key and any model):
`api_key` (requests without `Authorization: Bearer <api_key>` get 401), `strict_paths` (only `/v1/models` and
`/v1/chat/completions` are routes, as on real servers: a base URL without `/v1` gets 404), `models` (the ids
`GET /models` lists; by default none, so an endpoint check lets any model name through) and `strict_models` (a
chat request naming a model not in `models` gets OpenAI's 404 `model_not_found`; off, any name is answered, as
llama.cpp's server does).

`reply` is a string, a list of (substring of the last user message, reply) rules tried in order, or a callable
`reply(messages, params) -> str` that gets the full message list and the request's other fields (temperature,
max_completion_tokens, stop, ...); a reply is cut before the request's first stop sequence, as OpenAI's
servers cut it. All attributes documented on `ScriptedServer` may be changed while it runs.

Faults (queued with `queue_fault(kind)`, or drawn at random with `fault_rate` from `faults`):
"400" (a bad request: not worth retrying), "429" (with a Retry-After header of `retry_after` seconds),
"500", "503", "hang" (answers only after `hang_s`,
i.e. past any sensible client timeout), "drop" (closes the connection without an answer), "garbage" (a 200
whose body is not JSON), "error200" (a 200 whose JSON body is an error object, which the client reports
as a ValueError: not a transient fault), "trickle" (a 200 whose chunked body sends `{`, then one space every
`trickle_s` seconds until the client gives up or the server stops: a reply that never ends).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

FAULT_KINDS = ("400", "429", "500", "503", "hang", "drop", "garbage", "error200", "trickle")

Reply = str | Sequence[tuple[str, str]] | Callable[[list[dict[str, Any]], dict[str, Any]], str]


class ScriptedServer:
    """`port` 0 (the default) takes any free port; a fixed one serves a store whose recorded calls name it.

    Attributes: `reply`, `default`, `latency` (seconds before each answer), `fault_rate`, `faults`,
    `retry_after`, `hang_s`, `trickle_s`, `usage` (False: answers carry no token usage; a dict: the `usage`
    object every answer carries, as it is, e.g. absurd counts), `echo_errors` (error bodies quote the
    request's path, query and Authorization header). Counters: `requests` (chat
    requests received, faulted ones included), `answered`, `faulted`; `calls` holds (messages, params) of the
    answered ones; `arrivals` the monotonic arrival time of every chat request; `max_in_flight` the most chat
    requests handled at once; `authorization` the last Authorization header seen; `paths` the request target
    (path and query string) of every POST.
    """

    def __init__(
        self,
        reply: Reply = "OK",
        *,
        default: str = "OK",
        latency: float = 0.0,
        fault_rate: float = 0.0,
        faults: Sequence[str] = ("429", "500"),
        seed: int = 0,
        retry_after: float = 0.05,
        hang_s: float = 30.0,
        usage: bool | dict[str, Any] = True,
        port: int = 0,
        api_key: str | None = None,
        strict_paths: bool = False,
        models: Sequence[str] = (),
        strict_models: bool = False,
        backlog: int | None = None,
    ) -> None:
        for kind in faults:
            _check_kind(kind)
        self.reply, self.default, self.latency = reply, default, latency
        self.fault_rate, self.faults, self.retry_after, self.hang_s = (
            fault_rate,
            tuple(faults),
            retry_after,
            hang_s,
        )
        self.usage = usage
        self.trickle_s = 1.0
        self.models_latency = 0.0  # seconds before answering `GET /models` (an endpoint check that takes a while)
        # an Event: `GET /models` answers only once it is set (at most 60 s on), so a test holds an endpoint check
        # exactly as long as it needs, not for a latency long enough on a busy machine
        self.models_gate: threading.Event | None = None
        self.echo_errors = False  # error bodies quote the request target and Authorization, as some servers do
        self.api_key, self.strict_paths, self.models, self.strict_models = (
            api_key,
            strict_paths,
            tuple(models),
            strict_models,
        )
        self.gets: list[str] = []  # the request target of every GET
        self.requests = self.answered = self.faulted = 0
        self.calls: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []
        self.arrivals: list[float] = []  # monotonic time of each chat request, in arrival order
        self.in_flight = self.max_in_flight = 0
        self.authorization: str | None = None
        self.paths: list[str] = []  # the request target (path and query) of every POST, routed or not
        self._queued: deque[str] = deque()
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        # `backlog`: connections the listening socket queues before accepting them (None: the standard library's
        # 5). Many clients connecting at once (a benchmark's 64 in flight) overflow 5, and the kernel answers some
        # of them with SYN cookies whose connections may then be reset.
        server_class = ThreadingHTTPServer if backlog is None else _with_backlog(backlog)
        self._httpd = server_class(("127.0.0.1", port), _handler_for(self))  # 0: any free port
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def root_url(self) -> str:
        """The server's root, without `/v1` (the mistake `strict_paths` answers with 404)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def queue_fault(self, kind: str, times: int = 1) -> None:
        """Make the next `times` chat requests fail with `kind` (before any random faults)."""
        _check_kind(kind)
        with self._lock:
            self._queued.extend([kind] * times)

    def start(self) -> ScriptedServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="scripted-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes "hang" handlers
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- used by the request handler -------------------------------------------------------------------------
    def _admit(self, authorization: str | None) -> str | None:
        """Count a request and decide its fault (None: answer normally)."""
        with self._lock:
            self.requests += 1
            self.authorization = authorization
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.arrivals.append(time.monotonic())
            if self._queued:
                fault: str | None = self._queued.popleft()
            elif self.fault_rate and self._random.random() < self.fault_rate:
                fault = self._random.choice(self.faults)
            else:
                fault = None
            if fault is not None:
                self.faulted += 1
            return fault

    def _answer(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        reply = self.reply
        if callable(reply):
            text = reply(messages, params)
        elif isinstance(reply, str):
            text = reply
        else:
            last_user = next(
                (m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), ""
            )
            text = next((answer for needle, answer in reply if needle in str(last_user)), self.default)
        stop = params.get("stop")
        for seq in [stop] if isinstance(stop, str) else stop or ():  # as OpenAI does: cut before the first one
            text = str(text).split(seq)[0] if seq else text
        with self._lock:
            self.answered += 1
            self.calls.append((messages, params))
        return str(text)


def _check_kind(kind: str) -> None:
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault {kind!r}; choose from {FAULT_KINDS}")


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like real endpoints
        disable_nagle_algorithm = True  # headers and body go out as separate writes

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence per-request logging
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
            if server.echo_errors:
                message += f" (request {self.path}, Authorization: {self.headers.get('Authorization')})"
            body = {"error": {"message": message, "type": "scripted_fault", "code": status}}
            self._send(status, json.dumps(body).encode(), headers)

        def _trickle(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"1\r\n{\r\n")
            while not server._stopping.wait(server.trickle_s):
                self.wfile.write(b"1\r\n \r\n")
                self.wfile.flush()
            self.close_connection = True

        def _routed(self, route: str) -> bool:
            path = urlsplit(self.path).path.rstrip("/")
            return path == f"/v1{route}" if server.strict_paths else path.endswith(route)

        def _authorized(self) -> bool:
            """False (and a 401 sent) when the server wants a key and the request lacks it."""
            if server.api_key is None or self.headers.get("Authorization") == f"Bearer {server.api_key}":
                return True
            body = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                              "code": "invalid_api_key"}}  # fmt: skip
            self._send(401, json.dumps(body).encode())
            return False

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            with server._lock:
                server.gets.append(self.path)
            if not self._routed("/models"):
                self._error(404, f"no route {self.path}")
            elif self._authorized():
                time.sleep(server.models_latency)
                if server.models_gate is not None:
                    server.models_gate.wait(60)
                data = [{"id": model, "object": "model"} for model in server.models]
                self._send(200, json.dumps({"object": "list", "data": data}).encode())

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            with server._lock:
                server.paths.append(self.path)
            if not self._routed("/chat/completions"):
                self._error(404, f"no route {self.path}")
                return
            if not self._authorized():
                return
            try:
                request = json.loads(raw)
                messages = list(request.pop("messages"))
            except (ValueError, KeyError, TypeError):
                self._error(400, "request body is not a chat completion request")
                return
            if server.strict_models and request.get("model") not in server.models:
                body = {"error": {"message": f"The model `{request.get('model')}` does not exist",
                                  "type": "invalid_request_error", "code": "model_not_found"}}  # fmt: skip
                self._send(404, json.dumps(body).encode())
                return
            fault = server._admit(self.headers.get("Authorization"))
            try:
                if fault is None or fault == "hang":
                    if fault == "hang" and server._stopping.wait(server.hang_s):
                        return
                    if server.latency:
                        time.sleep(server.latency)
                    text = server._answer(messages, request)
                    self._send(200, json.dumps(_completion(request, messages, text, server.usage)).encode())
                elif fault == "429":
                    self._error(429, "rate limited (scripted)", {"Retry-After": f"{server.retry_after:g}"})
                elif fault in ("400", "500", "503"):
                    self._error(int(fault), f"error {fault} (scripted)")
                elif fault == "garbage":
                    self._send(200, b"<html>this is not json{")
                elif fault == "error200":
                    self._send(200, json.dumps({"error": {"message": "content policy (scripted)"}}).encode())
                elif fault == "trickle":
                    self._trickle()
                elif fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.close_connection = True  # the client gave up (e.g. after its timeout)
            finally:
                with server._lock:
                    server.in_flight -= 1

    return Handler


def _completion(
    request: dict[str, Any], messages: list[dict[str, Any]], text: str, usage: bool | dict[str, Any]
) -> dict[str, Any]:
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages) + 3 * len(messages)
    completion_tokens = max(1, len(text.split()))
    body: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "scripted"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
    }
    if isinstance(usage, dict):
        body["usage"] = usage
    elif usage:
        body["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    return body


def _with_backlog(backlog: int) -> type[ThreadingHTTPServer]:
    """ThreadingHTTPServer listening with a queue of `backlog` connections (`socketserver`'s class attribute)."""
    return type("BackloggedHTTPServer", (ThreadingHTTPServer,), {"request_queue_size": max(1, int(backlog))})


@contextmanager
def serve_in_subprocess(latency: float = 0.0, backlog: int | None = None) -> Iterator[str]:
    """A scripted server in a child process (so it does not share this process's GIL); yields its base URL.
    `backlog`: as `ScriptedServer`'s (None: the standard library's 5).

    Benchmarks use it: a server in the measuring process would steal CPU from the side being measured.
    """
    project = Path(__file__).resolve().parents[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.scripted_server", str(latency), *([str(backlog)] if backlog else [])],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        assert server.stdin is not None
        server.stdin.close()  # the child serves until its stdin closes
        server.wait(10)


def _serve_until_stdin_closes(argv: list[str]) -> None:
    """`python -m tests.scripted_server [LATENCY [BACKLOG]]`: print the base URL, serve until stdin closes."""
    backlog = int(argv[1]) if len(argv) > 1 else None
    with ScriptedServer(latency=float(argv[0]) if argv else 0.0, backlog=backlog) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    _serve_until_stdin_closes(sys.argv[1:])
