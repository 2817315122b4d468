"""Reports of recorded samples (`import samples`): pass@k, maj@k and first-k sampling by k, and the source's labels.

`--table pass-at-k`, per domain and k, over the instances with at least k samples:
- sampling: the share of instances whose first k samples hold a sound-valid one (the `sampling:k=K` scheme as the
  self-verification paper ran it: the sound verifier stops at the first correct sample), Wilson interval;
- pass@k: the unbiased estimator of Chen et al. 2021 from all n samples of an instance, c of them valid,
  1 - C(n-c, k) / C(n, k), as the product prod_{j<k} (n-c-j)/(n-j) (never a binomial coefficient, which
  overflows a float at n = 1,000), averaged over instances; interval: mean +- 1.96 standard errors over
  instances, clipped to [0, 1];
- maj@k: the share whose majority answer of the first k samples is valid, the answer counted and ties broken as
  the study's `self-consistency` vote does (`nodes.voting.pick_consistent`: the most common canonical answer, ties
  to the earliest; `vote=text` counts reply texts), Wilson interval;
- the mean per-sample accuracy (every sample pooled), Wilson interval.
`--table labels`: the source's verdicts beside the sound verifier's: counts, agreement, and every disagreement.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critiquebench.reports.guards import SMALL_N
from critiquebench.reports.metrics import Z95, wilson
from critiquebench.reports.tables import GRIDS, Grid, pct
from critiquebench.studies.define import ReportError, study_config


@dataclass(frozen=True)
class PassAtKRow:
    domain: str
    k: int
    instances: int  # with at least k samples
    sampling_correct: int
    sampling: float | None
    sampling_ci_low: float | None
    sampling_ci_high: float | None
    pass_at_k: float | None
    pass_ci_low: float | None
    pass_ci_high: float | None
    maj_correct: int
    maj_at_k: float | None
    maj_ci_low: float | None
    maj_ci_high: float | None
    samples: int  # every sample of the domain
    samples_valid: int
    sample_accuracy: float | None
    vote: str = "answer"
    small_n: bool = False  # fewer instances than reports.guards.SMALL_N: marked `*`, as Table 1 marks its cells
    table: str = "pass-at-k"


@dataclass(frozen=True)
class LabelRow:
    """kind "summary" (counts per domain) or "disagreement" (one sample the source and we judge differently)."""

    kind: str
    domain: str
    samples: int | None = None
    labelled: int | None = None
    agree: int | None = None
    agreement: float | None = None
    both_valid: int | None = None
    both_invalid: int | None = None
    source_only_valid: int | None = None
    ours_only_valid: int | None = None
    instance: str | None = None
    sample: int | None = None
    line: int | None = None
    source_label: bool | None = None
    ours: str | None = None
    answer: str | None = None
    reason: str | None = None
    table: str = "labels"


@dataclass
class _Instance:
    """One instance's samples in index order: validity, and the key the study's vote counts."""

    valid: list[bool]
    keys: list[str | None]


def unbiased_pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k) / C(n, k) as a product of factors in [0, 1]; 1.0 when fewer than k samples are wrong."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - j) / (n - j) for j in range(k))


def _pass_curve(n: int, c: int) -> list[float]:
    """pass@k for k = 1..n, each from the one before (C(n-c, k)/C(n, k) gains the factor (n-c-k+1)/(n-k+1))."""
    out, miss = [], 1.0
    for k in range(1, n + 1):
        miss *= max(n - c - k + 1, 0) / (n - k + 1)
        out.append(1.0 - miss)
    return out


def _majority_curve(keys: Sequence[str | None], valid: Sequence[bool]) -> list[bool]:
    """maj@k for k = 1..n: whether the answer `pick_consistent` picks from the first k samples is valid, kept up
    to date sample by sample (the leader changes only to the key just counted, on a higher count or on a tie with
    an earlier first appearance); no countable key yet: sample 0's verdict, as `pick_consistent` returns round 1."""
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    leader: str | None = None
    out = []
    for i, key in enumerate(keys):
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
            first.setdefault(key, i)
            if (
                leader is None
                or counts[key] > counts[leader]
                or (counts[key] == counts[leader] and first[key] < first[leader])
            ):
                leader = key
        out.append(valid[first[leader]] if leader is not None else valid[0])
    return out


def _vote_of(config: dict[str, Any]) -> str:
    """What the study's self-consistency counts ("answer" unless its schemes say vote=text)."""
    for spec in config.get("schemes") or ():
        if spec.startswith("self-consistency") and "vote=text" in spec:
            return "text"
    return "answer"


