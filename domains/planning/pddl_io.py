"""Read PDDL text into our STRIPS `DomainModel` / `Task`: the `pddl` package parses, we ground and validate.

`pddl` (a parser of PDDL 3.1 with a lark grammar) rejects two things that domain files in the wild do (71 of 77
AutoPlanBench files parse as they are): an explicit `object` in `(:types ...)` (gripper declares the root type
as a type) and constructs whose requirement the domain did not declare (many files use negative preconditions
or equality without saying so). `normalise` fixes both before the text is handed over: `object` is dropped from
the declared type names (it is every type's root anyway) and every requirement `pddl` knows is declared, so
that it parses whatever it can read and this module judges by what a domain *uses*.

Supported: STRIPS with `:typing` (type hierarchies, `either`), `:constants`, `:equality` (``=`` in
preconditions and goals), `:negative-preconditions` (negative literals in preconditions and goals), and
`:action-costs` (``total-cost`` increments are ignored: they do not change which plans are valid). Anything
else a domain uses is rejected with a `PlanningError` that names the requirement, e.g. ":conditional-effects",
so no plan of such a domain is judged wrongly. Malformed text gets one line naming the file and what `pddl`
expected there.

Names are lower-cased because PDDL is case-insensitive (PlanBench's Logistics says LOAD-TRUCK, OBJ).
"""

from __future__ import annotations

import re
import sys
import threading
from functools import lru_cache
from typing import Any

from pddl.core import Domain as PddlDomain
from pddl.core import Problem as PddlProblem
from pddl.logic import base, effects, functions, predicates
from pddl.parser.domain import DomainParser
from pddl.parser.problem import ProblemParser
from pddl.requirements import Requirements

from critiquebench.domains.memo import ObjectMemo
from critiquebench.domains.planning import pddl_grammar
from critiquebench.domains.planning.plain_problem import PlainProblem, read_plain
from critiquebench.domains.planning.strips import DomainModel, Fact, PlanningError, Schema, Task

COST_FUNCTION = "total-cost"
# Declared requirements that change what a plan is (time, preferences): refused before parsing.
REFUSED = (":durative-actions", ":timed-initial-literals", ":preferences", ":constraints", ":duration-inequalities",
           ":continuous-effects")  # fmt: skip
# every requirement `pddl` can parse (its grammar has no :object-fluents, though its enum does)
_ALL = " ".join(f":{r.value}" for r in Requirements if r is not Requirements.OBJECT_FLUENTS)
_COMMENT = re.compile(r";[^\n]*")
_EQUALITIES = ("=", "!=")  # a goal's (in)equality read as a fact (see `_read_with_pddl`)
# a problem's own name, or the domain it names, starting with a digit (see `parse_problem_text`)
_DIGIT_NAME = re.compile(r"(\(\s*(?:problem|:domain)\s+)(\d[^\s()]*)")
# The order of a domain's sections in PDDL's grammar (`pddl` refuses any other); actions and axioms follow.
_SECTION_ORDER = (":requirements", ":types", ":constants", ":predicates", ":functions", ":constraints")
# `pddl` knows no type `object` where a term is typed (`?x - object`, `c - object`): the domain's terms get a
# declared stand-in, read back as the root type.
ROOT = "critiquebench-object"
_OBJECT_TAG = re.compile(r"(?<=\s)-\s+object(?=[\s()])")
# A parser's grammar is analysed once per machine (`pddl_grammar`): one parser of each kind per process, shared by
# the threads in turn (a parse takes milliseconds, and the parsed problems are kept by the domain).
_parsers: dict[str, Any] = {}
_parsing = threading.Lock()


def strip_comments(text: str) -> str:
    """PDDL text without its comments, in lower case (PDDL is case-insensitive)."""
    return _COMMENT.sub("", text).lower()


