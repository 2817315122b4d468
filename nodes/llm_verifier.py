"""The LLM verifier / critic: the built-in LLM critic and the critic node of the LLM-verification schemes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from critiquebench.domains.base import Domain, Instance, LLMVerdict
from critiquebench.nodes.context import RunContext, RunState, add_usage, record
from critiquebench.nodes.sound_verifier import finish


def make_llm_critic(llm: Any, domain: Domain, cot: bool = False) -> Callable[..., LLMVerdict]:
    """The LLM verifier with the domain's verification prompt (`cot` selects the chain-of-thought variant)."""

    def critic(instance: Instance, answer: str, sample: int = 0) -> LLMVerdict:
        messages = domain.verifier_prompt(instance, answer, cot)
        return domain.parse_llm_verdict(llm.complete(messages, sample=sample).text)

    return critic


def make_critic_node(
    ctx: RunContext,
    *,
    critic: str = "llm",
    critic_params: dict[str, Any] | None = None,
    votes: int = 1,
    rounds: int = 15,
    handback: Callable[[str], str] = lambda critique: critique,
) -> Callable[[RunState], dict[str, Any]]:
    """A node where the critic judges the current answer: "valid" (by majority of `votes` samples) or the
    round limit ends the run with this answer; otherwise `handback(critique)` is recorded as the round's
    feedback, which the generator's history hands back.

    It records the critic's verdict next to the sound verdict so LLM-verifier FP/FN rates can be computed.
    """
    from critiquebench.nodes.critics import make_critic  # the registry imports this module
    from critiquebench.nodes.voting import majority

    built: list[Callable[..., LLMVerdict]] = []

    def judge(instance: Instance, answer: str) -> LLMVerdict:
        if not built:  # built on first use, so a graph can be drawn without a domain or plug-in
            built.append(make_critic(critic, ctx.llm, ctx.domain, **(critic_params or {})))
        return majority(built[0], instance, answer, votes)

    def critic_node(state: RunState) -> dict[str, Any]:
        round_, attempt = state["round"], state["attempt"]
        ctx.llm.take()
        verdict = judge(ctx.instance, attempt["answer"] or "")
        fields: dict[str, Any] = {
            **add_usage(attempt, ctx.llm.take()),
            "llm_verdict": int(verdict.says_valid),
            "llm_critique": verdict.critique,
        }
        if verdict.says_valid or round_ >= rounds:
            return finish(ctx, round_, attempt, **fields)
        fields["feedback"] = handback(verdict.critique)
        return {"attempt": record(ctx, round_, attempt, **fields), "next": "generator"}

    return critic_node
