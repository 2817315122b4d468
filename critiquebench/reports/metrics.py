"""Study reports computed from the store alone: Table 1 (accuracy), Table 2 (LLM verifier), Figure 2 (budget).

Definitions (also printed in report headers):
- Table 1 counts finished runs (status done); `correct` is the sound verdict of the answer the scheme output.
  The 95% interval is Wilson's score interval. Tokens, calls and cache hits are totals over finished runs;
  `mean_rounds` and `mean_tokens` are per run (one run = one instance x trial).
- Table 2 uses every attempt whose answer an LLM verifier judged (llm_verdict not NULL) and the sound verifier
  judged too. accuracy = LLM agrees with the sound verdict; FPR = LLM said valid among sound-invalid answers;
  FNR = LLM said invalid among sound-valid answers.
- Figure 2 evaluates iterative schemes as if their round budget were n: a run's output is the answer of the
  round where the scheme stopped if that round is within the first n rounds, else the answer of round n;
  it is correct iff the sound verifier accepted that answer.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import sqlite_utils

from critiquebench.reports.guards import SMALL_N
from critiquebench.store.reads import study_rounds, study_runs
from critiquebench.studies.define import study_config
from critiquebench.studies.threads import spec_of

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (nan, nan) when n is 0."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def wald_half_width(successes: int, n: int, z: float = Z95) -> float | None:
    """Half-width of the Wald interval, z * sqrt(p(1-p)/n); None when n is 0."""
    if n == 0:
        return None
    p = successes / n
    return z * math.sqrt(p * (1 - p) / n)


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def trial_spread(outcomes: Iterable[tuple[int, Any]]) -> tuple[int, float | None, float | None]:
    """(trials, mean, sd) of the accuracy of each trial over (trial, correct) outcomes: each trial's accuracy over
    its runs, then their mean and sample standard deviation (n - 1); mean and sd are None with fewer than two
    trials (one trial has no spread to show)."""
    per: dict[int, list[int]] = defaultdict(list)
    for trial, correct in outcomes:
        per[int(trial)].append(int(bool(correct)))
    if len(per) < 2:
        return len(per), None, None
    accs = [sum(v) / len(v) for v in per.values()]
    mean = sum(accs) / len(accs)
    return len(accs), mean, math.sqrt(sum((a - mean) ** 2 for a in accs) / (len(accs) - 1))


@dataclass(frozen=True)
class Table1Row:
    study: str
    domain: str
    scheme: str
    correct: int
    total: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    mean_rounds: float | None
    mean_tokens: float | None
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int
    cache_hits: int
    failed: int
    unfinished: int
    small_n: bool = False  # fewer finished runs than reports.guards.SMALL_N: a smoke test, not a finding
    table: str = "1"
    # the half-width of the Wald interval, z * sqrt(p(1-p)/n), beside our Wilson interval: the form of most "±" the
    # intrinsic self-critique paper prints (Tables 1, 2, 4-6 at n = 600 or 1000, a few 0.1 off), not of its
    # Table 3's (21 problems); `report --published` checks each one (reports.published.PLUS_MINUS)
    wald: float | None = None
    # runs the study's matrix gives the cell (instances x trials), so an unfinished study says how far each cell
    # got; None where the study's data cannot be read here
    planned: int | None = None
    # with several trials: the accuracy of each trial (over its instances), their mean and sample sd
    trials: int = 1
    trial_mean: float | None = None
    trial_sd: float | None = None
    # finished runs that ended where the study's own code failed on a reply (`nodes.llm_verifier`): in `total`,
    # scored by their last answer as the study's evaluation scored them, and counted here as it listed them apart
    study_failed: int = 0


@dataclass
class Confusion:
    """The LLM verifier's verdicts against the sound verifier's ("valid" is the positive class): the one count
    behind Table 2, the verification-study tables and the plan-critique study's final-verifier table."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0

    def add(self, said_valid: Any, sound_valid: Any) -> None:
        if sound_valid:
            self.tp, self.fn = (self.tp + 1, self.fn) if said_valid else (self.tp, self.fn + 1)
        else:
            self.fp, self.tn = (self.fp + 1, self.tn) if said_valid else (self.fp, self.tn + 1)

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def one_class(self) -> bool:
        """Every judged answer was sound-valid, or every one invalid: accuracy then only counts how often the
        LLM said that one class (reports.guards)."""
        return self.n > 0 and (self.tp + self.fn == 0 or self.fp + self.tn == 0)

    def rates(self) -> tuple[float | None, float | None, float | None, float | None]:
        """TPR, FPR, TNR, FNR."""
        valid, invalid = self.tp + self.fn, self.fp + self.tn
        return ratio(self.tp, valid), ratio(self.fp, invalid), ratio(self.tn, invalid), ratio(self.fn, valid)

    def agreement(self) -> dict[str, Any]:
        """The agreement fields of the Table 2 style rows."""
        _, fpr, _, fnr = self.rates()
        agree = self.tp + self.tn
        return dict(agree=agree, accuracy=ratio(agree, self.n), false_pos=self.fp, sound_invalid=self.fp + self.tn,
                    fpr=fpr, false_neg=self.fn, sound_valid=self.tp + self.fn, fnr=fnr)  # fmt: skip


