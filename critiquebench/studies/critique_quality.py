"""How faithful is an LLM's critique? Claims in the critique checked against the real problem.

Graph colouring (the self-verification study's Table A4): the critique's claimed edges ("vertex 3 and
vertex 5", "(3, 5)", "edge 3-5") and claimed vertex colours ("vertex 3 is colored Color2", "vertices 3
and 5 are both colored Color2") are compared with the graph and with the colouring being critiqued.
Label: "none" (every claim is true, or nothing checkable was claimed), "edge" (a claimed edge does not
exist), "color" (a vertex did not have the claimed colour), "both".

Planning: the sound validator's first error says which action fails and which preconditions it lacks, or which
goals a finished plan leaves unmet. A free-text critique is "right" when it names that action (its English
text, its PDDL form or "step N") and every unmet precondition, or every unmet goal; "partial" when it names some
of them; "wrong" when it names none. The self-verification paper's Tables A5-A6 (000:1914-1947) score each
verification as binary verification / type identified / critique generation (`plan_critique_scores`): from the
JSON the format-based prompts ask for when there is one, else from the free-text labels.

It lives in studies/ because a verification-only study classifies each critique when it judges it
(studies/verification.py); reports/verification.py reads the labels and scores Tables A5-A6 with it.

Critique text is untrusted: it is only matched with bounded regular expressions, never evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from critiquebench.domains.contract import Domain, Instance, Verdict

MAX_CRITIQUE = 20_000  # longer critiques are cut before matching
_COLOR = r"(colou?r\s*\d+|[a-z]+)"
_EDGE_PATTERNS = [
    re.compile(r"vertex\s+(\d+)\s+and\s+(?:vertex\s+)?(\d+)", re.I),
    re.compile(r"vertices\s+(\d+)\s+and\s+(\d+)", re.I),
    re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)"),
    re.compile(
        r"edge\s+(?:between\s+)?(?:vertex\s+|vertices\s+)?(\d+)\s*(?:and|-|–|to)\s*(?:vertex\s+)?(\d+)", re.I
    ),
]
_PAIR_COLOR = re.compile(
    r"vert(?:ex|ices)\s+(\d+)\s+and\s+(?:vertex\s+)?(\d+)\s+(?:are|were)\s+both\s+(?:colou?red\s+|assigned\s+)?"
    + _COLOR,
    re.I,
)
_ONE_COLOR = [
    re.compile(r"vertex\s+(\d+)\s+(?:is|was)\s+(?:colou?red|assigned)\s+(?:with\s+|as\s+)?" + _COLOR, re.I),
    re.compile(r"vertex\s+(\d+)\s+(?:has|had)\s+(?:the\s+)?colou?r\s+" + _COLOR, re.I),
    re.compile(r"vertex\s+(\d+)\s*\(\s*" + _COLOR + r"\s*\)", re.I),
]
_NOT_COLORS = frozenset(
    {"both", "the", "a", "an", "same", "with", "and", "not", "also", "connected", "adjacent"}
)


@dataclass(frozen=True)
class CritiqueQuality:
    label: str
    details: dict[str, Any]


def classify_critique(
    domain: Domain, instance: Instance, text: str, sound: Verdict, critique: str
) -> CritiqueQuality | None:
    """The hallucination class of `critique` for domains where it can be checked, else None."""
    if "edges" in instance.data:
        return coloring_hallucinations(instance, sound.answer, critique)
    if "problem" in instance.data and not sound.valid and sound.errors:
        return planning_critique(sound, critique)
    return None


def _norm_color(value: Any) -> str:
    return re.sub(r"\s+", "", str(value)).lower()


def _coloring(answer: Any) -> dict[int, str]:
    """The critiqued colouring as {vertex: normalised colour}, from the parsed answer (dict or list)."""
    if isinstance(answer, dict):
        items = answer.items()
    elif isinstance(answer, list):
        items = enumerate(answer)
    else:
        return {}
    out = {}
    for vertex, color in items:
        try:
            out[int(vertex)] = _norm_color(color)
        except (TypeError, ValueError):
            continue
    return out


def claimed_edges(critique: str) -> set[tuple[int, int]]:
    text = critique[:MAX_CRITIQUE]
    return {
        (min(int(a), int(b)), max(int(a), int(b)))
        for pattern in _EDGE_PATTERNS
        for a, b in pattern.findall(text)
        if a != b
    }


def claimed_colors(critique: str) -> set[tuple[int, str]]:
    text = critique[:MAX_CRITIQUE]
    claims = set()
    for a, b, color in _PAIR_COLOR.findall(text):
        claims |= {(int(a), _norm_color(color)), (int(b), _norm_color(color))}
    for pattern in _ONE_COLOR:
        claims |= {(int(v), _norm_color(c)) for v, c in pattern.findall(text)}
    return {(v, c) for v, c in claims if c not in _NOT_COLORS}


def coloring_hallucinations(instance: Instance, answer: Any, critique: str) -> CritiqueQuality:
    edges = {(min(u, v), max(u, v)) for u, v in instance.data["edges"]}
    coloring = _coloring(answer)
    fake_edges = sorted(e for e in claimed_edges(critique) if e not in edges)
    wrong_colors = sorted((v, c) for v, c in claimed_colors(critique) if coloring and coloring.get(v) != c)
    label = {(False, False): "none", (True, False): "edge", (False, True): "color", (True, True): "both"}[
        (bool(fake_edges), bool(wrong_colors))
    ]
    real = sorted(e for e in edges if e[0] in coloring and coloring.get(e[0]) == coloring.get(e[1]))
    details = {
        "real_errors": real,
        "named_errors": sorted(set(real) & claimed_edges(critique)),
        "claimed_edges": sorted(claimed_edges(critique)),
        "nonexistent_edges": fake_edges,
        "claimed_colors": sorted(claimed_colors(critique)),
        "wrong_colors": wrong_colors,
    }
    return CritiqueQuality(label, details)


_STEP_ERROR = re.compile(
    r"at step (\d+) (?:has (?:an )?unmet preconditions?|is not a valid action of this problem):\n(.+?)"
    r"(?:\nThe unmet preconditions? (?:is|are):\n(.+))?$",
    re.S,
)
_GOAL_ERROR = re.compile(r"unmet goal conditions?:\n(.+)$", re.S)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _facts(text: str) -> list[str]:
    return [f for f in (_norm(part) for part in re.split(r",\s*|\s+and\s+", text)) if f]


def planning_critique(sound: Verdict, critique: str) -> CritiqueQuality:
    """Does the critique name the plan's first real error (failing action + preconditions, or goals)?"""
    # "the blue block is not clear" names the unmet precondition "the blue block is clear".
    said = _norm(critique[:MAX_CRITIQUE]).replace(" is not ", " is ").replace(" isn't ", " is ")
    first = sound.errors[0]
    details: dict[str, Any] = {"error": first}
    if step := _STEP_ERROR.search(first):
        n, action, missing = int(step[1]), _norm(step[2]), _facts(step[3] or "")
        answer = sound.answer if isinstance(sound.answer, list) else []
        pddl = _norm(answer[n - 1]) if 0 < n <= len(answer) else None
        named = action in said or (pddl is not None and pddl in said) or f"step {n}" in said
        hits = [f for f in missing if f in said]
        details.update(names_action=named, preconditions=missing, named_preconditions=hits)
        found, wanted = int(named) + len(hits), 1 + len(missing)
    elif goal := _GOAL_ERROR.search(first):
        goals = _facts(goal[1])
        hits = [f for f in goals if f in said]
        details.update(goals=goals, named_goals=hits)
        found, wanted = len(hits), len(goals)
    else:
        return CritiqueQuality("wrong", details)
    label = "right" if found == wanted else "partial" if found else "wrong"
    return CritiqueQuality(label, details)


