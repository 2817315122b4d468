"""The sound verifier node: the domain's verifier judges the last answer; it also decides what comes next.

Policies
- `stop_on_valid` (sound-*, sampling, standard, refine): a valid answer or the round limit ends the run with
  the current answer; otherwise the feedback at `level` goes back to the generator.
- `record` (llm-llm, intrinsic): only record the sound verdict (for the LLM verifier's FP/FN rates); the
  critic decides.
- `collect` (self-consistency): record, then generate again until the limit, then vote.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from critiquebench.domains.base import FEEDBACK_LEVELS, FeedbackLevel
from critiquebench.nodes.context import RunContext, RunState, record
from langgraph.graph import END

Policy = Literal["stop_on_valid", "record", "collect"]


def sound_fields(ctx: RunContext, answer: str, level: FeedbackLevel | None) -> dict[str, Any]:
    """The attempt columns of the sound verdict on `answer` (+ feedback at `level` when it is not valid)."""
    verdict = ctx.domain.verify(ctx.instance, answer)
    fields: dict[str, Any] = {"sound_status": verdict.status, "sound_valid": int(verdict.valid)}
    if level is not None and not verdict.valid:
        fields["feedback"] = ctx.domain.feedback(ctx.instance, verdict, level)
    return fields


def finish(ctx: RunContext, round_: int, attempt: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The state update that ends a run with this round's answer as its output."""
    return {
        "attempt": record(ctx, round_, attempt, stopped=1, **fields),
        "next": END,
        "done": True,
        "final_round": round_,
    }


def make_sound_verifier(
    ctx: RunContext,
    *,
    policy: Policy = "stop_on_valid",
    rounds: int = 1,
    level: FeedbackLevel | None = "binary",
    critic: str = "critic",
    collector: str = "vote",
) -> Callable[[RunState], dict[str, Any]]:
    """A node that records the sound verdict of the current attempt and routes (see the module doc).

    `level` None records no feedback (schemes that never hand feedback back).
    """
    if level is not None and level not in FEEDBACK_LEVELS:
        raise ValueError(f"feedback must be one of {FEEDBACK_LEVELS}, not {level!r}")

    def verifier(state: RunState) -> dict[str, Any]:
        round_, attempt = state["round"], state["attempt"]
        fields = sound_fields(ctx, attempt["answer"], level if policy == "stop_on_valid" else None)
        if policy == "record":
            return {"attempt": record(ctx, round_, attempt, **fields), "next": critic}
        if policy == "collect":
            nxt = collector if round_ >= rounds else "generator"
            return {"attempt": record(ctx, round_, attempt, **fields), "next": nxt}
        if fields["sound_valid"] or round_ >= rounds:
            return finish(ctx, round_, attempt, **fields)
        return {"attempt": record(ctx, round_, attempt, **fields), "next": "generator"}

    return verifier
