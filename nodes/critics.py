"""Critics: what judges an answer in the LLM-verification schemes, and the registry that names them.

A critic is made by a factory `make_critic(llm, domain, **params) -> Critic`; the Critic is called as
`critic(instance, answer_text, sample=0) -> LLMVerdict` (`sample` lets a voting node draw N distinct critiques
of the same prompt; a critic that makes no LLM call ignores it). Factories are looked up by name: first the
built-in table, then the entry-point group `critiquebench.critics`, so a package can add one with

    [project.entry-points."critiquebench.critics"]
    partial = "my_package.critics:make_critic"

and a scheme selects it as `llm-llm:critic=partial` (extra factory arguments as `critic_<name>=value`).

What a critic needs of a domain is declared (its `CRITICS` row; a plug-in factory may carry a `needs` attribute): a
study compares it with the domain's capabilities (`domains.contract`) before anything runs, and leaves the
scheme out of a domain that lacks them, with the domain's reason.
"""

from __future__ import annotations

import importlib.metadata
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from critiquebench.domains.contract import (
    Domain,
    FeedbackLevel,
    Instance,
    Judged,
    LLMVerdict,
    Need,
    SelfCritiqued,
    Unsupported,
    unmet,
)

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "critiquebench.critics"


class Critic(Protocol):
    def __call__(self, instance: Instance, answer: str, sample: int = 0) -> LLMVerdict: ...


CriticFactory = Callable[..., Critic]


def make_sound_critic(llm: Any, domain: Domain, level: FeedbackLevel = "first") -> Critic:
    """An oracle critic: the sound verifier with its feedback at `level` as the critique (no LLM call)."""

    def critic(instance: Instance, answer: str, sample: int = 0) -> LLMVerdict:
        verdict = domain.assess(instance, answer)[0]
        return LLMVerdict(verdict.valid, "" if verdict.valid else domain.feedback(instance, verdict, level))

    return critic


def make_llm_critic(llm: Any, domain: Domain, cot: bool = False) -> Critic:
    """The LLM verifier with the domain's verification prompt (`cot` selects the chain-of-thought variant;
    `Unsupported`, with the domain's reason, when the domain has none)."""
    purpose = "critique-cot" if cot else "critique"
    if why := unmet(domain, (Need(Judged, purpose),)):
        raise Unsupported(why)
    assert isinstance(domain, Judged)

    def critic(instance: Instance, answer: str, sample: int = 0) -> LLMVerdict:
        reply = llm.complete(domain.judge_prompt(instance, purpose, answer), sample=sample).text
        return domain.judge_reply(instance, purpose, answer, reply).verdict

    return critic


def make_llm_cot_critic(llm: Any, domain: Domain) -> Critic:
    """The LLM verifier with the chain-of-thought verification prompt."""
    return make_llm_critic(llm, domain, cot=True)


def make_intrinsic_critic(
    llm: Any,
    domain: Domain,
    shots: int = 0,
    domain_definition: bool = True,
    instructions: str = "three-step",
    style: str | None = None,
) -> Critic:
    """The intrinsic self-critique paper's critic: step-by-step verification against the domain definition,
    concluding "the plan is correct" / "the plan is wrong" / "goal not reached" (domains with that critic,
    `SelfCritiqued`; others use their own verification prompt). `style` is the planner's prompt style, whose
    frame the critic's prompt follows."""
    if not isinstance(domain, SelfCritiqued):
        return make_llm_critic(llm, domain)

    def critic(instance: Instance, answer: str, sample: int = 0) -> LLMVerdict:
        prompt = domain.critic_messages(
            instance, answer, shots=shots, domain_definition=domain_definition, instructions=instructions, style=style
        )
        reply = llm.complete(prompt, sample=sample).text
        # only non-default instructions are passed on: a plug-in's read_critique(reply) keeps working
        return domain.read_critique(reply, instructions=instructions) if instructions != "three-step" else (
            domain.read_critique(reply))

    return critic


