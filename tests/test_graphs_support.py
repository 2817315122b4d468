"""A scripted "model" for the scheme graph tests: replies chosen by prompt content, through the real server.

Generation calls are recognised by their base prompt; the attempt number is the count of assistant turns
(iterative schemes) plus how often these exact messages were asked before (the server cannot see sample
indices, but the cache makes a repeat of identical messages a new sample). Critic calls are the rest: the
answer being judged is found in the prompt, and the critic policy decides the verdict. No tests here.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

from critiquebench.domains.contract import Domain, Instance

Critic = Callable[[bool, int], bool]  # (answer is correct, how often this critic prompt was asked) -> says valid


def truthful(correct: bool, occurrence: int) -> bool:
    return correct


def always_yes(correct: bool, occurrence: int) -> bool:
    return True


def always_no(correct: bool, occurrence: int) -> bool:
    return False


REVISED = "\nThe clean plan:\n"  # one per revise step of intrinsic self-critique (001:420)


class ScriptedModel:
    """`plan` lists the answer of attempt 1, 2, ...: "c" a correct answer, an int j the j-th distinct wrong
    one; attempts past the end repeat the last entry."""

    def __init__(
        self,
        instances: Sequence[tuple[Domain, Instance]],
        plan: Sequence[str | int] = (0, 1, "c"),
        critic: Critic = truthful,
    ) -> None:
        self.plan, self.critic = list(plan), critic
        self._by_prompt = {_key(d.prompt(i, style)): (d, i) for d, i in instances for style in (None, "pddl", "refine")}
        self._by_text = {
            d.prompt(i, "pddl")[0]["content"]: (d, i) for d, i in instances if hasattr(d, "revise")
        }  # planning domains' B.1 prompts, which intrinsic's revise steps extend
        self._answers: dict[str, bool] = {}
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()
        self.generations = self.critiques = 0

    def __call__(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        with self._lock:
            raw = json.dumps(messages, sort_keys=True)
            occurrence = self._seen.get(raw, 0)
            self._seen[raw] = occurrence + 1
            for size in (1, 2):
                found = self._by_prompt.get(_key(messages[:size]))
                if found is not None:
                    self.generations += 1
                    turns = sum(m["role"] == "assistant" for m in messages)
                    return self._answer(*found, turns + occurrence)
            if len(messages) == 1:  # intrinsic's Revise-Prompt: the planner prompt with plans and critiques appended
                text = messages[0]["content"]
                found = next((v for k, v in self._by_text.items() if text.startswith(k)), None)
                if found is not None:
                    self.generations += 1
                    return self._answer(*found, text.count(REVISED) + occurrence)
            self.critiques += 1
            text = messages[-1]["content"]
            judged = max((a for a in self._answers if a in text), key=len, default=None)
            says = self.critic(bool(judged is not None and self._answers[judged]), occurrence)
            return critic_reply(text, says)

    def _answer(self, domain: Domain, instance: Instance, attempt: int) -> str:
        step = self.plan[min(attempt, len(self.plan) - 1)]
        text = correct_answer(domain, instance) if step == "c" else wrong_answer(domain, instance, int(step))
        self._answers[text] = step == "c"
        return text


def _key(messages: Sequence[dict[str, Any]]) -> str:
    return json.dumps(list(messages), sort_keys=True)


def correct_answer(domain: Domain, instance: Instance) -> str:
    if domain.name == "game24":
        from critiquebench.domains.arith import solve

        return f"{solve(instance.data['numbers'])}\n[ANSWER END]"
    if domain.name == "coloring":
        return _coloring_text(_proper_coloring(instance))
    return domain.candidate(instance, "correct", random.Random(0))  # planning


def wrong_answer(domain: Domain, instance: Instance, j: int) -> str:
    """The j-th distinct wrong (but well-formed) answer of this instance."""
    if domain.name == "game24":
        a, b, c, d = instance.data["numbers"]
        wrong = []
        for ops in itertools.product("+-*", repeat=3):
            text = f"(({a} {ops[0]} {b}) {ops[1]} {c}) {ops[2]} {d}"
            if not domain.verify(instance, text).valid:
                wrong.append(f"{text}\n[ANSWER END]")
        return wrong[j]
    if domain.name == "coloring":  # the correct colouring with one edge made conflicting
        seen: dict[str, str] = {}
        for u, v in instance.data["edges"]:
            colors = list(_proper_coloring(instance))
            colors[u] = colors[v]
            text = _coloring_text(colors)
            seen.setdefault(domain.canonical(instance, text) or "", text)
        return list(seen.values())[j]
    plans: dict[str, str] = {}  # planning: distinct invalid plans of the domain's own candidate kinds
    for seed in range(j + 5):
        for kind in ("non_goal_reaching", "inexecutable", "random"):
            text = domain.candidate(instance, kind, random.Random(seed))
            if not domain.verify(instance, text).valid:
                plans.setdefault(domain.canonical(instance, text) or text, text)
    return list(plans.values())[j]


def _proper_coloring(instance: Instance) -> list[int]:
    from critiquebench.domains.coloring import color_graph

    colors = color_graph(instance.data["n"], [tuple(e) for e in instance.data["edges"]], instance.data["k"])
    assert colors is not None
    return colors


def _coloring_text(colors: Sequence[int]) -> str:
    return "\n".join(f"{v}: Color{c + 1}" for v, c in enumerate(colors)) + "\n[ANSWER END]"


def critic_reply(prompt: str, says_valid: bool) -> str:
    """A verdict in the form the domain's verifier prompt asks for."""
    if "Verifier confirmed success." in prompt:  # graph coloring's LLM verifier
        return "Verifier confirmed success." if says_valid else "Vertex 0 and vertex 1 share a color."
    if "Plan is valid." in prompt:  # planning
        return "Plan is valid." if says_valid else "Plan is invalid. The first action cannot be executed."
    verdict = {
        "feedback": "" if says_valid else "The expression does not evaluate to 24.",
        "correct": says_valid,
    }
    return json.dumps(verdict)
