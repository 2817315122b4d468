"""The nodes of intrinsic self-critique (Bohnet et al.): the many-shot planner, the self-critic, the vote.

One graph runs `runs` independent self-critique runs of `per_run` rounds each (the paper's steps 0..N are
rounds 1..N+1 of a run). A run ends when its critic says "the plan is correct", at its last step, or early
when a prompt would exceed `context_limit` tokens (the paper's context-length exit; the final round's
feedback says so). With one run its output is the run's last plan; with several, the vote node outputs the
most common final plan (self-critique with self-consistency).

Sample indices keep runs independent and share the cache where the calls are the same: run k's planner asks
with sample k and its critic votes with samples k*votes .. k*votes+votes-1, so run 0 is exactly `intrinsic`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

from critiquebench.domains.contract import LLMVerdict, Prompted, SelfCritiqued
from critiquebench.domains.prompts import DEFAULT, Prompts
from critiquebench.nodes.context import END, PAST_KEYS, RunContext, RunState, add_usage, past_entry, rounds_before
from critiquebench.nodes.sound_verifier import Reader, finish, sound_fields
from critiquebench.nodes.voting import pick_consistent

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

CHARS_PER_TOKEN = 4  # a model-independent estimate, so a run needs no tokenizer to honour `context_limit`

Node = Callable[..., dict[str, Any]]


class IntrinsicState(RunState, total=False):
    """`RunState` plus the final round of each finished run (what the self-consistency vote chooses from)."""

    finals: Annotated[list[int], operator.add]


class AtTemperature:
    """An LLM whose calls default to the scheme's temperature and length cap (critics call `complete` without
    them). `max_tokens` None is no cap. It remembers which of its replies reached the cap (`capped`, in call
    order), so a critique cut off before its verdict is recorded as cut off."""

    def __init__(self, llm: Any, temperature: float | None, max_tokens: int | None = None) -> None:
        self.llm, self.temperature, self.max_tokens = llm, temperature, max_tokens
        self.capped: list[bool] = []

    def complete(self, messages: Sequence[Mapping[str, str]], sample: int = 0, temperature: float | None = None) -> Any:
        chosen = self.temperature if temperature is None else temperature
        done = self.llm.complete(messages, sample=sample, temperature=chosen, max_tokens=self.max_tokens)
        self.capped.append(self.max_tokens is not None and done.completion_tokens >= self.max_tokens)
        return done


def cut_off_note(max_tokens: int | None) -> str:
    """What a critique cut off by the length cap before any verdict phrase is recorded with (after its text)."""
    return f"[cut off: the critique reached max_tokens={max_tokens} before a verdict]"


def estimate_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """About how many tokens `messages` take: 4 characters a token, plus 4 a message."""
    return sum(len(m.get("content", "")) for m in messages) // CHARS_PER_TOKEN + 4 * len(messages)


def run_of(round_: int, per_run: int) -> tuple[int, int, int]:
    """(run index, first round, last round) of the run that 1-based `round_` belongs to."""
    run = (round_ - 1) // per_run
    return run, run * per_run + 1, (run + 1) * per_run


def limit_note(kind: str, size: int, limit: int, prompts: Prompts = DEFAULT) -> str:
    """The last round's feedback when a run stops early (`early-stop` in intrinsic_self_critique.toml)."""
    return prompts["intrinsic_self_critique"].render("early-stop", kind=kind, size=size, limit=limit)


def _over(limit: int | None, messages: Sequence[Mapping[str, str]]) -> int | None:
    size = estimate_tokens(messages)
    return size if limit and size > limit else None


