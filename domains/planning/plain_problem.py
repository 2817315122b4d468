"""The plain shape of a PDDL problem, read without a grammar: the fast path of `pddl_io.parse_problem_text`.

Parsing a problem with the `pddl` package runs its lark grammar; a replay of PlanBench's 500 Blocksworld answers,
and `score` on them, spent most of their CPU there (issue 31). Nearly every problem in the wild has one shape:
`(define (problem N) (:domain D) (:objects ...) (:init ATOM*) (:goal ATOM | (and LITERAL*)))`, names as PDDL
spells them, each object of at most one type. `read_plain` reads exactly that shape, several times faster
(`benchmarks/bench_pddl_parse.py`), and returns None for anything else (requirements, numbers, equality,
`either`, a repeated object, a keyword used as a name, anything malformed), which `pddl` then parses, refuses or
reports as before. The two readers give the same `Task` on every PlanBench and AutoPlanBench problem (the
benchmark checks all of them; `tests/test_pddl_reading.py` each shape, each kind of bad problem, and 25 problems
of each shipped PlanBench domain).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pddl.parser.symbols import ALL_SYMBOLS

from critiquebench.domains.planning.strips import Fact

_TOKEN = re.compile(r"[()]|[^\s()]+")
_NAME = re.compile(r"[a-z][a-z0-9_-]*")
# a problem's own name may start with a digit (PlanBench's obfuscated problems; see `parse_problem_text`)
_PROBLEM_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


@dataclass(frozen=True)
class PlainProblem:
    """What a plain problem says: its name, objects (name -> declared types), initial atoms, goal literals."""

    name: str
    objects: dict[str, frozenset[str]]
    init: frozenset[Fact]
    goal: tuple[Fact, ...]
    neg_goal: tuple[Fact, ...]


def _tree(text: str) -> list | None:
    """The one top-level s-expression of `text` as nested lists of tokens, or None."""
    stack: list[list] = [[]]
    for token in _TOKEN.findall(text):
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                return None
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(token)
    top = stack[0]
    return top[0] if len(stack) == 1 and len(top) == 1 and isinstance(top[0], list) else None


def _name(token: object) -> bool:
    return isinstance(token, str) and _NAME.fullmatch(token) is not None and token not in ALL_SYMBOLS


def _atom(form: object) -> Fact | None:
    if isinstance(form, list) and form and all(_name(t) for t in form):
        return tuple(form)
    return None


def _objects(items: list) -> dict[str, frozenset[str]] | None:
    objects: dict[str, frozenset[str]] = {}
    pending: list[str] = []
    seen: set[str] = set()
    i = 0
    while i < len(items):
        token = items[i]
        if token == "-":
            kind = items[i + 1] if i + 1 < len(items) else None
            if not pending or not _name(kind):
                return None
            objects.update((name, frozenset({kind})) for name in pending)  # type: ignore[arg-type]
            pending = []
            i += 2
            continue
        if not _name(token) or token in seen:
            return None
        seen.add(token)
        pending.append(token)
        i += 1
    objects.update((name, frozenset()) for name in pending)
    return objects


def _goal(form: object) -> tuple[list[Fact], list[Fact]] | None:
    parts = form[1:] if isinstance(form, list) and form and form[0] == "and" else [form]
    pos: list[Fact] = []
    neg: list[Fact] = []
    for part in parts:
        if isinstance(part, list) and len(part) == 2 and part[0] == "not":
            atom = _atom(part[1])
            if atom is None:
                return None
            neg.append(atom)
        else:
            atom = _atom(part)
            if atom is None:
                return None
            pos.append(atom)
    return (pos, neg) if parts else None


def read_plain(text: str) -> PlainProblem | None:
    """The problem in `text` (lower case, comments removed) when it has the plain shape, else None."""
    tree = _tree(text)
    if tree is None or len(tree) not in (5, 6) or tree[0] != "define":
        return None
    head, domain, *sections = tree[1:]
    if not (isinstance(head, list) and len(head) == 2 and head[0] == "problem"
            and isinstance(head[1], str) and _PROBLEM_NAME.fullmatch(head[1])):  # fmt: skip
        return None
    if not (isinstance(domain, list) and len(domain) == 2 and domain[0] == ":domain"
            and isinstance(domain[1], str) and _PROBLEM_NAME.fullmatch(domain[1])):  # fmt: skip
        return None
    keys = [s[0] if isinstance(s, list) and s else None for s in sections]
    if keys not in ([":objects", ":init", ":goal"], [":init", ":goal"]):
        return None
    found = dict(zip(keys, sections, strict=True))
    objects = _objects(found[":objects"][1:]) if ":objects" in found else {}
    init = [_atom(form) for form in found[":init"][1:]]
    if objects is None or any(atom is None for atom in init) or len(found[":goal"]) != 2:
        return None
    goal = _goal(found[":goal"][1])
    if goal is None:
        return None
    return PlainProblem(head[1], objects, frozenset(init), tuple(goal[0]), tuple(goal[1]))  # type: ignore[arg-type]
