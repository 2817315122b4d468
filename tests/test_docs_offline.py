"""The docs site reads offline: built, served on loopback and opened in Chromium with every other host blocked,
no request fails, the scheme diagrams are drawn (inline SVG, generated at `docs/generate.py` time) and no web
font or diagram script is asked for. Audit (issue 43): Mermaid came from a CDN and Roboto from Google Fonts, so
the diagrams showed as source on a machine without network."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import sync_playwright

from tests.test_viewer import CHROMIUM

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("", "get-started/", "api/", "schemes/")  # the diagrams are counted on the last


def test_the_built_site_opens_with_the_network_blocked_and_draws_its_diagrams(built_site: Path) -> None:
    site = built_site  # `mkdocs build --strict`, once for this and tests/test_docs.py's build test (conftest)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    failed: list[str] = []
    outside: list[str] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            context = browser.new_context()

            def only_loopback(route: object) -> None:
                url = route.request.url  # type: ignore[attr-defined]
                if urlparse(url).hostname == "127.0.0.1" or url.startswith("data:"):
                    route.continue_()  # type: ignore[attr-defined]
                else:
                    outside.append(url)
                    route.abort()  # type: ignore[attr-defined]

            context.route("**/*", only_loopback)
            page = context.new_page()  # one tab: a new one for each page cost Chromium a renderer's start-up each
            page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
            page.on("response", lambda r: failed.append(f"{r.url}: {r.status}") if r.status >= 400 else None)
            for path in PAGES:
                # networkidle: no request for 500 ms, so one a page's layout or scripts start late is in, and every
                # request of a page has finished before the next page is asked for
                page.goto(base + path, wait_until="networkidle")
            drawn = page.locator(".scheme-graph svg").count()
            boxes = [page.locator(".scheme-graph svg").nth(i).bounding_box() for i in range(drawn)]
            browser.close()
    finally:
        server.shutdown()
    assert outside == [] and failed == [], (outside, failed)
    assert drawn == 3 and all(b and b["width"] > 100 and b["height"] > 100 for b in boxes), boxes
    html = (site / "schemes" / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis" not in html and "fonts.gstatic" not in html and 'class="mermaid"' not in html
