"""A scheme's graph as plain data (`Blueprint`), and stepped by hand without LangGraph: how a replay runs.

The built-in schemes describe their graph as a `Blueprint`: the calls a LangGraph `StateGraph` takes
(`add_node`, `add_edge`, `add_conditional_edges`), recorded. `blueprint.graph()` makes the StateGraph of them
(importing LangGraph then), which is what `Scheme(...)`, `build_graph` and `compiled` return, so drawing,
checkpointed runs and plug-ins see a StateGraph as before. Importing the schemes no longer imports LangGraph
(about 1 s of CPU): a study whose runs are all copied from finished ones, or a replay, starts without it.

A replay's every call is answered by the call cache (`--replay`, or a study imported from recorded runs), so a
run it interrupts is redone from the start at no cost: it needs no per-step checkpoint. LangGraph's loop
(executor threads, callbacks, a checkpoint per step, its set-up per run) cost about 9 ms of CPU a run against
the 1-2 ms of the nodes' own work (prompt, cache look-up, parse, validation) on GPT-4's 500 one-shot
Blocksworld answers, so `critiquebench.studies.execute` steps such runs with `DirectGraph.stream`: the same
node functions, edges and state updates as the compiled graph, in the same order.

Only graphs over `RunState` whose conditional edges read the decision a node wrote (`graphs.state.route`) are
stepped so (`graphs.direct(spec)` is None otherwise, e.g. a plug-in returning its own StateGraph, or the intrinsic
scheme's state with its own reducer): such runs go through LangGraph.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from critiquebench.graphs.state import route
from critiquebench.nodes.context import END, RunContext, RunState, merge_past

if TYPE_CHECKING:
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph

START = "__start__"  # LangGraph's name of a graph's entry (END, its exit, is in nodes.context)

Node = Callable[[Any, Any], Any]


@dataclass
class Blueprint:
    """A scheme's graph as the StateGraph calls that build it (see the module docstring)."""

    state_schema: type
    context_schema: type = RunContext
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)
    branches: dict[str, tuple[Callable[..., str], dict[str, str]]] = field(default_factory=dict)

    def add_node(self, name: str, func: Node) -> None:
        self.nodes[name] = func

    def add_edge(self, source: str, target: str) -> None:
        self.edges.append((source, target))

    def add_conditional_edges(self, source: str, path: Callable[..., str], ends: Mapping[str, str]) -> None:
        self.branches[source] = (path, dict(ends))

    def graph(self) -> StateGraph:
        """The LangGraph StateGraph these calls build."""
        from langgraph.graph import StateGraph

        graph = StateGraph(self.state_schema, context_schema=self.context_schema)
        for name, func in self.nodes.items():
            graph.add_node(name, func)
        for source, target in self.edges:
            graph.add_edge(source, target)
        for source, (path, ends) in self.branches.items():
            graph.add_conditional_edges(source, path, ends)
        return graph

    def compile(self) -> CompiledStateGraph:
        return self.graph().compile()


@dataclass(frozen=True)
class Runtime:
    """What nodes read of LangGraph's `Runtime` (its `context`), when stepped without LangGraph."""

    context: RunContext


@dataclass(frozen=True)
class DirectGraph:
    """A scheme graph's nodes and edges, to step without LangGraph."""

    nodes: dict[str, Node]
    edges: dict[str, str]  # node -> the one node after it
    branches: dict[str, dict[str, str]]  # node -> (decision written in `next` -> node)
    entry: str

    def stream(self, state: Mapping[str, Any], ctx: RunContext, limit: int) -> Iterator[tuple[str, Any]]:
        """(node, its update) for each step from `state` (a fresh run's `initial_state`) until END, applying
        each update as the graph's channels do (`past` merged by round, every other key replaced). More than
        `limit` steps raise LangGraph's GraphRecursionError, as its loop does. An update is applied when the next
        step is asked for: a caller may change it first (a resumed live run puts its stored usage in)."""
        runtime = Runtime(ctx)
        current = dict(state)
        node, steps = self.entry, 0
        while node != END:
            if steps >= limit:
                from langgraph.errors import GraphRecursionError

                raise GraphRecursionError(f"Recursion limit of {limit} reached without hitting a stop condition.")
            steps += 1
            update = self.nodes[node](dict(current), runtime)
            yield node, update
            for key, value in (update or {}).items():
                current[key] = merge_past(current.get(key), value) if key == "past" else value
            node = self.branches[node][current["next"]] if node in self.branches else self.edges.get(node, END)


def stepper(plan: Any) -> DirectGraph | None:
    """A scheme's `Blueprint` as a `DirectGraph`, or None when it is not a blueprint this stepper knows (see the
    module docstring): such runs go through LangGraph. `graphs.direct(spec)` gives it for a scheme spec."""
    if not isinstance(plan, Blueprint) or plan.state_schema is not RunState:
        return None
    for func in plan.nodes.values():
        if list(inspect.signature(func).parameters) != ["state", "runtime"]:
            return None
    edges: dict[str, str] = {}
    for source, target in plan.edges:
        if source in edges or source in plan.branches:  # a fan-out: parallel steps
            return None
        edges[source] = target
    if any(path is not route for path, _ in plan.branches.values()) or START not in edges:
        return None
    entry = edges.pop(START)
    return DirectGraph(dict(plan.nodes), edges, {s: ends for s, (_, ends) in plan.branches.items()}, entry)
