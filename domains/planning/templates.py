"""PlanBench's natural-language templates (config.yaml) and the exact English they produce.

A config gives `domain_intro`, `actions` (PDDL action -> English with `{}` slots), `predicates` (likewise) and
`encoded_objects`. Objects are named the way PlanBench does: a key equal to the whole object name ("a" -> "red
block"), or a key equal to its first letter whose template is filled with the name's digits, one per slot
("l1-0" -> "location_{}_{}" -> "location_1_0"). Two orderings are PlanBench's, and both are kept: prompts sort
facts by "name arg arg" (tarski atoms), feedback sorts by "name_arg_arg" (executor strings).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from critiquebench.domains.planning.strips import Fact, PlanningError

log = logging.getLogger(__name__)

REQUIRED_KEYS = ("domain_intro", "actions", "predicates", "encoded_objects")


@dataclass(frozen=True)
class NLConfig:
    domain_name: str
    domain_intro: str
    actions: dict[str, str]
    predicates: dict[str, str]
    encoded_objects: dict[str, str]
    # PlanBench's 2023 one-shot results used an earlier Blocksworld intro; configs may carry it here.
    domain_intro_legacy: str | None = None

    def object_text(self, obj: str) -> str:
        if obj in self.encoded_objects:
            return self.encoded_objects[obj]
        template = self.encoded_objects.get(obj[:1])
        if template is None:
            return obj
        try:
            return template.format(*[ch for ch in obj if ch.isdigit()])
        except IndexError:
            return obj

    def fact_text(self, fact: Fact) -> str | None:
        template = self.predicates.get(fact[0])
        if template is None:
            log.debug("no English template for predicate %s", fact[0])
            return None
        return _fill(template, [self.object_text(o) for o in fact[1:]])

    def action_text(self, name: str, args: Iterable[str]) -> str:
        args = tuple(args)
        template = self.actions.get(name)
        if template is None:
            return "(" + " ".join((name, *args)) + ")"
        return _fill(template, [self.object_text(o) for o in args])

    def prompt_facts(self, facts: Iterable[Fact]) -> str:
        """Facts as in PlanBench's statements: tarski order, empty renderings dropped, "a, b and c"."""
        ordered = sorted(facts, key=lambda f: f[0] + " " + " ".join(f[1:]))
        texts = [t for t in (self.fact_text(f) for f in ordered) if t is not None]
        if len(texts) > 1:
            texts = [t for t in texts if t]
            if not texts:
                return ""
            # PlanBench joins after filtering even when one item is left (" and x"); kept for byte-identity.
            return ", ".join(texts[:-1]) + f" and {texts[-1]}"
        return texts[0] if texts else ""

    def state_facts(self, facts: Iterable[Fact]) -> str:
        """Facts as in PlanBench's feedback and verification prompts: sorted "pred_arg" strings."""
        ordered = sorted(facts, key=lambda f: "_".join(f))
        texts = [t for t in (self.fact_text(f) for f in ordered) if t]
        if not texts:
            return ", ".join("(" + " ".join(f) + ")" for f in ordered)
        if len(texts) > 1:
            return ", ".join(texts[:-1]) + f" and {texts[-1]}"
        return texts[0]


def _fill(template: str, values: list[str]) -> str:
    try:
        return template.format(*values)
    except (IndexError, KeyError, ValueError):
        return template + " " + " ".join(values)


def _str_map(raw: Any, key: str, source: Path) -> dict[str, str]:
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise PlanningError(f"{source}: `{key}` must be a mapping of names to template strings")
    return {str(k).lower() if key != "encoded_objects" else str(k): v for k, v in raw.items()}


def load_config(path: Path, default_name: str) -> NLConfig:
    """Read a PlanBench-style config.yaml; a clear `PlanningError` naming the file on any problem."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise PlanningError(f"{path}: cannot read config: {err}") from None
    except yaml.YAMLError as err:
        raise PlanningError(f"{path}: malformed YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise PlanningError(f"{path}: expected a mapping with keys {', '.join(REQUIRED_KEYS)}")
    missing = [k for k in REQUIRED_KEYS if k not in raw]
    if missing:
        raise PlanningError(f"{path}: missing key(s) {', '.join(missing)}")
    if not isinstance(raw["domain_intro"], str):
        raise PlanningError(f"{path}: `domain_intro` must be text")
    legacy = raw.get("domain_intro_legacy")
    return NLConfig(
        domain_name=str(raw.get("domain_name") or default_name),
        domain_intro=raw["domain_intro"],
        actions=_str_map(raw["actions"], "actions", path),
        predicates=_str_map(raw["predicates"], "predicates", path),
        encoded_objects=_str_map(raw["encoded_objects"], "encoded_objects", path),
        domain_intro_legacy=legacy if isinstance(legacy, str) else None,
    )