def normalise(text: str, source: str) -> str:
    """Domain text as `pddl` accepts it: lower case, no comments, its sections in the order PDDL's grammar lists
    them (`pddl` insists; domain files in the wild do not), `object` not declared as a type, and every
    requirement `pddl` knows declared (one this module cannot honour is refused here). Text that is not a
    well-formed `(define ...)` is left for `pddl` to report."""
    text = strip_comments(text)
    parts = _define_parts(text)
    if parts is None:
        return text
    head, sections = parts
    order = {key: i for i, key in enumerate(_SECTION_ORDER)}
    sections.sort(key=lambda section: order.get(_keyword(section), len(order)))  # stable: actions keep theirs
    out = []
    for section in sections:
        key = _keyword(section)
        if key == ":requirements":
            for req in section[1:-1].split()[1:]:
                if req in REFUSED:
                    raise PlanningError(f"{source}: the domain requires {req}, which the validator does not support")
        elif key == ":types":
            out.append(f"(:types {_without_object(section[1:-1].split()[1:])} {ROOT})")
        else:
            out.append(_OBJECT_TAG.sub(f"- {ROOT}", section))
    if not any(_keyword(section) == ":types" for section in sections):
        out.insert(0, f"(:types {ROOT})")
    return f"(define {head} (:requirements {_ALL}) {' '.join(out)})"


def _keyword(section: str) -> str:
    return section[1:].split(None, 1)[0].rstrip(")") if len(section) > 1 else ""


def _define_parts(text: str) -> tuple[str, list[str]] | None:
    """The head `(domain NAME)` and the other top-level sections of `(define ...)`, or None when the text is not
    one balanced `(define ...)` form."""
    start = re.match(r"\s*\(\s*define\b", text)
    if start is None:
        return None
    groups: list[str] = []
    depth, begin = 0, 0
    for i in range(start.end(), len(text)):
        char = text[i]
        if char == "(":
            if depth == 0:
                begin = i
            depth += 1
        elif char == ")":
            if depth == 0:  # the end of (define ...): nothing may follow it
                return (groups[0], groups[1:]) if groups and not text[i + 1 :].strip() else None
            depth -= 1
            if depth == 0:
                groups.append(text[begin : i + 1])
        elif depth == 0 and not char.isspace():
            return None
    return None


def _without_object(tokens: list[str]) -> str:
    """A `:types` list without `object` where it is declared as a name (it stays where it is a parent)."""
    return " ".join(t for i, t in enumerate(tokens) if t != "object" or (i > 0 and tokens[i - 1] == "-"))


