"""Reading an LLM verifier's reply to the plan-verification prompt.

The open-ended prompt asks for "Plan is valid." or "Plan is invalid." plus feedback (`parse_llm_verdict`); the
self-verification paper's format-based, swapped and chain-of-thought prompts ask for a JSON between `[JSON]` and
`[JSON_END]` (`parse_json_plan_verdict`). Replies are messy: markdown, JSON
objects, reasoning before the verdict, or a verdict restated at the end. A JSON verdict wins; otherwise the
last verdict phrase in the text does (models reason first and conclude last). No verdict counts as "invalid"
with `parsed=False`, so a silent verifier never passes a plan.
"""

from __future__ import annotations

import json
import re
from typing import Any

from critiquebench.domains.contract import LLMVerdict
from critiquebench.domains.llm_json import json_objects, repair_json

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
_JSON_BLOCK = re.compile(r"\[JSON\](.*?)(?:\[JSON_END\]|\Z)", re.DOTALL | re.IGNORECASE)
_VALID_KEY = re.compile(r"""["']?valid["']?\s*:\s*["']?(true|false)\b""", re.IGNORECASE)


def json_plan_critique(text: str) -> dict[str, Any] | None:
    """The JSON object between `[JSON]` and `[JSON_END]` of a format-based or CoT verification reply (the last
    block that holds one; a reply cut off before `[JSON_END]` is read to its end), or None."""
    for block in reversed(_JSON_BLOCK.findall(text or "")):
        start, end = block.find("{"), block.rfind("}")
        if start < 0 or end < start:
            continue
        raw = block[start:end + 1]
        for attempt in (raw, repair_json(raw)):
            try:
                data = json.loads(attempt)
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
    return None


def parse_json_plan_verdict(text: str) -> LLMVerdict:
    """The verdict of the self-verification paper's format-based, swapped and CoT plan-verification prompts
    (000:2220, 000:2418, 000:2328): the "valid" key of the JSON between `[JSON]` and `[JSON_END]` (a boolean,
    or "true"/"false"); a JSON block that does not parse still gives its `"valid": true|false`. No verdict is
    invalid with `parsed=False`. The critique is the whole reply, as the loop hands it back."""
    reply = (text or "").strip()
    data = json_plan_critique(reply)
    value = None if data is None else next((v for k, v in data.items() if str(k).lower() == "valid"), None)
    if isinstance(value, str):
        value = {"true": True, "false": False}.get(value.strip().lower())
    if isinstance(value, bool):
        return LLMVerdict(says_valid=value, critique=reply)
    blocks = _JSON_BLOCK.findall(reply)
    found = _VALID_KEY.findall(blocks[-1]) if blocks else []
    if found:
        return LLMVerdict(says_valid=found[-1].lower() == "true", critique=reply)
    return LLMVerdict(says_valid=False, critique=reply, parsed=False)


def study_plan_verdict(text: str) -> LLMVerdict:
    """The open-ended verifier's verdict as the studies' code read it (karthikv792/LLMs-Planning
    `back_prompting.py` @27b0c44): valid when any line contains "plan is valid" (in any case), else invalid.
    The critique is the whole reply."""
    reply = (text or "").strip()
    valid = any("plan is valid" in line.lower() for line in reply.split("\n"))
    parsed = valid or "plan is invalid" in reply.lower()
    return LLMVerdict(says_valid=valid, critique=reply, parsed=parsed)
