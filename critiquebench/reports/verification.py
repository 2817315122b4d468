"""Report rows of verification-only studies: the paper's Table 2, verdict quality per answer kind, and
critique quality.

Table 2 (the self-verification paper's "LLM as verifier"): one row per domain and prompt variant over every
judged answer of every kind (correct, ablated, random, LLM-produced, ...), so the denominators are the paper's:
verifications = answers judged, FPR over the sound-invalid ones, FNR over the sound-valid ones.
Per kind (Tables A2-A3 style): accuracy = LLM verdict agrees with the sound verdict; FPR = LLM said valid
among sound-invalid answers; FNR = LLM said invalid among sound-valid answers. Critique quality (Table A4
style): among answers the LLM rejected, how its critiques classify (see studies/critique_quality.py).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from critiquebench.domains.base import split_kind
from critiquebench.reports.metrics import Confusion, ordered_keys
from critiquebench.reports.tables import GRIDS, Grid, pct

QUALITY_LABELS = ("none", "edge", "color", "both", "right", "partial", "wrong")


@dataclass(frozen=True)
class VerifyRow:
    study: str
    domain: str
    kind: str
    n: int
    agree: int
    accuracy: float | None
    said_valid: int
    false_pos: int
    sound_invalid: int
    fpr: float | None
    false_neg: int
    sound_valid: int
    fnr: float | None
    prompt_tokens: int
    completion_tokens: int
    cache_hits: int
    evaluation_correct: int = 0  # Game of 24: the LLM stated the expression's value right ...
    evaluations: int = 0  # ... among the answers whose prompt asked for it
    table: str = "verify"


@dataclass(frozen=True)
class PaperTable2Row:
    """The LLM as verifier on one domain's verification set, with one prompt variant."""

    study: str
    domain: str
    prompt: str  # default | cot | no-info
    verifications: int
    agree: int
    accuracy: float | None
    false_pos: int
    sound_invalid: int
    fpr: float | None
    false_neg: int
    sound_valid: int
    fnr: float | None
    evaluation_correct: int  # Game of 24: the LLM stated the expression's value right
    evaluations: int  # answers whose prompt asked for the value
    table: str = "2"


@dataclass(frozen=True)
class CritiqueRow:
    """How many of the critiques of one domain x kind got one quality label."""

    study: str
    domain: str
    kind: str
    label: str  # coloring: none | edge | color | both; planning: right | partial | wrong
    count: int
    critiques: int  # classified critiques of this domain x kind (the LLM rejected the answer)
    share: float | None
    errors: int = 0  # colouring: real conflicting edges in the critiqued colourings (all labels)
    named_errors: int = 0  # ... of which the critiques named
    table: str = "critique"


