"""The viewer's run list as a researcher queries it, in a real browser: filter expressions over the run table,
the text they matched, the study's settings, each call's time, and a study seen while it runs.

Study `mix` runs six generated Game of 24 instances under `standard`, `llm-llm:rounds=3` and
`sound-first:rounds=3` on the scripted server. The generator solves instances 1-2 at once, 3-4 only once it has
been told it was wrong, and 5-6 never (1+1+1+1, then 2*2*2*2); the LLM critic rejects 1+1+1+1 only. So every
part of the issue's filter `scheme == "llm-llm" and not correct and rounds > 1` keeps runs the whole filter does
not: the expected runs are read from the store with the same conditions in SQL.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright import sync_api

from critiquebench import api
from critiquebench.viewer import filters
from critiquebench.viewer.site import ViewerServer
from tests import test_viewer
from tests.scripted_server import ScriptedServer
from tests.test_viewer import XSS, Tab, cli, fresh_tab

# the viewer tests' fixtures: the system's Chromium, the module's one tab, which fails a test on any script error,
# dialog or request leaving loopback, and the hostile study
browser, xss_store = test_viewer.browser, test_viewer.xss_store
_module_tab, tab = test_viewer._module_tab, test_viewer.tab

N = 6
FILTER = 'scheme == "llm-llm" and not correct and rounds > 1'
LATENCY = 0.1  # seconds the scripted server waits before each answer
SECRETS = ("SECRETPW", "SECRETQUERY", "SECRETENV")
# how often the served page reads the study list again while a study runs (critiquebench/viewer/static/app.js)
APP_JS = Path(filters.__file__).parent / "static" / "app.js"
POLL_MS = int(re.findall(r"const POLL_MS = (\d+);", APP_JS.read_text(encoding="utf-8"))[0])


def numbers_of(messages: list[dict[str, Any]]) -> list[int]:
    """The puzzle of a generator call: the last `Input:` line of its first user message (the few-shot examples
    come before it)."""
    first = next(m["content"] for m in messages if m["role"] == "user")
    return [int(n) for n in re.findall(r"Input: (\d+) (\d+) (\d+) (\d+)", first)[-1]]


def puzzles() -> list[list[int]]:
    from critiquebench.domains import get_domain, load_instances

    return [i.data["numbers"] for i in load_instances(get_domain("game24"), f"gen:{N}:1", None)]


def mix_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    from critiquebench.domains.arith import solve

    last = messages[-1]["content"]
    if "Please check if the following expression" in last:
        return json.dumps({"feedback": "CRITIC: " + ("wrong" if "1+1+1+1" in last else "fine"),
                           "correct": "1+1+1+1" not in last})  # fmt: skip
    numbers, order = numbers_of(messages), puzzles()
    retried = any(m["role"] == "assistant" for m in messages)
    if numbers in order[:2] or (retried and numbers in order[2:4]):
        return str(solve(numbers))
    return "2*2*2*2" if retried else "1+1+1+1"


def run_study(path: Path, name: str, base_url: str, *extra: str, env: dict[str, str] | None = None) -> None:
    """`critiquebench run` in this process (tests/test_viewer.py's `cli`), `env` added to the environment."""
    cli("run", name, "--domains", "game24", "--instances", f"gen:{N}:1", "--schemes",
        "standard,llm-llm:rounds=3,sound-first:rounds=3", "--base-url", base_url, "--model", "scripted", "--store",
        str(path), "--no-progress", *extra, env=env)  # fmt: skip


@pytest.fixture(scope="module")
def mix_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Study `mix`, run through a base URL holding a password and a query key, with an API key in the
    environment: none of them may reach the page."""
    path = tmp_path_factory.mktemp("mix") / "store.sqlite"
    with ScriptedServer(reply=mix_reply, latency=LATENCY) as server:
        url = server.base_url.replace("http://", "http://viewer:SECRETPW@") + "?api-key=SECRETQUERY"
        run_study(path, "mix", url, "--temperature", "0.5", env={"OPENAI_API_KEY": "SECRETENV"})
    return path


@pytest.fixture(scope="module")
def mix_viewer(mix_store: Path) -> Iterator[str]:
    """The address of `mix_store`'s viewer, served once for the tests that only read it."""
    with ViewerServer(mix_store, []) as server:
        yield server.url


def run_ids(store: Path, where: str) -> set[str]:
    with sqlite3.connect(store) as db:
        return {str(r[0]) for r in db.execute(f"SELECT rowid FROM runs WHERE study = 'mix' AND {where}")}


def shown_ids(page: Any) -> set[str]:
    return {tr.get_attribute("data-run") for tr in page.locator("#run-table tbody tr").all()}


def apply(page: Any, text: str) -> None:
    """Type a new filter and wait for the run list it gives (not the one before it)."""
    page.evaluate("() => { window.__before = document.getElementById('runs'); }")
    page.fill("#run-filter", text)
    page.press("#run-filter", "Enter")
    page.wait_for_function(
        "() => { const s = document.getElementById('runs');"
        " return s !== window.__before && s.querySelector('#run-count, #filter-error'); }"
    )


def test_filter_expression_lists_exactly_those_runs(mix_store: Path, mix_viewer: str, tab: Tab, browser: Any) -> None:
    # the runs table holds the scheme as the study lists it (llm-llm:rounds=3); the filter's `scheme` is its name
    llm_llm = "(scheme = 'llm-llm' OR scheme LIKE 'llm-llm:%')"
    expected = run_ids(mix_store, f"{llm_llm} AND correct IS NOT 1 AND rounds > 1")
    # each condition alone keeps other runs too, so the list below is the conjunction, not one of its parts
    parts = [llm_llm, "correct IS NOT 1", "rounds > 1"]
    assert expected and all(run_ids(mix_store, part) > expected for part in parts)
    assert len(expected) == 2  # instances 5-6: 1+1+1+1 rejected, then 2*2*2*2 accepted by the critic
    page = tab.open(mix_viewer + "#study=mix")
    sync_api.expect(page.locator("#run-count")).to_have_text(str(3 * N))
    # the box names the fields and operators it reads: those of critiquebench/viewer/filters.py
    hint = page.get_attribute("#run-filter", "title") or ""
    assert all(f.name in hint for f in filters.FIELDS) and all(o.op in hint for o in filters.OPERATORS)
    apply(page, FILTER)
    sync_api.expect(page.locator("#run-count")).to_have_text(str(len(expected)))
    assert shown_ids(page) == expected
    # the filter is in the address: opened elsewhere, the same runs
    shared = browser.new_page()
    shared.goto(page.url)
    sync_api.expect(shared.locator("#run-count")).to_have_text(str(len(expected)))
    assert shared.input_value("#run-filter") == FILTER
    shared.close()
    # or, parentheses, the full spec, numbers and a flag, combined with a table cell
    apply(page, '(spec == "sound-first:rounds=3" and rounds >= 3) or (scheme == "standard" and correct)')
    sync_api.expect(page.locator("#run-count")).to_have_text("4")
    assert shown_ids(page) == run_ids(mix_store, "(scheme = 'sound-first:rounds=3' AND rounds >= 3) OR "
                                                 "(scheme = 'standard' AND correct = 1)")  # fmt: skip
    apply(page, "fp and not (tokens < 0)")
    page.click('#table1 td.cell[data-scheme="llm-llm:rounds=3"]')
    sync_api.expect(page.locator("#run-count")).to_have_text("2")  # 2*2*2*2 called valid
    assert page.input_value("#run-filter") == "fp and not (tokens < 0)"


def test_the_static_export_filters_the_same_runs(mix_store: Path, tab: Tab, tmp_path: Path) -> None:
    out = tmp_path / "site"
    cli("view", "--store", str(mix_store), "--output", str(out))
    page = tab.open((out / "index.html").as_uri() + "#study=mix&f=" + quote(FILTER))
    expected = run_ids(mix_store, "scheme LIKE 'llm-llm:%' AND correct IS NOT 1 AND rounds > 1")
    sync_api.expect(page.locator("#run-count")).to_have_text(str(len(expected)))
    assert shown_ids(page) == expected
    sync_api.expect(page.locator("#refresh")).to_have_count(0)  # a snapshot: nothing to read again


# one filter per documented operator, with the runs SQL finds for it
OPERATOR_EXAMPLES = {
    "==": ("rounds == 2", "rounds = 2"),
    "!=": ("rounds != 2", "rounds != 2"),
    "<": ("rounds < 2", "rounds < 2"),
    "<=": ("rounds <= 2", "rounds <= 2"),
    ">": ("rounds > 2", "rounds > 2"),
    ">=": ("rounds >= 2", "rounds >= 2"),
    "contains": ('answer contains "2*2"', "final_answer LIKE '%2*2%'"),
    "~": ('answer ~ "1+1"', "final_answer LIKE '%1+1%'"),
    "not": ("not correct", "correct IS NOT 1"),
    "and": ('correct and status == "done"', "correct = 1 AND status = 'done'"),
    "or": ("rounds == 3 or correct", "rounds = 3 OR correct = 1"),
    "( )": ("not (rounds == 1 or correct)", "NOT (rounds = 1 OR correct = 1)"),
}


def test_every_documented_operator_is_read(mix_store: Path, mix_viewer: str, tab: Tab) -> None:
    assert set(OPERATOR_EXAMPLES) == {o.op for o in filters.OPERATORS}, "an operator without an example here"
    page = tab.open(mix_viewer + "#study=mix")
    for text, where in OPERATOR_EXAMPLES.values():
        apply(page, text)
        sync_api.expect(page.locator("#run-count")).to_have_text(str(len(run_ids(mix_store, where))))
        assert shown_ids(page) == run_ids(mix_store, where), text


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('scheme = "llm-llm"', 'compare with "=="'),
        ("rounds > ", 'expected a value after ">" at the end'),
        ("(correct or fp", 'missing ")"'),
        ("colour == 1", 'unknown field "colour"'),
        ('rounds > "two"', "rounds is a number"),
        ("scheme < 3", '"<" compares numbers; scheme is text'),
        ('text == "x"', "text can only be searched"),
        ('"no end', "has no closing"),
        ("correct correct", 'unexpected "correct" at character 9'),
        ("window.alert(1)", 'unexpected "." at character 7'),
    ],
)
def test_a_malformed_filter_is_one_line(mix_store: Path, mix_viewer: str, tab: Tab, text: str, says: str) -> None:
    page = tab.open(mix_viewer + "#study=mix&f=" + quote(text))
    error = page.locator("#filter-error")
    sync_api.expect(error).to_contain_text(says)
    assert error.inner_text().startswith("filter: ") and "\n" not in error.inner_text()
    assert page.locator("#run-table").count() == 0
    apply(page, "rounds > 1")  # fixed in place: the list is back
    sync_api.expect(page.locator("#filter-error")).to_have_count(0)
    sync_api.expect(page.locator("#run-count")).to_have_text(str(len(run_ids(mix_store, "rounds > 1"))))


