"""Read PDDL text into our STRIPS `DomainModel` / `Task` with a small s-expression reader of our own.

Supported: STRIPS with `:typing` (type hierarchies, `either`), `:constants`, `:equality` (``=`` in
preconditions and goals), `:negative-preconditions` (negative literals in preconditions and goals), and
`:action-costs` (``total-cost`` increments are ignored: they do not change which plans are valid). Anything
else a domain *uses* (not merely declares: many STRIPS domains say `:adl`) is rejected with a `PlanningError`
that names the requirement, e.g. ":conditional-effects", so no plan of such a domain is judged wrongly.

Names are lower-cased because PDDL is case-insensitive (PlanBench's Logistics says LOAD-TRUCK, OBJ).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from critiquebench.domains.planning.strips import DomainModel, Fact, PlanningError, Schema, Task

SExpr = str | list["SExpr"]

_TOKEN = re.compile(r"[()]|[^\s()]+")
# Constructs this validator cannot execute, and the requirement that introduces each.
UNSUPPORTED: dict[str, str] = {
    "when": ":conditional-effects",
    "forall": ":universal-preconditions",
    "exists": ":existential-preconditions",
    "or": ":disjunctive-preconditions",
    "imply": ":disjunctive-preconditions",
    "increase": ":numeric-fluents",
    "decrease": ":numeric-fluents",
    "assign": ":numeric-fluents",
    "scale-up": ":numeric-fluents",
    "scale-down": ":numeric-fluents",
    "<": ":numeric-fluents",
    ">": ":numeric-fluents",
    "<=": ":numeric-fluents",
    ">=": ":numeric-fluents",
    ":durative-action": ":durative-actions",
    ":derived": ":derived-predicates",
    ":constraints": ":constraints",
    "preference": ":preferences",
}
COST_FUNCTION = "total-cost"


def read_sexprs(text: str, source: str) -> list[SExpr]:
    """Top-level s-expressions of `text`, lower-cased, without `;` comments."""
    body = "\n".join(line.split(";", 1)[0] for line in text.splitlines()).lower()
    stack: list[list[SExpr]] = [[]]
    for token in _TOKEN.findall(body):
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise PlanningError(f"{source}: malformed PDDL: unbalanced ')'")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(token)
    if len(stack) != 1:
        raise PlanningError(f"{source}: malformed PDDL: {len(stack) - 1} unclosed '('")
    return stack[0]


def _define(text: str, source: str, kind: str) -> tuple[str, list[list[SExpr]]]:
    """The name and the sections of ``(define (KIND name) sections...)``."""
    exprs = [e for e in read_sexprs(text, source) if isinstance(e, list)]
    if not exprs or not exprs[0] or exprs[0][0] != "define":
        raise PlanningError(f"{source}: malformed PDDL: expected (define ({kind} NAME) ...)")
    define = exprs[0]
    head = define[1] if len(define) > 1 else None
    if not isinstance(head, list) or len(head) != 2 or head[0] != kind or not isinstance(head[1], str):
        raise PlanningError(f"{source}: malformed PDDL: expected ({kind} NAME) after define")
    sections = []
    for part in define[2:]:
        if not isinstance(part, list) or not part or not isinstance(part[0], str):
            raise PlanningError(f"{source}: malformed PDDL: unexpected {_show(part)} in the {kind}")
        sections.append(part)
    return head[1], sections


def _show(expr: SExpr) -> str:
    return expr if isinstance(expr, str) else "(" + " ".join(_show(e) for e in expr) + ")"


def _unsupported(word: str, where: str, source: str) -> PlanningError:
    return PlanningError(
        f"{source}: {where} uses {word!r}, which needs requirement {UNSUPPORTED[word]}; the validator "
        "supports STRIPS with typing, constants, equality and negative preconditions only"
    )


def typed_list(items: list[SExpr], source: str) -> list[tuple[str, frozenset[str]]]:
    """``a b - t c - (either u v) d`` -> [(a, {t}), (b, {t}), (c, {u, v}), (d, {})]; {} means untyped."""
    out: list[tuple[str, frozenset[str]]] = []
    pending: list[str] = []
    i = 0
    while i < len(items):
        item = items[i]
        if item == "-":
            if i + 1 >= len(items):
                raise PlanningError(f"{source}: malformed PDDL: '-' without a type")
            kinds = _type_expr(items[i + 1], source)
            out += [(name, kinds) for name in pending]
            pending = []
            i += 2
            continue
        if not isinstance(item, str):
            raise PlanningError(f"{source}: malformed PDDL: unexpected {_show(item)} in a typed list")
        pending.append(item)
        i += 1
    return out + [(name, frozenset()) for name in pending]


def _type_expr(expr: SExpr, source: str) -> frozenset[str]:
    if isinstance(expr, str):
        return frozenset({expr})
    if expr and expr[0] == "either" and all(isinstance(e, str) for e in expr[1:]):
        return frozenset(str(e) for e in expr[1:])
    raise PlanningError(f"{source}: malformed PDDL: bad type {_show(expr)}")


@dataclass
class _Literals:
    """A conjunction read from a precondition or goal: atoms, negated atoms, (in)equalities."""

    pos: list[Fact] = field(default_factory=list)
    neg: list[Fact] = field(default_factory=list)
    eq: list[tuple[str, str]] = field(default_factory=list)
    neq: list[tuple[str, str]] = field(default_factory=list)


def _condition(expr: SExpr, out: _Literals, where: str, source: str) -> _Literals:
    if isinstance(expr, str):
        raise PlanningError(f"{source}: malformed PDDL: {where} has a bare word {expr!r}")
    if not expr:
        return out
    head = expr[0]
    if head == "and":
        for part in expr[1:]:
            _condition(part, out, where, source)
    elif head == "not":
        inner = expr[1] if len(expr) == 2 else None
        if not isinstance(inner, list) or not inner or inner[0] in ("and", "not", *UNSUPPORTED):
            if isinstance(inner, list) and inner and inner[0] in UNSUPPORTED:
                raise _unsupported(str(inner[0]), where, source)
            raise PlanningError(
                f"{source}: {where} negates {_show(inner or [])}, which needs requirement "
                ":disjunctive-preconditions; only negated atoms are supported"
            )
        if inner[0] == "=":
            out.neq.append(_pair(inner, where, source))
        else:
            out.neg.append(_atom(inner, where, source))
    elif head == "=":
        if any(isinstance(x, list) for x in expr[1:]):
            raise _unsupported("<", where, source)  # (= (fuel ?t) 3): a numeric comparison
        out.eq.append(_pair(expr, where, source))
    elif isinstance(head, str) and head in UNSUPPORTED:
        raise _unsupported(head, where, source)
    else:
        out.pos.append(_atom(expr, where, source))
    return out


def _pair(expr: list[SExpr], where: str, source: str) -> tuple[str, str]:
    if len(expr) != 3 or not all(isinstance(x, str) for x in expr[1:]):
        raise PlanningError(f"{source}: malformed PDDL: {where} has a bad equality {_show(expr)}")
    return str(expr[1]), str(expr[2])


def _atom(expr: list[SExpr], where: str, source: str) -> Fact:
    if not all(isinstance(x, str) for x in expr):
        raise PlanningError(f"{source}: malformed PDDL: {where} has a bad atom {_show(expr)}")
    return tuple(str(x) for x in expr)


def _effect(expr: SExpr, add: list[Fact], delete: list[Fact], where: str, source: str) -> None:
    if isinstance(expr, str):
        raise PlanningError(f"{source}: malformed PDDL: {where} has a bare word {expr!r}")
    if not expr:
        return
    head = expr[0]
    if head == "and":
        for part in expr[1:]:
            _effect(part, add, delete, where, source)
    elif head == "not" and len(expr) == 2 and isinstance(expr[1], list) and expr[1] and expr[1][0] != "=":
        if expr[1][0] in UNSUPPORTED:
            raise _unsupported(str(expr[1][0]), where, source)
        delete.append(_atom(expr[1], where, source))
    elif head == "increase" and len(expr) == 3 and expr[1] == [COST_FUNCTION]:
        return  # action costs: irrelevant to validity
    elif isinstance(head, str) and head in UNSUPPORTED:
        # forall in an effect is a universal (conditional) effect.
        raise _unsupported("when" if head == "forall" else head, where, source)
    elif head in ("not", "="):
        raise PlanningError(f"{source}: malformed PDDL: {where} has a bad effect {_show(expr)}")
    else:
        add.append(_atom(expr, where, source))


def _keyword_args(items: list[SExpr], where: str, source: str) -> dict[str, SExpr]:
    out: dict[str, SExpr] = {}
    for i in range(0, len(items) - 1, 2):
        key = items[i]
        if not isinstance(key, str) or not key.startswith(":"):
            raise PlanningError(f"{source}: malformed PDDL: {where}: expected a :keyword, got {_show(key)}")
        out[key] = items[i + 1]
    if len(items) % 2:
        raise PlanningError(f"{source}: malformed PDDL: {where}: {_show(items[-1])} has no value")
    return out


def _types_of(declared: Iterable[str]) -> frozenset[str] | None:
    # "object" is the root type: a parameter of type object accepts anything, as if untyped.
    kinds = frozenset(declared)
    return None if not kinds or "object" in kinds else kinds


def parse_domain_text(text: str, source: str) -> DomainModel:
    """A `DomainModel` from domain PDDL; a `PlanningError` naming `source` on anything it cannot use."""
    name, sections = _define(text, source, "domain")
    parents: dict[str, frozenset[str]] = {}
    constants: dict[str, frozenset[str]] = {}
    predicates: dict[str, int] = {}
    actions: list[list[SExpr]] = []
    requirements: set[str] = set()
    for section in sections:
        key = section[0]
        if key == ":requirements":
            requirements = {str(r) for r in section[1:]}
        elif key == ":types":
            for kind, sup in typed_list(section[1:], source):
                parents[kind] = parents.get(kind, frozenset()) | (sup or frozenset({"object"}))
        elif key == ":constants":
            for const, kinds in typed_list(section[1:], source):
                constants[const] = kinds
        elif key == ":predicates":
            for pred in section[1:]:
                if not isinstance(pred, list) or not pred or not isinstance(pred[0], str):
                    raise PlanningError(f"{source}: malformed PDDL: bad predicate {_show(pred)}")
                predicates[pred[0]] = len(typed_list(pred[1:], source))
        elif key == ":functions":
            _check_functions(section[1:], source)
        elif key == ":action":
            actions.append(section)
        elif key in UNSUPPORTED:
            raise _unsupported(str(key), f"section {key}", source)
    for req in sorted(requirements):
        # Declared time and preferences change what a plan is; declared :adl etc. are judged by use instead.
        if req in (":durative-actions", ":timed-initial-literals", ":preferences", ":constraints"):
            raise PlanningError(f"{source}: the domain requires {req}, which the validator does not support")
    parents.pop("object", None)
    schemas = dict(_schema(a, source) for a in actions)
    _check_variables(schemas, source)
    return DomainModel(name, schemas, parents, constants, predicates)


def _check_functions(items: list[SExpr], source: str) -> None:
    for item in items:
        if isinstance(item, list) and item and item[0] != COST_FUNCTION:
            raise _unsupported("increase", f"function ({_show(item)})", source)


def _schema(section: list[SExpr], source: str) -> tuple[str, Schema]:
    if len(section) < 2 or not isinstance(section[1], str):
        raise PlanningError(f"{source}: malformed PDDL: an :action without a name")
    name = section[1]
    where = f"action {name}"
    fields = _keyword_args(section[2:], where, source)
    raw_params = fields.get(":parameters", [])
    if not isinstance(raw_params, list):
        raise PlanningError(f"{source}: malformed PDDL: {where}: bad :parameters")
    params = typed_list(raw_params, source)
    pre = _condition(fields.get(":precondition", []), _Literals(), f"the precondition of {where}", source)
    add: list[Fact] = []
    delete: list[Fact] = []
    _effect(fields.get(":effect", []), add, delete, f"the effect of {where}", source)
    schema = Schema(
        name,
        tuple(p for p, _ in params),
        tuple(_types_of(kinds) for _, kinds in params),
        tuple(pre.pos),
        tuple(pre.neg),
        tuple(add),
        tuple(delete),
        tuple(pre.eq),
        tuple(pre.neq),
    )
    return name, schema


def _check_variables(schemas: dict[str, Schema], source: str) -> None:
    for s in schemas.values():
        atoms: Iterator[tuple[str, ...]] = iter((*s.pre, *s.neg_pre, *s.add, *s.delete))
        for atom in (*atoms, *(("=", *p) for p in (*s.eq, *s.neq))):
            for arg in atom[1:]:
                if arg.startswith("?") and arg not in s.params:
                    raise PlanningError(f"{source}: action {s.name} uses undeclared parameter {arg}")


def parse_problem_text(text: str, domain: DomainModel, source: str) -> Task:
    """A `Task` over `domain` from problem PDDL; a `PlanningError` naming `source` on anything unusable."""
    name, sections = _define(text, source, "problem")
    declared: dict[str, frozenset[str]] = dict(domain.constants)
    init: set[Fact] = set()
    goal = _Literals()
    for section in sections:
        key = section[0]
        if key == ":objects":
            declared.update(typed_list(section[1:], source))
        elif key == ":init":
            for item in section[1:]:
                init.update(_init_atom(item, source))
        elif key == ":goal":
            for part in section[1:]:
                _condition(part, goal, "the goal", source)
        elif key == ":constraints":
            raise _unsupported(":constraints", "the problem", source)
    objects = {obj: domain.closure(kinds) for obj, kinds in declared.items()}
    # (In)equalities in a goal are fixed by the objects: one that fails becomes a fact that never holds, so the
    # goal is unreachable and the validator names the offending condition.
    pos = set(goal.pos)
    pos.update(("=", a, b) for a, b in goal.eq if a != b)
    pos.update(("!=", a, b) for a, b in goal.neq if a == b)
    for fact in (*init, *goal.pos, *goal.neg):
        unknown = [a for a in fact[1:] if a not in objects]
        if unknown:
            raise PlanningError(f"{source}: fact ({' '.join(fact)}) names undeclared object(s) {unknown}")
        if fact[0] not in domain.predicates:
            raise PlanningError(f"{source}: predicate {fact[0]} is not declared in the domain")
    return Task(domain, name, objects, frozenset(init), frozenset(pos), frozenset(goal.neg))


def _init_atom(item: SExpr, source: str) -> list[Fact]:
    if not isinstance(item, list) or not item or not isinstance(item[0], str):
        raise PlanningError(f"{source}: malformed PDDL: bad initial-state item {_show(item)}")
    head = item[0]
    if head == "=":
        if isinstance(item[1], list) and item[1] == [COST_FUNCTION]:
            return []  # (= (total-cost) 0)
        raise _unsupported("assign", f"initial-state item {_show(item)}", source)
    if head == "at" and len(item) == 3 and isinstance(item[2], list):
        # (at t1 l1) is an ordinary atom of a predicate "at"; (at 10 (fact)) is a timed literal.
        raise PlanningError(f"{source}: the problem uses timed initial literals, which are not supported")
    if head in UNSUPPORTED or head in ("not", "and"):
        raise PlanningError(f"{source}: malformed PDDL: bad initial-state item {_show(item)}")
    return [_atom(item, "the initial state", source)]
