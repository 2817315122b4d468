"""Methodology guards: settings and numbers that invite a wrong conclusion, named where they appear.

- `temperature_warnings(schemes, temperature)`: `sampling` and `self-consistency` at temperature 0 draw one
  answer k times (a deterministic server returns the same text for the same prompt), so they measure nothing
  beyond `standard`. The self-verification paper sampled at t=1 (`000:244`); its study file
  (studies/self_verification_loops.toml) sets `temperature=1.0` on those schemes.
- `SMALL_N`: a Table 1 cell with fewer finished runs than this is flagged (`Table1Row.small_n`): its Wilson
  interval spans tens of points, so it can show that the pipeline runs, not which scheme is better.
- A verifier row whose sound verdicts are all one class (`Table2Row.one_class`): with only invalid answers an
  always-"invalid" verifier scores 100% accuracy and its false-negative rate is undefined, so its accuracy says
  nothing about verification skill.
"""

from __future__ import annotations

from collections.abc import Iterable

SMALL_N = 30
SAMPLING_SCHEMES = ("sampling", "self-consistency")
SMALL_N_NOTE = f"* fewer than {SMALL_N} finished runs: a smoke test of the pipeline, too few to compare schemes."
ONE_CLASS_NOTE = ("† every answer judged was sound-invalid (or every one valid): accuracy only counts how often the "
                  "LLM said that one class, and the other class's error rate is undefined.")  # fmt: skip


def temperature_warnings(schemes: Iterable[str], temperature: float) -> list[str]:
    """One line per sampling scheme of `schemes` that would draw its samples at temperature 0."""
    from critiquebench.graphs import parse_spec

    out = []
    for spec in schemes:
        parsed = parse_spec(spec)
        if parsed.name not in SAMPLING_SCHEMES:
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