def test_matched_text_is_marked_and_stays_text(xss_store: Path, tab: Tab) -> None:
    """A filter for markup in a hostile answer marks the match in the run list and the transcript, as text; the
    filter itself, quoted back in the page or wrong, is text too (and opens no dialog: the `tab` fixture)."""
    with ViewerServer(xss_store, []) as server:
        page = tab.open(server.url + "#study=xss")
        apply(page, 'text ~ "<SCRIPT>window"')
        sync_api.expect(page.locator("#run-count")).to_have_text("1")
        snippet = page.locator("#run-table td.snippet")
        sync_api.expect(snippet.locator("mark")).to_have_text("<script>window")
        sync_api.expect(snippet).to_have_text(XSS)
        page.locator("#run-table tbody tr").first.click()
        answer = page.locator("#transcript .round pre.answer")
        sync_api.expect(answer).to_have_text(XSS)
        assert answer.locator("mark").all_inner_texts() == ["<script>window"]
        critique = page.locator("#transcript .round pre.critique")  # "CRIT " + the same markup
        assert critique.locator("mark").all_inner_texts() == ["<script>window"]
        # a text the final answer does not hold is shown where it matched: the critique's start
        apply(page, '"crit <img"')
        sync_api.expect(page.locator("#run-table td.snippet.match mark")).to_have_text("CRIT <img")
        for hostile in ('"<img src=x onerror=window.__pwned=3>"', '<svg onload="window.__pwned=4">'):
            apply(page, hostile)
            sync_api.expect(page.locator("#run-count, #filter-error")).to_have_count(1)
        assert page.evaluate("() => window.__pwned") is None
        assert page.locator(".injected, main img, main svg[onload]").count() == 0
        assert not tab.dialogs, tab.dialogs


