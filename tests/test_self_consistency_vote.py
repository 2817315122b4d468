"""Self-consistency votes as the self-verification study's code did: on the reply texts.

kstechly/gpt-and-i `domain_utils/game24.py` and `graph_coloring.py`, `evaluate_up_to` @d883df86 (the first commit
that computes the paper's S.C. column): `self_con = max(set(responses), key = responses.count)` over the replies
`send_query` returned (cut at the "[ANSWER END]" stop, `.strip()`ed), then `check_answer(instance_text,
self_con)`. So one expression written two ways is two answers there. The expected pick below is that rule, run
on the replies the scripted model sent; ours (`vote=answer`, canonical parsed answers) stays the default.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.scripted_server import ScriptedServer
from tests.test_study_cli import DATASETS, ROOT, invoke

# Puzzle 901 is 4 5 6 10. One right expression written three ways (1 text each), one wrong one twice (2 texts).
REPLIES = ["(5 * 6) - (10 - 4) = 24", "4 + 5 + 6 + 10 = 24 [ANSWER END] more", "5 * 6 - (10 - 4) = 24",
           "4 + 5 + 6 + 10 = 24", "(5*6)-(10-4) = 24"]  # fmt: skip
STOP = "[ANSWER END]"


def study_pick(responses: list[str]) -> str:
    """gpt-and-i's rule (unique maximum here, so the set's order does not matter)."""
    stripped = [r.split(STOP)[0].strip() for r in responses]  # what send_query returned under the stop
    return max(set(stripped), key=stripped.count)


def _run(tmp_path: Path, spec: str, stop: bool) -> dict[str, Any]:
    sent = iter(REPLIES)
    toml = tmp_path / f"{abs(hash((spec, stop)))}.toml"
    toml.write_text(f'domains = ["game24"]\nschemes = ["{spec}"]\ndataset = "{DATASETS}"\n[instances]\n'
                    f'game24 = "901"\n[domain_options.game24]\nreader = "study"\n'
                    + ('stop = ["[ANSWER END]"]\n' if stop else ""))  # fmt: skip
    store = str(tmp_path / f"{toml.stem}.sqlite")
    with ScriptedServer(reply=lambda messages, params: next(sent)) as server:
        invoke("run", "t", "--config", str(toml), "--model", "scripted", "--base-url", server.base_url,
               "--store", store)  # fmt: skip
        assert server.answered == len(REPLIES)
    rows = [json.loads(line) for line in invoke("export", "t", "--store", store).stdout.splitlines()]
    (final,) = [r for r in rows if r["stopped"]]
    return final


def test_vote_text_picks_the_most_common_reply_text_as_the_study_code(tmp_path: Path) -> None:
    assert study_pick(REPLIES) == "4 + 5 + 6 + 10 = 24"
    final = _run(tmp_path, "self-consistency:k=5,temperature=1.0,vote=text", True)  # the server cut at the stop
    assert final["answer"].strip() == study_pick(REPLIES) and not final["sound_valid"]


def test_vote_answer_counts_canonical_answers_ours(tmp_path: Path) -> None:
    final = _run(tmp_path, "self-consistency:k=5,temperature=1.0", True)
    assert final["answer"] == REPLIES[0] and final["sound_valid"]  # three ways of writing one expression: 3 votes


def test_the_shipped_loop_study_votes_on_text() -> None:
    import tomllib

    schemes = tomllib.loads((ROOT / "studies" / "self_verification_loops.toml").read_text())["schemes"]
    assert "self-consistency:k=15,temperature=1.0,vote=text" in schemes
