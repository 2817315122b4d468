"""Reading a model's description of a state ("the red block is clear, the hand is empty and ...") as facts.

Each clause (split at commas, semicolons, line breaks and " and ") is read exactly when it is a fact's
English, else leniently: the predicate whose template words it contains (longest first) and the objects it
names in order, as PlanBench's state reader does. Clauses with " not " are negations and are skipped, as
PlanBench skips them. A config's `predicate_mapping` (PlanBench's keywords, e.g. "holding") replaces the
template words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from critiquebench.domains.planning.parser import _object_names
from critiquebench.domains.planning.strips import Fact, Task
from critiquebench.domains.planning.templates import NLConfig

_SPLIT = re.compile(r",|;|\n|\band\b")
_ARTICLES = ("the", "a", "an")
# Only " not " marks a negation, as in PlanBench's reader: its labels count "X is no longer clear" as "X is
# clear" (see docs/planbench.md for the answers this misreads).
_NEGATIONS = (" not ",)


@dataclass
class StateReader:
    cfg: NLConfig
    task: Task

    def __post_init__(self) -> None:
        self.exact: dict[str, Fact] = {}
        objects = sorted(self.task.objects)
        for pred, arity in self.task.domain.predicates.items():
            for args in _products(objects, arity):
                text = self.cfg.fact_text((pred, *args))
                if text:
                    self.exact.setdefault(_norm(text), (pred, *args))
        self.keywords: list[tuple[str, str, int]] = []  # (words, predicate, arity), longest words first
        mapping = self.cfg.predicate_mapping or {}
        for pred, template in self.cfg.predicates.items():
            if pred not in self.task.domain.predicates:
                continue
            parts = [_strip_articles(p) for p in template.lower().split("{}")]
            words = mapping.get(pred, "").lower() or max(parts, key=len)
            if words:
                self.keywords.append((words, pred, template.count("{}")))
        self.keywords.sort(key=lambda k: len(k[0]), reverse=True)
        names, _short = _object_names(self.cfg, self.task)
        self.names = names
        ordered = sorted(names, key=len, reverse=True)
        self._obj_re = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, ordered)) + r")(?!\w)") if ordered else None

    def read(self, text: str, repeated: bool = False) -> list[Fact]:
        """The facts `text` states, in its order; a fact stated twice read once unless `repeated` (a problem's
        goal read back from a statement that repeats it, as its PDDL did)."""
        facts: list[Fact] = []
        for raw in _SPLIT.split(text.lower().replace("*", "").replace("`", "")):
            clause = _norm(raw)
            if not clause or any(neg in f" {clause} " for neg in _NEGATIONS):
                continue
            fact = self.exact.get(clause) or self._lenient(clause)
            if fact is not None and (repeated or fact not in facts):
                facts.append(fact)
        return facts

    def _lenient(self, clause: str) -> Fact | None:
        for words, pred, arity in self.keywords:
            if words not in clause:
                continue
            found = self._obj_re.finditer(clause) if self._obj_re else iter(())
            objs = [self.names[" ".join(m.group(1).split())] for m in found]
            if len(objs) >= arity:
                return (pred, *objs[:arity])
        return None


def _products(objects: list[str], n: int) -> list[tuple[str, ...]]:
    import itertools

    return list(itertools.product(objects, repeat=n))


def _norm(text: str) -> str:
    text = " ".join(text.replace("_", " ").split()).strip(" .:-")
    return text.lower()


def _strip_articles(text: str) -> str:
    words = text.split()
    while words and words[0] in _ARTICLES:
        words.pop(0)
    while words and words[-1] in _ARTICLES:
        words.pop()
    return " ".join(words)
