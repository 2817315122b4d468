"""Per-phase CPU timers for a study run in this process: where a call's CPU goes (`bench_scale.py --phases`).

`PhaseTimers.install()` wraps the pipeline's phases (the LLM client, ChatOpenAI, LangGraph's steps, the SQLite
checkpointer, the store's cache, attempt and run writes) in timers of the calling thread's CPU time. Phases
nest, and each is charged only its own time (a step's time excludes the LLM call made inside it), so the
phases add up to the CPU of the threads that ran them; `report(calls)` prints them per LLM call, beside the
process's whole CPU. A benchmark aid only: the wrappers are installed on the classes for the process's life.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any


class PhaseTimers:
    def __init__(self) -> None:
        self.cpu: Counter[str] = Counter()
        self.count: Counter[str] = Counter()
        self._local = threading.local()
        self._start = 0.0

    def install(self) -> PhaseTimers:
        import langgraph.pregel.main as pregel
        from langchain_openai import ChatOpenAI
        from langgraph.checkpoint.sqlite import SqliteSaver

        import critiquebench.studies.execute as execute
        from critiquebench.graphs.direct import DirectGraph
        from critiquebench.llm import client
        from critiquebench.llm.client import LLMClient
        from critiquebench.store.cache import CallCache

        self._wrap(execute, "execute_run", "run set-up and finish (connections, claim, state, runs row)")
        self._wrap(LLMClient, "complete", "LLM client: critiquebench's code (key, flight, budget)")
        self._wrap(ChatOpenAI, "invoke", "ChatOpenAI.invoke (langchain-core, openai SDK, httpx)")
        self._wrap(client, "_ask", "ChatOpenAI._generate (langchain-openai, openai SDK, httpx)")  # the client's path
        for name in ("get", "reserve", "unreserve", "answered"):
            self._wrap(CallCache, name, "store: call cache and in-flight markers")
        self._wrap(execute, "_record", "store: attempt rows")
        for name in ("put", "put_writes", "get_tuple"):
            self._wrap(SqliteSaver, name, "LangGraph: SQLite checkpoints")
        stream = pregel.Pregel.stream
        timers = self

        @functools.wraps(stream)
        def timed_stream(graph: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            # a generator: its steps run while the caller iterates, so each resumption is timed
            steps = stream(graph, *args, **kwargs)
            label = "LangGraph: steps (scheduling, channels, the nodes' own work)"
            while True:
                try:
                    item = timers._timed(label, next, steps)
                except StopIteration:
                    return
                yield item

        pregel.Pregel.stream = timed_stream  # type: ignore[method-assign]
        direct_stream = DirectGraph.stream

        @functools.wraps(direct_stream)
        def timed_direct(graph: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            steps = direct_stream(graph, *args, **kwargs)
            while True:
                try:
                    item = timers._timed("steps without LangGraph (the nodes' own work)", next, steps)
                except StopIteration:
                    return
                yield item

        DirectGraph.stream = timed_direct  # type: ignore[method-assign]
        return self

    def start(self) -> None:
        self.cpu.clear()
        self.count.clear()
        self._start = _process_cpu()

    def report(self, calls: int) -> None:
        whole = _process_cpu() - self._start
        timed = sum(self.cpu.values())
        print(f"where a call's CPU goes ({calls} calls; this process: {whole / calls * 1000:.2f} ms per call)")
        for label, seconds in self.cpu.most_common():
            print(f"  {seconds / calls * 1000:6.2f} ms  {label}")
        print(f"  {(whole - timed) / calls * 1000:6.2f} ms  elsewhere (runner, background threads, start-up, GC)")

    def _wrap(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            return self._timed(label, original, *args, **kwargs)

        setattr(owner, name, timed)

    def _timed(self, label: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        stack = self._local.__dict__.setdefault("stack", [])
        start = time.thread_time()
        stack.append(0.0)  # the CPU of phases nested in this one
        try:
            return fn(*args, **kwargs)
        finally:
            spent = time.thread_time() - start
            nested = stack.pop()
            self.cpu[label] += spent - nested
            self.count[label] += 1
            if stack:
                stack[-1] += spent


def _process_cpu() -> float:
    times = os.times()
    return times.user + times.system
