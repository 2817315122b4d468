"""A small built-in planner: shortest plans by breadth-first search or A*, with a greedy fallback.

Breadth-first search is exact and quick for PlanBench-sized Blocksworld (up to ~7 blocks) and Mini-Grid; for
Logistics with one truck per city and one airplane, A* with an admissible bound (`logistics_bound`) proves
plans shortest up to the intrinsic self-critique paper's Logistics-hard sizes. Other large tasks use lazy
greedy best-first search with the additive relaxed-plan heuristic (valid, not shortest). Ties break on
insertion order over a sorted action list, so the plan is the same on every run.
"""

from __future__ import annotations

import functools
import heapq
from collections import deque
from collections.abc import Callable, Iterable
from itertools import count

from critiquebench.domains.memo import ObjectMemo
from critiquebench.domains.planning.logistics_bound import logistics_bound
from critiquebench.domains.planning.strips import Fact, GroundAction, PlanningError, State, Task

BFS_STATE_BUDGET = 20_000
BFS_MAX_ACTIONS = 200  # 6-block Blocksworld has 72 ground actions; larger tasks go straight to greedy search
GBFS_STATE_BUDGET = 200_000
# Enough for every generated Blocksworld (up to 7 blocks) and Mini-Grid problem, and (by A*) Logistics-hard.
OPTIMAL_STATE_BUDGET = 400_000
_INF = float("inf")


# Tasks are shared per process (`pddl_io.shared_task`): a study's many-shot prompts show the same pool's examples to
# every instance, and each domain object (a run's, then `prompt`'s) would search their plans again.
_OPTIMAL = ObjectMemo(2048)


def optimal_plan(task: Task, budget: int = OPTIMAL_STATE_BUDGET) -> list[GroundAction] | None:
    """A shortest plan, or None when the search needs more than `budget` states: A* where an admissible bound
    is known for the domain (Logistics), else breadth-first search. Searched once per task and budget."""
    found = _OPTIMAL.get((task,), budget, lambda: _optimal(task, budget))
    return None if found is None else list(found)


def _optimal(task: Task, budget: int) -> tuple[GroundAction, ...] | None:
    bound = logistics_bound(task)
    if bound is not None:
        found = _astar(task, _Space(task), bound, budget)
    else:
        found = _bfs(task, _Space(task), budget)
    return None if found is None else tuple(found)


# Plans found, per task object as `_OPTIMAL`: each of PlanBench's eight task domains built on one planning domain
# (a study of several tasks, `prompt` after a run) asked the planner for the same problem's plan again (Logistics,
# which ships no optimal plans: ~0.5 s of search a problem each time).
_FOUND = ObjectMemo(2048)


def find_plan(task: Task, bfs_budget: int = BFS_STATE_BUDGET) -> list[GroundAction]:
    """A plan for `task`: optimal for small tasks (breadth-first search within its budget), else greedy. Searched
    once per task and budget."""
    return list(_FOUND.get((task,), bfs_budget, lambda: tuple(_find_plan(task, bfs_budget))))


def _find_plan(task: Task, bfs_budget: int) -> list[GroundAction]:
    space = _Space(task)
    plan = _bfs(task, space, bfs_budget) if len(space.actions) <= BFS_MAX_ACTIONS else None
    if plan is None:
        plan = _gbfs(task, space, GBFS_STATE_BUDGET)
    if plan is None:
        raise PlanningError(f"no plan found for problem {task.name} within the search budget")
    return plan


