"""The domain contract: a domain written outside the package (tests/toy_domain.py: the core protocol plus the
Judged capability) runs schemes through the CLI and the scripted server; a scheme that needs what it lacks is
left out with the domain's own reason."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from critiquebench.domains import get_domain
from critiquebench.domains.contract import Candidates, Domain, Judged, Prompted, SelfCritiqued
from critiquebench.graphs import unsupported
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import invoke, report

TOY = "tests.toy_domain:make_sums"
SCHEMES = "standard,sound-first:rounds=3,llm-llm:rounds=3,llm-llm-cot"
REASON = "the toy study published no chain-of-thought prompt"


def sums_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """A model that gets a sum right on its second try, and judges answers truthfully."""
    last = messages[-1]["content"]
    if judged := re.match(r"Is (-?\d+) the sum (\d+) \+ (\d+)\?", last):
        answer, a, b = map(int, judged.groups())
        return "CORRECT" if answer == a + b else "WRONG: add again"
    a, b = map(int, re.findall(r"\d+", messages[0]["content"])[:2])
    tries = sum(1 for m in messages if m["role"] == "assistant")
    return str(a + b if tries else a + b + 1)


def test_the_toy_domain_declares_only_what_it_implements() -> None:
    toy = get_domain(TOY)
    assert isinstance(toy, Domain) and isinstance(toy, Judged)
    assert not isinstance(toy, SelfCritiqued | Candidates | Prompted)
    assert unsupported("llm-llm", toy) is None and unsupported("standard", toy) is None
    assert unsupported("llm-llm-cot", toy) == REASON  # its own reason
    game24 = get_domain("game24")
    assert isinstance(game24, Judged | Candidates | Prompted) and not isinstance(game24, SelfCritiqued)
    assert isinstance(get_domain("blocksworld"), SelfCritiqued)


def test_three_schemes_run_on_a_domain_from_outside_the_package(tmp_path: Path) -> None:
    store = tmp_path / "toy.sqlite"
    with ScriptedServer(reply=sums_reply) as server:
        args = ["run", "toy", "--domains", TOY, "--instances", "gen:2:1", "--schemes", SCHEMES,
                "--model", "scripted", "--base-url", server.base_url, "--store", str(store)]  # fmt: skip
        dry = invoke(*args, "--dry-run")
        assert f"llm-llm-cot on sums left out: {REASON}" in dry.stdout
        assert server.requests == 0
        done = invoke(*args)
        assert f"llm-llm-cot on sums left out: {REASON}" in done.stderr
    rows = {r["scheme"]: r for r in report("toy", store)}
    assert list(rows) == ["standard", "sound-first:rounds=3", "llm-llm:rounds=3"]
    assert (rows["standard"]["correct"], rows["standard"]["total"]) == (0, 2)  # wrong first
    assert rows["sound-first:rounds=3"]["correct"] == rows["llm-llm:rounds=3"]["correct"] == 2  # right second


def test_generic_nodes_import_no_domain_and_critics_no_critic_node() -> None:
    import ast

    nodes = Path(__file__).resolve().parents[1] / "nodes"
    imported: dict[str, set[str]] = {}
    for module in nodes.glob("*.py"):
        tree = ast.parse(module.read_text())
        imported[module.stem] = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert all(not m.startswith("critiquebench.domains.planning") for ms in imported.values() for m in ms)
    assert "critiquebench.nodes.llm_verifier" not in imported["critics"]  # the critic node imports the registry


def test_what_schemes_once_probed_for_are_declared_capabilities() -> None:
    """The study's transcript form, the paper's feedback levels and VAL's advice are capabilities, not probes."""
    from critiquebench.domains.contract import PaperLevels, Transcribed, ValidatorAdvice

    toy, game24, blocksworld = get_domain(TOY), get_domain("game24"), get_domain("blocksworld")
    assert not isinstance(toy, Transcribed | PaperLevels | ValidatorAdvice)
    assert isinstance(game24, Transcribed | PaperLevels) and not isinstance(game24, ValidatorAdvice)
    assert isinstance(blocksworld, ValidatorAdvice)
    paper = get_domain("game24", paper_levels=True)  # the shipped paper study's: no all-errors feedback (000:238)
    assert unsupported("sound-first:feedback=all", paper) == paper.unsupported_levels["all"]
    assert unsupported("sound-first:feedback=all", game24) is None
    # a study's stop sequences ride on the domain as a declared capability (every call carries them)
    from critiquebench.domains import call_options
    from critiquebench.domains.contract import CallOptions

    stopped = get_domain("game24", stop=["[ANSWER END]"])
    assert isinstance(stopped, CallOptions) and not isinstance(game24, CallOptions)
    assert call_options(stopped) == {"stop": ("[ANSWER END]",)} and call_options(game24) == {}
