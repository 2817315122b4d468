"""Example domain plug-in: a domain a package adds through the entry-point group `critiquebench.domains`.

The whole contract: a factory `make_domain(**options) -> Domain` (the small protocol of
`critiquebench.plugins`: `Domain`). This one is Game of 24 on generated puzzles (`gen:N:SEED`) under its own name.
"""

from __future__ import annotations

from typing import Any

from critiquebench.plugins import Game24


class GeneratedGame24(Game24):
    """Game of 24 on generated puzzles, as a plug-in domain."""

    name = "game24-generated"


def make_domain(**options: Any) -> GeneratedGame24:
    options.pop("prompt_style", None)
    if options:
        raise ValueError(f"game24-generated takes no options {sorted(options)}")
    return GeneratedGame24()