class _Space:
    """Ground actions indexed by precondition, for fast successors and the additive heuristic."""

    def __init__(self, task: Task) -> None:
        self.actions = sorted(task.ground_all(), key=lambda a: (a.name, a.args))
        self.by_pre: dict[Fact, list[int]] = {}
        self.trigger: dict[Fact, list[int]] = {}
        self.free: list[int] = []
        static = task.domain.static_predicates
        for i, action in enumerate(self.actions):
            for fact in action.pre:
                self.by_pre.setdefault(fact, []).append(i)
            # Index each action under one precondition that can change, so a state only wakes actions that
            # might apply (static facts such as (TRUCK t0) hold everywhere and would wake everything).
            dynamic = [f for f in action.pre if f[0] not in static]
            if dynamic or action.pre:
                self.trigger.setdefault(min(dynamic or action.pre), []).append(i)
            else:
                self.free.append(i)
        # `GroundAction.applicable` without its call: `ground_all` leaves out actions whose equalities fail, so
        # what is left to test is the preconditions (the searches' innermost loop: a third of their CPU)
        self._pre = [a.pre for a in self.actions]
        self._neg = [a.neg_pre or None for a in self.actions]
        self._pre_counts = [len(a.pre) for a in self.actions]

    @functools.cached_property
    def bits(self) -> _Bits:
        """The actions over facts as bits of an int, for breadth-first search (`_bfs`)."""
        return _Bits(self)

    def successors(self, state: State) -> list[GroundAction]:
        found = set(self.free)
        trigger = self.trigger
        for fact in state:
            if fact in trigger:
                found.update(trigger[fact])
        pre, neg, actions = self._pre, self._neg, self.actions
        return [actions[i] for i in sorted(found) if pre[i] <= state and not (neg[i] and neg[i] & state)]

    def h_add(self, state: State, goal: frozenset[Fact]) -> float:
        """Additive relaxed cost of `goal` (deletes ignored), by a Dijkstra sweep; inf if unreachable."""
        cost: dict[Fact, float] = dict.fromkeys(state, 0.0)
        waiting = self._pre_counts.copy()
        summed = [0.0] * len(self.actions)
        heap = [(0.0, f) for f in state]
        for i in self.free:
            heap += [(1.0, g) for g in self.actions[i].add]
        heapq.heapify(heap)
        done: set[Fact] = set()
        left = len(goal)
        while heap and left:
            c, fact = heapq.heappop(heap)
            if fact in done:
                continue
            done.add(fact)
            cost[fact] = c
            left -= fact in goal
            for i in self.by_pre.get(fact, ()):
                waiting[i] -= 1
                summed[i] += c
                if waiting[i] == 0:
                    ac = summed[i] + 1
                    for g in self.actions[i].add:
                        if g not in done and ac < cost.get(g, _INF):
                            cost[g] = ac
                            heapq.heappush(heap, (ac, g))
        if left:
            return float("inf")
        return sum(cost[g] for g in goal)


class _Bits:
    """`_Space` with states as ints, one bit a fact: hashing, comparing and applying an action cost a few integer
    operations instead of a frozenset of tuples, which makes breadth-first search several times quicker (7-block
    Blocksworld visits ~10^5 states). Successors come in the same order as `_Space.successors`, so the search and
    its plan are the same."""

    def __init__(self, space: _Space) -> None:
        index: dict[Fact, int] = {}

        def mask(facts: Iterable[Fact]) -> int:
            out = 0
            for fact in facts:
                out |= 1 << index.setdefault(fact, len(index))
            return out

        self.space = space
        self.pre = [mask(a.pre) for a in space.actions]  # `ground_all` left out actions whose equalities fail
        self.neg = [mask(a.neg_pre) for a in space.actions]
        self.keep = [~mask(a.delete) for a in space.actions]
        self.add = [mask(a.add) for a in space.actions]
        self.free = frozenset(space.free)
        self.trigger = [(mask([fact]), tuple(acts)) for fact, acts in space.trigger.items()]
        self.index = index

    def state(self, state: State) -> int:
        out = 0
        for fact in state:
            out |= 1 << self.index.setdefault(fact, len(self.index))
        return out

    def goal(self, task: Task) -> tuple[int, int]:
        """The masks of the goal's facts and of its negated facts. A goal fact that no action adds and the
        start lacks never holds: its mask is -1, which no state (a non-negative int) covers."""
        goal = neg = 0
        for fact in task.goal:
            bit = self.index.get(fact)
            goal |= -1 if bit is None else 1 << bit
        for fact in task.neg_goal:
            bit = self.index.get(fact)
            neg |= 0 if bit is None else 1 << bit
        return goal, neg

    def successors(self, state: int) -> list[tuple[int, int]]:
        """(action index, next state) of each action applicable in `state`, in action order."""
        found = set(self.free)
        for bit, acts in self.trigger:
            if state & bit:
                found.update(acts)
        pre, neg, keep, add = self.pre, self.neg, self.keep, self.add
        return [(i, (state & keep[i]) | add[i]) for i in sorted(found)
                if state & pre[i] == pre[i] and not state & neg[i]]  # fmt: skip


