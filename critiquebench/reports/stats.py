"""The paired statistics of `report --table compare` (docs/reports.md, "Paired comparisons", gives each formula and
its reference).

- `mcnemar_exact(b, c)`: McNemar's exact test on the discordant pairs of a paired 2x2 table (McNemar 1947; the exact
  form is the sign test on the b + c discordant pairs): under H0 each discordant pair is A-only or B-only with
  probability 1/2, and the two-sided p-value is min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2).
- `holm(ps)`: Holm's step-down adjustment (Holm 1979) of m p-values, which keeps the family-wise error rate.
- `paired_bootstrap(units, ...)`: a percentile interval (Efron & Tibshirani 1993, ch. 13) for the difference in
  accuracy, resampling instances with replacement and keeping every trial of a drawn instance with it (a cluster
  bootstrap: the trials of one instance are not independent). Seeded, so the same data give the same interval.

Pure functions over counts: nothing here reads the store.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

SEED = 20240601  # the bootstrap's seed: every pair's interval is drawn from a generator seeded with it
RESAMPLES = 10_000  # B, the bootstrap resamples per pair
ALPHA = 0.05  # a pair is significant when its Holm-adjusted p-value is below this


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for `b` pairs where only A was right and `c` where only B was; 1.0 with no
    discordant pair. Exact integer arithmetic: no normal approximation, no rounding until the last division."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values in the order given: sorted ascending p_(1) <= ... <= p_(m), the adjusted p_(i) is
    max over j <= i of min(1, (m - j + 1) p_(j))."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def paired_bootstrap(
    units: Sequence[tuple[str, int, int]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile interval for accuracy(A) - accuracy(B) from paired `units` (instance, A right 0/1, B right 0/1;
    an instance may have several units, its trials). Each resample draws as many instances as there are, with
    replacement, and takes all their units; the difference of a resample is sum(A - B) / units drawn. None
    without units.

    Drawing instances only matters through each instance's (sum of A - B, units) pair, so a resample is a
    multinomial draw over those distinct pairs: the same distribution as drawing instances one by one."""
    if not units:
        return None
    per: dict[str, list[int]] = {}
    for instance, a, b in units:
        acc = per.setdefault(instance, [0, 0])
        acc[0] += int(a) - int(b)
        acc[1] += 1
    groups = Counter((s, m) for s, m in per.values())
    kinds = list(groups)
    weights = np.array([groups[k] for k in kinds], dtype=float)
    sums = np.array([k[0] for k in kinds], dtype=float)
    sizes = np.array([k[1] for k in kinds], dtype=float)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(len(per), weights / weights.sum(), size=resamples)
    diffs = (counts @ sums) / (counts @ sizes)
    tail = (1 - level) / 2
    low, high = np.quantile(diffs, [tail, 1 - tail])
    return float(low), float(high)
