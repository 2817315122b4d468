"""A domain and its English templates read back from the intro of PlanBench's obfuscated English prompts.

PlanBench's obfuscated Blocksworld English runs (`results/obfuscated_randomized_blocksworld{,_3}/o1-*_chat/
task_1_plan_generation_zero_shot.json`) were made from a config no commit of karthikv792/LLMs-Planning holds.
Its obfuscator (`llm_planning_analysis/obfuscator.py`, at 1540aef and b008bc4) writes such a config: every
action's and predicate's template is its random name followed by one `{}` per argument (`create_new_config`,
:66-91), objects are `object_{}` (:111), and the intro is rendered from the translated PDDL domain by
`create_intro_from_translated_domain` (:117-202): each action with its parameters, then each action's
preconditions, add and delete effects, in the domain's order. The intro therefore states the whole domain: it
is read back here into a PDDL domain and a config, and the intro rendered again from what was read must equal
the recorded one byte for byte, so nothing the prompt does not say is invented. The problems are then read from
each prompt's statement through those templates (`recorded.with_stated_problems`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from critiquebench.importers.planbench.checkout import write_folder

HEAD = "I am playing with a set of objects. Here are the actions I can do\n\n"
_RESTRICTIONS = "I have the following restrictions on my actions:\n"
_ACTION = re.compile(r"([A-Za-z][\w-]*)((?: object_\d+)*)\.")
_PARAMETER = "object_{}"  # `translate_domain_pddl` names the i-th parameter object_i (obfuscator.py:226-228)


@dataclass(frozen=True)
class Action:
    name: str
    arity: int
    pre: tuple[tuple[str, ...], ...]  # each fact: predicate, then parameter names (object_0, ...)
    add: tuple[tuple[str, ...], ...]
    delete: tuple[tuple[str, ...], ...]
    single: bool  # a precondition that is one atom, not an `and` (its text has no leading space)


def _facts(text: str) -> tuple[tuple[str, ...], ...]:
    """Facts written " a, b, and c" (or "a", " a"); the split is exact because names are single words."""
    parts = [p.strip() for p in re.split(r",(?: and)? ", text.strip()) if p.strip()]
    return tuple(tuple(p.split()) for p in parts)


def render(actions: list[Action]) -> str:
    """The intro `create_intro_from_translated_domain` (obfuscator.py:117-202) writes for `actions`."""
    intro = HEAD
    for action in actions:
        params = "".join(f" {_PARAMETER.format(i)}" for i in range(action.arity))
        intro += f"{action.name.capitalize()}{params}.\n"
    intro += "\n" + _RESTRICTIONS
    for action in actions:
        intro += f"To perform {action.name} action, the following facts need to be true:"
        if action.single:
            intro += " ".join(action.pre[0])
        else:
            for i, fact in enumerate(action.pre):
                last = i == len(action.pre) - 1
                intro += (" and " if last else " ") + " ".join(fact) + ("" if last else ",")
        intro += "\n"
        for word, facts in (("true", action.add), ("false", action.delete)):
            intro += f"Once {action.name} is performed the following facts will be {word}:"
            for i, fact in enumerate(facts):
                last = i == len(facts) - 1
                intro += (" and" if last and i > 0 else "") + " " + " ".join(fact) + ("" if last else ",")
            intro += "\n"
    return intro


def read_intro(intro: str) -> list[Action] | None:
    """The actions an obfuscator-written intro states, or None when `intro` is not one (read back and rendered
    again, it must give the same text)."""
    if not intro.startswith(HEAD) or "\n\n" + _RESTRICTIONS not in intro:
        return None
    listed, _, rules = intro[len(HEAD) :].partition("\n\n" + _RESTRICTIONS)
    heads = [_ACTION.fullmatch(line) for line in listed.split("\n")]
    if not heads or any(m is None for m in heads):
        return None
    lines = rules.split("\n")
    actions: list[Action] = []
    for k, found in enumerate(heads):
        assert found is not None
        name, arity = found.group(1).lower(), len(found.group(2).split())
        block = lines[3 * k : 3 * k + 3]
        pre_head = f"To perform {name} action, the following facts need to be true:"
        add_head = f"Once {name} is performed the following facts will be true:"
        del_head = f"Once {name} is performed the following facts will be false:"
        heads_of = (pre_head, add_head, del_head)
        if len(block) < 3 or not all(b.startswith(h) for b, h in zip(block, heads_of, strict=True)):
            return None
        pre_text = block[0][len(pre_head) :]
        single = not pre_text.startswith(" ")
        pre = (tuple(pre_text.split()),) if single else _facts(pre_text)
        add, delete = _facts(block[1][len(add_head) :]), _facts(block[2][len(del_head) :])
        actions.append(Action(name, arity, pre, add, delete, single))
    return actions if render(actions) == intro else None


def _atom(fact: tuple[str, ...]) -> str:
    args = " ".join("?" + a for a in fact[1:])
    return f"({fact[0]} {args})" if args else f"({fact[0]})"


def domain_pddl(name: str, actions: list[Action]) -> str:
    """`actions` as a STRIPS PDDL domain called `name` (parameters ?object_0 ..., as the intro names them)."""
    arity: dict[str, int] = {}
    for action in actions:
        for fact in (*action.pre, *action.add, *action.delete):
            arity.setdefault(fact[0], len(fact) - 1)
    lines = [f"(define (domain {name})", "  (:requirements :strips)", "  (:predicates"]
    lines += [f"    ({p}{''.join(f' ?x{i}' for i in range(n))})" for p, n in arity.items()]
    lines.append("  )")
    for action in actions:
        params = " ".join("?" + _PARAMETER.format(i) for i in range(action.arity))
        effects = [_atom(f) for f in action.add] + [f"(not {_atom(f)})" for f in action.delete]
        lines += [f"  (:action {action.name}", f"    :parameters ({params})",
                  f"    :precondition (and {' '.join(_atom(f) for f in action.pre)})",
                  f"    :effect (and {' '.join(effects)}))"]  # fmt: skip
    return "\n".join([*lines, ")"]) + "\n"


def config_yaml(name: str, intro: str, actions: list[Action]) -> str:
    """The config `create_new_config` (obfuscator.py:66-111) writes for these names: a template per action and
    predicate, its name then one `{}` per argument (a predicate of no argument: its name alone, as the recorded
    statements show "cql4o62p1yeke3ok,"), objects `object_{}`, and the intro read."""
    predicates: dict[str, str] = {}
    for action in actions:
        for fact in (*action.pre, *action.add, *action.delete):
            predicates.setdefault(fact[0], " ".join([fact[0], *["{}"] * (len(fact) - 1)]))
    config = {
        "domain_name": name,
        "domain_intro": intro,
        "actions": {a.name: " ".join([a.name, *["{}"] * a.arity]) for a in actions},
        "predicates": predicates,
        "encoded_objects": {"o": _PARAMETER},
    }
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=10**6)


def intro_of(queries: Mapping[int, str]) -> str | None:
    """The one intro every English prompt of `queries` opens with (the text before its statement)."""
    intros = {q.partition("\n[STATEMENT]\n")[0] for q in queries.values() if "\n[STATEMENT]\n" in q}
    if len(intros) != 1 or any("\n[STATEMENT]\n" not in q for q in queries.values()):
        return None
    return intros.pop()


def stated_domain(path: Path, name: str, queries: Mapping[int, str], into: Path) -> Path | None:
    """A domain folder (domain.pddl, config.yaml, no problems) read back from the obfuscator-written intro all
    of `queries` open with, named `name` (PlanBench's config name); None where they open with none."""
    intro = intro_of(queries)
    actions = read_intro(intro) if intro is not None else None
    if intro is None or not actions:
        return None
    files = {"domain.pddl": domain_pddl(name, actions), "config.yaml": config_yaml(name, intro, actions)}
    return write_folder(f"{name}-intro", files, into, {"domain_from": f"the intro of {path}'s prompts"})
