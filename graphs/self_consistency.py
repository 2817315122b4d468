"""self-consistency: k samples of the same prompt; the most common answer is output (ties: earliest).

`vote=answer` (default, ours) counts canonical parsed answers; `vote=text` counts reply texts as the
self-verification study's code did (`nodes.voting.VOTE_ON`). The sound verdict of every sample is recorded
(never used to choose) so reports can score any round.
"""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.cost import Calls
from critiquebench.graphs.direct import Blueprint
from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.params import Param, samples, style, temperature
from critiquebench.nodes.voting import VOTE_ON

PARAMS = (
    samples(15), style(), temperature(),
    Param("vote", str, "answer", "what is counted: answer (the canonical parsed answer) or text (the reply "
          "text, cut at the domain's stop and stripped, as the self-verification study's code)", choices=VOTE_ON),
)  # fmt: skip


def build(*, k: int, style: str | None, temperature: float | None, vote: str) -> Blueprint:
    return verified_loop(rounds=k, mode="sample", policy="collect", style=style, temperature=temperature, vote=vote)


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=int(params["k"]), samples=True, stops=False)  # every sample is drawn, then the vote
