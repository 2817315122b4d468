"""The viewer as a local web server (loopback, a free port) or as static files that open from disk.

The page (static/index.html, app.js, style.css, all shipped in the package: no CDN, no network) asks for its
data by path (`index`, `study/KEY`, `runs/KEY`, `search/KEY`, `run/ROWID`, `text/REF`; see `critiquebench.viewer.data`).
Paths hold only numbers the viewer made (a study's position in the index, a run's row id), never stored text.

Two modes, because a page opened from `file://` cannot `fetch` files:
- served: `critiquebench view` answers `data/PATH.json` as JSON, under a per-launch random token in the URL
  path (as Jupyter does), only for a `Host` of the bound address, with a Content-Security-Policy,
  `nosniff` and a same-origin resource policy and no CORS header. Another origin (another port or loopback
  address, a `file://` page, a DNS-rebinding page) can neither guess the URL nor read a response: no data is
  ever served as a script;
- static: `view --output DIR` writes `DIR/data/PATH.js` scripts calling `CB.put(PATH, payload)`, the one way a
  page opened from disk can load local files. Their readers are whoever can read DIR, as for any file.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from critiquebench.outputs import json_text
from critiquebench.store.reads import unrecorded_answers
from critiquebench.viewer import data

log = logging.getLogger(__name__)

ASSETS = ("index.html", "app.js", "style.css")
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css",
          ".json": "application/json; charset=utf-8"}  # fmt: skip
_DATA_RE = re.compile(
    r"^data/(index|(?:study|runs|search)/\d{1,9}|run/\d{1,19}|text/(?:\d{1,19}/)?[0-9a-f]{32})\.json$"
)
# The page needs its own scripts, styles and data only: no inline script, no other origin, no framing.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")  # fmt: skip
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def asset(name: str) -> bytes:
    return resources.files("critiquebench.viewer").joinpath("static", name).read_bytes()


def _json(payload: Any) -> str:
    return json_text(payload, ensure_ascii=False, separators=(",", ":"), default=str)


def script(path: str, payload: Any) -> bytes:
    """The data script for `path` of the static export: a call that hands the payload to the page."""
    # "</" inside a string would end an inline script; the page loads these as files, but stay safe anyway
    body = _json(payload).replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"CB.put({json.dumps(path)},{body});\n".encode()


def payload(db: Any, path: str, names: list[str]) -> Any:
    """The data behind one data path."""
    kind, _, arg = path.partition("/")
    if kind == "index":
        return data.index(db, names)
    if kind == "study":
        return data.study(db, data.study_name(db, names, arg))
    if kind == "runs":
        return data.runs(db, data.study_name(db, names, arg))
    if kind == "search":
        return data.search(db, data.study_name(db, names, arg))
    shown = [s["name"] for s in data.index(db, names)["studies"]]
    if kind == "text":  # a long text of a run, as the run's payload referenced it
        rowid, _, key = arg.partition("/")
        return {"text": data.text(db, int(rowid), key, studies=shown)}
    return data.run(db, int(arg), studies=shown)


class ViewerServer:
    """Serves the viewer of one store on 127.0.0.1 at a free port; `url` (with its token) is where to point a
    browser."""

    def __init__(self, store: Path, names: list[str], port: int = 0) -> None:
        self.store, self.names = Path(store), names
        with closing(data.open_readonly(self.store)) as db:  # a missing store or study fails here, not in a page
            self.skipped = data.index(db, names)["skipped"]
        self.token = secrets.token_urlsafe(24)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self._respond))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{self.token}/"

    def _respond(self, path: str, host: str | None) -> tuple[int, str, bytes]:
        # DNS rebinding: a page of another name resolved to 127.0.0.1 sends its own name as Host
        if host not in (f"127.0.0.1:{self.port}", f"localhost:{self.port}"):
            return HTTPStatus.FORBIDDEN, "text/plain", b"wrong Host: open the address critiquebench view printed"
        path = path.split("?", 1)[0]
        prefix = f"/{self.token}/"
        if not path.startswith(prefix) or not secrets.compare_digest(path[: len(prefix)], prefix):
            return HTTPStatus.NOT_FOUND, "text/plain", b"not found: open the address critiquebench view printed"
        rest = path[len(prefix) :]
        if rest in ("", "index.html"):
            return HTTPStatus.OK, _TYPES[".html"], asset("index.html")
        if rest.startswith("assets/") and rest[len("assets/") :] in ASSETS:
            name = rest[len("assets/") :]
            return HTTPStatus.OK, _TYPES[Path(name).suffix], asset(name)
        match = _DATA_RE.match(rest)
        if not match:
            return HTTPStatus.NOT_FOUND, "text/plain", b"not found"
        key = match.group(1)
        db = data.open_readonly(self.store)  # one connection per request: handler threads share nothing
        try:
            return HTTPStatus.OK, _TYPES[".json"], _json(payload(db, key, self.names)).encode()
        except LookupError as exc:
            return HTTPStatus.NOT_FOUND, _TYPES[".json"], _json({"error": str(exc)}).encode()
        finally:
            db.conn.close()

    def start(self) -> ViewerServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="viewer", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ViewerServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler(respond: Callable[[str, str | None], tuple[int, str, bytes]]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            try:
                status, ctype, body = respond(self.path, self.headers.get("Host"))
            except Exception as exc:  # a bad store row must not kill the server; the page shows the failed load
                log.warning("viewer: %s failed: %s: %s", self.path.split("?")[0], type(exc).__name__, exc)
                status, ctype, body = HTTPStatus.INTERNAL_SERVER_ERROR, "text/plain", b"internal error"
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for name, value in _HEADERS.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            log.debug("viewer: " + format, *args)

    return Handler


def export_static(store: Path, names: list[str], out: Path) -> tuple[int, list[str]]:
    """Write the viewer with every payload of the chosen studies under `out`; return how many files, and the
    stored study names left out because they are not valid names. The files are written beside `out` and moved
    in once all are written (`critiquebench.outputs.output_folder`): a failure leaves `out` as it was."""
    from critiquebench.outputs import check_output, output_folder

    check_output(out, [store], folder=True)  # before the store is read
    with closing(data.open_readonly(store, live=False)) as db, output_folder(out, [store]) as staging:
        written = 0
        for name in ASSETS:
            target = staging / ("index.html" if name == "index.html" else f"assets/{name}")
            _write(target, asset(name))
            written += 1
        idx = data.index(db, names)
        for key, body in _payloads(db, idx):
            # keys are made of our own words and numbers (`_DATA_RE`), so the file stays under out/data
            if not _DATA_RE.match(f"data/{key}.json"):
                raise ValueError(f"refusing to write data path {key!r}")
            _write(staging / "data" / f"{key}.js", script(key, body))
            written += 1
        return written, idx["skipped"]


def _payloads(db: Any, idx: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    yield "index", idx
    cache = data.has_cache(db)
    for entry in idx["studies"]:
        name, key = entry["name"], entry["key"]
        yield f"study/{key}", data.study(db, name)
        if entry["kind"] == "verify":
            continue
        runs = data.runs(db, name)
        yield f"runs/{key}", runs
        yield f"search/{key}", data.search(db, name)
        ids = [row[0] for row in runs["rows"]]
        # the generator prompts found by answer, for the rounds whose calls were not recorded (older stores)
        prompts = data.prompts_for(db, unrecorded_answers(db, name)) if cache else {}
        for rowid in ids:
            texts: dict[str, str] = {}  # the run's long texts, each written once under its digest
            yield f"run/{int(rowid)}", data.run(db, rowid, prompts, texts=texts)
            for key, text in texts.items():
                yield f"text/{key}", {"text": text}


def _write(path: Path, body: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