def _agreement(g: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The agreement counts and rates of judged answers `g`, as the fields of the report rows."""
    cell = Confusion()
    for r in g:
        cell.add(r["llm_verdict"], r["sound_valid"])
    asked = [r for r in g if r.get("evaluation_correct") is not None]
    return dict(**cell.agreement(), evaluation_correct=sum(1 for r in asked if r["evaluation_correct"]),
                evaluations=len(asked))  # fmt: skip


def paper_table2_rows(study: str, config: dict[str, Any], rows: Sequence[dict[str, Any]]
                      ) -> list[PaperTable2Row]:  # fmt: skip
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["domain"], split_kind(row["kind"])[1])].append(row)
    return [
        PaperTable2Row(study, domain, variant, len(g), **_agreement(g))
        for domain, variant in ordered_keys(groups, config)
        for g in [groups[(domain, variant)]]
    ]


def kind_rows(study: str, config: dict[str, Any], rows: Sequence[dict[str, Any]]) -> list[VerifyRow]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["domain"], row["kind"])].append(row)
        groups[(row["domain"], "all")].append(row)
    out = []
    for key in ordered_keys(groups, config):
        g = groups[key]
        out.append(VerifyRow(
            study, key[0], key[1], len(g), said_valid=sum(1 for r in g if r["llm_verdict"]),
            prompt_tokens=sum(r["prompt_tokens"] or 0 for r in g),
            completion_tokens=sum(r["completion_tokens"] or 0 for r in g),
            cache_hits=sum(r["cached"] or 0 for r in g), **_agreement(g),
        ))  # fmt: skip
    return out


def critique_rows(study: str, config: dict[str, Any], rows: Sequence[dict[str, Any]]) -> list[CritiqueRow]:
    groups: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    errors: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # real, named
    for row in rows:
        if row["quality"]:
            details = json.loads(row["quality_details"] or "{}")
            for key in ((row["domain"], row["kind"]), (row["domain"], "all")):
                groups[key][row["quality"]] = groups[key].get(row["quality"], 0) + 1
                errors[key][0] += len(details.get("real_errors", []))
                errors[key][1] += len(details.get("named_errors", []))
    out = []
    for key in ordered_keys(groups, config):
        labels, total = groups[key], sum(groups[key].values())
        for label in sorted(labels, key=_label_rank):
            out.append(CritiqueRow(study, key[0], key[1], label, labels[label], total, labels[label] / total,
                                   *errors[key]))  # fmt: skip
    return out


def _label_rank(label: str) -> tuple[int, str]:
    return (QUALITY_LABELS.index(label) if label in QUALITY_LABELS else len(QUALITY_LABELS), label)


def verify_grids(rows: Sequence[VerifyRow]) -> list[Grid]:
    body = [
        [r.domain, r.kind, pct(r.agree, r.n), pct(r.false_pos, r.sound_invalid),
         pct(r.false_neg, r.sound_valid), pct(r.said_valid, r.n),
         pct(r.evaluation_correct, r.evaluations) if r.evaluations else "-"]
        for r in rows
    ]  # fmt: skip
    note = (
        "Accuracy: LLM verdict agrees with the sound verifier. FPR: LLM said valid among sound-invalid "
        "answers. FNR: LLM said invalid among sound-valid answers. Kind 'llm': answers from an earlier study; "
        "a -cot / -no-info suffix: judged with that prompt. Correct evaluation: the LLM stated the "
        "expression's value right."
    )
    title = f"LLM verifier by answer kind ({rows[0].study})"
    return [Grid(title, ["domain", "kind", "accuracy", "FPR", "FNR", "said valid", "correct evaluation"], body, note)]


def critique_grids(rows: Sequence[CritiqueRow]) -> list[Grid]:
    labels = sorted({r.label for r in rows}, key=_label_rank)
    cells: dict[tuple[str, str], dict[str, CritiqueRow]] = defaultdict(dict)
    for r in rows:
        cells[(r.domain, r.kind)][r.label] = r
    body = []
    for (domain, kind), by_label in cells.items():
        first = next(iter(by_label.values()))
        total = first.critiques
        body.append([domain, kind, str(total), *(pct(by_label[x].count if x in by_label else 0, total)
                                                  for x in labels), pct(first.named_errors, first.errors)])  # fmt: skip
    note = (
        "Critiques of answers the LLM rejected. Colouring: edge = names a non-existent edge, color = gives a "
        "vertex a colour it did not have; errors named = real conflicting edges of the critiqued colourings "
        "that the critiques named. Planning: right = names the failing action and all its unmet "
        "preconditions (or all unmet goals), partial = some of them, wrong = none."
    )
    headers = ["domain", "kind", "critiques", *labels, "errors named"]
    return [Grid(f"Critique quality ({rows[0].study})", headers, body, note)]


def paper_table2_grids(rows: Sequence[PaperTable2Row]) -> list[Grid]:
    body = [
        [r.domain, r.prompt, str(r.verifications), pct(r.agree, r.verifications), pct(r.false_pos, r.sound_invalid),
         pct(r.false_neg, r.sound_valid), pct(r.evaluation_correct, r.evaluations) if r.evaluations else "-"]
        for r in rows
    ]  # fmt: skip
    note = (
        "Every judged answer of every kind. Accuracy: the LLM's verdict agrees with the sound verifier; FPR: "
        "said valid among sound-invalid answers; FNR: said invalid among sound-valid answers; correct "
        "evaluation: the value the LLM stated is the expression's value (Game of 24 prompts that ask for it)."
    )
    headers = ["domain", "prompt", "verifications", "accuracy", "FPR", "FNR", "correct evaluation"]
    return [Grid(f"Table 2: the LLM as verifier ({rows[0].study})", headers, body, note)]


@dataclass(frozen=True)
class PlanCritiqueRow:
    """Tables A5-A6 (000:1914-1939): one planning kind's verifications, scored three ways."""

    study: str
    domain: str
    prompt: str  # default (format-based JSON) | cot | swap
    kind: str  # correct, inexecutable, non_goal_reaching, random, llm correct / inexecutable / non_goal_reaching
    n: int
    binary: int
    type_identified: int
    critique: int
    table: str = "plan-critique"


def plan_critique_rows(study: str, config: dict[str, Any], rows: Sequence[dict[str, Any]]
                       ) -> list[PlanCritiqueRow]:  # fmt: skip
    """Binary verification / type identified / critique generation per planning kind, the LLM's plans split by
    their real type, as Tables A5-A6 lay them out. Sound verdicts are recomputed from the judged answers."""
    from pathlib import Path

    from critiquebench.domains import get_domain, load_instances
    from critiquebench.domains.planning import PlanningDomain
    from critiquebench.domains.replayed import unwrapped
    from critiquebench.studies.critique_quality import plan_critique_scores

    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    domains: dict[str, Any] = {}
    for row in rows:
        name = row["domain"]
        if name not in domains:
            options = dict((config.get("domain_options") or {}).get(name, {}))
            try:
                domains[name] = get_domain(name, **options)
            except (ValueError, LookupError):
                domains[name] = None
        domain = domains[name]
        if not isinstance(unwrapped(domain), PlanningDomain):
            continue  # not a planning domain (or none the study's options build)
        dataset = Path(config["dataset"]) if config.get("dataset") else None
        instance = load_instances(domain, row["instance_id"], dataset)[0]
        sound = domain.verify(instance, row["candidate"] or "")
        score = plan_critique_scores(sound, bool(row["llm_verdict"]), row["critique"] or "")
        base, variant = split_kind(row["kind"])
        kind = f"{base} {score.plan_type}" if base == "llm" else base
        tally = counts[(name, variant, kind)]
        for i, value in enumerate((1, score.binary, score.type_identified, score.critique)):
            tally[i] += int(value)
    order = {k: i for i, k in enumerate(("correct", "inexecutable", "non_goal_reaching", "random", "llm correct",
                                         "llm inexecutable", "llm non_goal_reaching"))}  # fmt: skip
    return [PlanCritiqueRow(study, d, v, k, *counts[(d, v, k)])
            for d, v, k in sorted(counts, key=lambda x: (x[0], x[1], order.get(x[2], 99), x[2]))]  # fmt: skip


def plan_critique_grids(rows: Sequence[PlanCritiqueRow]) -> list[Grid]:
    body = [[r.domain, r.prompt, r.kind, pct(r.binary, r.n), pct(r.type_identified, r.n), pct(r.critique, r.n)]
            for r in rows]  # fmt: skip
    note = ("Binary verification: the verdict is right. Type identified: a correct plan called valid, an invalid "
            "one's kind named (unmet_preconditions for an inexecutable plan, unmet_goals for one that misses the "
            "goal). Critique generation: and the first failing action with exactly its unmet preconditions, or "
            "exactly the unmet goals (free-text critiques: every one named).")
    headers = ["domain", "prompt", "kind", "binary verification", "type identified", "critique generation"]
    return [Grid(f"Tables A5-A6: planning critiques ({rows[0].study})", headers, body, note)]


GRIDS[VerifyRow] = verify_grids
GRIDS[PlanCritiqueRow] = plan_critique_grids
GRIDS[CritiqueRow] = critique_grids
GRIDS[PaperTable2Row] = paper_table2_grids