@dataclass(frozen=True)
class Table2Row:
    study: str
    domain: str
    scheme: str  # a scheme spec, or "all" for every scheme of the domain together
    n: int
    agree: int
    accuracy: float | None
    false_pos: int
    sound_invalid: int
    fpr: float | None
    false_neg: int
    sound_valid: int
    fnr: float | None
    one_class: bool = False  # every judged answer was sound-valid, or every one invalid (reports.guards)
    table: str = "2"


@dataclass(frozen=True)
class BudgetPoint:
    study: str
    domain: str
    scheme: str
    budget: int
    correct: int
    total: int
    accuracy: float | None
    ci_low: float | None = None  # 95% Wilson interval of the accuracy (the band of Figure 2)
    ci_high: float | None = None
    trials: int = 1  # with several: each trial's accuracy at this budget, their mean and sample sd
    trial_mean: float | None = None
    trial_sd: float | None = None
    table: str = "figure"


def row_dict(row: Any) -> dict[str, Any]:
    """A report row as JSON-ready data (NaN becomes None)."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(row).items()}


def ordered_keys(keys: Iterable[tuple[str, str]], config: dict[str, Any]) -> list[tuple[str, str]]:
    """Domain then scheme in the order the study lists them; anything else after, sorted."""
    doms, schemes = list(config.get("domains", [])), list(config.get("schemes", []))

    def rank(key: tuple[str, str]) -> tuple[int, str, int, str]:
        d, s = key
        return (
            doms.index(d) if d in doms else len(doms),
            d,
            schemes.index(s) if s in schemes else len(schemes),
            s,
        )

    return sorted(set(keys), key=rank)


def _runs(db: sqlite_utils.Database, study: str) -> list[dict[str, Any]]:
    # no final_answer: tables never read it, and a long answer would be read for every run
    rows = study_runs(db, study, answers=False)
    for row in rows:
        row["spec"] = spec_of(row)
    names = shown_domains({row["domain"] for row in rows})
    for row in rows:
        row["domain"] = names[row["domain"]]
    return rows


# A PlanBench config laid out from a checkout by `import planbench` is a folder (and so a domain) named
# NAME-<its content's short id> (`planbench.checkout.write_folder`), one per distinct content.
_LAID_OUT = re.compile(r"(?P<name>.+)-[0-9a-f]{12}")


def shown_domains(names: Iterable[str]) -> dict[str, str]:
    """Each stored domain name as a table shows it: a laid-out PlanBench config by its PlanBench name
    ("mystery_blocksworld"), with the short id only where two of `names` share that name."""
    names = set(names)
    base = {n: shown_domain(n) for n in names}
    taken = Counter(base.values())
    return {n: base[n] if taken[base[n]] == 1 else n for n in names}


def shown_domain(name: str) -> str:
    """A stored domain name as PlanBench names it: a laid-out folder ("/tmp/x/planbench-domains/blocksworld_3-
    63de69f85a27:t5", a study's domain key) by its set and task ("blocksworld_3:t5"); any other name as it is."""
    head, sep, task = name.rpartition(":")
    base, suffix = name, ""
    if sep:  # only a "DOMAIN:TASK" name needs the task table, which loads the planning package
        from critiquebench.domains.planning.tasks import TASKS

        base, suffix = (head, sep + task) if task in TASKS else (name, "")
    if "/" in base and "planbench-domains" in base:
        base = base.rstrip("/").rpartition("/")[2]
    found = _LAID_OUT.fullmatch(base)
    return (found["name"] if found else base) + suffix


Plan = Callable[[dict[str, Any]], dict[tuple[str, str], int] | None]  # a study's runs per (domain, spec) cell


def table1(db: sqlite_utils.Database, study: str, plan: Plan | None = None) -> list[Table1Row]:
    """Accuracy per domain x scheme, in the study's order. `plan`: the runs per cell of a study's matrix
    (`studies.runner.planned_runs`), so an unfinished study's rows say how many each cell should have."""
    config = study_config(db, study)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for run in _runs(db, study):
        groups[(run["domain"], run["spec"])].append(run)
    done_runs = sum(1 for runs in groups.values() for r in runs if r["status"] == "done")
    unfinished = done_runs < int(config.get("planned_runs") or 0)
    planned = (plan(config) if plan else None) if unfinished else {k: len(v) for k, v in groups.items()}
    for key in planned or {}:
        groups.setdefault(key, [])  # a cell no run of which started yet
    out = []
    for key in ordered_keys(groups, config):
        runs = groups[key]
        done = [r for r in runs if r["status"] == "done"]
        n, correct = len(done), sum(1 for r in done if r["correct"])
        low, high = wilson(correct, n)
        trials, trial_mean, trial_sd = trial_spread((r["trial"], r["correct"]) for r in done)
        ptok = sum(r["prompt_tokens"] for r in done)
        ctok = sum(r["completion_tokens"] for r in done)
        out.append(
            Table1Row(
                study=study,
                domain=key[0],
                scheme=key[1],
                correct=correct,
                total=n,
                accuracy=ratio(correct, n),
                ci_low=None if n == 0 else low,
                ci_high=None if n == 0 else high,
                mean_rounds=ratio(sum(r["rounds"] for r in done), n),
                mean_tokens=ratio(ptok + ctok, n),
                prompt_tokens=ptok,
                completion_tokens=ctok,
                llm_calls=sum(r["llm_calls"] for r in done),
                cache_hits=sum(r["cache_hits"] for r in done),
                failed=sum(1 for r in runs if r["status"] == "failed"),
                unfinished=sum(1 for r in runs if r["status"] in ("pending", "running")),
                wald=wald_half_width(correct, n),
                small_n=0 < n < SMALL_N,
                planned=None if planned is None else planned.get(key),
                trials=trials,
                trial_mean=trial_mean,
                trial_sd=trial_sd,
                study_failed=sum(1 for r in done if r.get("study_failed")),
            )
        )
    return out


def table2(db: sqlite_utils.Database, study: str) -> list[Table2Row]:
    """LLM-verifier agreement with the sound verifier per domain (and per scheme when several judged)."""
    config = study_config(db, study)
    specs = {r["thread_id"]: (r["domain"], r["spec"]) for r in _runs(db, study)}
    counts: dict[tuple[str, str], Confusion] = defaultdict(Confusion)
    for row in study_rounds(db, study, judged=True):
        said, valid = row["llm_verdict"], row["sound_valid"]
        domain, spec = specs[row["thread_id"]]
        for key in ((domain, spec), (domain, "all")):
            counts[key].add(said, valid)
    per_domain: dict[str, list[str]] = defaultdict(list)
    for domain, spec in counts:
        if spec != "all":
            per_domain[domain].append(spec)
    out = []
    for domain, spec in ordered_keys(counts, config):
        if spec != "all" and len(per_domain[domain]) == 1:
            continue  # the domain's "all" row says the same
        cell = counts[(domain, spec)]
        out.append(Table2Row(study=study, domain=domain, scheme=spec, n=cell.n, **cell.agreement(),
                             one_class=cell.one_class))
    return out


def iterative(scheme: str) -> bool:
    """Whether Figure 2 shows `scheme` at each round budget: at its defaults it may make more than one round and
    stop after any (`Calls.rounds`, `Calls.stops`), unlike `standard` (one round) or `self-consistency` (every
    sample drawn, then the vote). A name no scheme has (say, a recorded run's) counts as iterative."""
    from critiquebench.graphs import SCHEMES

    if scheme not in SCHEMES:
        return True
    calls = SCHEMES[scheme].calls({})
    return calls.stops and calls.rounds > 1


def budget_curve(db: sqlite_utils.Database, study: str) -> list[BudgetPoint]:
    """Accuracy against round budget n = 1..max rounds, for each iterative scheme (Figure 2)."""
    config = study_config(db, study)
    runs = [
        r
        for r in _runs(db, study)
        if r["status"] == "done" and iterative(r["spec"].partition(":")[0])
    ]
    rounds: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for row in study_rounds(db, study):
        rounds[row["thread_id"]].append((row["round"], int(row["sound_valid"] or 0), int(row["stopped"])))
    series: dict[tuple[str, str], list[list[int]]] = defaultdict(list)  # per run: correctness at budget 1..
    trial_of: dict[tuple[str, str], list[int]] = defaultdict(list)
    for run in runs:
        att = rounds.get(run["thread_id"], [])
        if not att:
            continue
        stop = next((i for i, a in enumerate(att) if a[2]), None)
        if stop is None and run["final_round"] is not None:
            stop = next((i for i, a in enumerate(att) if a[0] == run["final_round"]), None)
        stop = len(att) - 1 if stop is None else stop
        series[(run["domain"], run["spec"])].append(
            [att[stop][1] if stop <= n else att[n][1] for n in range(len(att))]
        )
        trial_of[(run["domain"], run["spec"])].append(int(run["trial"]))
    out = []
    for domain, spec in ordered_keys(series, config):
        per_run = series[(domain, spec)]
        for budget in range(1, max(len(r) for r in per_run) + 1):
            at = [r[min(budget, len(r)) - 1] for r in per_run]
            correct, low_high = sum(at), wilson(sum(at), len(at))
            trials, mean, sd = trial_spread(zip(trial_of[(domain, spec)], at, strict=True))
            out.append(BudgetPoint(study, domain, spec, budget, correct, len(at), correct / len(at), *low_high,
                                   trials, mean, sd))  # fmt: skip
    return out


@dataclass(frozen=True)
class CompareRow:
    domain: str
    scheme: str
    study: str
    correct: int | None
    total: int | None
    accuracy: float | None
    other_study: str
    other_correct: int | None
    other_total: int | None
    other_accuracy: float | None
    delta: float | None
    table: str = "side-by-side"  # `--compare OTHER`; "compare" is the paired table (reports.paired)


def compare(db: sqlite_utils.Database, study: str, other: str) -> list[CompareRow]:
    """Two studies side by side on their domain x scheme keys; delta = this study's accuracy - the other's."""
    mine = {(r.domain, r.scheme): r for r in table1(db, study)}
    theirs = {(r.domain, r.scheme): r for r in table1(db, other)}
    out = []
    for key in ordered_keys([*mine, *theirs], study_config(db, study)):
        a, b = mine.get(key), theirs.get(key)
        acc_a, acc_b = a.accuracy if a else None, b.accuracy if b else None
        out.append(
            CompareRow(
                key[0],
                key[1],
                study,
                a.correct if a else None,
                a.total if a else None,
                acc_a,
                other,
                b.correct if b else None,
                b.total if b else None,
                acc_b,
                None if acc_a is None or acc_b is None else acc_a - acc_b,
            )
        )
    return out
