"""What a study will cost before it runs (`run --dry-run`, `verify-study --dry-run`): no LLM call is made.

Calls are counted as the client would key them (model, endpoint, messages, sampling parameters, sample), so
draws that schemes share (standard's answer is every iterative scheme's first round; self-consistency and
sampling at one temperature draw the same samples; every trial repeats trial 0's calls) count once, and calls
already in the store's cache count zero. First-round prompts are known exactly; later rounds depend on the
answers, so they count as new calls:

- max: every loop runs to its round budget and sampling draws all k samples;
- expected: each round ends the run with probability `stop_rate` (a scheme stops on an answer its verifier
  accepts), so round r is reached with probability (1 - stop_rate)^(r - 1).

Tokens: prompts are measured (4 characters a token, as the client estimates when an endpoint reports no
usage); a later round's prompt adds one answer and its feedback per earlier round; every reply is counted at
`max_tokens`, so token and cost figures are upper bounds for the calls they count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from critiquebench.domains.contract import Domain, Instance, Judged
from critiquebench.graphs import parse_spec
from critiquebench.store.cache import cache_key, has_call, normalise_messages
from critiquebench.store.db import opened, store_exists
from critiquebench.store.reads import study_runs

CHARS_PER_TOKEN = 4
FEEDBACK_TOKENS = 60  # a backprompt's feedback sentence(s) and request, added to the history per round
DEFAULT_STOP_RATE = 0.25


@dataclass(frozen=True)
class Estimate:
    runs: int  # runs (or judged answers) the study has
    done: int  # already finished
    max_calls: float
    expected_calls: float
    cached_calls: int  # known calls already answered in the cache
    max_prompt_tokens: float
    max_completion_tokens: float
    expected_prompt_tokens: float
    expected_completion_tokens: float
    unit: str = "runs"  # what `runs` counts: runs of a loop study, answers of a verification study
    notes: tuple[str, ...] = ()  # lines printed after the figures (a verification study's answers by prompt)

    def cost(self, price_in: float, price_out: float, expected: bool = True) -> float:
        """USD at `price_in` / `price_out` per million prompt / completion tokens."""
        tin, tout = ((self.expected_prompt_tokens, self.expected_completion_tokens) if expected else
                     (self.max_prompt_tokens, self.max_completion_tokens))  # fmt: skip
        return (tin * price_in + tout * price_out) / 1e6

    def lines(self, price_in: float | None, price_out: float | None) -> list[str]:
        out = [
            f"{self.unit}: {self.runs} ({self.done} finished before, {self.runs - self.done} to go)",
            f"new LLM calls: max {self.max_calls:.0f}, expected {self.expected_calls:.0f} "
            f"({self.cached_calls} known calls already in the cache)",
            f"tokens (replies at max_tokens): max {self.max_prompt_tokens:.0f} in + "
            f"{self.max_completion_tokens:.0f} out, expected {self.expected_prompt_tokens:.0f} in + "
            f"{self.expected_completion_tokens:.0f} out",
        ]
        if price_in is not None or price_out is not None:
            pin, pout = price_in or 0.0, price_out or 0.0
            out.append(f"cost at ${pin:g} / ${pout:g} per million tokens in / out: "
                       f"max ${self.cost(pin, pout, expected=False):.2f}, expected ${self.cost(pin, pout):.2f}")
        return out + list(self.notes)


def tokens(messages: Sequence[Mapping[str, str]]) -> int:
    return sum(len(m["content"]) for m in messages) // CHARS_PER_TOKEN + 1


class _Tally:
    """Calls keyed as the client keys them: each key counts once, at the highest probability asked for it."""

    def __init__(self, cache: sqlite_utils.Database | None, model: str, endpoint: str, params: Mapping[str, Any]
                 ) -> None:  # fmt: skip
        self.cache, self.model, self.endpoint, self.params = cache, model, endpoint, dict(params)
        self.known: dict[str, tuple[float, int]] = {}  # key -> (probability, prompt tokens)
        self.cached = 0
        self.max_calls = self.expected = self.max_in = self.expected_in = 0.0
        self.max_out = self.expected_out = 0.0
        self.max_tokens = int(params.get("max_tokens") or 0)

    def known_call(self, messages: Sequence[Mapping[str, str]], sample: int, temperature: float | None,
                   probability: float) -> None:  # fmt: skip
        params = dict(self.params)
        if temperature is not None:
            params["temperature"] = float(temperature)
        key = cache_key(self.model, self.endpoint, normalise_messages(messages), params, sample)
        if key in self.known:
            self.known[key] = (max(self.known[key][0], probability), self.known[key][1])
        elif self._cached(key):
            self.known[key] = (0.0, 0)
            self.cached += 1
        else:
            self.known[key] = (probability, tokens(messages))

    def _cached(self, key: str) -> bool:
        return self.cache is not None and has_call(self.cache, key)

    def unknown_calls(self, count: float, expected: float, prompt_tokens: float) -> None:
        """`count` calls (at most) whose prompts depend on answers, `expected` of them on average."""
        self.max_calls += count
        self.expected += expected
        self.max_in += count * prompt_tokens
        self.expected_in += expected * prompt_tokens
        self.max_out += count * self.max_tokens
        self.expected_out += expected * self.max_tokens

    def estimate(self, runs: int, done: int, unit: str = "runs", notes: Sequence[str] = ()) -> Estimate:
        for probability, prompt in self.known.values():
            if probability > 0:
                self.unknown_calls(1, probability, prompt)
        return Estimate(runs, done, self.max_calls, self.expected, self.cached, self.max_in, self.max_out,
                        self.expected_in, self.expected_out, unit, tuple(notes))  # fmt: skip


def _reader(store: Path) -> AbstractContextManager[sqlite_utils.Database | None]:
    """The store read-only for a `with` block, or None: a dry run never creates or changes one."""
    return opened(store, readonly=True) if store_exists(store) else nullcontext()


def _finished(db: sqlite_utils.Database | None, study: str) -> dict[tuple[str, str, str, int], str]:
    from critiquebench.reports.metrics import spec_of

    if db is None:
        return {}
    rows = study_runs(db, study)
    return {(r["domain"], spec_of(r), r["instance_id"], r["trial"]): r["status"] for r in rows}


def estimate_study(config: Any, store: Path, stop_rate: float = DEFAULT_STOP_RATE) -> Estimate:
    """The estimate of a loop study (`StudyConfig`)."""
    from critiquebench.llm.client import LLMSettings
    from critiquebench.studies.runner import plan_matrix

    settings = LLMSettings(model=config.model, base_url=config.base_url, temperature=config.temperature,
                           max_tokens=config.max_tokens, endpoint_id=config.endpoint_id)  # fmt: skip
    with _reader(store) as db:
        tally = _Tally(db, config.model, settings.endpoint(), settings.sampling_params())
        tasks, skipped = plan_matrix(config)
        status = _finished(db, config.name)
        return _estimate_tasks(tally, tasks, status, stop_rate, [s.describe() for s in skipped])


def _estimate_tasks(tally: _Tally, tasks: list[Any], status: Mapping[Any, str], stop_rate: float,
                    notes: Sequence[str] = ()) -> Estimate:  # fmt: skip
    """The calls of the runs not done yet, each round ending a run with probability `stop_rate`."""
    todo = [t for t in tasks if status.get(t.key) != "done"]
    go = 1.0 - stop_rate
    for task in todo:
        spec = parse_spec(task.spec)
        params = spec.params
        first = task.domain.prompt(task.instance, params.get("style"))
        base = tokens(first)
        temperature = params.get("temperature")
        if spec.name in ("sampling", "self-consistency"):
            for sample in range(int(params["k"])):
                chance = 1.0 if spec.name == "self-consistency" else go**sample
                tally.known_call(first, sample, temperature, chance)
            continue
        tally.known_call(first, 0, None, 1.0)
        rounds = int(params.get("rounds", 1))
        reach = [go**r for r in range(rounds)]  # the chance of reaching round r + 1
        critic = params.get("critic")
        votes = int(params.get("votes", 1)) if critic and critic != "sound" else 0
        if votes:
            critique = tokens(critic_prompt(task.domain, task.instance)) + tally.max_tokens
            tally.unknown_calls(votes * rounds, votes * sum(reach), critique)
        for r in range(1, rounds):
            prompt = base + r * (tally.max_tokens + FEEDBACK_TOKENS)
            tally.unknown_calls(1, reach[r], prompt)
    return tally.estimate(len(tasks), len(tasks) - len(todo), notes=notes)


def estimate_calls(calls: Iterable[list[dict[str, str]]], model: str, endpoint: str, params: Mapping[str, Any],
                   store: Path, runs: int, done: int, unknown: Iterable[list[dict[str, str]]] = (),
                   notes: Sequence[str] = ()) -> Estimate:  # fmt: skip
    """The estimate of a fixed list of single calls (a verification-only study's judged answers); `unknown`
    are calls whose answer text is not known yet (measured without it), each one new."""
    with _reader(store) as db:
        tally = _Tally(db, model, endpoint, params)
        for messages in calls:
            tally.known_call(messages, 0, None, 1.0)
        for messages in unknown:
            tally.unknown_calls(1, 1.0, tokens(messages))
        return tally.estimate(runs, done, unit="answers to judge", notes=notes)


def critic_prompt(domain: Domain, instance: Instance) -> list[dict[str, str]]:
    """The loop verifier's prompt for an empty answer (its size), or none for a domain without one."""
    if isinstance(domain, Judged) and domain.purposes.get("critique", "") is None:
        return domain.judge_prompt(instance, "critique", "")
    return []
