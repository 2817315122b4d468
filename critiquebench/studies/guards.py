"""Methodology guards of a study's settings: a setting that invites a wrong conclusion, named before it runs.

- `temperature_warnings(schemes, temperature)`: a sampling scheme (`Calls.samples`: `sampling`,
  `self-consistency`) at temperature 0 draws one
  answer k times (a deterministic server returns the same text for the same prompt), so they measure nothing
  beyond `standard`. The self-verification paper sampled at t=1 (`000:244`); its study file
  (studies/self_verification_loops.toml) sets `temperature=1.0` on those schemes.

The guards of a report's numbers (small n, one-class verifier rows) and their notes are in
critiquebench/reports/guards.py.
"""

from __future__ import annotations

from collections.abc import Iterable


def temperature_warnings(schemes: Iterable[str], temperature: float) -> list[str]:
    """One line per sampling scheme of `schemes` that would draw its samples at temperature 0."""
    from critiquebench.graphs import parse_spec

    out = []
    for spec in schemes:
        parsed = parse_spec(spec)
        if not parsed.calls.samples:  # a scheme whose rounds re-ask the first prompt as samples (graphs/cost.py)
            continue
        params = parsed.params
        own = params.get("temperature")
        drawn_at = float(temperature if own is None else own)
        if drawn_at == 0.0 and int(params.get("k", 1)) > 1:
            out.append(
                f"warning: {spec} draws its {params['k']} samples at temperature 0: they are one answer repeated, "
                f"so it measures nothing beyond standard; set --temperature, or {parsed.name}:temperature=1.0 as "
                "the self-verification paper did"
            )
    return out
