"""Reading the JSON objects an LLM writes in a reply, leniently: verifier prompts ask for JSON verdicts, and
models answer with Python-style dicts, single quotes, trailing commas and prose around them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_OBJECT = re.compile(r"\{[^{}]*\}")


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """The flat JSON objects in `text` that parse (strictly, else after repair), last first: models state
    their final verdict last."""
    for raw in reversed(_OBJECT.findall(text)):
        data = _loads(raw)
        if isinstance(data, dict):
            yield data


def _loads(raw: str) -> Any:
    for attempt in (raw, repair_json(raw)):
        try:
            return json.loads(attempt)
        except ValueError:
            continue
    return None


def repair_json(raw: str) -> str:
    """Python-ish dicts as LLMs write them: single quotes, True/False/None, trailing commas."""
    fixed = re.sub(r"'([^'\\]*)'", lambda m: json.dumps(m[1]), raw)
    fixed = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", re.sub(r"\bNone\b", "null", fixed)))
    return re.sub(r",\s*}", "}", fixed)
