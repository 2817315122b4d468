"""The critic node of the LLM-verification schemes (the critics themselves are in `nodes.critics`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from critiquebench.nodes.context import RunContext, RunState, add_usage, past_entry, rounds_before
from critiquebench.nodes.critics import make_critic
from critiquebench.nodes.sound_verifier import finish
from critiquebench.nodes.sound_verifier import judge as sound_judge

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def make_critic_node(
    *,
    critic: str = "llm",
    critic_params: dict[str, Any] | None = None,
    votes: int = 1,
    rounds: int = 15,
    handback: Callable[[str], str] = lambda critique: critique,
    critique_last: bool = True,
    resample: bool = False,
) -> Callable[[RunState, Runtime[RunContext]], dict[str, Any]]:
    """A node where the sound verifier and then the critic judge the current answer: the critic's "valid" (by
    majority of `votes` samples) or the round limit ends the run with this answer; otherwise
    `handback(critique)` is the round's feedback, which the generator's history hands back.

    The critic's verdict is kept next to the sound verdict so LLM-verifier FP/FN rates can be computed; both are
    judged in this one step, so a round takes two checkpoints (generator, critic). A final sound verdict
    (`Verdict.final`: the study's loop gave up on this reply) ends the run before the critic is asked, as does the
    last round when `critique_last` is false. A critic reply the study's code failed on (`LLMVerdict.fails_run`)
    ends the run with the answer it judged and no LLM verdict, as the study's record of that instance ended (it
    scored the last generated answer), the round marked `study_failed` (the study printed its failed
    instances). With `resample`, an answer judged in an earlier round of the run is
    judged anew (the next samples of the same request), as the study's loop sent it again; else the same call.
    """
    from critiquebench.nodes.voting import majority

    def critic_node(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        if state.get("done"):  # the generator ended the run (`ContextOverflow`)
            return {}
        ctx = runtime.context
        round_, attempt = state["round"], state["attempt"]
        answer = attempt["answer"] or ""
        fields, final = sound_judge(ctx, answer, None)
        if final or (round_ >= rounds and not critique_last):
            return finish(round_, attempt, **fields)
        ctx.llm.take()
        judge = make_critic(critic, ctx.llm, ctx.domain, **(critic_params or {}))
        repeats = sum(e["answer"] == answer for e in rounds_before(ctx, state, round_)) if resample else 0
        verdict = majority(judge, ctx.instance, answer, votes, first=repeats * votes)
        fields.update(add_usage(attempt, ctx.llm.take()))
        if verdict.fails_run:
            # the study's code failed on this reply (instance marked failed, or a crash): it sent nothing more and
            # scored the instance by this answer; the round keeps the reply with no verdict, as the study had none,
            # marked so reports count the run apart, as the study listed its failed instances
            # (`response_generation.py` @b583c3c9 l.94, printed l.116)
            return finish(round_, attempt, **fields, llm_verdict=None, llm_critique=verdict.critique,
                          study_failed=1)
        fields.update(llm_verdict=int(verdict.says_valid), llm_critique=verdict.critique)
        if verdict.says_valid or round_ >= rounds:
            return finish(round_, attempt, **fields)
        merged = {**attempt, **fields, "feedback": handback(verdict.critique), "round": round_}
        return {"attempt": merged, "past": past_entry(merged), "next": "generator"}

    return critic_node
