"""The study behind `tests/data/old_layout_store.sqlite.gz`: a store written before long texts were stored once
(main at 05e4484, every answer inline in `llm_calls`, `attempts` and `runs`), stopped halfway by its token
budget, so a test can read it and resume it with today's code (`tests/test_store_layouts.py`). The same study
written by the code at 81c710b (no `round_calls`, no `texts`) is `tests/data/store_81c710b.sqlite.gz`, built the
same way (its checkout's `critiquebench/` given links to `domains`, `nodes`, `graphs` and `store`, on PYTHONPATH).

Rebuild it with the old code (its checkout's venv, its `tests` package on the path), e.g.:

    cd OLD_CHECKOUT && .venv/bin/python -c "import runpy, sys; sys.argv = ['x', 'OUT.sqlite']; \
        runpy.run_path('PATH/TO/tests/old_layout_store.py', run_name='__main__')" && gzip -9 OUT.sqlite
"""

from __future__ import annotations

import hashlib
import json
import sys
from http.server import ThreadingHTTPServer
from typing import Any

STUDY = "old"
PORT = 39417  # the endpoint is part of every cache key: a resume needs the server where the study met it
# every answer is over 2,048 characters (a long text) and depends only on the prompt, so a resumed run gets the
# answers the stopped one would have got
WORDS = 600


def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """A deterministic long answer to `messages` (never 24: sound-first asks again with its feedback)."""
    seed = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
    return f"({seed[:12]}) 1 + 2 + 3 + 4 = 10 " + " ".join(seed[i % 60 : i % 60 + 4] for i in range(WORDS))


def run_args(store: str, base_url: str, budget: int = 6000) -> list[str]:
    """`run`'s arguments for the study (the default budget stops it partway)."""
    return ["run", STUDY, "--domains", "game24", "--instances", "gen:3:1", "--schemes",
            "standard,sound-first:rounds=3", "--model", "fake", "--base-url", base_url, "--store", store,
            "--concurrency", "1", "--budget-tokens", str(budget), "--no-progress"]  # fmt: skip


def build(path: str) -> None:
    """Run the study on the scripted server until its budget stops it (the code on the path writes it)."""
    from typer.testing import CliRunner

    from critiquebench.cli import app
    from tests.scripted_server import ScriptedServer

    server = ScriptedServer(reply=reply)
    # the old code's server has no port option: serve its handler on PORT instead
    handler = server._httpd.RequestHandlerClass
    server._httpd.server_close()
    server._httpd = ThreadingHTTPServer(("127.0.0.1", PORT), handler)
    with server:
        result = CliRunner().invoke(app, run_args(path, server.base_url))
    print(result.exit_code, server.answered, result.output[-400:])


if __name__ == "__main__":
    build(sys.argv[1])
