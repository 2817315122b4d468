"""Ground STRIPS semantics: states are frozensets of facts, actions are precondition/add/delete sets.

A fact is a tuple of lower-case names, e.g. ``("on", "a", "b")``. A `Task` keeps the lifted action schemas
and grounds an action only when a plan step asks for it (memoised), so validating a plan costs a few set
operations per step; `ground_all` enumerates the actions that can ever apply, for the planner and candidates.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache

Fact = tuple[str, ...]
State = frozenset[Fact]


class PlanningError(ValueError):
    """A domain or problem that cannot be used: malformed PDDL, unsupported constructs, bad config."""


@dataclass(frozen=True)
class Schema:
    """A lifted action. Atoms are templates whose arguments are parameter names ("?x") or constants."""

    name: str
    params: tuple[str, ...]
    param_types: tuple[str | None, ...]
    pre: tuple[Fact, ...]
    neg_pre: tuple[Fact, ...]
    add: tuple[Fact, ...]
    delete: tuple[Fact, ...]


@dataclass(frozen=True)
class GroundAction:
    name: str
    args: tuple[str, ...]
    pre: frozenset[Fact]
    neg_pre: frozenset[Fact]
    add: frozenset[Fact]
    delete: frozenset[Fact]

    def applicable(self, state: State) -> bool:
        return self.pre <= state and not (self.neg_pre & state)

    def unmet(self, state: State) -> tuple[frozenset[Fact], frozenset[Fact]]:
        """Positive preconditions missing from `state`, and negative ones that hold in it."""
        return self.pre - state, self.neg_pre & state

    def apply(self, state: State) -> State:
        return (state - self.delete) | self.add


@dataclass(frozen=True)
class DomainModel:
    """A parsed domain: its schemas by lower-case name, type parents and predicates no action changes."""

    name: str
    schemas: dict[str, Schema]
    type_parents: dict[str, str | None]
    constants: dict[str, str | None]
    predicates: dict[str, int]

    @property
    def static_predicates(self) -> frozenset[str]:
        changed = {atom[0] for s in self.schemas.values() for atom in (*s.add, *s.delete)}
        return frozenset(self.predicates) - changed


@dataclass(frozen=True)
class Task:
    """One grounded problem: objects (name -> type), initial state and goal, over a `DomainModel`."""

    domain: DomainModel
    name: str
    objects: dict[str, str | None]
    init: State
    goal: frozenset[Fact]
    neg_goal: frozenset[Fact] = frozenset()
    _cache: dict[tuple[str, tuple[str, ...]], GroundAction | None] = field(
        default_factory=dict, compare=False, repr=False, hash=False
    )

    def goal_reached(self, state: State) -> bool:
        return self.goal <= state and not (self.neg_goal & state)

    def is_a(self, obj: str, wanted: str | None) -> bool:
        """Whether object `obj` has type `wanted` (or a subtype); untyped parameters accept any object."""
        if wanted is None or wanted == "object":
            return obj in self.objects
        kind = self.objects.get(obj)
        parents = self.domain.type_parents
        seen: set[str] = set()
        while kind is not None and kind not in seen:
            if kind == wanted:
                return True
            seen.add(kind)
            kind = parents.get(kind)
        return False

    def ground(self, name: str, args: Iterable[str]) -> GroundAction | None:
        """The ground action `name(args)`, or None when the name, arity, objects or types do not fit."""
        key = (name, tuple(args))
        if key not in self._cache:
            self._cache[key] = self._ground(*key)
        return self._cache[key]

    def _ground(self, name: str, args: tuple[str, ...]) -> GroundAction | None:
        schema = self.domain.schemas.get(name)
        if schema is None or len(args) != len(schema.params):
            return None
        if not all(self.is_a(a, t) for a, t in zip(args, schema.param_types, strict=True)):
            return None
        pre, neg, add, delete = (frozenset(_instantiate(atoms, args)) for atoms in _compiled(schema))
        return GroundAction(name, args, pre, neg, add, delete)

    def ground_all(self) -> list[GroundAction]:
        """Every ground action whose static preconditions hold initially (the rest can never apply)."""
        static = self.domain.static_predicates
        out: list[GroundAction] = []
        for schema in self.domain.schemas.values():
            for args in self._candidate_args(schema, static):
                action = self.ground(schema.name, args)
                if action is None:
                    continue
                if all(f in self.init for f in action.pre if f[0] in static) and not any(
                    f in self.init for f in action.neg_pre if f[0] in static
                ):
                    out.append(action)
        return out

    def _candidate_args(self, schema: Schema, static: frozenset[str]) -> Iterator[tuple[str, ...]]:
        # Unary static preconditions (PlanBench's typing facts like (TRUCK ?t)) prune each parameter's domain
        # before the cross product, which keeps Logistics grounding small.
        domains: list[list[str]] = []
        for param, kind in zip(schema.params, schema.param_types, strict=True):
            values = [o for o in sorted(self.objects) if self.is_a(o, kind)]
            for atom in schema.pre:
                if atom[0] in static and len(atom) == 2 and atom[1] == param:
                    values = [o for o in values if (atom[0], o) in self.init]
            domains.append(values)
        return itertools.product(*domains)


_Compiled = tuple[tuple[str, tuple[int | str, ...]], ...]


@cache
def _compiled(schema: Schema) -> tuple[_Compiled, _Compiled, _Compiled, _Compiled]:
    """Atoms with parameters replaced by their argument positions, so grounding is tuple indexing."""
    index = {p: i for i, p in enumerate(schema.params)}

    def comp(atoms: tuple[Fact, ...]) -> _Compiled:
        return tuple((a[0], tuple(index.get(x, x) for x in a[1:])) for a in atoms)

    return comp(schema.pre), comp(schema.neg_pre), comp(schema.add), comp(schema.delete)


def _instantiate(atoms: _Compiled, args: tuple[str, ...]) -> list[Fact]:
    return [(pred, *[args[x] if type(x) is int else x for x in slots]) for pred, slots in atoms]
