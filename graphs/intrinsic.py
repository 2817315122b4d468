"""intrinsic: intrinsic self-critique for planning, as Bohnet et al. ran it (paper 001, Algorithm 1). The
many-shot planner prompt B.1 (`shots=16` solved training problems) plans; the same model critiques the plan in
a fresh prompt with the paper's critic prompt (A.2; A.1 with `critique_shots=8`; A.3-A.5 as Table 4's
ablations); unless a strict majority of `votes` critiques says "the plan is correct" (a tie is wrong), the
plan and the critique are appended to the planner's prompt with the paper's request "Please can you explain
the error and fix it." (the Revise-Prompt of its traces D.1/E.1) and the model plans again. Steps 0..`steps`
give up to steps+1 plans; a run stops early, and says so in its last round's feedback, when a prompt would
exceed `context_limit` tokens. `critic=sound` is the Oracle (VAL's repair advice as the critique);
`runs=5` (`intrinsic-sc`) is ours: five independent runs and the most common final plan, not the paper's
Critique+SC (which is `votes`).

On domains other than planning the scheme runs with the domain's own generation prompt and, for the critic,
its own verification prompt.
"""

from __future__ import annotations

from typing import Any

from critiquebench.domains.contract import (
    CRITIC_INSTRUCTIONS,
    Judged,
    LLMVerdict,
    Prompted,
    SelfCritiqued,
    ValBinary,
    ValidatorAdvice,
)
from critiquebench.domains.prompts import DEFAULT
from critiquebench.graphs.cost import Calls, critic_calls
from critiquebench.graphs.direct import START, Blueprint
from critiquebench.graphs.params import (
    MAX_ROUNDS,
    MAX_SHOTS,
    MAX_TEMPERATURE,
    MAX_TOKENS,
    MAX_VOTES,
    Param,
    critic,
    style,
    temperature,
    validator,
    votes,
)
from critiquebench.graphs.state import RunContext, route
from critiquebench.nodes.context import END
from critiquebench.nodes.critics import make_critic
from critiquebench.nodes.intrinsic import (
    AtTemperature,
    IntrinsicState,
    make_final_vote,
    make_planner,
    make_self_critic,
)

# Not from the paper, which gives no temperature for its critic votes (its default 0.0 would make N votes one
# sample drawn N times): 0.7, the sampling temperature of the self-consistency paper it cites
# (wang2023selfconsistency_cot, GPT-3 and PaLM).
VOTE_TEMPERATURE = 0.7

PARAMS = (
    Param("steps", int, 10, "self-critique steps after the first plan: steps 0..N give up to N+1 plans", minimum=0,
          maximum=MAX_ROUNDS),
    critic("intrinsic"),
    votes(1),
    Param("shots", int, 16, "example problems with plans in the planner prompt (planning domains)", minimum=0,
          maximum=MAX_SHOTS),
    Param("critique_shots", int, 0, "verified example plans in the critic prompt: the paper used 0 or 8", minimum=0,
          maximum=MAX_SHOTS),
    Param("domain_definition", bool, True, "the domain's PDDL in the critic prompt (false: A.3, a Table 4 ablation)"),
    Param(
        "instructions",
        str,
        "three-step",
        "the critic's instructions: three-step (A.1-A.3), verify-each (A.4), chain-of-thought (A.5), or Table 6's "
        "self-verification templates formatted / cot-formatted (paper 000's JSON prompts, 001:274); all but "
        "three-step without exemplars, A.4/A.5 without domain definition",
        choices=CRITIC_INSTRUCTIONS,
    ),
    Param(
        "context_limit",
        int,
        None,
        "stop a run early when a prompt would exceed this many tokens (about 4 characters a token)",
        minimum=1,
        maximum=MAX_TOKENS,
        nullable=True,
    ),
    Param("runs", int, 1, "independent self-critique runs; with more than one, the most common final plan", minimum=1,
          maximum=MAX_VOTES),
    style("pddl"),
    temperature(),
    Param(
        "vote_temperature",
        float,
        VOTE_TEMPERATURE,
        "sampling temperature of the critic's votes when votes > 1, so N votes are N different samples",
        minimum=0.0,
        maximum=MAX_TEMPERATURE,
    ),
    Param(
        "max_tokens",
        int,
        None,
        "longest reply of the planner and the critic (none: no cap, the endpoint's own limit)",
        minimum=1,
        maximum=MAX_TOKENS,
        nullable=True,
    ),
    validator("who judges each plan's accuracy (001:136) and writes the Oracle's critique (critic=sound, 001:142): "
              "ours (our validator, VAL's repair advice in VAL's words) or val (KCL-Planning/VAL's Validate on the "
              "plan read from the reply: its verdict, and `-v`'s repair advice; the val extra)"),
)


