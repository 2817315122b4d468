"""Secrets in a base URL or a store URL (issue 26 item 1): every query value and the userinfo stay out of the
store, its copies, exports, the static viewer, error lines and `-v` logs, whatever the parameter is called, while
the requests still carry them; a `user:pw@` URL that replaces the API key says so.

Every command runs as a process of its own (forked from one that imported the CLI: tests/forked_cli.py) against
the scripted server and a real Postgres; the check is `grep -r SECRET` over everything they wrote and printed.
"""

from __future__ import annotations

import base64
import shutil
import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedServer

PROJECT = Path(__file__).resolve().parents[1]
QUERY_NAMES = ("api-key", "x-api-key", "subscription-key", "client_secret", "access_key", "anything", "apikey")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def secret_url(base_url: str, tag: str) -> str:
    """The server's URL with a password and one secret per query-parameter name (all containing SECRET)."""
    host = base_url.removeprefix("http://")
    query = "&".join(f"{name}=SECRET{tag}{i}" for i, name in enumerate(QUERY_NAMES))
    return f"http://user:SECRETPW{tag}@{host}?{query}"


class Commands:
    """Runs `critiquebench ARGS` (`env`'s, first on its PATH) and keeps everything it printed."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env, self.printed = env, []  # type: ignore[var-annotated]
        self.program = shutil.which("critiquebench", path=env["PATH"])

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.program), *args],
            capture_output=True, text=True, cwd=PROJECT, env={**self.env, **(env or {})}, timeout=300, check=False,
        )  # fmt: skip
        self.printed.append(f"{done.stdout}\n{done.stderr}")  # what it printed (its argv holds the secrets)
        return done


def grep_secret(root: Path) -> list[str]:
    """Files under `root` (or `root` itself) holding SECRET, or the base64 of a user:SECRET... pair."""
    basic = base64.b64encode(b"user:SECRETPW").decode()[:12]  # 'user:SECRETP' whatever follows
    files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
    return [str(p) for p in files if b"SECRET" in p.read_bytes() or basic.encode() in p.read_bytes()]


@pytest.fixture
def cli_env(forked_env: dict[str, str]) -> dict[str, str]:
    """The commands' environment, with `critiquebench` forked from the worker's process that imported it
    (`forked_env`; each command is still a process of its own, with its own arguments, environment and output,
    ending with the interpreter's teardown, whose warnings are output too; tests/forked_cli.py)."""
    env = {**forked_env, "OPENAI_API_KEY": "sk-SECRETENV", "NO_COLOR": "1"}
    env.pop("OPENAI_BASE_URL", None)
    return env


def test_no_secret_of_a_url_reaches_the_store_exports_pages_or_output(
    tmp_path: Path, postgres_server: str, pg_store: str, cli_env: dict[str, str]
) -> None:
    cb = Commands(cli_env)
    store, copy, site = tmp_path / "s.sqlite", tmp_path / "copy.sqlite", tmp_path / "site"
    exports = tmp_path / "exports"
    exports.mkdir()
    pg_url = pg_store.replace("postgresql://cb@", "postgresql://cb:SECRETPG@") + "?sslpassword=SECRETPGQ"
    study = ["--domains", "game24", "--instances", "gen:3:1", "--schemes", "standard,llm-llm:rounds=2",
             "--model", "fake", "--concurrency", "2"]  # fmt: skip

    with ScriptedServer(reply="(1 + 2 + 3) * 4") as server:
        server.echo_errors = True
        server.queue_fault("400", times=2)  # two runs fail with an error quoting the path, query and Authorization
        url = secret_url(server.base_url, "Q")
        verbose = cb("-v", "run", "s1", *study, "--base-url", url, "--store", str(store))
        assert verbose.returncode == 1, verbose.stderr  # the two failed runs
        assert "HTTP Request: POST" in verbose.stderr  # -v shows httpx's request lines ...
        assert "Basic auth in place of $OPENAI_API_KEY" in verbose.stderr  # ... and says the key is not sent
        resumed = cb("resume", "s1", "--store", str(store), env={"OPENAI_BASE_URL": url})
        assert resumed.returncode == 0, resumed.stderr
        # every request carried the whole query and the credentials, in memory only
        assert all(p.endswith(url.split("?", 1)[1]) for p in server.paths)
        assert server.authorization == "Basic " + base64.b64encode(b"user:SECRETPWQ").decode()
        # a study on a Postgres store whose URL holds a password and a secret query value
        pg_run = cb("run", "p1", *study, "--base-url", secret_url(server.base_url, "R"), "--store", pg_url)
        assert pg_run.returncode == 0, pg_run.stderr
        answered = server.answered

    refused = cb("run", "s2", *study, "--base-url", secret_url(f"http://127.0.0.1:{closed_port()}/v1", "C"),
                 "--store", str(store))  # fmt: skip
    assert refused.returncode == 2 and "error: cannot connect to http://***@127.0.0.1" in refused.stderr
    dead_pg = f"postgresql://cb:SECRETPD@127.0.0.1:{closed_port()}/db?password=SECRETPDQ"
    for args in (["studies", "--store", dead_pg], ["view", "--store", dead_pg], ["view", "--store", pg_url],
                 ["report", "s1", "--store", pg_url.replace("/t", "/nosuch")]):  # fmt: skip
        failed = cb(*args)
        assert failed.returncode == 2 and failed.stderr.startswith("error: "), failed.stderr
    for args in (["report", "s1"], ["report", "s1", "--format", "json"], ["studies", "--json"], ["cache", "stats"],
                 ["export", "s1", "--output", str(exports / "rounds.jsonl")],
                 ["cache", "export", "--output", str(exports / "cache.jsonl")],
                 ["view", "--output", str(site)], ["store", "copy", str(store), str(copy)]):  # fmt: skip
        done = cb(*args, "--store", str(store)) if args[0] != "store" else cb(*args)
        assert done.returncode == 0, (args, done.stderr)
    for args in (["studies", "--json"], ["report", "p1"], ["store", "copy", pg_url, str(tmp_path / "pg.sqlite")]):
        done = cb(*args, "--store", pg_url) if args[0] != "store" else cb(*args)
        assert done.returncode == 0, (args, done.stderr)
    assert answered > 10 and (site / "index.html").exists()

    for i, printed in enumerate(cb.printed):
        (tmp_path / f"printed-{i}.txt").write_text(printed, encoding="utf-8")
    leaks = grep_secret(tmp_path)  # the stores (with WAL files), their copies, exports, the site and the output
    assert leaks == [], leaks
    with sqlite3.connect(store) as conn:
        (config,) = conn.execute("SELECT config FROM studies WHERE name = 's1'").fetchone()
    assert "http://***@127.0.0.1" in config and "x-api-key=***" in config
