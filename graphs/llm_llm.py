"""llm-llm (and llm-llm-cot): the LLM generates, the same LLM verifies and critiques (a critic without the
history), the critique is backprompted with the full history; stop when the critic says correct or after
`rounds` rounds. The sound verdict of every answer is recorded beside the critic's (FP/FN rates).
`critique_last=false` ends a run that reaches `rounds` with its last answer unjudged, as the self-verification
study's October 2023 loop did (16 answers, 15 critiques: `response_generation.py@ada66fc6:106-143`);
`resample=true` asks the critic anew about an answer it judged in an earlier round, as that loop did (l.114-116)."""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.cost import Calls, critic_calls
from critiquebench.graphs.direct import Blueprint
from critiquebench.graphs.loops import critic_loop
from critiquebench.graphs.params import Param, critic, history, rounds, style, votes

CRITIQUE_LAST = Param("critique_last", bool, True,
                      "the critic judges the last round's answer too (false: the run ends with it unjudged)")
RESAMPLE = Param("resample", bool, False, "judge an answer repeated within a run anew, as the next samples of "
                 "the same request (false: the same call, answered once)")
# llm-llm-cot: critic=llm-cot
PARAMS = (rounds(15), critic("llm"), votes(1), history(), style(), CRITIQUE_LAST, RESAMPLE)


def build(
    *,
    rounds: int,
    critic: str,
    votes: int,
    history: str,
    style: str | None,
    critique_last: bool,
    resample: bool,
    critic_params: dict[str, Any],
) -> Blueprint:
    return critic_loop(
        rounds=rounds, critic=critic, critic_params=critic_params, votes=votes, style=style, history=history,
        critique_last=critique_last, resample=resample,
    )  # fmt: skip


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=int(params["rounds"]), critic=critic_calls(params))  # the critic judges every round
