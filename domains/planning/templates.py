"""PlanBench's natural-language templates (config.yaml) and the exact English they produce.

A config gives `domain_intro`, `actions` (PDDL action -> English with `{}` slots), `predicates` (likewise) and
`encoded_objects`. Objects are named the way PlanBench does: a key equal to the whole object name ("a" -> "red
block"), or a key equal to its first letter whose template is filled with the name's digits, one per slot
("l1-0" -> "location_{}_{}" -> "location_1_0"). Two orderings are PlanBench's, and both are kept: prompts sort
facts by "name arg arg" (tarski atoms), feedback sorts by "name_arg_arg" (executor strings).
"""

from __future__ import annotations

import json
import logging
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from critiquebench.domains.memo import read_once
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
    # PlanBench's plan-optimality (t2) intro, which gives every action's duration.
    domain_intro_cost: str | None = None
    # PlanBench's intro giving an example of each action (its `domain_intro_zero_shot`), when given.
    domain_intro_zero_shot: str | None = None
    # PlanBench's intro of its state-tracking prompt (`domain_intro_state_tracking`), when given.
    domain_intro_state_tracking: str | None = None
    # PlanBench's historical intros of this domain (name -> text) that its recorded runs were sent
    # (domains/data/planbench_intros.yaml, by the config's domain_name)
    intros: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    # PlanBench's keywords for reading a model's state descriptions (predicate -> words), when given.
    predicate_mapping: dict[str, str] | None = None
    # Fact sets already put in words (`prompt_facts`): a one-shot prompt shows each problem twice, as the
    # question and as the next instance's example, and an import that replays renders each prompt twice more.
    _said: dict[frozenset[Fact], str] = field(default_factory=dict, init=False, compare=False, hash=False, repr=False)

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

    def slot_order(self, name: str) -> tuple[int, ...] | None:
        """Which parameter each ``{}`` slot of action `name`'s template fills, in reading order (None when
        the template has no slots); PlanBench's are in order, AutoPlanBench's may not be ("pick {1} ... {0}")."""
        template = self.actions.get(name)
        if not template:
            return None
        try:
            fields = [f for _text, f, _spec, _conv in string.Formatter().parse(template) if f is not None]
        except ValueError:
            return None
        order = [int(f) if f.isdigit() else i for i, f in enumerate(fields)]
        return tuple(order) if order else None

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
        if not isinstance(facts, frozenset):
            return self._facts_text(facts)
        said = self._said.get(facts)
        if said is None:
            if len(self._said) > 8192:
                self._said.clear()
            said = self._said[facts] = self._facts_text(facts)
        return said

    def _facts_text(self, facts: Iterable[Fact]) -> str:
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


# libyaml's safe loader where PyYAML was built with it (its wheels are): the same documents read 10x faster than
# the pure-Python one, which took a tenth of a replay's start reading these two files
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml(text: str) -> Any:
    """`yaml.safe_load(text)`, with libyaml where it is there."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (CSafeLoader or SafeLoader)


def load_config(path: Path, default_name: str) -> NLConfig:
    """Read a PlanBench-style config.yaml; a clear `PlanningError` naming the file on any problem."""
    try:
        raw = _yaml(path.read_text(encoding="utf-8"))
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
    cost = raw.get("domain_intro_cost")
    zero_shot = raw.get("domain_intro_zero_shot")
    tracking = raw.get("domain_intro_state_tracking")
    mapping = _str_map(raw["predicate_mapping"], "predicate_mapping", path) if "predicate_mapping" in raw else None
    return NLConfig(
        domain_name=str(raw.get("domain_name") or default_name),
        domain_intro=raw["domain_intro"],
        actions=_str_map(raw["actions"], "actions", path),
        predicates=_str_map(raw["predicates"], "predicates", path),
        encoded_objects=_str_map(raw["encoded_objects"], "encoded_objects", path),
        domain_intro_legacy=legacy if isinstance(legacy, str) else None,
        domain_intro_cost=cost if isinstance(cost, str) else None,
        domain_intro_zero_shot=zero_shot if isinstance(zero_shot, str) else None,
        domain_intro_state_tracking=tracking if isinstance(tracking, str) else None,
        predicate_mapping=mapping,
        intros=historical_intros(str(raw.get("domain_name") or default_name)),
    )


HISTORY = Path(__file__).resolve().parents[1] / "data" / "planbench_intros.yaml"


@cache
def _history() -> dict[str, Any]:
    loaded = _yaml(HISTORY.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else {}


def historical_intros(domain_name: str) -> dict[str, str]:
    """PlanBench's older intros of `domain_name` (name -> text), as its recorded runs were sent them."""
    entries = _history().get(domain_name)
    if not isinstance(entries, dict):
        return {}
    return {k: v["text"] for k, v in entries.items() if isinstance(v, dict) and isinstance(v.get("text"), str)}


