"""sampling: the same prompt re-asked as samples 0..k-1; the sound verifier stops at the first correct one."""

from __future__ import annotations

from typing import Any

from critiquebench.graphs.cost import Calls
from critiquebench.graphs.direct import Blueprint
from critiquebench.graphs.loops import verified_loop
from critiquebench.graphs.params import samples, style, temperature

PARAMS = (samples(15), style(), temperature())


def build(*, k: int, style: str | None, temperature: float | None) -> Blueprint:
    return verified_loop(rounds=k, mode="sample", style=style, temperature=temperature)


def calls(params: dict[str, Any]) -> Calls:
    return Calls(rounds=int(params["k"]), samples=True)