def calls(params: dict[str, Any]) -> Calls:
    """steps + 1 plans per run, each judged by `votes` critiques (none by the sound critic), `runs` times; a
    "correct" critique ends a run early."""
    return Calls(rounds=int(params["steps"]) + 1, critic=critic_calls(params), repeats=int(params["runs"]),
                 shared_first=False)  # fmt: skip


def oracle(ctx: RunContext, real_val: bool = False) -> Any:
    """The paper's Oracle on planning domains (001:142: the validator's feedback as the critique): VAL's repair
    advice for the first failure, in the problem's PDDL names, as the planner's prompt writes them; `real_val`:
    KCL-Planning/VAL's own (`ValBinary.binary_advice`)."""

    def critic(instance: Any, answer: str, sample: int = 0) -> LLMVerdict:
        if real_val and isinstance(ctx.domain, ValBinary):
            advice = ctx.domain.binary_advice(instance, answer)
            return LLMVerdict(not advice, advice)
        verdict = ctx.domain.assess(instance, answer)[0]
        return LLMVerdict(verdict.valid, "" if verdict.valid else ctx.domain.val_advice(instance, answer))

    return critic


def max_rounds(params: dict[str, Any]) -> int:
    return (int(params["steps"]) + 1) * int(params["runs"])


def build(
    *,
    steps: int,
    critic: str,
    votes: int,
    shots: int,
    critique_shots: int,
    domain_definition: bool,
    context_limit: int | None,
    runs: int,
    style: str | None,
    temperature: float | None,
    vote_temperature: float,
    max_tokens: int | None,
    instructions: str,
    validator: str,
    critic_params: dict[str, Any],
) -> Blueprint:
    if instructions != "three-step" and critique_shots:
        raise ValueError(
            f"intrinsic: instructions={instructions} is a critic prompt without exemplars (001:244-245, 274); "
            "use critique_shots=0"
        )
    per_run = steps + 1
    options = dict(critic_params)
    if critic == "intrinsic":
        # the critic's frame follows the planner's prompt style (Table 6's PDDL and English rows, 001:274-279)
        options.update(shots=critique_shots, domain_definition=domain_definition, instructions=instructions,
                       style=style)  # fmt: skip
    critic_temperature = vote_temperature if votes > 1 else temperature

    def judge(ctx: RunContext) -> Any:
        llm = AtTemperature(ctx.llm, critic_temperature, max_tokens)
        if critic == "sound" and isinstance(ctx.domain, ValidatorAdvice):
            return oracle(ctx, real_val=validator == "val"), llm
        return make_critic(critic, llm, ctx.domain, **options), llm

    def critic_messages(ctx: RunContext, answer: str) -> list[dict[str, str]]:
        if isinstance(ctx.domain, SelfCritiqued):
            return ctx.domain.critic_messages(
                ctx.instance,
                answer,
                shots=critique_shots,
                domain_definition=domain_definition,
                instructions=instructions,
                style=style,
            )
        assert isinstance(ctx.domain, Judged)  # the study left the scheme out of domains with neither
        return ctx.domain.judge_prompt(ctx.instance, "critique", answer)

    def handback(ctx: RunContext, critique: str) -> str:
        prompts = ctx.domain.prompts if isinstance(ctx.domain, Prompted) else DEFAULT
        return critique.strip() or prompts["intrinsic_self_critique"].text("handback-empty")

    graph = Blueprint(IntrinsicState)
    graph.add_node(
        "generator",
        make_planner(
            per_run=per_run,
            runs=runs,
            shots=shots,
            style=style,
            context_limit=context_limit,
            temperature=temperature,
            max_tokens=max_tokens,
        ),
    )
    graph.add_node(
        "critic",
        make_self_critic(
            per_run=per_run,
            runs=runs,
            votes=votes,
            context_limit=context_limit,
            judge=judge,
            critic_messages=critic_messages if critic == "intrinsic" else None,
            handback=handback,
            reader="binary" if validator == "val" else "domain",
        ),
    )
    graph.add_edge(START, "generator")
    targets = {"critic": "critic", "generator": "generator", END: END}
    if runs > 1:
        graph.add_node("vote", make_final_vote())
        graph.add_edge("vote", END)
        targets["vote"] = "vote"
    graph.add_conditional_edges("generator", route, {k: v for k, v in targets.items() if k != "generator" or runs > 1})
    graph.add_conditional_edges("critic", route, {k: v for k, v in targets.items() if k != "critic"})
    return graph
