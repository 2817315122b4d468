"""Report guards: numbers in a table that invite a wrong conclusion, marked where they appear.

- `SMALL_N`: a Table 1 cell with fewer finished runs than this is flagged (`Table1Row.small_n`, `*`): its Wilson
  interval spans tens of points, so it can show that the pipeline runs, not which scheme is better.
- A verifier row whose sound verdicts are all one class (`Table2Row.one_class`, `†`): with only invalid answers an
  always-"invalid" verifier scores 100% accuracy and its false-negative rate is undefined, so its accuracy says
  nothing about verification skill.

The guard a study prints before it runs (sampling at temperature 0) is in critiquebench/studies/guards.py.
"""

from __future__ import annotations

SMALL_N = 30
SMALL_N_NOTE = f"* fewer than {SMALL_N} finished runs: a smoke test of the pipeline, too few to compare schemes."
ONE_CLASS_NOTE = ("† every answer judged was sound-invalid (or every one valid): accuracy only counts how often the "
                  "LLM said that one class, and the other class's error rate is undefined.")  # fmt: skip
