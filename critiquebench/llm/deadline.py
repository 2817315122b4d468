"""A deadline on the whole of one HTTP request: connecting, sending, and reading the reply to its last byte.

httpx's timeouts (and so the OpenAI SDK's and ChatOpenAI's `timeout`) bound each network operation, not the
request: a server that sends one byte a second never lets a read wait long, so a reply body that never ends is
never cut off. `deadline_client(seconds)` is the SDK's default HTTP client with two event hooks:

- when the request goes out, its deadline is set `seconds` from now (every phase's timeout is at most that);
- when the reply's headers have come, a reply past its deadline fails at once; otherwise a timer shuts the
  connection's socket down at the deadline (a read blocked on it returns at once), and the body stops with
  `ReplyDeadline` (an `httpx2.ReadTimeout`, so the SDK reports a timeout and the client retries it like any
  other). A body complete in time cancels the timer before the connection goes back to the pool.

A reply whose headers themselves trickle is bounded per read only: the hooks run once the headers are complete.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

import openai

try:  # the HTTP library of the OpenAI SDK installed: httpx2 from its 3.x, httpx before
    import httpx2
except ImportError:  # pragma: no cover - older SDKs
    import httpx as httpx2  # type: ignore[no-redef]

_DEADLINE = "critiquebench.deadline"  # the request extension holding its monotonic deadline


class ReplyDeadline(httpx2.ReadTimeout):
    """The reply was not complete by the request's deadline."""


def deadline_client(seconds: float) -> httpx2.Client:
    """The OpenAI SDK's default HTTP client (its limits, redirects, proxies from the environment), with every
    request bounded by `seconds` in all (see module docstring)."""
    hooks = {"request": [partial(_start, seconds)], "response": [partial(_check, seconds)]}
    return openai.DefaultHttpxClient(event_hooks=hooks)


def _start(seconds: float, request: httpx2.Request) -> None:
    request.extensions[_DEADLINE] = time.monotonic() + seconds


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


class _DeadlineStream(httpx2.SyncByteStream):
    """A reply body that fails once its request's deadline has passed."""

    def __init__(
        self, inner: Any, deadline: float, seconds: float, request: httpx2.Request, sock: socket.socket | None
    ) -> None:
        self._inner, self._deadline, self._seconds, self._request = inner, deadline, seconds, request
        self._lock = threading.Lock()
        self._done = False
        self._timer: threading.Timer | None = None
        if sock is not None:
            self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._cut, [sock])
            self._timer.daemon = True
            self._timer.start()

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
            self._timer.cancel()

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
