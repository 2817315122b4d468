"""Read PDDL text with the `pddl` package into our STRIPS `DomainModel` / `Task`.

Only STRIPS with optional typing and negative literals is supported (PlanBench's domains are untyped STRIPS);
anything else is rejected with a `PlanningError` naming the source file. Names are lower-cased because PDDL is
case-insensitive and PlanBench's configs use lower-case keys (Logistics' domain file says LOAD-TRUCK, OBJ).
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

from critiquebench.domains.planning.strips import DomainModel, Fact, PlanningError, Schema, Task
from lark import LarkError
from pddl.exceptions import PDDLError
from pddl.logic.base import And, Not
from pddl.logic.predicates import Predicate
from pddl.parser.domain import DomainParser
from pddl.parser.problem import ProblemParser

_LOCK = threading.Lock()  # the package's parsers keep per-call transformer state


@cache
def _domain_parser() -> DomainParser:
    return DomainParser()


@cache
def _problem_parser() -> ProblemParser:
    return ProblemParser()


def _run(parser_factory: Any, text: str, source: str) -> Any:
    try:
        with _LOCK:
            return parser_factory()(text)
    except (LarkError, PDDLError, ValueError, TypeError, KeyError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise PlanningError(f"{source}: malformed PDDL: {first}") from None


def _type_of(tags: frozenset[str]) -> str | None:
    return sorted(str(t).lower() for t in tags)[0] if tags else None


def _atom(pred: Predicate, source: str) -> Fact:
    return (str(pred.name).lower(), *(_var(t) for t in pred.terms))


def _literals(formula: Any, source: str, what: str) -> tuple[list[Fact], list[Fact]]:
    """Positive and negative atoms of a conjunction of literals."""
    if formula is None:
        return [], []
    parts = list(formula.operands) if isinstance(formula, And) else [formula]
    pos: list[Fact] = []
    neg: list[Fact] = []
    for part in parts:
        if isinstance(part, Predicate):
            pos.append(_atom(part, source))
        elif isinstance(part, Not) and isinstance(part.argument, Predicate):
            neg.append(_atom(part.argument, source))
        elif isinstance(part, And):
            p, n = _literals(part, source, what)
            pos += p
            neg += n
        else:
            raise PlanningError(f"{source}: unsupported {what} {part} (only STRIPS literals are supported)")
    return pos, neg


def _var(term: Any) -> str:
    # Variables become "?name" so they cannot clash with object names when grounding.
    name = str(term.name).lower()
    return "?" + name if type(term).__name__ == "Variable" else name


def parse_domain_text(text: str, source: str) -> DomainModel:
    dom = _run(_domain_parser, text, source)
    schemas: dict[str, Schema] = {}
    for action in dom.actions:
        params = tuple("?" + str(p.name).lower() for p in action.parameters)
        types = tuple(_type_of(p.type_tags) for p in action.parameters)
        pre, neg = _literals(action.precondition, source, f"precondition of {action.name}")
        add, delete = _literals(action.effect, source, f"effect of {action.name}")
        name = str(action.name).lower()
        schemas[name] = Schema(name, params, types, tuple(pre), tuple(neg), tuple(add), tuple(delete))
    _check_variables(schemas, source)
    types = {str(k).lower(): (str(v).lower() if v else None) for k, v in dict(dom.types).items()}
    constants = {str(c.name).lower(): _type_of(c.type_tags) for c in dom.constants}
    predicates = {str(p.name).lower(): len(p.terms) for p in dom.predicates}
    return DomainModel(str(dom.name).lower(), schemas, types, constants, predicates)


def _check_variables(schemas: dict[str, Schema], source: str) -> None:
    for s in schemas.values():
        for atom in (*s.pre, *s.neg_pre, *s.add, *s.delete):
            for arg in atom[1:]:
                if arg.startswith("?") and arg not in s.params:
                    raise PlanningError(f"{source}: action {s.name} uses undeclared parameter {arg}")


def parse_problem_text(text: str, domain: DomainModel, source: str) -> Task:
    prob = _run(_problem_parser, text, source)
    objects = dict(domain.constants)
    objects.update({str(o.name).lower(): _type_of(o.type_tags) for o in prob.objects})
    init: set[Fact] = set()
    for item in prob.init:
        if not isinstance(item, Predicate):
            raise PlanningError(f"{source}: unsupported initial-state item {item}")
        init.add(_atom(item, source))
    goal, neg_goal = _literals(prob.goal, source, "goal")
    for fact in (*init, *goal, *neg_goal):
        unknown = [a for a in fact[1:] if a not in objects]
        if unknown:
            raise PlanningError(f"{source}: fact ({' '.join(fact)}) names undeclared object(s) {unknown}")
        if fact[0] not in domain.predicates:
            raise PlanningError(f"{source}: predicate {fact[0]} is not declared in the domain")
    return Task(domain, str(prob.name).lower(), objects, frozenset(init), frozenset(goal), frozenset(neg_goal))
