"""The sound verifier node: the domain's verifier judges the last answer; it also decides what comes next.

Policies
- `stop_on_valid` (sound-*, sampling, standard, refine): a valid answer or the round limit ends the run with
  the current answer; otherwise the feedback at `level` goes back to the generator.
- `collect` (self-consistency): record, then generate again until the limit, then vote.
(The critic loop judges soundly inside its critic node: one step per round.)

`reader="val"` (refine) judges with the domain's VAL reading of the raw reply (`ValRead`) where it has one;
`reader="val-binary"` (refine:validator=val) with the real VAL on the raw reply, `"binary"` (intrinsic:validator=val)
with the real VAL on the plan read from it (`ValBinary`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from critiquebench.domains.contract import FEEDBACK_LEVELS, FeedbackLevel, ValBinary, ValRead
from critiquebench.nodes.context import END, RunContext, RunState, past_entry

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

Policy = Literal["stop_on_valid", "collect"]
Reader = Literal["domain", "val", "val-binary", "binary"]


def sound_fields(ctx: RunContext, answer: str, level: FeedbackLevel | None, reader: Reader = "domain"
                 ) -> dict[str, Any]:  # fmt: skip
    """The attempt columns of the sound verdict on `answer` and its canonical form (parsed once), plus the
    feedback at `level` when it is not valid."""
    return judge(ctx, answer, level, reader)[0]


def judge(ctx: RunContext, answer: str, level: FeedbackLevel | None, reader: Reader = "domain"
          ) -> tuple[dict[str, Any], bool]:  # fmt: skip
    """`sound_fields`, and whether the verdict ends the loop whatever its rounds left (`Verdict.final`)."""
    domain = ctx.domain
    if reader in ("val-binary", "binary"):
        if not isinstance(domain, ValBinary):
            raise ValueError(f"validator=val: {domain.name} has no PDDL plans for VAL to validate")
        verdict, canonical = domain.assess_binary(ctx.instance, answer, raw=reader == "val-binary")
    elif reader == "val" and isinstance(domain, ValRead):
        verdict, canonical = domain.assess_val(ctx.instance, answer)
    else:
        verdict, canonical = domain.assess(ctx.instance, answer)
    fields: dict[str, Any] = {
        "canonical": canonical,
        "sound_status": verdict.status,
        "sound_valid": int(verdict.valid),
        # why, in the domain's own sentences (recorded beside the round, not handed back)
        "sound_reason": "\n".join(verdict.errors) or None,
    }
    if level is not None and not verdict.valid and not verdict.final:
        fields["feedback"] = ctx.domain.feedback(ctx.instance, verdict, level)
    return fields, verdict.final


def finish(round_: int, attempt: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The state update that ends a run with this round's answer as its output."""
    merged = {**attempt, **fields, "round": round_, "stopped": 1}
    return {"attempt": merged, "past": past_entry(merged), "next": END, "done": True, "final_round": round_}


def make_sound_verifier(
    *,
    policy: Policy = "stop_on_valid",
    rounds: int = 1,
    level: FeedbackLevel | None = "binary",
    collector: str = "vote",
    reader: Reader = "domain",
) -> Callable[[RunState, Runtime[RunContext]], dict[str, Any]]:
    """A node that judges the current attempt soundly and routes (see the module doc).

    `level` None records no feedback (schemes that never hand feedback back).
    """
    if level is not None and level not in FEEDBACK_LEVELS:
        raise ValueError(f"feedback must be one of {FEEDBACK_LEVELS}, not {level!r}")

    def verifier(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        if state.get("done"):  # the generator ended the run (`ContextOverflow`)
            return {}
        ctx = runtime.context
        round_, attempt = state["round"], state["attempt"]
        fields, final = judge(ctx, attempt["answer"], level if policy == "stop_on_valid" else None, reader)
        # a recorded run may have ended at a round its answers cannot mark (`ReplayedPlanning.recorded_end`)
        end = getattr(ctx.domain, "recorded_end", None)
        last = min(rounds, end(ctx.instance) or rounds) if end is not None else rounds
        # `final` ends a feedback loop; sampling (no feedback) draws on, as the studies' samplers did
        if policy == "stop_on_valid" and (fields["sound_valid"] or round_ >= last or (final and level is not None)):
            return finish(round_, attempt, **fields)
        merged = {**attempt, **fields, "round": round_}
        nxt = collector if policy == "collect" and round_ >= rounds else "generator"
        return {"attempt": merged, "past": past_entry(merged), "next": nxt}

    return verifier
