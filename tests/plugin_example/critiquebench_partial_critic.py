"""A partial critic: it checks one constraint of an answer and passes everything else (no LLM call)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from critiquebench.plugins import Domain, Instance, LLMVerdict


def make_critic(llm: Any, domain: Domain, constraint: str = "numbers") -> Any:
    """Checks only that a Game of 24 answer uses the given numbers (constraint=numbers), or, for any domain,
    only that an answer can be parsed (constraint=parse)."""
    if constraint not in ("numbers", "parse"):
        raise ValueError(f"constraint must be numbers or parse, not {constraint!r}")

    def critic(instance: Instance, answer: str, sample: int = 0) -> LLMVerdict:
        parsed = domain.parse(instance, answer)
        if parsed is None:
            return LLMVerdict(False, "I cannot find an answer in your response.")
        if constraint == "parse" or domain.name != "game24":
            return LLMVerdict(True, "")
        used = Counter(int(n) for n in re.findall(r"\d+", str(parsed)))
        if used != Counter(instance.data["numbers"]):
            return LLMVerdict(False, f"Use exactly the numbers {instance.data['numbers']}.")
        return LLMVerdict(True, "")

    return critic
