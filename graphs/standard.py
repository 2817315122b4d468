"""standard: one prompt (sample 0); its answer is final. `max_tokens` caps the reply for this scheme alone (left
out or default: the study's setting; none: no cap, as step 0 of `intrinsic` sends it); the refinement study's
one-shot runs (`standard:style=refine,max_tokens=5000`) sent 5000, as its code's `generate_response` /
`batch_generate` did (Singh8899/LLM-Planning-Leonardo, `model_manager.py`)."""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.cost import Calls
from critiquebench.graphs.direct import Blueprint
from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.params import reply_cap, style

PARAMS = (style(), reply_cap())


def build(*, style: str | None, max_tokens: int | None) -> Blueprint:
    return verified_loop(rounds=1, style=style, max_tokens=max_tokens)


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=1)
