"""The two loop shapes the schemes are made of, built from the shared nodes (`graphs.direct.Blueprint`s, which
`Scheme` turns into uncompiled StateGraphs).

- verified loop: generator -> verifier (sound; decides) -> generator | vote | END
- critic loop:   generator -> critic (sound verdict recorded, then the critic decides) -> generator | END

Graphs take the run's parts (domain, instance, LLM) as LangGraph's runtime context (`RunContext`), so one
graph serves every run of a scheme configuration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from critiquebench.domains.contract import FeedbackLevel, Instance
from critiquebench.graphs.direct import START, Blueprint
from critiquebench.graphs.state import RunState, route
from critiquebench.nodes.context import END
from critiquebench.nodes.generator import Mode, make_generator
from critiquebench.nodes.llm_verifier import make_critic_node
from critiquebench.nodes.sound_verifier import Policy, Reader, make_sound_verifier
from critiquebench.nodes.voting import make_consistency_vote


def verified_loop(
    *,
    rounds: int,
    mode: Mode = "iterate",
    policy: Policy = "stop_on_valid",
    level: FeedbackLevel | None = None,
    style: str | None = None,
    history: str = "full",
    wrap: Callable[[Instance, str], str] | None = None,
    temperature: float | None = None,
    vote: str = "answer",
    max_tokens: int | None = None,
    reader: Reader = "domain",
    frame: Callable[[Any, list[dict[str, str]]], list[dict[str, str]]] | None = None,
) -> Blueprint:
    """Generate, check with the domain's sound verifier, hand its feedback (at `level`) back, up to `rounds`
    rounds: the LLM + sound verifier schemes (`policy`: stop at a valid answer, or collect every round to vote;
    `frame`: the scheme's variant of the domain's prompt, `make_generator`'s)."""
    graph = Blueprint(RunState)
    graph.add_node("generator", make_generator(mode=mode, style=style, history_policy=history, wrap=wrap,
                                               temperature=temperature, max_tokens=max_tokens,
                                               frame=frame))  # fmt: skip
    graph.add_node("verifier", make_sound_verifier(policy=policy, rounds=rounds, level=level, reader=reader))
    graph.add_edge(START, "generator")
    graph.add_edge("generator", "verifier")
    targets: dict[str, str] = {END: END} if rounds == 1 else {"generator": "generator", END: END}
    if policy == "collect":
        graph.add_node("vote", make_consistency_vote(vote))
        graph.add_edge("vote", END)
        targets = {"generator": "generator", "vote": "vote"}
    graph.add_conditional_edges("verifier", route, targets)
    return graph


def critic_loop(
    *,
    rounds: int,
    critic: str,
    critic_params: dict[str, Any],
    votes: int = 1,
    style: str | None = None,
    history: str = "full",
    wrap: Callable[[Instance, str], str] | None = None,
    handback: Callable[[str], str] = lambda critique: critique,
    critique_last: bool = True,
    resample: bool = False,
) -> Blueprint:
    """Generate, let critic `critic` (an LLM's, `votes` votes, or a plug-in's) judge, hand its critique back
    through `handback`, up to `rounds` rounds: the LLM + LLM schemes."""
    graph = Blueprint(RunState)
    graph.add_node("generator", make_generator(style=style, history_policy=history, wrap=wrap, then="critic"))
    graph.add_node(
        "critic",
        make_critic_node(critic=critic, critic_params=critic_params, votes=votes, rounds=rounds, handback=handback,
                         critique_last=critique_last, resample=resample),  # fmt: skip
    )
    graph.add_edge(START, "generator")
    graph.add_edge("generator", "critic")
    graph.add_conditional_edges("critic", route, {"generator": "generator", END: END})
    return graph


def raw_turn(instance: Instance, text: str) -> str:
    """History wrapper that hands feedback back verbatim as the user turn."""
    return text
