"""The viewer in a real browser (Playwright on the system's Chromium): list, cell, run, transcript, filters.

The store is made by a real study on the scripted server: Game of 24, `standard` and `llm-llm:rounds=3`. The
generator answers 1+1+1+1 (wrong), then 2*2*2*2 (wrong) after a critique; the LLM verifier rejects the first
with CRITIQUE-ONE and accepts the second with CRITIQUE-TWO, a false positive that stops the run in round 2.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.viewer.site import ViewerServer
from tests.conftest import DATASETS
from tests.forked_cli import MEDIUM, forked_cli
from tests.scripted_server import ScriptedServer

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# scripts/setup.sh installs playwright and Debian's chromium: without them these tests fail rather than skip
from playwright import sync_api  # noqa: E402

assert Path(CHROMIUM).exists(), "no system Chromium (scripts/setup.sh installs Debian's chromium)"

RUNS = 3  # generated Game of 24 instances


def cli(*args: str, env: dict[str, str] | None = None) -> Any:
    """A `critiquebench` command that must succeed, run in this process by Typer's runner: the stores and static
    exports these tests open need not pay an interpreter's start-up each (1-3 s of CPU). The tests of what the
    program itself prints on an error run the program."""
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


def scripted_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    last = messages[-1]["content"]
    if "Please check if the following expression" in last:
        if "2*2*2*2" in last:
            return '{"feedback": "CRITIQUE-TWO: every number is used once and it makes 24.", "correct": true}'
        return '{"feedback": "CRITIQUE-ONE: this only makes 4.", "correct": false}'
    return "2*2*2*2" if any(m["role"] == "assistant" for m in messages) else "1+1+1+1"


def first_instance(page: Any) -> str:
    title = page.locator("#transcript h2").inner_text()  # "Run: game24 · scheme · instance ID · trial N"
    return title.split("instance ")[1].split(" ·")[0]


def sound_reason(instance_id: str, answer: str) -> str:
    """The Game of 24 verifier's own error sentences for `answer` on a generated instance."""
    from critiquebench.domains import get_domain, load_instances

    domain = get_domain("game24")
    instance = next(i for i in load_instances(domain, f"gen:{RUNS}:1", None) if i.id == instance_id)
    return "\n".join(domain.verify(instance, answer).errors)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("viewer") / "store.sqlite"
    with ScriptedServer(reply=scripted_reply) as server:
        for name, schemes in (("critic", "standard,llm-llm:rounds=3"), ("baseline", "standard")):
            cli("run", name, "--domains", "game24", "--instances", f"gen:{RUNS}:1", "--schemes", schemes, "--base-url",
                server.base_url, "--model", "scripted", "--store", str(path), "--no-progress")  # fmt: skip
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def watch(page: Any) -> tuple[list[str], list[str]]:
    """The lists `page`'s script errors and its requests leaving loopback and disk will be added to."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    outside: list[str] = []
    page.route("**/*", lambda route: (outside.append(route.request.url)
                                      if not route.request.url.startswith(("http://127.0.0.1", "file://")) else None,
                                      route.continue_()))  # fmt: skip
    return errors, outside


class Tab:
    """One browser tab the tests of a module take turns in (fixture `tab`). A page opened in a fresh context costs
    Chromium ~3 s of CPU (a renderer starts, then loads it), ~1.3 s in an open tab, ~0.2 s when only the address's
    hash changes within the viewer's page, which the page renders from the hash as it does on load. A test still
    starts from the address it gives: `open` waits for the page that address shows, not the one before it."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors, self.outside = watch(page)
        self.dialogs: list[str] = []
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def open(self, url: str) -> Any:
        """Show `url` in the tab and return the page; in the viewer's page already shown, by a change of hash."""
        page = self.page
        same_page = page.url.split("#")[0] == url.split("#")[0] and "#" in url
        if same_page and page.url != url and page.evaluate("() => !!document.querySelector('#runs #run-count')"):
            page.evaluate("() => { window.__before = document.getElementById('runs'); }")
            page.goto(url)
            page.wait_for_function(
                "() => { const s = document.getElementById('runs');"
                " return s !== window.__before && s.querySelector('#run-count, #filter-error'); }"
            )
        elif same_page and page.url == url:
            page.reload()  # the same address: no hash change to render from
        else:
            page.goto(url)
        return page


@pytest.fixture(scope="module")
def _module_tab(browser: Any) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield Tab(context.new_page())
    context.close()