def test_settings_panel_shows_the_study_and_no_secret(mix_store: Path, mix_viewer: str, tab: Tab) -> None:
    # a store written by something else may hold a key in its definition: the page still shows none
    crafted = mix_store.with_name("crafted.sqlite")
    with sqlite3.connect(mix_store) as source, sqlite3.connect(crafted) as target:
        source.backup(target)
    with sqlite3.connect(crafted) as db:
        config = json.loads(db.execute("SELECT config FROM studies WHERE name = 'mix'").fetchone()[0])
        config.update(
            api_key="SECRETENV", extra={"password": "SECRETPW", "url": "http://u:SECRETPW@h/v1?k=SECRETQUERY"}
        )
        db.execute("UPDATE studies SET config = ? WHERE name = 'mix'", [json.dumps(config)])
    with ViewerServer(crafted, []) as crafted_viewer:
        for url in (mix_viewer, crafted_viewer.url):
            page = tab.open(url + "#study=mix")
            settings = page.locator("#settings")
            settings.locator("summary").click()
            sync_api.expect(settings.locator('tr[data-setting="temperature"] td')).to_have_text("0.5")
            sync_api.expect(settings.locator('tr[data-setting="max_tokens"] td')).to_have_text("512")
            sync_api.expect(settings.locator('tr[data-setting="base_url"] td')).to_contain_text("api-key=***")
            sync_api.expect(settings.locator('tr[data-setting="runs by status"] td')).to_have_text(f"done {3 * N}")
            sync_api.expect(settings.locator('tr[data-setting="defined"] td')).to_contain_text(" UTC")
            html = page.content()
            assert not [s for s in SECRETS if s in html], "a secret reached the page"
            data = page.evaluate("async () => (await fetch('data/study/0.json')).text()")
            assert not [s for s in SECRETS if s in data], "a secret reached the page's data"


