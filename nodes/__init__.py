"""Graph nodes (generator, sound verifier, LLM verifier/critic, voting) and the critic registry.

Node factories take options and return `(state, runtime) -> partial update` callables; the run's domain,
instance and LLM (a small `ChatLLM` protocol) come as LangGraph's runtime context (`RunContext`). Nodes
compute only: they import nothing from the store or the app layer (tests/test_layers.py checks). Public
names are re-exported lazily so that importing one node does not pull in the others.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "RunContext": "context",
    "RunState": "context",
    "Meter": "context",
    "ChatLLM": "context",
    "make_generator": "generator",
    "make_sound_verifier": "sound_verifier",
    "make_critic_node": "llm_verifier",
    "make_llm_critic": "critics",
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