@dataclass(frozen=True)
class CriticEntry:
    """One built-in critic: its factory, what it needs of a domain (one of these; none: nothing beyond the core
    contract), and whether each judgement is an LLM call (the sound critic's are not, so the dry run counts none)."""

    factory: CriticFactory
    needs: tuple[Need, ...] = ()
    llm_calls: bool = True


# The built-in critics, one row each.
CRITICS: dict[str, CriticEntry] = {
    "llm": CriticEntry(make_llm_critic, (Need(Judged, "critique"),)),
    "intrinsic": CriticEntry(make_intrinsic_critic, (Need(SelfCritiqued), Need(Judged, "critique"))),
    "llm-cot": CriticEntry(make_llm_cot_critic, (Need(Judged, "critique-cot"),)),
    "sound": CriticEntry(make_sound_critic, llm_calls=False),
}


def critic_needs(name: str) -> tuple[Need, ...]:
    """What critic `name` needs of a domain (a plug-in's factory may declare `needs`; else nothing known)."""
    if name in CRITICS:
        return CRITICS[name].needs
    return tuple(getattr(get_critic_factory(name), "needs", ()))


def makes_llm_calls(name: str) -> bool:
    """Whether each judgement of critic `name` is an LLM call (a plug-in's is assumed to be)."""
    return CRITICS[name].llm_calls if name in CRITICS else True


@dataclass(frozen=True)
class CriticInfo:
    name: str
    source: str  # "built-in" or "module:attr (distribution)" of the entry point
    doc: str


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available_critics() -> list[CriticInfo]:
    """Built-in critics, then plug-ins (a plug-in with a built-in's name is shadowed, and says so)."""
    infos = [CriticInfo(name, "built-in", _first_line(e.factory.__doc__)) for name, e in CRITICS.items()]
    for name, ep in sorted(_entry_points().items()):
        dist = ep.dist.name if ep.dist is not None else "?"
        shadowed = " (shadowed by the built-in)" if name in CRITICS else ""
        infos.append(CriticInfo(name, f"{ep.value} ({dist}){shadowed}", _plugin_doc(ep)))
    return infos


# Plug-in factories that loaded, by name: scanning the installed distributions' entry points costs ~8 ms, and a
# scheme looks its critic up several times per run. Only successes are kept, so a plug-in installed while the
# process runs is still found.
_LOADED: dict[str, CriticFactory] = {}


def get_critic_factory(name: str) -> CriticFactory:
    if name in CRITICS:
        return CRITICS[name].factory
    if name in _LOADED:
        return _LOADED[name]
    eps = _entry_points()
    if name not in eps:
        known = ", ".join([*CRITICS, *sorted(eps)])
        raise ValueError(f"unknown critic {name!r}; available: {known}")
    try:
        factory = eps[name].load()
    except Exception as exc:  # a broken plug-in must not look like our bug
        raise ValueError(f"critic plug-in {name!r} ({eps[name].value}) failed to load: {exc}") from exc
    if not callable(factory):
        raise ValueError(f"critic plug-in {name!r} ({eps[name].value}) is not callable")
    _LOADED[name] = factory
    return factory


def make_critic(name: str, llm: Any, domain: Domain, **params: Any) -> Critic:
    """The critic `name` built for `domain`; bad parameters give a clear error."""
    factory = get_critic_factory(name)
    try:
        return factory(llm, domain, **params)
    except TypeError as exc:
        raise ValueError(f"critic {name!r} does not accept parameters {sorted(params)}: {exc}") from exc


def _first_line(doc: str | None) -> str:
    """The first paragraph of a docstring on one line."""
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def _plugin_doc(ep: importlib.metadata.EntryPoint) -> str:
    try:
        return _first_line(getattr(ep.load(), "__doc__", None))
    except Exception as exc:  # listing must survive a broken plug-in
        log.warning("critic plug-in %s failed to load: %s", ep.name, exc)
        return f"(failed to load: {exc})"