def _parse(kind: type, text: str, source: str) -> Any:
    limit = getattr(sys, "tracebacklimit", None)
    try:
        with _parsing:
            parser = _parsers.get(kind.__name__)
            if parser is None:
                parser = _parsers[kind.__name__] = pddl_grammar.parser(kind)
            # pddl's transformer keeps what it read (types, constants, functions) between calls, and a failed
            # parse leaves it "in an unexpected state": each parse starts from a fresh one (same object, which
            # the grammar holds; analysing the grammar again would take 0.1-0.2 s)
            parser._transformer.__init__()
            return parser(text)
    except RecursionError:
        raise PlanningError(f"{source}: malformed PDDL: nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - lark's and pddl's errors: every one is malformed input
        text = str(exc).replace(f"'{ROOT}', ", "").replace(f", '{ROOT}'", "")  # our stand-in is no user's type
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        raise PlanningError(f"{source}: malformed PDDL: {lines[0] if lines else type(exc).__name__}") from None
    finally:  # pddl sets it to 0 while parsing and leaves it so when the parse fails: no traceback would show
        if limit is None:
            sys.__dict__.pop("tracebacklimit", None)
        else:
            sys.tracebacklimit = limit


def _unsupported(word: str, requirement: str, where: str, source: str) -> PlanningError:
    return PlanningError(
        f"{source}: {where} uses {word!r}, which needs requirement {requirement}; the validator supports STRIPS "
        "with typing, constants, equality and negative preconditions only"
    )


def _name(term: Any) -> str:
    """A term as our facts hold it: a variable with its `?`, a constant as it is."""
    return f"?{term.name}" if isinstance(term, base.Variable) else str(term.name)


def _atom(pred: predicates.Predicate) -> Fact:
    return (str(pred.name), *(_name(t) for t in pred.terms))


class _Literals:
    """A conjunction read from a precondition or goal: atoms, negated atoms, (in)equalities."""

    def __init__(self) -> None:
        self.pos: list[Fact] = []
        self.neg: list[Fact] = []
        self.eq: list[tuple[str, str]] = []
        self.neq: list[tuple[str, str]] = []


_CONDITIONS = (
    (base.Or, "or", ":disjunctive-preconditions"),
    (base.Imply, "imply", ":disjunctive-preconditions"),
    (base.ForallCondition, "forall", ":universal-preconditions"),
    (base.ExistsCondition, "exists", ":existential-preconditions"),
    (base.OneOf, "oneof", ":non-deterministic"),
)


def _condition(formula: Any, out: _Literals, where: str, source: str) -> _Literals:
    if formula is None:
        return out
    if isinstance(formula, base.And):
        for part in formula.operands:
            _condition(part, out, where, source)
    elif isinstance(formula, base.Not):
        inner = formula.argument
        if isinstance(inner, predicates.EqualTo):
            out.neq.append((_name(inner.left), _name(inner.right)))
        elif isinstance(inner, predicates.Predicate):
            out.neg.append(_atom(inner))
        else:
            _condition(inner, _Literals(), where, source)  # names the requirement of what it negates, if any
            raise PlanningError(
                f"{source}: {where} negates {inner}, which needs requirement :disjunctive-preconditions; only "
                "negated atoms are supported"
            )
    elif isinstance(formula, predicates.EqualTo):
        out.eq.append((_name(formula.left), _name(formula.right)))
    elif isinstance(formula, predicates.Predicate):
        out.pos.append(_atom(formula))
    else:
        for kind, word, requirement in _CONDITIONS:
            if isinstance(formula, kind):
                raise _unsupported(word, requirement, where, source)
        raise _unsupported(str(formula).split()[0].strip("("), ":numeric-fluents", where, source)
    return out


def _effect(effect: Any, add: list[Fact], delete: list[Fact], where: str, source: str) -> None:
    if effect is None:
        return
    if isinstance(effect, base.And):
        for part in effect.operands:
            _effect(part, add, delete, where, source)
    elif isinstance(effect, base.Not) and isinstance(effect.argument, predicates.Predicate):
        delete.append(_atom(effect.argument))
    elif isinstance(effect, predicates.Predicate):
        add.append(_atom(effect))
    elif isinstance(effect, functions.Increase) and _is_cost(effect.operands[0]):
        return  # action costs: irrelevant to validity
    elif isinstance(effect, effects.When | effects.Forall):
        # forall in an effect is a universal (conditional) effect.
        raise _unsupported("when" if isinstance(effect, effects.When) else "forall", ":conditional-effects", where,
                           source)  # fmt: skip
    elif isinstance(effect, base.OneOf):
        raise _unsupported("oneof", ":non-deterministic", where, source)
    else:
        raise _unsupported(str(effect).split()[0].strip("("), ":numeric-fluents", where, source)


def _is_cost(term: Any) -> bool:
    return isinstance(term, functions.NumericFunction) and str(term.name) == COST_FUNCTION


def _kinds(declared: frozenset[Any]) -> frozenset[str]:
    return frozenset("object" if str(k) == ROOT else str(k) for k in declared)


def _types_of(declared: frozenset[Any]) -> frozenset[str] | None:
    # "object" is the root type: a parameter of type object accepts anything, as if untyped.
    kinds = _kinds(declared)
    return None if not kinds or "object" in kinds else kinds


def parse_domain_text(text: str, source: str) -> DomainModel:
    """A `DomainModel` from domain PDDL; a `PlanningError` naming `source` on anything it cannot use."""
    parsed: PddlDomain = _parse(DomainParser, normalise(text, source), source)
    for function in parsed.functions:
        if str(function.name) != COST_FUNCTION:
            raise _unsupported("increase", ":numeric-fluents", f"function ({function})", source)
    if parsed.derived_predicates:
        raise _unsupported(":derived", ":derived-predicates", "section :derived", source)
    parents = {str(kind): frozenset({str(parent) if parent else "object"}) for kind, parent in parsed.types.items()}
    parents.pop("object", None)
    parents.pop(ROOT, None)
    constants = {str(c.name): _kinds(c.type_tags) for c in parsed.constants}
    preds = {str(p.name): p.arity for p in parsed.predicates}
    schemas = dict(_schema(action, source) for action in sorted(parsed.actions, key=lambda a: str(a.name)))
    _check_variables(schemas, source)
    return DomainModel(str(parsed.name), schemas, parents, constants, preds)


def _schema(action: Any, source: str) -> tuple[str, Schema]:
    name = str(action.name)
    where = f"action {name}"
    params = [(f"?{v.name}", _types_of(v.type_tags)) for v in action.parameters]
    pre = _condition(action.precondition, _Literals(), f"the precondition of {where}", source)
    add: list[Fact] = []
    delete: list[Fact] = []
    _effect(action.effect, add, delete, f"the effect of {where}", source)
    schema = Schema(name, tuple(p for p, _ in params), tuple(t for _, t in params), tuple(pre.pos), tuple(pre.neg),
                    tuple(add), tuple(delete), tuple(pre.eq), tuple(pre.neq))  # fmt: skip
    return name, schema


def _check_variables(schemas: dict[str, Schema], source: str) -> None:
    for s in schemas.values():
        for atom in (*s.pre, *s.neg_pre, *s.add, *s.delete, *(("=", *p) for p in (*s.eq, *s.neq))):
            for arg in atom[1:]:
                if arg.startswith("?") and arg not in s.params:
                    raise PlanningError(f"{source}: action {s.name} uses undeclared parameter {arg}")


def parse_problem_text(text: str, domain: DomainModel, source: str, *, plain: bool = True) -> Task:
    """A `Task` over `domain` from problem PDDL; a `PlanningError` naming `source` on anything unusable.

    A problem of the plain shape is read by `plain_problem.read_plain` (10x faster, the same `Task`); any other,
    or every one with `plain=False`, by the `pddl` package."""
    text = strip_comments(text)
    read = (read_plain(text) if plain else None) or _read_with_pddl(text, source)
    declared: dict[str, frozenset[str]] = dict(domain.constants)
    declared.update(read.objects)
    objects = {obj: domain.closure(kinds) for obj, kinds in declared.items()}
    for fact in (*read.init, *read.goal, *read.neg_goal):
        if fact[0] in _EQUALITIES:
            continue
        unknown = [a for a in fact[1:] if a not in objects]
        if unknown:
            raise PlanningError(f"{source}: fact ({' '.join(fact)}) names undeclared object(s) {unknown}")
        if fact[0] not in domain.predicates:
            raise PlanningError(f"{source}: predicate {fact[0]} is not declared in the domain")
    return Task(domain, read.name, objects, read.init, frozenset(read.goal), frozenset(read.neg_goal),
                goal_order=(*read.goal, *read.neg_goal))  # fmt: skip


def _read_with_pddl(text: str, source: str) -> PlainProblem:
    """What any problem `pddl` can parse says, as the plain reader would say it (equalities in the goal become
    facts: they are fixed by the objects, so one that fails is a fact that never holds, the goal is unreachable
    and the validator names the offending condition)."""
    # PDDL names start with a letter; PlanBench's obfuscated problems are named at random and may start with a
    # digit ("(problem 8kq...)"), which names nothing the plan refers to: read under a stand-in, kept as written
    named = _DIGIT_NAME.search(text)
    if named is not None:
        text = _DIGIT_NAME.sub(lambda m: m.group(1) + "n-" + m.group(2), text)
    parsed: PddlProblem = _parse(ProblemParser, text, source)
    objects = {str(o.name): frozenset(str(t) for t in o.type_tags) for o in parsed.objects}
    init: set[Fact] = set()
    for item in parsed.init:
        if isinstance(item, predicates.Predicate):
            init.add(_atom(item))
        elif isinstance(item, functions.EqualTo) and _is_cost(item.operands[0]):
            continue  # (= (total-cost) 0)
        else:
            raise _unsupported("assign", ":numeric-fluents", f"initial-state item {item}", source)
    goal = _condition(parsed.goal, _Literals(), "the goal", source)
    pos = list(goal.pos)
    pos += [(_EQUALITIES[0], a, b) for a, b in goal.eq if a != b]
    pos += [(_EQUALITIES[1], a, b) for a, b in goal.neq if a == b]
    name = str(parsed.name) if named is None or named.group(1).startswith("(:") else named.group(2)
    return PlainProblem(name, objects, frozenset(init), tuple(pos), tuple(goal.neg))


# ---- parsed once per process ----
# The importer tries a PlanBench file's prompt styles and readers on views of one domain, and the replay that can
# follow it in the same process builds the domain again: each would parse the domain and its 500 problems anew.
# Parsed models and tasks are shared by their text (a Task also keeps the actions it has grounded); neither is
# changed once made.
_TASKS = ObjectMemo(2048)


@lru_cache(maxsize=256)
def shared_domain_model(text: str, source: str) -> DomainModel:
    """`parse_domain_text(text, source)`, parsed once per process (an error is raised again each time)."""
    return parse_domain_text(text, source)


def shared_task(text: str, domain: DomainModel, source: str) -> Task:
    """`parse_problem_text(text, domain, source)`, parsed once per process while `domain` is the same object."""
    return _TASKS.get((domain,), (text, source), lambda: parse_problem_text(text, domain, source))