def _checked(tab: Tab) -> None:
    """What every test's tab must not have seen: a script error, a request leaving loopback and disk, a dialog
    (an alert would be script run from the store)."""
    assert not tab.errors, tab.errors
    assert not tab.outside, f"the page reached outside loopback/disk: {tab.outside}"
    assert not tab.dialogs, f"the page opened dialogs: {tab.dialogs}"


@pytest.fixture
def tab(_module_tab: Tab) -> Iterator[Tab]:
    """The module's tab, checked after each test (`_checked`)."""
    for seen in (_module_tab.errors, _module_tab.outside, _module_tab.dialogs):
        seen.clear()
    yield _module_tab
    _checked(_module_tab)


@contextmanager
def fresh_tab(browser: Any) -> Iterator[Tab]:
    """A tab in a browser context of its own, for a test that changes what the context does for every page in it
    (Playwright's fake clock); checked as `tab` is, then closed."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        fresh = Tab(context.new_page())
        yield fresh
        _checked(fresh)
    finally:
        context.close()


def test_list_cell_run_transcript_and_false_positive_filter(store: Path, tab: Tab) -> None:
    before = store.read_bytes()
    with ViewerServer(store, []) as server:
        page = tab.open(server.url + "#study=critic")
        studies = page.locator("#studies tbody tr")
        sync_api.expect(studies).to_have_count(2)
        sync_api.expect(page.locator("#table1 td.cell")).to_have_count(2)
        page.click('#table1 td.cell[data-scheme="llm-llm:rounds=3"]')
        sync_api.expect(page.locator("#run-table tbody tr")).to_have_count(RUNS)
        page.locator("#run-table tbody tr").first.click()
        rounds = page.locator("#transcript .round")
        sync_api.expect(rounds).to_have_count(2)
        first, second = rounds.nth(0), rounds.nth(1)
        sync_api.expect(first.locator(".critique")).to_contain_text("CRITIQUE-ONE: this only makes 4.")
        sync_api.expect(first.locator(".sound")).to_contain_text("invalid")
        sync_api.expect(second.locator(".answer")).to_have_text("2*2*2*2")
        sync_api.expect(second.locator(".critique")).to_contain_text("CRITIQUE-TWO")
        sync_api.expect(second.locator(".sound")).to_contain_text("invalid")
        sync_api.expect(second.locator(".llm")).to_contain_text("said valid")
        sync_api.expect(second.locator("h3")).to_contain_text("stopped here")
        # the prompt is collapsed until asked for, and it holds the critique handed back
        prompt = second.locator("details.generator-prompt")
        assert prompt.get_attribute("open") is None
        prompt.locator("summary").click()
        sync_api.expect(prompt).to_contain_text("CRITIQUE-ONE")
        # every call of the round: the critic's own prompt (the study's verification prompt, holding the answer
        # it judges) and its reply, and the sound verifier's reason in the domain's words
        critic = first.locator("details.critic-prompt")
        critic.locator("summary").click()
        sync_api.expect(critic).to_contain_text("Please check if the following expression")
        sync_api.expect(critic).to_contain_text("1+1+1+1")
        sync_api.expect(critic.locator("pre.reply")).to_contain_text("CRITIQUE-ONE: this only makes 4.")
        sync_api.expect(first.locator(".reason")).to_have_text(sound_reason(first_instance(page), "1+1+1+1"))
        # the papers' filters: every llm-llm run is a false positive stopped by the critic; none made worse
        page.click("#filter-fp")
        sync_api.expect(page.locator("#run-count")).to_have_text(str(RUNS))
        page.click("#all-cells")
        sync_api.expect(page.locator("#run-count")).to_have_text(str(RUNS))  # standard runs have no verifier
        page.click("#filter-worse")
        sync_api.expect(page.locator("#run-count")).to_have_text("0")
        page.click("#filter-critic")
        sync_api.expect(page.locator("#run-table tbody tr")).to_have_count(RUNS)
        # Figure 2: hover a point for its counts
        page.locator('#figure2 circle[data-budget="2"]').first.hover()
        sync_api.expect(page.locator("#tooltip")).to_contain_text(f"n=2: 0.0% (0/{RUNS})")
        # two studies cell by cell
        page.select_option("#compare-with", "baseline")
        sync_api.expect(page.locator("#compare tbody tr")).to_have_count(2)
    assert store.read_bytes() == before  # read-only


def test_paired_comparison_and_stops_tables_list_a_class_s_runs(store: Path, tab: Tab, tmp_path: Path) -> None:
    """Study `critic`: every llm-llm run stops on a wrong answer its LLM verifier accepted (a false-positive stop),
    standard is wrong on each instance too: the pair ties on every unit."""
    out = tmp_path / "site"
    cli("view", "critic", "--store", str(store), "--output", str(out))
    with ViewerServer(store, []) as server:
        for url in (server.url, (out / "index.html").as_uri()):
            page = tab.open(url + "#study=critic")
            pair = page.locator("#paired tbody tr")
            sync_api.expect(pair).to_have_count(1)
            sync_api.expect(pair.locator("td").nth(1)).to_have_text("standard")
            sync_api.expect(pair.locator("td").nth(2)).to_have_text("llm-llm:rounds=3")
            sync_api.expect(pair.locator("td").nth(3)).to_have_text(str(RUNS))
            sync_api.expect(pair.locator("td").nth(9)).to_have_text(f"0/{RUNS}/0")  # W/T/L
            stops = page.locator("#stops tbody tr")
            sync_api.expect(stops).to_have_count(1)  # standard makes one round: not a loop
            wrong = stops.locator('td[data-stop="accepted_wrong"]')
            sync_api.expect(wrong).to_have_text(f"100.0% ({RUNS}/{RUNS})")
            wrong.click()
            sync_api.expect(page.locator("#run-count")).to_have_text(str(RUNS))
            sync_api.expect(page.locator("#run-table tbody tr")).to_have_count(RUNS)
            stops.locator('td[data-stop="accepted_correct"]').click()
            sync_api.expect(page.locator("#run-count")).to_have_text("0")
            page.click("#all-stops")
            sync_api.expect(page.locator("#run-count")).to_have_text(str(RUNS))
            # Figure 2: a 95% band around the llm-llm curve
            sync_api.expect(page.locator('#figure2 polygon.band[data-scheme="llm-llm:rounds=3"]')).to_have_count(1)


def test_static_export_opens_from_disk(store: Path, tab: Tab, tmp_path: Path) -> None:
    out = tmp_path / "site"
    cli("view", "critic", "--store", str(store), "--output", str(out))
    page = tab.open((out / "index.html").as_uri())
    sync_api.expect(page.locator("#studies tbody tr")).to_have_count(1)
    page.click('#table1 td.cell[data-scheme="llm-llm:rounds=3"]')
    page.locator("#run-table tbody tr").first.click()
    sync_api.expect(page.locator("#transcript .round").nth(1).locator(".critique")).to_contain_text("CRITIQUE-TWO")


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., subprocess.CompletedProcess[str]]]:
    """`program(*args)`: `critiquebench view ARGS` in a process of its own, for what the program itself prints
    and its exit status; forked from one that imported the CLI and the viewer (tests/forked_cli.py), not an
    interpreter importing them anew (0.6-1.4 s of CPU a command)."""
    preload = (*MEDIUM, "critiquebench.cli.view", "critiquebench.viewer.site", "critiquebench.outputs")
    with forked_cli(tmp_path_factory.mktemp("cli"), dict(os.environ), preload=preload) as env:
        yield lambda *args: subprocess.run(["critiquebench", "view", *args], capture_output=True, text=True,
                                           timeout=120, env=env)  # fmt: skip


def test_view_errors_are_one_line(tmp_path: Path, store: Path, program: Callable[..., Any]) -> None:
    missing = program("--store", str(tmp_path / "none.sqlite"), "--output", str(tmp_path / "o"))
    assert missing.returncode == 2 and missing.stderr.startswith("error: no store at")
    unknown = program("nope", "--store", str(store), "--output", str(tmp_path / "o"))
    assert unknown.returncode == 2 and "no study named nope" in unknown.stderr
    for port in ("70000", "-1"):  # one line from the option's check, not a traceback from bind()
        bad = program("--port", port, "--store", str(store))
        assert bad.returncode == 2 and "Traceback" not in bad.stderr and "Invalid value for '--port'" in bad.stderr
    with sqlite3.connect(store) as db:  # the failed views wrote nothing
        assert db.execute("SELECT count(*) FROM studies").fetchone()[0] == 2


# --- security: another origin, the Host header, path traversal in the static export (issue 26 items 3, 4)

ATTACKER_PAGE = """<!doctype html><html><body><script>
window.stolen = [];
window.CB = {put: function (path, payload) { window.stolen.push(JSON.stringify(payload)); }};
</script>
<script src="VIEWER/data/index.js"></script>
<script src="VIEWER/data/index.json"></script>
<script>
const tries = [];
const steal = (url, options) => fetch(url, options).then((r) => r.text()).then((t) => window.stolen.push(t));
for (const url of ["VIEWER/data/index.json", "VIEWER/data/index.js"]) {
  tries.push(steal(url, {}).catch(() => {}), steal(url, {credentials: "include"}).catch(() => {}));
}
Promise.allSettled(tries).then(() => { window.finished = true; });
</script></body></html>"""
# the script tags above load (or fail) before the last script runs; `finished` waits for every fetch to settle
# (a fixed 1.5 s timer waited as long for nothing)


class _Pages(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


def test_another_origin_cannot_read_the_served_data(store: Path, browser: Any, tab: Tab, tmp_path: Path) -> None:
    """A page on another loopback origin (127.0.0.2) or on file:// that knows the viewer's full address, token
    included, and tries the old data scripts, the JSON, script tags and fetch, gets nothing."""
    with ViewerServer(store, []) as server:
        page_html = ATTACKER_PAGE.replace("VIEWER/", server.url).encode()
        handler = type("Attacker", (_Pages,), {"body": page_html})
        attacker = ThreadingHTTPServer(("127.0.0.2", 0), handler)
        threading.Thread(target=attacker.serve_forever, daemon=True).start()
        disk_page = tmp_path / "attacker.html"
        disk_page.write_bytes(page_html)
        context = browser.new_context()  # not the viewer's: nothing the viewer's page kept is at hand
        try:
            page = context.new_page()
            for url in (f"http://127.0.0.2:{attacker.server_address[1]}/", disk_page.as_uri()):
                page.goto(url)
                page.wait_for_function("window.finished === true")
                stolen = page.evaluate("window.stolen")
                assert not [s for s in stolen if "critic" in s], f"{url} read the viewer's data: {stolen[:1]}"
        finally:
            context.close()
            attacker.shutdown()
            attacker.server_close()
        # the viewer's own page still reads it
        page = tab.open(server.url + "#study=critic")
        sync_api.expect(page.locator("#table1 td.cell")).to_have_count(2)


def test_served_viewer_checks_host_and_sends_a_restrictive_policy(store: Path) -> None:
    with ViewerServer(store, []) as server:
        parts = urlsplit(server.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        # DNS rebinding: a page of attacker.example whose name now points at 127.0.0.1
        conn.request("GET", parts.path, headers={"Host": f"attacker.example:{parts.port}"})
        rebound = conn.getresponse()
        assert rebound.status >= 400 and b"critic" not in rebound.read()
        conn.request("GET", parts.path)
        page = conn.getresponse()
        page.read()
        assert page.status == 200
        csp = page.getheader("Content-Security-Policy") or ""
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert page.getheader("X-Content-Type-Options") == "nosniff"
        # without the per-launch token nothing is served
        for path in ("/", "/index.html", "/data/index.js", "/data/index.json", "/assets/app.js"):
            conn.request("GET", path)
            answer = conn.getresponse()
            assert answer.status in (403, 404) and b"critic" not in answer.read(), path
        conn.close()


def test_static_export_never_writes_outside_its_folder(
    store: Path, tmp_path: Path, program: Callable[..., Any]
) -> None:
    """A shared store whose study is named `../../../../../ESCAPED` (written by something else than us)."""
    evil = tmp_path / "shared" / "evil.sqlite"
    evil.parent.mkdir()
    shutil.copy(store, evil)
    with sqlite3.connect(evil) as db:
        name = "../../../../../ESCAPED"
        db.execute("UPDATE studies SET name = ?, config = json_set(config, '$.name', ?) WHERE name = 'critic'",
                   [name, name])  # fmt: skip
        db.execute("UPDATE runs SET study = ? WHERE study = 'critic'", [name])
    out = tmp_path / "a" / "b" / "c" / "site"
    result = program("--store", str(evil), "--output", str(out))
    written = [p for p in (tmp_path / "a").rglob("*") if p.is_file() and out not in p.parents]
    assert not written, f"written outside {out}: {written}"
    assert result.returncode == 0, result.stderr
    assert "ESCAPED" in result.stderr  # named as skipped: not a valid study name
    assert (out / "index.html").is_file()
    explicit = program(name, "--store", str(evil), "--output", str(out))
    assert explicit.returncode == 2 and len(explicit.stderr.strip().splitlines()) == 1, explicit.stderr


# --- error analysis on GPT-4 as plan verifier (PlanBench t3, its recorded answers replayed from the cache)

T3_FILE = DATASETS / "planbench/tasks/blocksworld/gpt-4/task_3_plan_verification.json"


@pytest.fixture(scope="module")
def t3_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert T3_FILE.is_file(), f"needs PlanBench's GPT-4 task files in {T3_FILE.parent} (../shared/datasets)"
    path = tmp_path_factory.mktemp("t3") / "store.sqlite"
    cli("import", "planbench", str(T3_FILE), "--study", "gpt4-verify", "--store", str(path))
    cli("resume", "gpt4-verify", "--replay", "--store", str(path), "--no-progress")
    return path


@pytest.fixture(scope="module")
def t3_viewer(t3_store: Path) -> Iterator[str]:
    """The address of `t3_store`'s viewer, served once for the tests that only read it."""
    with ViewerServer(t3_store, []) as server:
        yield server.url


