"""`report NAME --table compare`: every pair of schemes of a domain, compared on the runs both finished.

Every scheme of a study runs on the same instances and trials, so two schemes are compared pair by pair: a unit
is one (instance, trial) that both cells finished (status done), and each unit is a right/wrong pair. Per pair of
schemes the row gives each one's accuracy over those units, the difference (A minus B) with a seeded paired
bootstrap interval, McNemar's exact p-value on the discordant units, its Holm adjustment over every pair of the
table, and wins / ties / losses (A only right / both alike / B only right). With `--compare OTHER` the pairs are
this study's schemes against the other study's, per domain, on the units both finished (two studies of the same
instances: recorded runs beside live ones). A cell that has not finished (runs pending, running or not started)
is said to be unfinished and not compared: its finished runs are not the set the other cell ran on.
The statistics are `critiquebench.reports.stats`; docs/reports.md gives each formula and reference.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from critiquebench.reports.records import row_columns
from critiquebench.reports.stats import ALPHA, RESAMPLES, SEED, holm, mcnemar_exact, paired_bootstrap
from critiquebench.reports.tables import GRIDS, Grid, pct
from critiquebench.studies.define import ReportError


@dataclass(frozen=True)
class PairRow:
    study_a: str
    study_b: str
    domain: str
    scheme_a: str
    scheme_b: str
    n: int | None  # units (instance x trial) both finished; None when a cell is unfinished
    a_correct: int | None
    b_correct: int | None
    a_only: int | None  # units only A got right: A's wins
    b_only: int | None  # units only B got right: A's losses
    ties: int | None  # both right or both wrong
    accuracy_a: float | None
    accuracy_b: float | None
    difference: float | None  # accuracy_a - accuracy_b over the n units
    ci_low: float | None  # paired bootstrap percentile interval of the difference (level 95%)
    ci_high: float | None
    mcnemar_p: float | None  # exact, two-sided, on the a_only + b_only discordant units
    holm_p: float | None  # mcnemar_p adjusted over every compared pair of the table
    significant: bool | None  # holm_p < ALPHA
    unpaired: int | None  # units finished in one cell but not the other, left out of the comparison
    unfinished: str | None = None  # why the pair is not compared: which cell has not finished, and how far it got
    seed: int = SEED
    resamples: int = RESAMPLES
    table: str = "compare"


@dataclass(frozen=True)
class _Cell:
    """One domain x scheme of a study: its finished units and whether every planned run has finished."""

    units: dict[tuple[str, int], int]  # (instance, trial) -> correct 0/1, finished runs only
    unfinished: str | None  # "30 of 50 planned runs finished", None when finished


def _cells(db: Any, study: str) -> dict[tuple[str, str], _Cell]:
    from critiquebench.reports.metrics import _runs, table1
    from critiquebench.studies.runner import planned_runs

    units: dict[tuple[str, str], dict[tuple[str, int], int]] = defaultdict(dict)
    for run in _runs(db, study):
        if run["status"] == "done":
            units[(run["domain"], run["spec"])][(str(run["instance_id"]), int(run["trial"]))] = int(run["correct"] or 0)
    out = {}
    for row in table1(db, study, planned_runs):
        ended = row.total + row.failed
        short = row.unfinished > 0 or (row.planned is not None and ended < row.planned)
        of = row.planned if row.planned is not None else ended + row.unfinished
        note = f"{row.total} of {of} planned runs finished" if short else None
        out[(row.domain, row.scheme)] = _Cell(units.get((row.domain, row.scheme), {}), note)
    return out


def _resolve(token: str, known: list[str]) -> str | None:
    """A scheme as `--pairs` names it: a spec of the study, or a scheme name only one of its specs has."""
    if token in known:
        return token
    named = [s for s in known if s.partition(":")[0] == token]
    return named[0] if len(named) == 1 else None


def parse_pairs(text: str, left: list[str], right: list[str]) -> list[tuple[str, str]]:
    """`--pairs A:B,C:D` as (spec of `left`, spec of `right`) pairs. A spec holds ':' and ',' itself
    (`sound-first:rounds=3`), so the text is split where both halves name known schemes; ReportError (one line)
    when no split, or more than one, reads it."""

    def read(rest: str) -> list[list[tuple[str, str]]]:
        if not rest:
            return [[]]
        found = []
        for i, ch in enumerate(rest):
            if ch != ":" or (a := _resolve(rest[:i].strip(), left)) is None:
                continue
            tail = rest[i + 1 :]
            for j in [*(k for k, c in enumerate(tail) if c == ","), len(tail)]:
                if (b := _resolve(tail[:j].strip(), right)) is None:
                    continue
                for more in read(tail[j + 1 :]):
                    found.append([(a, b), *more])
        return found

    readings = read(text.strip())
    if not readings:
        raise ReportError(
            f"--pairs {text!r}: write A:B,C:D with schemes of the study ({', '.join(left)})"
            + (f" and of the other ({', '.join(right)})" if right != left else "")
        )
    if len({tuple(r) for r in readings}) > 1:
        raise ReportError(f"--pairs {text!r} can be read more than one way: name each scheme by its full spec")
    return readings[0]


def compare_rows(db: Any, study: str, other: str | None = None, pairs: str | None = None, *,
                 seed: int = SEED, resamples: int = RESAMPLES) -> list[PairRow]:  # fmt: skip
    """The paired comparison rows of `study` (its schemes pairwise per domain, in study order), or of `study`
    against `other` (each scheme of one against each of the other, per domain); `pairs`: only these."""
    from critiquebench.reports.metrics import ordered_keys
    from critiquebench.studies.define import study_config

    mine = _cells(db, study)
    theirs = mine if other is None else _cells(db, other)
    keys = ordered_keys(mine, study_config(db, study))
    other_keys = keys if other is None else ordered_keys(theirs, study_config(db, other))
    domains = list(dict.fromkeys(d for d, _ in keys))
    chosen: list[tuple[str, str, str]] = []  # domain, scheme a, scheme b
    wanted = None
    if pairs:
        left = list(dict.fromkeys(s for _, s in keys))
        right = list(dict.fromkeys(s for _, s in other_keys))
        wanted = parse_pairs(pairs, left, right)
    for domain in domains:
        a_specs = [s for d, s in keys if d == domain]
        b_specs = [s for d, s in other_keys if d == domain]
        if wanted is not None:
            chosen += [(domain, a, b) for a, b in wanted if a in a_specs and b in b_specs]
        elif other is None:
            chosen += [(domain, a, b) for i, a in enumerate(a_specs) for b in a_specs[i + 1 :]]
        else:
            chosen += [(domain, a, b) for a in a_specs for b in b_specs]
    rows = [_pair(study, other or study, d, a, b, mine[(d, a)], theirs[(d, b)], seed, resamples)
            for d, a, b in chosen]  # fmt: skip
    tested = [i for i, r in enumerate(rows) if r.mcnemar_p is not None]
    adjusted = holm([rows[i].mcnemar_p for i in tested])  # type: ignore[misc]
    for i, p in zip(tested, adjusted, strict=True):
        rows[i] = _with_holm(rows[i], p)
    return rows


def _with_holm(row: PairRow, p: float) -> PairRow:
    from dataclasses import replace

    return replace(row, holm_p=p, significant=p < ALPHA)


def _pair(study_a: str, study_b: str, domain: str, a: str, b: str, ca: _Cell, cb: _Cell, seed: int,
          resamples: int) -> PairRow:  # fmt: skip
    if ca.unfinished or cb.unfinished:
        why = "; ".join(f"{s}: {c.unfinished}" for s, c in ((a, ca), (b, cb)) if c.unfinished)
        return PairRow(study_a, study_b, domain, a, b, *([None] * 15), unfinished=f"unfinished ({why})",
                       seed=seed, resamples=resamples)  # fmt: skip
    shared = sorted(ca.units.keys() & cb.units.keys())
    units = [(inst, ca.units[(inst, t)], cb.units[(inst, t)]) for inst, t in shared]
    n = len(units)
    a_correct, b_correct = sum(u[1] for u in units), sum(u[2] for u in units)
    a_only = sum(1 for u in units if u[1] and not u[2])
    b_only = sum(1 for u in units if u[2] and not u[1])
    interval = paired_bootstrap(units, resamples=resamples, seed=seed)
    return PairRow(
        study_a, study_b, domain, a, b, n, a_correct, b_correct, a_only, b_only, n - a_only - b_only,
        a_correct / n if n else None, b_correct / n if n else None, (a_correct - b_correct) / n if n else None,
        interval[0] if interval else None, interval[1] if interval else None,
        mcnemar_exact(a_only, b_only) if n else None, None, None,
        len(ca.units.keys() ^ cb.units.keys()), seed=seed, resamples=resamples,
    )  # fmt: skip


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}"


def _points(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f}"


def compare_grids(rows: list[PairRow]) -> list[Grid]:
    if not rows:
        return [Grid("Paired comparisons", ["result"], [["no two schemes of a domain to compare"]])]
    across = rows[0].study_a != rows[0].study_b
    name = (lambda r, s, scheme: f"{s}/{scheme}") if across else (lambda r, s, scheme: scheme)
    body = []
    for r in rows:
        a, b = name(r, r.study_a, r.scheme_a), name(r, r.study_b, r.scheme_b)
        if r.unfinished or r.n is None:
            body.append([r.domain, a, b, "-", "-", "-", "-", "-", "-", "-", r.unfinished or "-"])
            continue
        interval = "-" if r.ci_low is None else f"[{100 * r.ci_low:+.1f}, {100 * r.ci_high:+.1f}]"  # type: ignore[operator]
        body.append([r.domain, a, b, str(r.n), pct(r.a_correct, r.n), pct(r.b_correct, r.n),
                     f"{_points(r.difference)} {interval}", _p(r.mcnemar_p), _p(r.holm_p),
                     "yes" if r.significant else "no" if r.significant is not None else "-",
                     f"{r.a_only}/{r.ties}/{r.b_only}"])  # fmt: skip
    tested = sum(1 for r in rows if r.mcnemar_p is not None)
    first = rows[0]
    title = f"{first.study_a} vs {first.study_b}" if across else first.study_a
    note = (f"Units: (instance, trial) that both cells finished. difference = accuracy A - accuracy B in points, with "
            f"a 95% paired bootstrap percentile interval (instances resampled with their trials; B = "
            f"{first.resamples:,}, seed {first.seed}). McNemar: exact two-sided binomial test on the discordant "
            f"units. Holm: adjusted over the table's {tested} compared pair(s); significant: Holm p < {ALPHA}. "
            "W/T/L: units only A got right / both alike / only B got right.")  # fmt: skip
    if any(r.unpaired for r in rows):
        note += " Units finished in one cell only are left out (JSON: unpaired)."
    headers = ["domain", "A", "B", "n", "accuracy A", "accuracy B", "difference [95% CI]", "McNemar p", "Holm p",
               "significant", "W/T/L"]  # fmt: skip
    return [Grid(f"Paired comparisons ({title})", headers, body, note)]


GRIDS[PairRow] = compare_grids
COLUMNS = row_columns(PairRow, {  # the fields of PairRow, in order: its JSON/CSV columns
    "study_a": "the study of scheme A",
    "study_b": "the study of scheme B (the same study, unless --compare OTHER)",
    "domain": "domain name",
    "scheme_a": "scheme A's spec",
    "scheme_b": "scheme B's spec",
    "n": "units (instance, trial) both cells finished; empty when a cell is unfinished",
    "a_correct": "units A got right (its final answer sound-valid)",
    "b_correct": "units B got right",
    "a_only": "units only A got right: A's wins",
    "b_only": "units only B got right: A's losses",
    "ties": "units both got right or both wrong",
    "accuracy_a": "a_correct / n",
    "accuracy_b": "b_correct / n",
    "difference": "accuracy_a - accuracy_b",
    "ci_low": "95% paired bootstrap percentile interval of the difference, low end",
    "ci_high": "its high end",
    "mcnemar_p": "McNemar's exact two-sided p-value on the a_only + b_only discordant units",
    "holm_p": "mcnemar_p, Holm-adjusted over every compared pair of the table",
    "significant": f"holm_p < {ALPHA}",
    "unpaired": "units finished in one cell but not the other, left out",
    "unfinished": "why the pair is not compared: the cell that has not finished and how far it got",
    "seed": "the bootstrap's seed",
    "resamples": "the bootstrap's resamples B",
    "table": '"compare"',
})