def test_each_call_shows_the_time_it_took(mix_store: Path, mix_viewer: str, tab: Tab) -> None:
    with sqlite3.connect(mix_store) as db:
        recorded = {f"{s:.2f}" for (s,) in db.execute("SELECT latency_s FROM llm_calls WHERE response LIKE '%wrong%'")}
    page = tab.open(mix_viewer + "#study=mix&f=" + quote('scheme == "llm-llm" and rounds > 1 and not correct'))
    seconds = page.locator("#run-table tbody tr").first.locator("td:nth-child(11)").inner_text()
    assert float(seconds) >= 4 * LATENCY  # two rounds: generator and critic each
    page.locator("#run-table tbody tr").first.click()
    summary = page.locator("#transcript .round").first.locator("details.critic-prompt summary .timing")
    sync_api.expect(summary).to_contain_text(" s · ")
    shown = re.search(r"(\d+\.\d\d) s", summary.inner_text())
    assert shown and shown.group(1) in recorded and float(shown.group(1)) >= LATENCY, summary.inner_text()
    sync_api.expect(page.locator("#transcript .round").first.locator(".usage")).to_contain_text("s when made")


def test_the_run_list_follows_a_running_study(tmp_path: Path, browser: Any) -> None:
    """Opened while a study runs, the page lists its runs as they finish, its filter kept; refresh reads the
    store again on demand. The study runs in a thread of this process (the Python API's `run`), writing the store
    the viewer reads as a second `critiquebench run` would, without an interpreter's start-up (~4 s of CPU); the
    page's clock is Playwright's, so its own every-POLL_MS poll is fired once the study has ended instead of
    waited for (up to two polls, 5-10 s)."""
    path = tmp_path / "store.sqlite"
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(api.run("grow", store=path, progress=False, domains="game24", instances=f"gen:{N}:1",
                                   schemes="standard", base_url=server.base_url, model="scripted",
                                   concurrency=1))  # fmt: skip
        except BaseException as exc:  # noqa: BLE001 - reported by the test's assertion below
            outcome.append(exc)

    # 0.8 s an answer: the page must open before the study is done (4 of its 6 runs answered); a shorter latency
    # made that a race with the viewer's and the page's start-up on a loaded machine. The tab is made first.
    with ScriptedServer(reply=mix_reply, latency=0.8) as server, fresh_tab(browser) as tab:
        page = tab.page
        page.clock.install()  # time flows as usual; `run_for` below fires the timers due in that span
        study = threading.Thread(target=run, name="study-grow", daemon=True)
        study.start()
        try:
            deadline = time.monotonic() + 120
            while not _has_study(path, "grow"):
                assert study.is_alive() and time.monotonic() < deadline, f"the study did not start: {outcome}"
                time.sleep(0.05)
            with ViewerServer(path, []) as viewer:
                tab.open(viewer.url + "#study=grow&f=" + quote('status == "done" and not correct'))
                first = int(page.locator("#run-count").inner_text())
                assert first < N - 2, "the study finished before the page opened"
                study.join(timeout=90)
                assert not study.is_alive(), "the study did not end"
                (result,) = outcome
                assert isinstance(result, api.Result) and result.ok, result
                # every instance but the two it solves, read by the page's own poll, with no reload
                page.clock.run_for(POLL_MS)
                sync_api.expect(page.locator("#run-count")).to_have_text(str(N - 2))
                assert page.input_value("#run-filter") == 'status == "done" and not correct'
                page.click("#refresh")
                sync_api.expect(page.locator("#studies tbody td.num")).to_have_text(f"{N}/{N}")
                sync_api.expect(page.locator("#run-count")).to_have_text(str(N - 2))
        finally:
            study.join(timeout=90)  # the server answers until the study is done: it ends it either way