def test_t3_false_positives_are_listed_with_said_and_truth(t3_viewer: str, tab: Tab) -> None:
    page = tab.open(t3_viewer + "#study=gpt4-verify")
    # the FPR of the tasks table is a link to its runs: GPT-4 called 5 of 345 invalid plans valid
    fpr = page.locator('#tasks td[data-filter="fp"]')
    sync_api.expect(fpr).to_have_text("1.4% (5/345)")
    fpr.click()
    sync_api.expect(page.locator("#run-count")).to_have_text("5")
    rows = page.locator("#run-table tbody tr")
    sync_api.expect(rows).to_have_count(5)
    instances = sorted(int(t) for t in rows.locator("td:nth-child(3)").all_inner_texts())
    assert instances == [63, 135, 422, 433, 444]  # the five the reliability audit found by parsing the store
    for text in rows.locator("td.snippet").all_inner_texts():
        assert text == "said valid · truth invalid"
    # GPT-4's recorded answers carry no timing: no seconds are made up for them
    assert set(rows.locator("td:nth-child(11)").all_inner_texts()) == {"-"}
    rows.first.click()
    verdict = page.locator("#transcript .round .verdict")
    sync_api.expect(verdict).to_contain_text("The LLM said: the plan is valid. The truth: the plan is invalid")
    sync_api.expect(verdict).to_contain_text("false positive")
    sync_api.expect(page.locator("#transcript .round .sound")).to_contain_text("Its verdict is wrong")
    assert not any(page.locator("#transcript .timing").all_inner_texts())
    # GPT-4's own answer, as recorded, says the plan is valid
    answer = page.locator("#transcript .round .answer").inner_text()
    assert "plan is valid" in answer.lower(), answer
    page.click("#filter-fn")
    sync_api.expect(page.locator("#run-count")).to_have_text("22")


