"""Endpoint URLs: their identity (for cache keys), their query (kept on every request), and their redacted form
(the only form stored in study definitions or shown in messages).

A base URL may carry secrets: credentials (`http://user:pw@host/v1`) or a key in its query string
(`http://host/v1?api-key=K`). They are needed to make requests, but never enter the store, an export, a log
line or an error message, and the identity of an endpoint does not depend on them.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"
# Query parameters whose values are secrets (matched case-insensitively against the whole name).
SECRET_NAME = re.compile(r"(api[-_]?key|key|token|access[-_]?token|secret|password|passwd|pwd|sig|signature|auth\w*|"
                         r"credentials?|code|session)", re.IGNORECASE)  # fmt: skip


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


def redact_url(url: str) -> str:
    """`url` with its credentials and secret-looking query values replaced by ***; other parts unchanged."""
    parts = urlsplit(url.strip())
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode([(k, REDACTED if SECRET_NAME.fullmatch(k) else v) for k, v in pairs], safe="*")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


_USERINFO = re.compile(r"(?<=://)[^/@\s'\"]+@")
_SECRET_PAIR = re.compile(r"(?<=[?&])(\w[\w-]*)=([^&#\s'\"]*)")


def redact_text(text: str) -> str:
    """`text` (an error message, say) with URL credentials and secret-looking query values replaced by ***."""
    text = _USERINFO.sub(f"{REDACTED}@", text)
    return _SECRET_PAIR.sub(lambda m: f"{m[1]}={REDACTED}" if SECRET_NAME.fullmatch(m[1]) else m[0], text)
