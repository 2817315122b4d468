"""sound-binary, sound-first, sound-all: LLM + sound verifier, backprompting with the history and the
verifier's feedback at that level (via the domain's backprompt wrapper), until a correct answer or `rounds`
rounds."""

from __future__ import annotations

from typing import Any

from critiquebench.domains.contract import FeedbackLevel
from critiquebench.graphs.cost import Calls
from critiquebench.graphs.direct import Blueprint
from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.params import feedback, history, rounds, style

PARAMS = (rounds(15), feedback("binary"), history(), style())  # sound-first / sound-all change `feedback`


def build(*, rounds: int, feedback: FeedbackLevel, history: str, style: str | None) -> Blueprint:
    return verified_loop(rounds=rounds, level=feedback, history=history, style=style)


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=int(params["rounds"]))