def _ks(config: dict[str, Any], most: int) -> list[int]:
    specs = [s for s in config.get("schemes") or () if s.split(":")[0] in ("sampling", "self-consistency")]
    ks = {int(p[2:]) for spec in specs for p in spec.partition(":")[2].split(",") if p.startswith("k=")}
    return sorted(k for k in ks if k <= most) or list(range(1, most + 1))


def _read(db: Any, study: str, columns: tuple[str, ...]) -> Iterable[dict[str, Any]]:
    from critiquebench.store.samples import has_samples, study_samples

    study_config(db, study)  # ReportError for an unknown study
    if not has_samples(db, study):
        raise ReportError(f"study {study!r} has no recorded samples: this table is of `critiquebench import "
                          "samples` studies")  # fmt: skip
    return study_samples(db, study, columns)


def pass_at_k_rows(db: Any, study: str) -> list[PassAtKRow]:
    config = study_config(db, study)
    vote = _vote_of(config)
    stop = tuple(_stop(config))
    from critiquebench.nodes.voting import reply_text

    text = ("response",) if vote == "text" else ()
    columns = ("domain", "instance_id", "sample", "canonical", "sound_valid", *text)
    per: dict[str, dict[str, _Instance]] = defaultdict(dict)
    for row in _read(db, study, columns):
        inst = per[row["domain"]].setdefault(row["instance_id"], _Instance([], []))
        inst.valid.append(bool(row["sound_valid"]))
        key = row["canonical"] if vote == "answer" else (reply_text(row["response"], stop) or None)
        inst.keys.append(key)
    return [row for domain in config.get("domains", per) if domain in per for row in _domain_rows(domain, per[domain],
            config, vote)]  # fmt: skip


def _stop(config: dict[str, Any]) -> list[str]:
    options = config.get("domain_options") or {}
    return [s for d in config.get("domains", ()) for s in (options.get(d, {}).get("stop") or [])][:4]


def _domain_rows(domain: str, instances: dict[str, _Instance], config: dict[str, Any], vote: str) -> list[PassAtKRow]:
    most = max(len(i.valid) for i in instances.values())
    ks = _ks(config, most)
    first_valid = {ref: next((j for j, v in enumerate(i.valid) if v), None) for ref, i in instances.items()}
    passes = {ref: _pass_curve(len(i.valid), sum(i.valid)) for ref, i in instances.items()}
    majority = {ref: _majority_curve(i.keys, i.valid) for ref, i in instances.items()}
    samples = sum(len(i.valid) for i in instances.values())
    valid = sum(sum(i.valid) for i in instances.values())
    rows = []
    for k in ks:
        refs = [ref for ref, i in instances.items() if len(i.valid) >= k]
        m = len(refs)
        found = sum(first_valid[ref] is not None and first_valid[ref] < k for ref in refs)
        maj = sum(majority[ref][k - 1] for ref in refs)
        estimates = [passes[ref][k - 1] for ref in refs]
        mean = sum(estimates) / m if m else None
        low, high = _mean_interval(estimates)
        s_low, s_high = wilson(found, m) if m else (None, None)
        m_low, m_high = wilson(maj, m) if m else (None, None)
        rows.append(PassAtKRow(domain, k, m, found, found / m if m else None, s_low, s_high, mean, low, high,
                               maj, maj / m if m else None, m_low, m_high, samples, valid, valid / samples,
                               vote, small_n=0 < m < SMALL_N))  # fmt: skip
    return rows