def test_search_sort_and_pages_over_the_runs(t3_store: Path, t3_viewer: str, tab: Tab) -> None:
    with sqlite3.connect(t3_store) as db:
        answers = db.execute("SELECT r.instance_id, a.answer FROM runs r JOIN attempts a USING (thread_id) "
                             "WHERE r.study = 'gpt4-verify'").fetchall()  # fmt: skip
        most = db.execute("SELECT max(prompt_tokens + completion_tokens) FROM runs").fetchone()[0]
    seen: dict[str, set[str]] = {}
    for instance, answer in answers:
        for word in answer.split():
            seen.setdefault(word.lower(), set()).add(instance)
    # a word only one run's answer holds (not in its domain, scheme or verdict columns)
    word, (instance,) = next((w, ids) for w, ids in sorted(seen.items())
                             if len(ids) == 1 and w.isalpha() and len(w) > 4)  # fmt: skip
    page = tab.open(t3_viewer + "#study=gpt4-verify")
    sync_api.expect(page.locator("#run-table tbody tr")).to_have_count(100)
    sync_api.expect(page.locator("#page-info")).to_contain_text("1–100 of 500")
    page.click("#page-next")
    sync_api.expect(page.locator("#page-info")).to_contain_text("101–200 of 500")
    page.select_option("#run-sort", "tokens")
    sync_api.expect(page.locator("#run-table tbody tr").first.locator("td:nth-child(9)")).to_have_text(str(most))
    page.fill("#run-filter", json.dumps(word.upper()))  # a string alone: the runs' texts hold it, any case
    page.press("#run-filter", "Enter")
    sync_api.expect(page.locator("#run-count")).to_have_text("1")
    sync_api.expect(page.locator("#run-table tbody tr td:nth-child(3)")).to_have_text(instance)


