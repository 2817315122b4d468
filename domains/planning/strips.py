"""Ground STRIPS semantics: states are frozensets of facts, actions are precondition/add/delete sets.

A fact is a tuple of lower-case names, e.g. ``("on", "a", "b")``. A `Task` keeps the lifted action schemas
and grounds an action only when a plan step asks for it (memoised), so validating a plan costs a few set
operations per step; `ground_all` enumerates the actions that can ever apply, for the planner and candidates.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

Fact = tuple[str, ...]
State = frozenset[Fact]
# The ground actions `ground_all` tries at most. The largest task of the shipped and AutoPlanBench datasets tries
# 4,716 (floortile); an action of 6 parameters over 40 objects would try 4 billion and fill the memory.
MAX_GROUND_ACTIONS = 200_000


MESSAGE_LIMIT = 2000  # characters of an error message shown; the rest is counted, not echoed


class PlanningError(ValueError):
    """A domain or problem that cannot be used: malformed PDDL, unsupported constructs, bad config. The message is
    cut at `MESSAGE_LIMIT` characters: a parser quoting a problem of a million objects would print megabytes."""

    def __init__(self, message: object = "", *args: object) -> None:
        text = str(message)
        if len(text) > MESSAGE_LIMIT:  # the end often says what is wrong ("... is declared twice"): keep it
            head, tail = MESSAGE_LIMIT * 3 // 4, MESSAGE_LIMIT // 4
            text = f"{text[:head]} … ({len(text) - head - tail:,} characters left out) … {text[-tail:]}"
        super().__init__(text, *args)


@dataclass(frozen=True)
class Schema:
    """A lifted action. Atoms are templates whose arguments are parameter names ("?x") or constants."""

    name: str
    params: tuple[str, ...]
    param_types: tuple[frozenset[str] | None, ...]  # allowed types (``either``); None accepts any object
    pre: tuple[Fact, ...]
    neg_pre: tuple[Fact, ...]
    add: tuple[Fact, ...]
    delete: tuple[Fact, ...]
    eq: tuple[tuple[str, str], ...] = ()  # (= x y) preconditions
    neq: tuple[tuple[str, str], ...] = ()  # (not (= x y)) preconditions


@dataclass(frozen=True)
class GroundAction:
    name: str
    args: tuple[str, ...]
    pre: frozenset[Fact]
    neg_pre: frozenset[Fact]
    add: frozenset[Fact]
    delete: frozenset[Fact]
    # Equality preconditions are fixed by the arguments: the ones that fail, as ("=", x, y) facts that are
    # false (required true) and true (required false). An action with any can never apply.
    false_eq: frozenset[Fact] = frozenset()
    true_neq: frozenset[Fact] = frozenset()

    def applicable(self, state: State) -> bool:
        return self.pre <= state and not (self.neg_pre & state) and not (self.false_eq or self.true_neq)

    def unmet(self, state: State) -> tuple[frozenset[Fact], frozenset[Fact]]:
        """Positive preconditions missing from `state`, and negative ones that hold in it."""
        return (self.pre - state) | self.false_eq, (self.neg_pre & state) | self.true_neq

    def apply(self, state: State) -> State:
        return (state - self.delete) | self.add


@dataclass(frozen=True)
class DomainModel:
    """A parsed domain: schemas by lower-case name, each type's parent types, constants with their declared
    types, predicate arities."""

    name: str
    schemas: dict[str, Schema]
    type_parents: dict[str, frozenset[str]]
    constants: dict[str, frozenset[str]]
    predicates: dict[str, int]

    def closure(self, kinds: frozenset[str]) -> frozenset[str]:
        """`kinds` with all their ancestor types (a type hierarchy may have cycles in bad files: tolerated)."""
        seen: set[str] = set()
        todo = list(kinds)
        while todo:
            kind = todo.pop()
            if kind not in seen:
                seen.add(kind)
                todo.extend(self.type_parents.get(kind, ()))
        return frozenset(seen)

    @cached_property
    def built_actions(self) -> dict[tuple[str, tuple[str, ...]], GroundAction]:
        """Ground actions by (name, args), shared by every problem of the domain: what an action requires and
        does follows from its schema and arguments alone (`Task.ground` checks the problem's objects and types
        first), so the problems over the same objects (PlanBench's 500 Blocksworld problems have two object sets)
        build each action once. Cleared past `MAX_GROUND_ACTIONS` entries."""
        return {}

    def __getstate__(self) -> dict[str, Any]:
        # the shared actions are a cache, rebuilt where the domain is unpickled (a Ray worker), not shipped
        return {k: v for k, v in self.__dict__.items() if k != "built_actions"}

    @cached_property  # a parsed domain never changes; the plan reader asks for every line it reads
    def static_predicates(self) -> frozenset[str]:
        changed = {atom[0] for s in self.schemas.values() for atom in (*s.add, *s.delete)}
        return frozenset(self.predicates) - changed


@dataclass(frozen=True)
class Task:
    """One grounded problem: objects (name -> every type it has, ancestors included), initial state and goal."""

    domain: DomainModel
    name: str
    objects: dict[str, frozenset[str]]
    init: State
    goal: frozenset[Fact]
    neg_goal: frozenset[Fact] = frozenset()
    # the goal's literals in the order the problem writes them (VAL's repair advice lists unmet goals so); may be ()
    goal_order: tuple[Fact, ...] = field(default=(), compare=False, repr=False, hash=False)
    _cache: dict[tuple[str, tuple[str, ...]], GroundAction | None] = field(
        default_factory=dict, compare=False, repr=False, hash=False
    )

    @property
    def stated_goal(self) -> frozenset[Fact] | tuple[Fact, ...]:
        """The goal's facts as the problem states them, for rendering: a fact the problem states twice kept twice
        (`(and (on a b) (on a b))` is legal PDDL, and PlanBench's statements render every conjunct of the goal,
        `pddl_to_text.py:43`); the set itself where nothing is repeated. Judging uses `goal`, a set."""
        stated = tuple(f for f in self.goal_order if f in self.goal)
        return stated if len(stated) > len(self.goal) else self.goal

    def goal_reached(self, state: State) -> bool:
        return self.goal <= state and not (self.neg_goal & state)

    def is_a(self, obj: str, wanted: frozenset[str] | None) -> bool:
        """Whether object `obj` has one of the `wanted` types (or a subtype); None accepts any object."""
        kinds = self.objects.get(obj)
        if kinds is None:
            return False
        return wanted is None or not kinds.isdisjoint(wanted)

    def ground(self, name: str, args: Iterable[str]) -> GroundAction | None:
        """The ground action `name(args)`, or None when the name, arity, objects or types do not fit."""
        key = (name, tuple(args))
        if key not in self._cache:
            self._cache[key] = self._ground(*key)
        return self._cache[key]

    def ground_any(self, name: str, args: tuple[str, ...]) -> GroundAction:
        """`name(args)` with any names as arguments, as VAL executes a plan on an untyped domain: an object the
        problem lacks is one of which nothing holds. For replaying PlanBench's verdicts only (`planbench_reading`);
        the sound validator rejects such a step (`ground`). The name and arity must be the schema's."""
        schema = self.domain.schemas[name]
        pre, neg, add, delete = (frozenset(_instantiate(atoms, args)) for atoms in _compiled(schema))
        return GroundAction(name, args, pre, neg, add, delete)

    def _ground(self, name: str, args: tuple[str, ...]) -> GroundAction | None:
        schema = self.domain.schemas.get(name)
        if schema is None or len(args) != len(schema.params):
            return None
        objects = self.objects  # `is_a` inlined: grounding every action of a problem checks each argument
        for arg, wanted in zip(args, schema.param_types, strict=True):
            kinds = objects.get(arg)
            if kinds is None or (wanted is not None and kinds.isdisjoint(wanted)):
                return None
        built = self.domain.built_actions
        action = built.get((name, args))
        if action is None:
            if len(built) >= MAX_GROUND_ACTIONS:
                built.clear()
            action = built[name, args] = _build(name, schema, args)
        return action

    def ground_all(self) -> list[GroundAction]:
        """Every ground action whose static preconditions hold initially (the rest can never apply); a
        `PlanningError` naming the largest action when there would be more than `MAX_GROUND_ACTIONS` to try."""
        static = self.domain.static_predicates
        candidates = {name: self._candidate_domains(s, static) for name, s in self.domain.schemas.items()}
        sizes = {name: math.prod(len(d) for d in domains) for name, domains in candidates.items()}
        if sum(sizes.values()) > MAX_GROUND_ACTIONS:
            name = max(sizes, key=lambda n: sizes[n])
            raise PlanningError(
                f"problem {self.name}: action {name!r} of {len(self.domain.schemas[name].params)} parameters has "
                f"{sizes[name]:,} ground actions over {len(self.objects):,} objects, more than the "
                f"{MAX_GROUND_ACTIONS:,} the built-in planner grounds: give the problems' plans in the folder "
                "(plans/NAME.plan) or an action with fewer parameters"
            )
        out: list[GroundAction] = []
        init = self.init
        for schema in self.domain.schemas.values():
            for args in itertools.product(*candidates[schema.name]):
                action = self.ground(schema.name, args)
                if action is None:
                    continue
                if action.false_eq or action.true_neq:
                    continue
                # without static predicates (Blocksworld) every action passes: skip the per-fact scans
                if static and (
                    any(f not in init for f in action.pre if f[0] in static)
                    or any(f in init for f in action.neg_pre if f[0] in static)
                ):
                    continue
                out.append(action)
        return out

    def _candidate_domains(self, schema: Schema, static: frozenset[str]) -> list[list[str]]:
        """The objects each parameter may take; the ground actions to try are their cross product."""
        # Unary static preconditions (PlanBench's typing facts like (TRUCK ?t)) prune each parameter's domain
        # before the cross product, which keeps Logistics grounding small.
        domains: list[list[str]] = []
        for param, kind in zip(schema.params, schema.param_types, strict=True):
            values = [o for o in sorted(self.objects) if self.is_a(o, kind)]
            for atom in schema.pre:
                if atom[0] in static and len(atom) == 2 and atom[1] == param:
                    values = [o for o in values if (atom[0], o) in self.init]
            domains.append(values)
        return domains


_Compiled = tuple[tuple[str, tuple[int | str, ...]], ...]


@cache
def _compiled(schema: Schema) -> tuple[_Compiled, _Compiled, _Compiled, _Compiled]:
    """Atoms with parameters replaced by their argument positions, so grounding is tuple indexing."""
    index = {p: i for i, p in enumerate(schema.params)}

    def comp(atoms: tuple[Fact, ...]) -> _Compiled:
        return tuple((a[0], tuple(index.get(x, x) for x in a[1:])) for a in atoms)

    return comp(schema.pre), comp(schema.neg_pre), comp(schema.add), comp(schema.delete)


def _build(name: str, schema: Schema, args: tuple[str, ...]) -> GroundAction:
    """The ground action `name(args)` of `schema` (the arguments' number and types already checked)."""
    c_pre, c_neg, c_add, c_delete = _compiled(schema)
    pre, neg = frozenset(_instantiate(c_pre, args)), frozenset(_instantiate(c_neg, args))
    add, delete = frozenset(_instantiate(c_add, args)), frozenset(_instantiate(c_delete, args))
    if not (schema.eq or schema.neq):
        return GroundAction(name, args, pre, neg, add, delete)
    eq = _instantiate(tuple(("=", p) for p in _slots(schema, schema.eq)), args)
    neq = _instantiate(tuple(("=", p) for p in _slots(schema, schema.neq)), args)
    false_eq = frozenset(f for f in eq if f[1] != f[2])
    true_neq = frozenset(f for f in neq if f[1] == f[2])
    return GroundAction(name, args, pre, neg, add, delete, false_eq, true_neq)


def _slots(schema: Schema, pairs: tuple[tuple[str, str], ...]) -> list[tuple[int | str, ...]]:
    index = {p: i for i, p in enumerate(schema.params)}
    return [tuple(index.get(x, x) for x in pair) for pair in pairs]


def _instantiate(atoms: _Compiled, args: tuple[str, ...]) -> list[Fact]:
    return [(pred, *[args[x] if type(x) is int else x for x in slots]) for pred, slots in atoms]
