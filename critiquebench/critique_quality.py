"""How faithful is an LLM's critique? Claims in the critique checked against the real problem.

Graph colouring (the self-verification study's Table A4): the critique's claimed edges ("vertex 3 and
vertex 5", "(3, 5)", "edge 3-5") and claimed vertex colours ("vertex 3 is colored Color2", "vertices 3
and 5 are both colored Color2") are compared with the graph and with the colouring being critiqued.
Label: "none" (every claim is true, or nothing checkable was claimed), "edge" (a claimed edge does not
exist), "color" (a vertex did not have the claimed colour), "both".

Critique text is untrusted: it is only matched with bounded regular expressions, never evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from critiquebench.domains.base import Domain, Instance, Verdict

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
    details = {
        "claimed_edges": sorted(claimed_edges(critique)),
        "nonexistent_edges": fake_edges,
        "claimed_colors": sorted(claimed_colors(critique)),
        "wrong_colors": wrong_colors,
    }
    return CritiqueQuality(label, details)