def test_report_table_2_of_a_t3_study_is_the_model_as_verifier(t3_store: Path) -> None:
    result = cli("report", "gpt4-verify", "--table", "2", "--format", "csv", "--store", str(t3_store))
    binary = next(line for line in result.stdout.splitlines() if ",binary," in line).split(",")
    header = result.stdout.splitlines()[0].split(",")
    row = dict(zip(header, binary, strict=True))
    assert (row["correct"], row["total"], row["false_pos"], row["truth_invalid"]) == ("473", "500", "5", "345")
    assert (row["false_neg"], row["truth_valid"]) == ("22", "155")


# --- big answers: a transcript carries the start of a long text and loads the rest when asked

LONG_ANSWER = "1+1+1+1 " + "and so on " * 6000 + "THE-END"  # 60,015 characters


@pytest.fixture(scope="module")
def long_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("long") / "store.sqlite"
    with ScriptedServer(reply=LONG_ANSWER) as server:
        cli("run", "long", "--domains", "game24", "--instances", "gen:1:1", "--schemes", "standard", "--base-url",
            server.base_url, "--model", "scripted", "--store", str(path), "--no-progress")  # fmt: skip
    return path


def open_long_answer(page: Any) -> None:
    page.click('#table1 td.cell[data-scheme="standard"]')
    page.locator("#run-table tbody tr").first.click()
    answer = page.locator("#transcript .round pre.answer")
    sync_api.expect(answer).to_have_class(re.compile(r"\bcut\b"))
    assert "THE-END" not in answer.inner_text() and answer.inner_text().startswith("1+1+1+1 and so on")
    page.locator("#transcript .round .long button.more").first.click()
    sync_api.expect(answer).to_contain_text("THE-END")
    assert answer.inner_text() == LONG_ANSWER


