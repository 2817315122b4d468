"""The generator node: ask the LLM for an answer, with the scheme's history of earlier rounds.

Sample indices are chosen so that schemes asking the same thing make the same call (and share the cache):
`sample` mode re-asks the bare prompt as sample 0..k-1 (round r uses sample r-1); `iterate` mode sends the
bare prompt as sample 0 in round 1 (the same call as standard prompting) and, later, the prompt plus history
(different messages, so sample 0 again). With history "last" a round can send exactly what an earlier round of
the run sent (the same answer and feedback again): it is then the next sample of that request, as a model
sampling at temperature > 0 answers it anew (PlanBench's windowed backprompting runs got new answers so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from critiquebench.domains.contract import Instance, Transcribed
from critiquebench.nodes.context import ContextOverflow, RunContext, RunState, add_usage, history
from critiquebench.nodes.sound_verifier import finish

# A scheme's reply cap meaning "no cap" (`max_tokens=none`), as against None: the study's setting.
NO_CAP = "none"

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

Mode = Literal["iterate", "sample"]
Messages = list[dict[str, str]]
HISTORY_POLICIES = ("full", "last")


def make_generator(
    *,
    mode: Mode = "iterate",
    style: str | None = None,
    history_policy: str = "full",
    wrap: Callable[[Instance, str], str] | None = None,
    then: str = "verifier",
    temperature: float | None = None,
    max_tokens: int | None = None,
    frame: Callable[[Any, Messages], Messages] | None = None,
) -> Callable[[RunState, Runtime[RunContext]], dict[str, Any]]:
    """A node that generates round `state["round"] + 1` (the new attempt holds its answer and usage).

    `temperature` is the scheme's own sampling temperature (None: the study's), `max_tokens` its own reply cap
    (None: the study's; `graphs.params.NO_CAP`: none). `frame(domain, messages)` turns the domain's prompt into
    the scheme's variant of it (refine's other system prompts), before any history.

    `wrap` turns a recorded critique into the user turn of the history (default: the domain's backprompt).
    """
    if history_policy not in HISTORY_POLICIES:
        raise ValueError(f"history must be one of {HISTORY_POLICIES}, not {history_policy!r}")

    # none sent: clients without the option work; `NO_CAP` ("none") sends max_tokens=None, which lifts the study's cap
    own = max_tokens not in (None, "default")
    cap = {"max_tokens": None if max_tokens == NO_CAP else max_tokens} if own else {}

    def generator(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = runtime.context
        round_ = state.get("round", 0) + 1
        messages = ctx.domain.prompt(ctx.instance, style)
        if frame is not None:
            messages = frame(ctx.domain, messages)
        if mode == "sample":
            sample = round_ - 1
        else:
            turns = history(ctx, state, round_, history_policy, wrap)
            sample = 0
            if history_policy == "last" and turns:
                sample = sum(history(ctx, state, r, "last", wrap) == turns for r in range(2, round_))
            messages = [*messages, *turns]
        if isinstance(ctx.domain, Transcribed):  # e.g. the study's one-message transcript
            messages = ctx.domain.conversation(messages)
        ctx.llm.take()  # drop usage of a call that failed before this (re-)run
        try:
            text = ctx.llm.complete(messages, sample=sample, temperature=temperature, **cap).text
        except ContextOverflow:
            if round_ == 1 or not state.get("attempt"):
                raise
            # PlanBench's loop ends when the conversation outgrows the context window: the last judged answer
            # stands, the failed call counted with it (the next node passes a finished state through).
            attempt = state["attempt"]
            return finish(round_ - 1, attempt, **add_usage(attempt, ctx.llm.take()))
        attempt = {"round": round_, "answer": text, "stopped": 0, **ctx.llm.take()}
        return {"round": round_, "attempt": attempt, "next": then}

    return generator
