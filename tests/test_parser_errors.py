"""A bug in our answer parser is an error (the run fails and says so), not a wrong answer that lowers Table 1;
text that holds no plan is still a verdict (malformed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.planning.parser import ActionReader
from critiquebench.llm.client import LLMClient
from critiquebench.studies.execute import execute_run
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer


def test_a_parser_bug_fails_the_run_and_malformed_text_is_a_verdict(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    domain = get_domain("blocksworld")
    instance = load_instances(domain, "2", DATASETS)[0]
    scripted_server.reply = "I would rather not plan today."
    assert domain.verify(instance, "I would rather not plan today.").status == "malformed"
    ok = execute_run(tmp_path / "s.sqlite", "s", domain, instance, "standard", 0, scripted_llm)
    assert (ok.status, ok.correct) == ("done", False)

    def broken(self: ActionReader, text: str) -> None:
        raise RuntimeError("parser bug")

    monkeypatch.setattr(ActionReader, "read", broken)  # stands in for a bug in our own parser
    with pytest.raises(RuntimeError, match="parser bug"):
        domain.verify(instance, "(unstack b a)")
    failed = execute_run(tmp_path / "s.sqlite", "s", domain, instance, "standard", 1, scripted_llm)
    assert failed.status == "failed" and failed.error == "RuntimeError: parser bug" and failed.correct is None