def test_long_texts_load_when_asked_served_and_from_disk(long_store: Path, tab: Tab, tmp_path: Path) -> None:
    with ViewerServer(long_store, []) as server:
        open_long_answer(tab.open(server.url + "#study=long"))
    out = tmp_path / "site"
    cli("view", "--store", str(long_store), "--output", str(out))
    # the long answer is written once, apart from the run's file, which holds only its start
    assert max(p.stat().st_size for p in (out / "data" / "run").iterdir()) < 20_000
    assert len(list((out / "data" / "text").iterdir())) == 1
    open_long_answer(tab.open((out / "index.html").as_uri() + "#study=long"))


XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script></pre><b class="injected">x</b>'


def xss_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    if "Please check if the following expression" in messages[-1]["content"]:
        return '{"feedback": "CRIT ' + XSS.replace('"', '\\"') + '", "correct": false}'
    return XSS


@pytest.fixture(scope="module")
def xss_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Study `xss`: one llm-llm run whose answer is `XSS`, critiqued with "CRIT " + `XSS`, by a model named `XSS`."""
    path = tmp_path_factory.mktemp("xss") / "xss.sqlite"
    with ScriptedServer(reply=xss_reply) as server:
        cli("run", "xss", "--domains", "game24", "--instances", "gen:1:1", "--schemes", "llm-llm:rounds=1",
            "--base-url", server.base_url, "--model", XSS, "--store", str(path), "--no-progress")  # fmt: skip
    return path


def test_llm_text_is_shown_as_text(xss_store: Path, tmp_path: Path, tab: Tab) -> None:
    """An answer and a critique holding markup (the reliability audit's payloads) are shown literally, in the
    run list, the transcript, the filter box and the static export (and open no dialog: the `tab` fixture)."""
    path = xss_store
    out = tmp_path / "site"
    cli("view", "--store", str(path), "--output", str(out))
    with ViewerServer(path, []) as viewer:
        for url in (viewer.url, (out / "index.html").as_uri()):
            page = tab.open(url + "#study=xss")
            page.fill("#run-filter", 'text ~ "onerror"')
            page.press("#run-filter", "Enter")
            sync_api.expect(page.locator("#run-count")).to_have_text("1")
            sync_api.expect(page.locator("#run-table td.snippet")).to_have_text(XSS)
            page.locator("#run-table tbody tr").first.click()
            sync_api.expect(page.locator("#transcript .round .answer")).to_have_text(XSS)
            sync_api.expect(page.locator("#transcript .round .critique")).to_contain_text("CRIT <img src=x")
            assert page.evaluate("() => window.__pwned") is None
            assert page.locator(".injected").count() == 0 and page.locator("main img").count() == 0
            assert not tab.dialogs, tab.dialogs