@dataclass(frozen=True)
class PlanCritiqueScore:
    """One planning verification scored as Tables A5-A6 do (000:1947)."""

    plan_type: str  # correct | inexecutable | non_goal_reaching (the sound verdict's)
    binary: bool  # the verdict is right
    type_identified: bool  # valid said of a correct plan; the invalidity's kind named for an invalid one
    critique: bool  # ... and the failing action with its unmet preconditions, or the unmet goals, named


def _named(value: Any) -> set[str]:
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    return {_norm(str(x)).rstrip(".") for x in items if str(x).strip()}


def plan_critique_scores(sound: Verdict, says_valid: bool, reply: str) -> PlanCritiqueScore:
    """Binary verification, type identified and critique generation of one reply (Tables A5-A6)."""
    from critiquebench.domains.planning.verdicts import json_plan_critique

    first = sound.errors[0] if sound.errors else ""
    step, goal = _STEP_ERROR.search(first), _GOAL_ERROR.search(first)
    plan_type = "correct" if sound.valid else "inexecutable" if step else "non_goal_reaching"
    binary = says_valid == sound.valid
    if sound.valid or not binary:
        return PlanCritiqueScore(plan_type, binary, binary, binary)
    data = json_plan_critique(reply[:MAX_CRITIQUE])
    if data is None:  # free text (the open-ended prompt): what the critique names
        label = planning_critique(sound, reply)
        return PlanCritiqueScore(plan_type, True, label.label != "wrong", label.label == "right")
    keys = {str(k).lower(): v for k, v in data.items()}
    if step:
        unmet = keys.get("unmet_preconditions")
        typed = isinstance(unmet, dict) and bool(unmet)
        answer = sound.answer if isinstance(sound.answer, list) else []
        n = int(step[1])
        actions = {_norm(step[2]), *([_norm(answer[n - 1]), _norm(answer[n - 1]).strip("()")]
                                     if 0 < n <= len(answer) else [])}  # fmt: skip
        fields = {str(k).lower(): v for k, v in unmet.items()} if typed else {}
        right = (typed and _norm(str(fields.get("action", ""))).rstrip(".") in actions
                 and _named(fields.get("preconditions")) == set(_facts(step[3] or "")))  # fmt: skip
        return PlanCritiqueScore(plan_type, True, typed, bool(right))
    goals = keys.get("unmet_goals")
    typed = bool(goals) and not keys.get("unmet_preconditions")
    right = typed and goal is not None and _named(goals) == set(_facts(goal[1]))
    return PlanCritiqueScore(plan_type, True, typed, bool(right))