def _has_study(path: Path, name: str) -> bool:
    if not path.exists():
        return False
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return bool(db.execute("SELECT 1 FROM studies WHERE name = ?", [name]).fetchone())
    except sqlite3.Error:
        return False


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: "(" * 20_000 + "correct" + ")" * 20_000, 'more than 100 nested parentheses or "not"s'),
        (lambda: "not " * 20_000 + "correct", 'more than 100 nested parentheses or "not"s'),
        (lambda: " or ".join(["correct"] * 50_000), "characters long; at most 100000 are read"),
    ],
    ids=["parentheses", "nots", "ors"],
)
def test_a_filter_too_deep_or_too_long_is_a_message(
    mix_store: Path, mix_viewer: str, tab: Tab, make: Any, says: str
) -> None:
    """Issue 45 item 7: these overflowed the page's stack; the run list stayed at "loading…" with no message."""
    page = tab.open(mix_viewer + "#study=mix")
    sync_api.expect(page.locator("#run-count")).to_have_text(str(3 * N))
    apply(page, make())
    sync_api.expect(page.locator("#filter-error")).to_contain_text(says)
    apply(page, "rounds > 1")  # fixed in place: the list is back
    sync_api.expect(page.locator("#run-count")).to_have_text(str(len(run_ids(mix_store, "rounds > 1"))))


def test_a_long_chain_of_ors_within_the_limits_is_read(mix_store: Path, mix_viewer: str, tab: Tab) -> None:
    """3,000 `or`ed conditions (the audit's passing case) still filter: a chain is one node, not 3,000 levels."""
    page = tab.open(mix_viewer + "#study=mix")
    sync_api.expect(page.locator("#run-count")).to_have_text(str(3 * N))
    apply(page, " or ".join(['scheme == "absent"'] * 3_000 + ["rounds > 1"]))
    sync_api.expect(page.locator("#run-count")).to_have_text(str(len(run_ids(mix_store, "rounds > 1"))))
