"""A deadline on the whole of one HTTP request: connecting, sending, and reading the reply to its last byte.

httpx's timeouts (and so the OpenAI SDK's and ChatOpenAI's `timeout`) bound each network operation, not the
request: a server that sends one byte a second never lets a read wait long, so a reply body that never ends is
never cut off. `deadline_client(seconds)` is the SDK's default HTTP client with two event hooks:

- when the request goes out, its deadline is set `seconds` from now (every phase's timeout is at most that);
- when the reply's headers have come, a reply past its deadline fails at once; otherwise a timer shuts the
  connection's socket down at the deadline (a read blocked on it returns at once), and the body stops with
  `ReplyDeadline` (an `httpx2.ReadTimeout`, so the SDK reports a timeout and the client retries it like any
  other). A body complete in time cancels the timer before the connection goes back to the pool. The timers
  are entries in one watchdog thread per process (`_Watchdog`), not a thread each: starting a thread per call
  cost more CPU than the rest of this module's work.

The headers come before any hook sees the reply, so the connections' reads themselves are bounded too: the
client's connection pool reads through `_DeadlineBackend`, whose every read (the headers' included) waits at
most until the deadline of the request its thread is sending (kept per thread by the request hook), and fails
with `ReplyDeadline` after it. A server that sends one header line a second is cut at the deadline like a body
that trickles (before, it hung the call: each read waited less than the timeout, for ever).
"""

from __future__ import annotations

import heapq
import itertools
import socket
import threading
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

import openai

try:  # the HTTP library of the OpenAI SDK installed: httpx2 from its 3.x, httpx before
    import httpcore2
    import httpx2
except ImportError:  # pragma: no cover - older SDKs
    import httpcore as httpcore2  # type: ignore[no-redef]
    import httpx as httpx2  # type: ignore[no-redef]

_DEADLINE = "critiquebench.deadline"  # the request extension holding its monotonic deadline
# (deadline, seconds, request) of the request this thread is sending: httpx's sync client sends a request and reads
# its reply in the thread that called it, so the connection's reads find their deadline here
_sending = threading.local()


class ReplyDeadline(httpx2.ReadTimeout):
    """The reply was not complete by the request's deadline."""


def deadline_client(seconds: float) -> httpx2.Client:
    """The OpenAI SDK's default HTTP client (its limits, redirects, proxies from the environment), with every
    request bounded by `seconds` in all (see module docstring)."""
    hooks = {"request": [partial(_start, seconds)], "response": [partial(_check, seconds)]}
    client = openai.DefaultHttpxClient(event_hooks=hooks)
    for transport in [client._transport, *client._mounts.values()]:  # the default one, and any proxy's
        pool = getattr(transport, "_pool", None)
        if pool is not None and isinstance(getattr(pool, "_network_backend", None), httpcore2.NetworkBackend):
            pool._network_backend = _DeadlineBackend(pool._network_backend)
    return client


def _start(seconds: float, request: httpx2.Request) -> None:
    request.extensions[_DEADLINE] = deadline = time.monotonic() + seconds
    _sending.now = (deadline, seconds, request)


def _check(seconds: float, response: httpx2.Response) -> None:
    request = response.request
    deadline = request.extensions.get(_DEADLINE)
    if deadline is None:
        return
    left = deadline - time.monotonic()
    if left <= 0:
        raise _late(seconds, request)
    timeouts = request.extensions.get("timeout")
    if isinstance(timeouts, dict):  # the transport reads the body's read timeout from here when the body starts
        read = timeouts.get("read")
        timeouts["read"] = left if read is None else min(read, left)
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    response.stream = _DeadlineStream(response.stream, deadline, seconds, request, sock)


def _late(seconds: float, request: httpx2.Request) -> ReplyDeadline:
    return ReplyDeadline(f"no complete reply within {seconds:g} s (the call's timeout)", request=request)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """The pool's network backend, its connections' reads bounded by their thread's request deadline."""

    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore2.NetworkStream:
        return _BoundedStream(self._inner.connect_tcp(*args, **kwargs))

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore2.NetworkStream:
        return _BoundedStream(self._inner.connect_unix_socket(*args, **kwargs))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _BoundedStream(httpcore2.NetworkStream):
    """A connection whose reads wait at most until the deadline of the request its thread is sending."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        sending = getattr(_sending, "now", None)
        if sending is None:
            return self._inner.read(max_bytes, timeout)
        deadline, seconds, request = sending
        left = deadline - time.monotonic()
        if left <= 0:
            raise _late(seconds, request)
        try:
            return self._inner.read(max_bytes, left if timeout is None else min(timeout, left))
        except httpcore2.ReadTimeout as exc:
            if time.monotonic() >= deadline:
                raise _late(seconds, request) from exc
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, *args: Any, **kwargs: Any) -> httpcore2.NetworkStream:
        return _BoundedStream(self._inner.start_tls(*args, **kwargs))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Watchdog:
    """One daemon thread calling each scheduled function at its monotonic time, unless cancelled first."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[list[Any]] = []  # [when, sequence, function or None once cancelled, argument]
        self._cancelled = 0
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def schedule(self, when: float, fn: Any, arg: Any) -> list[Any]:
        entry = [when, next(self._order), fn, arg]
        with self._cond:
            heapq.heappush(self._heap, entry)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="critiquebench-deadlines", daemon=True)
                self._thread.start()
            elif self._heap[0] is entry:  # sooner than what the thread waits for
                self._cond.notify()
        return entry

    def cancel(self, entry: list[Any]) -> None:
        with self._cond:
            if entry[2] is None:
                return
            entry[2] = entry[3] = None
            self._cancelled += 1
            # cancelled entries are dropped as they come up; most replies end long before their deadline, so the
            # heap is rebuilt without them when they are most of it
            if self._cancelled > 1000 and 2 * self._cancelled > len(self._heap):
                self._heap = [e for e in self._heap if e[2] is not None]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    while self._heap and self._heap[0][2] is None:
                        heapq.heappop(self._heap)
                        self._cancelled -= 1
                    if not self._heap:
                        self._cond.wait()
                        continue
                    left = self._heap[0][0] - time.monotonic()
                    if left <= 0:
                        entry = heapq.heappop(self._heap)
                        fn, arg = entry[2], entry[3]
                        entry[2] = entry[3] = None  # fired: a late cancel has nothing to do
                        break
                    self._cond.wait(left)
            fn(arg)


_watchdog = _Watchdog()


class _DeadlineStream(httpx2.SyncByteStream):
    """A reply body that fails once its request's deadline has passed."""

    def __init__(
        self, inner: Any, deadline: float, seconds: float, request: httpx2.Request, sock: socket.socket | None
    ) -> None:
        self._inner, self._deadline, self._seconds, self._request = inner, deadline, seconds, request
        self._lock = threading.Lock()
        self._done = False
        self._timer: list[Any] | None = None
        if sock is not None:
            self._timer = _watchdog.schedule(deadline, self._cut, sock)

    def _cut(self, sock: socket.socket) -> None:
        with self._lock:
            if self._done:
                return
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # closed meanwhile
                pass

    def _stop_timer(self) -> None:
        with self._lock:
            self._done = True
        if self._timer is not None:
            _watchdog.cancel(self._timer)
            self._timer = None

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                if time.monotonic() > self._deadline:
                    raise _late(self._seconds, self._request)
                yield chunk
        except httpx2.TransportError as exc:  # the timer cut the connection: say why
            if time.monotonic() > self._deadline:
                raise _late(self._seconds, self._request) from exc
            raise
        finally:
            self._stop_timer()

    def close(self) -> None:
        self._stop_timer()
        self._inner.close()