def _mean_interval(values: Sequence[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, mean
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = Z95 * sd / math.sqrt(len(values))
    return max(0.0, mean - half), min(1.0, mean + half)


def label_rows(db: Any, study: str) -> list[LabelRow]:
    columns = ("domain", "instance_id", "sample", "line", "answer", "sound_status", "sound_valid", "reason", "label")
    summary: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    disagreements: list[LabelRow] = []
    for row in _read(db, study, columns):
        counts = summary[row["domain"]]
        counts["samples"] += 1
        if row["label"] is None:
            continue
        ours, theirs = bool(row["sound_valid"]), bool(row["label"])
        counts["labelled"] += 1
        counts["agree"] += ours == theirs
        counts["both_valid"] += ours and theirs
        counts["both_invalid"] += not ours and not theirs
        counts["source_only_valid"] += theirs and not ours
        counts["ours_only_valid"] += ours and not theirs
        if ours != theirs:
            disagreements.append(LabelRow(
                "disagreement", row["domain"], instance=row["instance_id"], sample=row["sample"], line=row["line"],
                source_label=theirs, ours=row["sound_status"], answer=row["answer"],
                reason=row["reason"] or ("valid" if ours else row["sound_status"]),
            ))  # fmt: skip
    out = [
        LabelRow("summary", domain, c["samples"], c["labelled"], c["agree"],
                 c["agree"] / c["labelled"] if c["labelled"] else None, c["both_valid"], c["both_invalid"],
                 c["source_only_valid"], c["ours_only_valid"])
        for domain, c in summary.items()
    ]  # fmt: skip
    return out + disagreements


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"[{100 * low:.1f}, {100 * high:.1f}]"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def pass_at_k_grids(rows: Sequence[PassAtKRow]) -> list[Grid]:
    grids = []
    for domain in dict.fromkeys(r.domain for r in rows):
        mine = [r for r in rows if r.domain == domain]
        body = [[str(r.k), f"{r.instances} *" if r.small_n else str(r.instances), pct(r.sampling_correct, r.instances),
                 _interval(r.sampling_ci_low, r.sampling_ci_high), _share(r.pass_at_k),
                 _interval(r.pass_ci_low, r.pass_ci_high), pct(r.maj_correct, r.instances),
                 _interval(r.maj_ci_low, r.maj_ci_high)] for r in mine]  # fmt: skip
        first = mine[0]
        low, high = wilson(first.samples_valid, first.samples)
        note = (f"Per-sample accuracy {pct(first.samples_valid, first.samples)} {_interval(low, high)}. sampling: a "
                "valid answer among the first k samples; pass@k: Chen et al.'s unbiased estimate from all n samples, "
                f"interval +-1.96 SE over instances; maj@k: the majority of the first k ({first.vote} vote, ties to "
                "the earliest), as self-consistency:k=K. 95% intervals; Wilson for shares.")  # fmt: skip
        if any(r.small_n for r in mine):
            note += (f"\n* fewer than {SMALL_N} instances: a smoke test of the pipeline, too few to tell one k from "
                     "another.")  # fmt: skip
        headers = ["k", "instances", "sampling", "95% CI", "pass@k", "95% CI", "maj@k", "95% CI"]
        grids.append(Grid(f"pass@k by k: {domain}", headers, body, note))
    return grids


def label_grids(rows: Sequence[LabelRow]) -> list[Grid]:
    summary = [r for r in rows if r.kind == "summary"]
    body = [[r.domain, str(r.samples), str(r.labelled), pct(r.agree, r.labelled), str(r.both_valid),
             str(r.both_invalid), str(r.source_only_valid), str(r.ours_only_valid)] for r in summary]  # fmt: skip
    grids = [Grid("The source's labels beside the sound verifier's",
                  ["domain", "samples", "labelled", "agreement", "both valid", "both invalid", "only the source: valid",
                   "only ours: valid"], body,
                  "Agreement over the samples the source labelled; every disagreement is listed below.")]  # fmt: skip
    disagreements = [r for r in rows if r.kind == "disagreement"]
    if disagreements:
        grids.append(Grid("Disagreements", ["domain", "instance", "sample", "line", "source", "ours", "answer",
                                            "our reason"],
                          [[r.domain, str(r.instance), str(r.sample), str(r.line),
                            "valid" if r.source_label else "invalid", str(r.ours), str(r.answer or ""),
                            str(r.reason or "")] for r in disagreements]))  # fmt: skip
    return grids


def pass_at_k_figure(db: Any, study: str, path: Path) -> str:
    """Sampling, pass@k and maj@k against k, one panel per domain."""
    from critiquebench.reports.figures import plt, save_figure

    rows = pass_at_k_rows(db, study)
    domains = list(dict.fromkeys(r.domain for r in rows))
    fig, axes = plt.subplots(1, len(domains), figsize=(4.8 * len(domains), 3.6), squeeze=False)
    for ax, domain in zip(axes.flat, domains, strict=True):
        mine = [r for r in rows if r.domain == domain]
        ks = [r.k for r in mine]
        for label, values in (("sampling (first k)", [r.sampling for r in mine]),
                              ("pass@k (unbiased)", [r.pass_at_k for r in mine]),
                              ("maj@k", [r.maj_at_k for r in mine])):  # fmt: skip
            ax.plot(ks, [100 * (v or 0.0) for v in values], marker="o", markersize=3, label=label)
        ax.axhline(100 * (mine[0].sample_accuracy or 0.0), color="grey", linestyle=":", label="per sample")
        ax.set_title(domain)
        ax.set_xlabel("k (samples)")
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes.flat[0].set_ylabel("accuracy (%)")
    fig.suptitle(f"pass@k, maj@k and sampling by k ({study})")
    return f"pass@k curves written to {save_figure(fig, path)}"


GRIDS[PassAtKRow] = pass_at_k_grids
GRIDS[LabelRow] = label_grids