def make_planner(
    *,
    per_run: int,
    runs: int,
    shots: int,
    style: str | None,
    context_limit: int | None,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> Node:
    """The planner: the domain's `shots`-shot prompt, then this run's earlier plans and their critiques. On
    planning domains the paper's Revise-Prompt(τ, plan, critique) = τ ⊕ plan ⊕ critique (Algorithm 1,
    001:103-112) as its traces show it (D.1 001:420-601): one prompt, to which each step appends "The clean
    plan:", the plan as the critic saw it, the critique and "Please can you explain the error and fix it."
    (`PlanningDomain.revise`). Other domains, which run on their own study's prompts, get the plan as the
    model's turn and the critique in that study's backprompt (their answer format needs its closing
    instruction)."""

    def planner(state: IntrinsicState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = runtime.context
        round_ = state.get("round", 0) + 1
        run, first, _last = run_of(round_, per_run)
        earlier = [r for r in rounds_before(ctx, state, round_) if r["round"] >= first]
        messages = list(ctx.domain.prompt(ctx.instance, style, shots=shots))
        if isinstance(ctx.domain, SelfCritiqued):  # the paper's Revise-Prompt: one prompt that grows
            revise = partial(ctx.domain.revise, ctx.instance, style=style)  # the plan in the prompt's own names
            tau = messages[-1]["content"] + "".join(revise(r["answer"] or "", r["feedback"] or "") for r in earlier)
            messages[-1] = {**messages[-1], "content": tau}
        else:  # other domains: the plan as the model's turn, the critique in their study's wrapper
            for row in earlier:
                messages.append({"role": "assistant", "content": row["answer"] or ""})
                messages.append({"role": "user", "content": ctx.domain.backprompt(ctx.instance, row["feedback"] or "")})
        size = _over(context_limit, messages) if earlier else None
        if size is not None:
            previous = {k: earlier[-1].get(k) for k in PAST_KEYS}
            return end_run(previous, runs, per_run, note=limit_note("planner", size, context_limit or 0, _prompts(ctx)))
        ctx.llm.take()
        text = ctx.llm.complete(messages, sample=run, temperature=temperature, max_tokens=max_tokens).text
        attempt = {"round": round_, "answer": text, "stopped": 0, **ctx.llm.take()}
        return {"round": round_, "attempt": attempt, "next": "critic"}

    return planner


def _prompts(ctx: RunContext) -> Prompts:
    return ctx.domain.prompts if isinstance(ctx.domain, Prompted) else DEFAULT


def make_self_critic(
    *,
    per_run: int,
    runs: int,
    votes: int,
    context_limit: int | None,
    judge: Callable[[RunContext], tuple[Callable[..., LLMVerdict], AtTemperature]],
    critic_messages: Callable[[RunContext, str], list[dict[str, str]]] | None,
    handback: Callable[[RunContext, str], str],
    reader: Reader = "domain",
) -> Node:
    """The critic step: the sound verdict is recorded; the critic judges the plan by a strict majority of
    `votes` samples drawn for this step (a tie is "wrong", 001:212); "correct" or the run's last step ends the
    run, else the critique goes back. A critique cut off by the length cap before any verdict phrase judges
    nothing: it is not "correct" (the loop goes on, as Algorithm 1 breaks only on "correct"), its text is recorded
    with `cut_off_note`, and when every vote was cut off the round has no verdict (`llm_verdict` NULL). `reader`
    picks who gives the sound verdict (`sound_verifier.judge`: "binary" is the real VAL on the plan read)."""

    def critic(state: IntrinsicState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = runtime.context
        round_, attempt = state["round"], state["attempt"]
        run, first, last = run_of(round_, per_run)
        answer = attempt["answer"] or ""
        merged = {**attempt, **sound_fields(ctx, answer, None, reader), "round": round_}
        size = _over(context_limit, critic_messages(ctx, answer)) if critic_messages else None
        if size is not None:
            return end_run(merged, runs, per_run, note=limit_note("critic", size, context_limit or 0, _prompts(ctx)))
        ctx.llm.take()
        judged, llm = judge(ctx)
        # each step's votes are draws of their own: a planner that repeats a plan sends the critic the same prompt,
        # and the vote must still be `votes` fresh samples, not the cached ones of the earlier step (as DSPy keys a
        # rollout); step 0 keeps the indices it always had (run * votes + i)
        base = ((round_ - first) * runs + run) * votes
        verdicts = [judged(ctx.instance, answer, sample=base + i) for i in range(votes)]
        cut = [not v.parsed and capped for v, capped in zip(verdicts, llm.capped[-votes:], strict=False)]
        says_valid = 2 * sum(v.says_valid for v in verdicts) > votes
        side = [i for i, v in enumerate(verdicts) if v.says_valid == says_valid]
        critique = verdicts[side[0]].critique if side else ""
        recorded = critique
        if side and side[0] < len(cut) and cut[side[0]]:
            recorded = f"{critique}\n{cut_off_note(llm.max_tokens)}".strip()
        merged.update(add_usage(attempt, ctx.llm.take()))
        merged.update(llm_verdict=None if cut and all(cut) else int(says_valid), llm_critique=recorded)
        if says_valid or round_ >= last:
            return end_run(merged, runs, per_run)
        merged["feedback"] = handback(ctx, critique)
        return {"attempt": merged, "past": past_entry(merged), "next": "generator"}

    return critic


def end_run(attempt: dict[str, Any], runs: int, per_run: int, note: str | None = None) -> dict[str, Any]:
    """The update that ends a run whose output is `attempt`'s round: the scheme's end with one run, else the
    next run or, after the last, the vote. `note` (an early stop) becomes the round's feedback."""
    final = attempt["round"]
    if note is not None:
        attempt = {**attempt, "feedback": note}
    if runs == 1:
        return finish(final, attempt)
    run, _first, last = run_of(final, per_run)
    return {
        "attempt": attempt,
        "past": past_entry(attempt),
        "finals": [final],
        "round": last,  # the next run starts at its own first round
        "next": "vote" if run + 1 >= runs else "generator",
    }


def make_final_vote() -> Node:
    """Self-consistency over runs: the most common final plan of the runs (ties: the earliest run's)."""

    def vote(state: IntrinsicState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        finals = set(state.get("finals") or ())
        rows = [r for r in rounds_before(runtime.context, state, 10**9) if r["round"] in finals]
        chosen = pick_consistent(rows)
        return {"attempt": {"round": chosen, "stopped": 1}, "next": END, "done": True, "final_round": chosen}

    return vote
