"""Check an endpoint before a study spends anything on it: one request that finds the usual set-up mistakes.

`preflight(base_url, model, timeout)` lists the endpoint's models (`GET {base_url}/models`) and raises
`PreflightError` (one line naming the likely fix) when
- the connection is refused (is the server running?);
- the endpoint answers 401/403: the key in `$OPENAI_API_KEY` is missing or refused;
- it answers 404: the base URL usually ends in `/v1` (when `{base_url}/v1` answers, the error names that URL);
- it lists its models and `model` is not among them (the error lists the served ones: llama.cpp's server would
  answer any name with its one model, and the study would be recorded under the wrong name).
An endpoint with no model list (404 under `/v1`) gets one probe call instead (one token). Anything else (a 5xx, a
429, a slow or odd answer) is left to the calls' own retries. Nothing here enters the store; messages show the
URL with its secrets redacted.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import os
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit, urlunsplit

from critiquebench.llm.errors import LLMError
from critiquebench.llm.urls import redact_url, split_query

log = logging.getLogger(__name__)

API_KEY_ENV = "OPENAI_API_KEY"
_SHOWN_MODELS = 10


class PreflightError(LLMError):
    """The endpoint cannot serve the study as configured. `kind` says what is wrong: "unreachable", "key", "url"
    (then `base_url` is the URL to use instead, when one answered) or "model"."""

    def __init__(self, message: str, kind: str, base_url: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.base_url = base_url


@dataclass(frozen=True)
class _Reply:
    status: int  # 0: no HTTP answer (see `reason`)
    body: bytes = b""
    reason: str = ""
    refused: bool = False


def _request(url: str, query: dict[str, str], timeout: float, payload: dict[str, Any] | None = None) -> _Reply:
    """The endpoint's reply, or status 0 when none came complete within `timeout` in all: urllib's timeout bounds
    each read, so a server trickling header lines held the check (and the run) for as long as it went on. The
    request runs in a daemon thread, left to end on its own when the deadline passes."""
    got: list[_Reply] = []
    worker = threading.Thread(target=lambda: got.append(_request_now(url, query, timeout, payload)), daemon=True,
                              name="endpoint-check")  # fmt: skip
    worker.start()
    worker.join(timeout)
    return got[0] if got else _Reply(0, reason=f"no complete reply within {timeout:g} s")


def _request_now(url: str, query: dict[str, str], timeout: float, payload: dict[str, Any] | None) -> _Reply:
    parts = urlsplit(url)
    userinfo, _, host = parts.netloc.rpartition("@")
    full = urlunsplit(parts._replace(netloc=host, query=urlencode(query)))
    # the one Authorization header the chat client sends: the URL's credentials as HTTP Basic auth, else the key
    if userinfo:
        user, _, password = userinfo.partition(":")
        token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
        headers = {"Authorization": f"Basic {token}"}
    else:
        headers = {"Authorization": f"Bearer {os.environ.get(API_KEY_ENV) or 'sk-no-key'}"}
    data = None
    if payload is not None:
        data = json.dumps(payload).encode()
        headers["Content-Type"] = "application/json"
    try:
        request = urllib.request.Request(full, data=data, headers=headers, method="POST" if data else "GET")  # noqa: S310
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the user's endpoint
            return _Reply(response.status, response.read(1_000_000))
    except urllib.error.HTTPError as exc:
        return _Reply(exc.code, exc.read(100_000) if exc.fp else b"")
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:  # ValueError: InvalidURL
        # HTTPException: a reply HTTP cannot read (more than 100 header lines, a bad status line)
        reason = getattr(exc, "reason", exc)
        refused = isinstance(reason, ConnectionRefusedError) or "Connection refused" in str(reason)
        return _Reply(0, reason=type(reason).__name__ if isinstance(reason, BaseException) else "", refused=refused)


def _join(base: str, route: str) -> str:
    return base.rstrip("/") + "/" + route


def _served(body: bytes) -> list[str] | None:
    """The model ids of a /models answer, or None when it is not an OpenAI-style list."""
    try:
        data = json.loads(body).get("data")
        return [str(item["id"]) for item in data if isinstance(item, dict) and "id" in item]
    except (ValueError, AttributeError, TypeError, KeyError):
        return None


def _auth_error(shown: str, status: int) -> PreflightError:
    if "@" in urlsplit(shown).netloc:
        return PreflightError(f"{shown} refused the credentials in the URL ({status}): fix the user:password@ part",
                              "key")  # fmt: skip
    if os.environ.get(API_KEY_ENV):
        return PreflightError(f"{shown} refused the API key in ${API_KEY_ENV} ({status}): set it to a key this "
                              "endpoint accepts", "key")  # fmt: skip
    return PreflightError(f"{shown} needs an API key ({status}) and ${API_KEY_ENV} is not set: export "
                          f"{API_KEY_ENV}=YOUR_KEY", "key")  # fmt: skip


def preflight(base_url: str, model: str, timeout: float = 10.0) -> None:
    """Raise PreflightError when the endpoint at `base_url` cannot serve `model` (see the module docstring)."""
    base, query = split_query(base_url)
    shown = redact_url(base_url)
    timeout = min(timeout, 30.0)
    listed = _request(_join(base, "models"), query, timeout)
    if listed.status == 0:  # refused, or no answer: a study whose runs are all copied needs no endpoint, and the
        # first real call stops the study at once when it cannot connect (llm.client)
        log.warning("could not list the models of %s (%s); going ahead", shown, listed.reason)
        return
    if listed.status in (401, 403):
        raise _auth_error(shown, listed.status)
    if listed.status == 404:
        _no_model_list(base, query, shown, model, timeout)
        return
    if listed.status != 200:
        log.warning("%s answered %d to GET /models; going ahead", shown, listed.status)
        return
    served = _served(listed.body)
    if served and model not in served:
        names = ", ".join(served[:_SHOWN_MODELS]) + (", ..." if len(served) > _SHOWN_MODELS else "")
        hint = f"pass --model {served[0]}" if len(served) == 1 else "pass --model with one of them"
        raise PreflightError(f"model {model!r} is not served at {shown}, which serves: {names}: {hint}", "model")


def _no_model_list(base: str, query: dict[str, str], shown: str, model: str, timeout: float) -> None:
    """GET /models answered 404: a base URL missing its /v1, or an endpoint that lists no models."""
    if not urlsplit(base).path.rstrip("/").endswith("/v1"):
        if _request(_join(base, "v1/models"), query, timeout).status in (200, 401, 403):
            fixed = _v1_url(base, query)
            raise PreflightError(f"{shown} answers 404 at /models, {redact_url(fixed)} has the OpenAI API: the "
                                 "base URL ends in /v1", "url", base_url=fixed)  # fmt: skip
        raise PreflightError(f"{shown} answers 404 at /models: give the API's root as --base-url, which usually "
                             "ends in /v1", "url")  # fmt: skip
    # not a study prompt: one token of anything tells whether the route and the model exist
    ping = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
    probe = _request(_join(base, "chat/completions"), query, timeout, ping)
    if probe.status in (401, 403):
        raise _auth_error(shown, probe.status)
    if probe.status == 404:
        text = probe.body.decode("utf-8", "replace").lower()
        if "model" in text:
            raise PreflightError(f"model {model!r} is not served at {shown} (404): check --model", "model")
        raise PreflightError(f"{shown} answers 404 at /chat/completions: check --base-url", "url")


def _v1_url(base: str, query: dict[str, str]) -> str:
    """`base` with /v1 appended to its path, its query kept."""
    parts = urlsplit(_join(base, "v1"))
    return urlunsplit(parts._replace(query=urlencode(query))) if query else urlunsplit(parts)