def _bfs(task: Task, space: _Space, budget: int) -> list[GroundAction] | None:
    bits = space.bits
    start = bits.state(task.init)
    goal, neg_goal = bits.goal(task)
    parents: dict[int, tuple[int, int] | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        if state & goal == goal and not state & neg_goal:
            steps: list[GroundAction] = []
            link = parents[state]
            while link is not None:
                state, action = link
                steps.append(space.actions[action])
                link = parents[state]
            return steps[::-1]
        if len(parents) > budget:
            return None
        for action, nxt in bits.successors(state):
            if nxt not in parents:
                parents[nxt] = (state, action)
                queue.append(nxt)
    raise PlanningError(f"problem {task.name} is unsolvable")


def _astar(task: Task, space: _Space, h: Callable[[State], int], budget: int) -> list[GroundAction] | None:
    """A* with an admissible (not necessarily consistent) `h`: a state is expanded again when reached by a
    shorter path, so the first goal taken off the queue is at the shortest distance. Ties prefer deeper
    states, which with a tight bound walks almost straight to the goal."""
    best: dict[State, int] = {task.init: 0}
    parents: dict[State, tuple[State, GroundAction] | None] = {task.init: None}
    tie = count()
    heap = [(h(task.init), 0, next(tie), task.init)]
    while heap:
        _f, depth, _t, state = heapq.heappop(heap)
        g = -depth
        if g > best[state]:
            continue  # a stale entry: the state was reached more cheaply since
        if task.goal_reached(state):
            return _path(parents, state)
        if len(best) > budget:
            return None
        for action in space.successors(state):
            nxt = action.apply(state)
            if g + 1 < best.get(nxt, g + 2):
                best[nxt] = g + 1
                parents[nxt] = (state, action)
                heapq.heappush(heap, (g + 1 + h(nxt), -(g + 1), next(tie), nxt))
    raise PlanningError(f"problem {task.name} is unsolvable")


def _gbfs(task: Task, space: _Space, budget: int) -> list[GroundAction] | None:
    # Lazy (deferred) evaluation: children are queued under their parent's heuristic value and evaluated only
    # when expanded, which saves one relaxed-plan sweep per generated state.
    parents: dict[State, tuple[State, GroundAction] | None] = {task.init: None}
    tie = count()
    heap = [(0.0, next(tie), task.init)]
    while heap and len(parents) <= budget:
        _h, _t, state = heapq.heappop(heap)
        if task.goal_reached(state):
            return _path(parents, state)
        h = space.h_add(state, task.goal)
        if h == float("inf"):
            continue
        for action in space.successors(state):
            nxt = action.apply(state)
            if nxt not in parents:
                parents[nxt] = (state, action)
                heapq.heappush(heap, (h, next(tie), nxt))
    return None


def _path(parents: dict[State, tuple[State, GroundAction] | None], state: State) -> list[GroundAction]:
    plan: list[GroundAction] = []
    link = parents[state]
    while link is not None:
        state, action = link
        plan.append(action)
        link = parents[state]
    return plan[::-1]
