"""Graph nodes (generator, sound verifier, LLM verifier/critic, voting), the critic registry, the LLM client.

Node factories take a `RunContext` and options and return `state -> partial update` callables. Public names
are re-exported lazily so that importing the LLM client does not pull in the graph machinery.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "RunContext": "context",
    "RunState": "context",
    "Meter": "context",
    "make_generator": "generator",
    "make_sound_verifier": "sound_verifier",
    "make_critic_node": "llm_verifier",
    "make_llm_critic": "llm_verifier",
    "majority": "voting",
    "make_consistency_vote": "voting",
    "Critic": "critics",
    "available_critics": "critics",
    "get_critic_factory": "critics",
    "make_critic": "critics",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
