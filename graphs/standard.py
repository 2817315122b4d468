"""standard: one prompt (sample 0); its answer is final."""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.cost import Calls
from critiquebench.graphs.direct import Blueprint
from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.params import style

PARAMS = (style(),)


def build(*, style: str | None) -> Blueprint:
    return verified_loop(rounds=1, style=style)


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=1)
