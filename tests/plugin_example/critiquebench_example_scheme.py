"""sound-window: LLM + sound verifier where only the last answer and its feedback go back with the prompt (a
window of one exchange, as PlanBench's PDDL backprompting ran it), up to `rounds` rounds.

An example scheme plug-in: a module with a docstring, `PARAMS`, `build(**params)` (an uncompiled LangGraph
StateGraph) and `calls(params)` (what one run can cost, for `--dry-run`), named in the entry-point group
`critiquebench.schemes`. It is built from the same parts as the built-in schemes, imported from the public plug-in
API `critiquebench.plugins`."""

from __future__ import annotations

from typing import Any

from critiquebench.plugins import Calls, feedback, rounds, verified_loop

PARAMS = (rounds(5), feedback("first"))


def build(*, rounds: int, feedback: str) -> Any:
    return verified_loop(rounds=rounds, level=feedback, history="last", style=None)


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=int(params["rounds"]))