# AutoPlanBench ships no intro text in its description file; it renders one from the file's action
# descriptions, preconditions, effects and type hierarchy with a template we could not find published.
# Wording not published; ours: PlanBench's intro layout ("Here are the actions I can do" / "I have the
# following restrictions on my actions:") filled with AutoPlanBench's own sentences.
AUTOPLANBENCH_INTRO = (
    "I am playing with a set of objects. Here are the actions I can do\n\n{actions}\n\n"
    "I have the following restrictions on my actions:\n{rules}\n"
)
_NAMED_SLOT = re.compile(r"\{(\?[^{}\s]+)\}")


def description_files(folder: Path) -> list[Path]:
    """AutoPlanBench natural-language description files in `folder`, the lowest seed first."""
    return sorted(folder.glob("domain_description*.json"))


def load_description(path: Path, default_name: str) -> NLConfig:
    """An `NLConfig` from an AutoPlanBench ``domain_description*.json`` (named ``{?x}`` slots become
    positional ones in the PDDL parameter order, so one code path renders both sources)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise PlanningError(f"{path}: cannot read description: {err}") from None
    except ValueError as err:
        raise PlanningError(f"{path}: malformed JSON: {err}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("action_nl_templates"), dict):
        raise PlanningError(f"{path}: not an AutoPlanBench description (no action_nl_templates)")
    actions_info = raw.get("actions") if isinstance(raw.get("actions"), dict) else {}
    preds_info = raw.get("predicates") if isinstance(raw.get("predicates"), dict) else {}
    actions = _positional(raw["action_nl_templates"], actions_info, path)
    predicates = _positional(raw.get("predicate_nl_templates") or {}, preds_info, path)
    predicates = {k: v for k, v in predicates.items() if k not in ("=", "!=")} | {
        "=": predicates.get("=", "{} is equal to {}")
    }
    lines = [str(a.get("description", "")).strip() for a in actions_info.values() if isinstance(a, dict)]
    rules = [
        str(sentence).strip()
        for a in actions_info.values()
        if isinstance(a, dict)
        for key in ("preconditions", "effects")
        for sentence in a.get(key, [])
    ]
    hierarchy = raw.get("type_hierarchy") if isinstance(raw.get("type_hierarchy"), list) else []
    intro = AUTOPLANBENCH_INTRO.format(
        actions="\n".join(s for s in lines if s), rules="\n".join([*map(str, hierarchy), *rules])
    )
    return NLConfig(str(raw.get("domain_name") or default_name), intro, actions, predicates, {})


def _positional(templates: Any, info: dict[str, Any], path: Path) -> dict[str, str]:
    """``{"pick": "pick {?obj} with {?g}"}`` -> ``{"pick": "pick {1} with {3}"}`` using the ``pddl`` field
    of each entry ("(pick ?r ?obj ?room ?g)") for the parameter order."""
    if not isinstance(templates, dict):
        raise PlanningError(f"{path}: templates must be a mapping of names to strings")
    out: dict[str, str] = {}
    for name, template in templates.items():
        if not isinstance(template, str):
            raise PlanningError(f"{path}: template for {name!r} is not text")
        entry = info.get(name) if isinstance(info.get(name), dict) else {}
        signature = str(entry.get("pddl", "")).strip("() ").lower().split()[1:]
        if not signature:
            signature = list((entry.get("parameter_types") or {}).keys())
        order = {p.lower(): i for i, p in enumerate(signature)}

        def slot(m: re.Match[str], order: dict[str, int] = order, name: str = name) -> str:
            if m.group(1).lower() not in order:
                raise PlanningError(f"{path}: template for {name!r} names unknown parameter {m.group(1)}")
            return "{" + str(order[m.group(1).lower()]) + "}"

        out[str(name).lower()] = _NAMED_SLOT.sub(slot, template.replace("{{", "{").replace("}}", "}"))
    return out


def find_nl_config(folder: Path, default_name: str) -> tuple[NLConfig, Path | None]:
    """The folder's natural-language templates and their file: PlanBench's ``config.yaml``, else
    AutoPlanBench's ``domain_description*.json``; else empty templates (PDDL-style text) and None."""
    if (folder / "config.yaml").is_file():
        # read once while unchanged: every view of a domain, and each domain built in one process (an import,
        # then its replay), share one config and the fact texts it has rendered
        config = read_once(folder / "config.yaml", lambda path: load_config(path, default_name), default_name)
        return config, folder / "config.yaml"
    for path in description_files(folder):
        return load_description(path, default_name), path
    return NLConfig(default_name, "", {}, {}, {}), None


NL_SOURCES = "a PlanBench config.yaml or an AutoPlanBench domain_description*.json"
