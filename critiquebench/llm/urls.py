"""Endpoint URLs: their identity (for cache keys), their query (kept on every request), and their redacted form
(the only form stored in study definitions or shown in messages and logs).

A base URL may carry secrets: credentials (`http://user:pw@host/v1`) or a key in its query string
(`http://host/v1?api-key=K`, `?x-api-key=`, `?subscription-key=`, `?client_secret=`, ...). No list of names
can know every service's spelling, so every query value and all userinfo are treated as secret: they are
needed to make requests and live in memory only; the store, exports, pages, error lines and `-v` logs get
`***` in their place, and the identity of an endpoint does not depend on them.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

REDACTED = "***"
API_KEY_ENV = "OPENAI_API_KEY"
_MIN_SECRET = 3  # shorter values (`?v=1`) would blank out unrelated text wherever they occur

_USERINFO = re.compile(r"(?<=://)[^/@\s'\"]+@")
_QUERY_PAIR = re.compile(r"(?<=[?&])([^=&#\s'\"/?]+)=([^&#\s'\"]*)")
# An Authorization header echoed back by a server, e.g. in a 400's body: `Basic base64(user:pw)`, `Bearer key`.
# The value has a digit or `=` (base64 padding, keys), so prose such as "Basic authentication" is left alone.
_AUTH_VALUE = re.compile(r"\b(Basic|Bearer)\s+(?=[A-Za-z+/._~-]*[0-9=])[A-Za-z0-9+/=._~-]{8,}", re.IGNORECASE)

_known_lock = threading.Lock()
_known: set[str] = set()  # secrets met in URLs this process uses: never printed, whatever text carries them


def endpoint_identity(base_url: str) -> str:
    """`scheme://host[:port]/path` without credentials, query or trailing slashes."""
    parts = urlsplit(base_url.strip())
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}{port}{parts.path.rstrip('/')}"


def split_query(base_url: str) -> tuple[str, dict[str, str]]:
    """The base URL without its query string, and the query's parameters (sent with every request)."""
    parts = urlsplit(base_url.strip())
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit(parts._replace(query="", fragment="")), query


def has_userinfo(url: str) -> bool:
    return "@" in urlsplit(url.strip()).netloc


def redact_url(url: str) -> str:
    """`url` with its userinfo and every query value replaced by ***; scheme, host, port, path and the query's
    parameter names unchanged (they tell a reader which endpoint and which parameters, not their values)."""
    parts = urlsplit(url.strip())
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode([(k, REDACTED) for k, _ in pairs], safe="*")
    return urlunsplit(parts._replace(netloc=netloc, query=query, fragment=""))


def remember_secrets(url: str | None) -> None:
    """Note the secrets of a URL this process will use (userinfo, query values), so `redact_text` removes them
    from any text, in whatever form a library prints them (a dict of query params in a debug log, say)."""
    if not url:
        return
    parts = urlsplit(url.strip())
    found = [unquote(v) for _, v in parse_qsl(parts.query, keep_blank_values=True)]
    found += [v for _, v in parse_qsl(parts.query, keep_blank_values=True)]
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        password = userinfo.partition(":")[2]  # the user's name alone is no secret, and too common a word
        found += [userinfo, unquote(userinfo), password, unquote(password)]
    with _known_lock:
        _known.update(s for s in found if len(s) >= _MIN_SECRET)


def redact_text(text: str) -> str:
    """`text` (an error message, a log line) with URL userinfo, every query value, echoed Authorization values,
    `$OPENAI_API_KEY` and every secret of the URLs this process uses replaced by ***."""
    text = _USERINFO.sub(f"{REDACTED}@", text)
    text = _QUERY_PAIR.sub(lambda m: f"{m[1]}={REDACTED}", text)
    text = _AUTH_VALUE.sub(lambda m: f"{m[1]} {REDACTED}", text)
    with _known_lock:
        secrets = sorted(_known, key=len, reverse=True)  # a secret containing another goes first
    key = os.environ.get(API_KEY_ENV)
    for secret in ([key] if key and len(key) >= _MIN_SECRET else []) + secrets:
        text = text.replace(secret, REDACTED)
    return text


class RedactSecrets(logging.Filter):
    """A logging filter that passes every record with its message redacted (`redact_text`): httpx logs each
    request's full URL at INFO, and `-v` shows it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot format itself is left to the handler
            return True
        redacted = redact_text(message)
        if redacted != message or record.args:
            record.msg, record.args = redacted, None
        if record.exc_info and record.exc_text is None and record.exc_info[1] is not None:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def install_log_redaction() -> None:
    """Redact every log line this process prints: on the root logger's handlers (what `-v` shows) and on the
    HTTP clients' loggers (whose records reach handlers a caller may have added elsewhere)."""
    redactor = RedactSecrets()
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactSecrets) for f in handler.filters):
            handler.addFilter(redactor)
    for name in ("httpx", "httpcore", "openai", "langchain_openai", "urllib3", "psycopg"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(redactor)
