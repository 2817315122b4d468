"""Reading an LLM verifier's reply to the plan-verification prompt.

The prompt asks for "Plan is valid." or "Plan is invalid." plus feedback. Replies are messy: markdown, JSON
objects, reasoning before the verdict, or a verdict restated at the end. A JSON verdict wins; otherwise the
last verdict phrase in the text does (models reason first and conclude last). No verdict counts as "invalid"
with `parsed=False`, so a silent verifier never passes a plan.
"""

from __future__ import annotations

import re

from critiquebench.domains.base import LLMVerdict
from critiquebench.domains.llm_json import json_objects

_MARKUP = re.compile(r"[*_`#>]+")
_VALID = r"(?:valid|correct)"
_INVALID = r"(?:invalid|incorrect|not\s+(?:a\s+)?(?:valid|correct)|wrong)"
_PHRASE = re.compile(
    rf"\b(?:the\s+)?(?:above\s+|given\s+|proposed\s+)?plan\s+(?:is|was|seems|appears)\s+"
    rf"(?:to\s+be\s+)?(?:(?P<bad>{_INVALID})|(?P<good>{_VALID}))\b"
    rf"|\bverdict\s*[:=-]\s*(?:(?P<bad2>{_INVALID})|(?P<good2>{_VALID}))\b",
    re.IGNORECASE,
)
_JSON_KEYS = ("valid", "is_valid", "plan_valid", "correct", "verdict", "answer")


def parse_llm_verdict(text: str) -> LLMVerdict:
    critique = (text or "").strip()
    from_json = _json_verdict(critique)
    if from_json is not None:
        return LLMVerdict(says_valid=from_json, critique=critique)
    found = list(_PHRASE.finditer(_MARKUP.sub("", critique)))
    if not found:
        return LLMVerdict(says_valid=False, critique=critique, parsed=False)
    last = found[-1]
    return LLMVerdict(says_valid=bool(last.group("good") or last.group("good2")), critique=critique)


def _json_verdict(text: str) -> bool | None:
    for data in json_objects(text):
        for key in _JSON_KEYS:
            value = next((v for k, v in data.items() if str(k).lower() == key), None)
            if isinstance(value, bool):
                return value
            if isinstance(value, str):
                word = value.strip().lower().rstrip(".")
                if word in {"valid", "true", "yes", "correct", "plan is valid"}:
                    return True
                if word in {"invalid", "false", "no", "incorrect", "plan is invalid", "not valid"}:
                    return False
    return None
