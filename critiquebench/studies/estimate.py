"""What a study will cost before it runs (`run --dry-run`, `verify-study --dry-run`): no LLM call is made.

Calls are counted as the client would key them (model, endpoint, messages, sampling parameters, sample), so
draws that schemes share (standard's answer is every iterative scheme's first round; self-consistency and
sampling at one temperature draw the same samples; every trial repeats trial 0's calls) count once, and calls
already in the store's cache count zero. First-round prompts are known exactly; later rounds depend on the
answers, so they count as new calls:

- max: every loop runs to its round budget and sampling draws all k samples;
- expected: each round ends the run with probability `stop_rate` (a scheme stops on an answer its verifier
  accepts), so round r is reached with probability (1 - stop_rate)^(r - 1).

What a run can cost is the scheme's to say (`Spec.calls`, see `graphs.cost`: rounds, critic calls per round,
repetitions), never guessed here from its name; later rounds are counted in closed form, and trials are not
enumerated (each repeats trial 0's calls), so an estimate of a huge study takes as long as a small one's.

Tokens: prompts are measured (4 characters a token, as the client estimates when an endpoint reports no
usage); a later round's prompt adds one answer and its feedback per earlier round; every reply is counted at
`max_tokens` (`UNCAPPED_REPLY_TOKENS` without a cap), so token and cost figures are upper bounds for the calls
they count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from critiquebench.domains import call_options
from critiquebench.domains.contract import Domain, Instance, Judged
from critiquebench.graphs import Calls, parse_spec
from critiquebench.llm.budget import UNCAPPED_REPLY_TOKENS
from critiquebench.store.cache import cache_key, has_call, normalise_messages
from critiquebench.store.db import Store, opened, store_exists
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
        # (messages, sample, temperature, stop) as given -> key: schemes ask the same call again (standard's answer
        # is every loop's first round, sampling and self-consistency draw the same samples), and keying it (JSON
        # of the whole prompt, hashed) was most of a dry run (the shipped paper-loops study: 24,300 asked, 10,400
        # distinct). Equal as given means equal as keyed, so a call is never taken for another.
        self._keys: dict[tuple[Any, ...], str] = {}
        self.cached = 0
        self.max_calls = self.expected = self.max_in = self.expected_in = 0.0
        self.max_out = self.expected_out = 0.0
        self.uncapped = params.get("max_tokens") is None
        self.max_tokens = UNCAPPED_REPLY_TOKENS if self.uncapped else int(params["max_tokens"])

    def known_call(self, messages: Sequence[Mapping[str, str]], sample: int, temperature: float | None,
                   probability: float, stop: Sequence[str] | None = None) -> None:  # fmt: skip
        asked = (tuple(tuple(m.items()) for m in messages), sample, temperature, None if stop is None else tuple(stop))
        key = self._keys.get(asked)
        if key is None:
            params = dict(self.params)
            if temperature is not None:
                params["temperature"] = float(temperature)
            if stop is not None:  # the domain's stop sequences, keyed as the client keys them
                params["stop"] = [str(s) for s in stop]
            key = self._keys[asked] = cache_key(self.model, self.endpoint, normalise_messages(messages), params, sample)
        if key in self.known:
            self.known[key] = (max(self.known[key][0], probability), self.known[key][1])
        elif self._cached(key):
            self.known[key] = (0.0, 0)
            self.cached += 1
        else:
            self.known[key] = (probability, tokens(messages))

    def _cached(self, key: str) -> bool:
        return self.cache is not None and has_call(self.cache, key)

    def unknown_calls(self, count: float, expected: float, prompt_tokens: float, expected_tokens: float) -> None:
        """`count` calls (at most) whose prompts depend on answers, `expected` of them on average, with
        `prompt_tokens` in their prompts at most (`expected_tokens` on average)."""
        self.max_calls += count
        self.expected += expected
        self.max_in += prompt_tokens
        self.expected_in += expected_tokens
        self.max_out += count * self.max_tokens
        self.expected_out += expected * self.max_tokens

    def estimate(self, runs: int, done: int, unit: str = "runs", notes: Sequence[str] = ()) -> Estimate:
        for probability, prompt in self.known.values():
            if probability > 0:
                self.unknown_calls(1, probability, prompt, probability * prompt)
        if self.uncapped:
            notes = (*notes, f"no max_tokens (as the study's code): each reply counted at {UNCAPPED_REPLY_TOKENS} "
                     "tokens, an assumption; nothing but the model's context window bounds a reply")
        return Estimate(runs, done, self.max_calls, self.expected, self.cached, self.max_in, self.max_out,
                        self.expected_in, self.expected_out, unit, tuple(notes))  # fmt: skip


def _reader(store: Path) -> AbstractContextManager[Store | None]:
    """The store read-only for a `with` block, or None: a dry run never creates or changes one."""
    return opened(store, readonly=True) if store_exists(store) else nullcontext()


def estimate_study(config: Any, store: Path, stop_rate: float = DEFAULT_STOP_RATE) -> Estimate:
    """The estimate of a loop study (`StudyConfig`)."""
    from critiquebench.llm.client import LLMSettings
    from critiquebench.studies.runner import plan_cells

    settings = LLMSettings(model=config.model, base_url=config.base_url, temperature=config.temperature,
                           max_tokens=config.max_tokens, endpoint_id=config.endpoint_id)  # fmt: skip
    with _reader(store) as db:
        tally = _Tally(db, config.model, settings.endpoint(), settings.sampling_params())
        cells, skipped = plan_cells(config)
        done = finished_per_cell(study_runs(db, config.name) if db is not None else [], config.trials)
        return _estimate_cells(tally, cells, config.trials, done, stop_rate, [s.describe() for s in skipped])


def finished_per_cell(runs: Iterable[Mapping[str, Any]], trials: int) -> Counter[tuple[str, str, str]]:
    """Finished runs per (domain, spec, instance) among trials 0..trials-1 (from a study's `runs` rows)."""
    from critiquebench.studies.threads import spec_of

    return Counter((r["domain"], spec_of(r), r["instance_id"]) for r in runs
                   if r["status"] == "done" and r["trial"] < trials)  # fmt: skip


def _estimate_cells(tally: _Tally, cells: Sequence[Any], trials: int, done: Mapping[tuple[str, str, str], int],
                    stop_rate: float, notes: Sequence[str] = ()) -> Estimate:  # fmt: skip
    """The calls of the runs not done yet. Every trial makes trial 0's calls (answered by the cache after the
    first), so an (instance, spec) costs its calls once however many trials it has; each scheme says what a
    run costs (`graphs.cost.Calls`), each round ending a run with probability `stop_rate`."""
    runs = finished = 0
    for cell in cells:
        spec = parse_spec(cell.spec)
        params, calls = spec.params, spec.calls
        stop = call_options(cell.domain).get("stop")  # once per cell: a Protocol check per run cost a tenth
        for instance in cell.instances:
            runs += trials
            ended = min(trials, done.get((cell.domain.name, cell.spec, instance.id), 0))
            finished += ended
            if ended < trials:
                _run_calls(tally, cell.domain, instance, params, calls, stop_rate, stop)
    return tally.estimate(runs, finished, notes=notes)


def _run_calls(tally: _Tally, domain: Any, instance: Any, params: Mapping[str, Any], calls: Calls,
               stop_rate: float, stop: Sequence[str] | None) -> None:  # fmt: skip
    """Add one run's calls: the prompts known before it starts (its first round, or every sample) by their cache
    keys, the rest by count; `stop` is the domain's stop sequences (`call_options`)."""
    first = domain.prompt(instance, params.get("style"))
    base = tokens(first)
    go = 1.0 - stop_rate
    if calls.samples:  # every round re-asks the first prompt: each is a known call
        for sample in range(calls.rounds):
            tally.known_call(first, sample, params.get("temperature"), go**sample if calls.stops else 1.0, stop)
        return
    reach = calls.reach(stop_rate)
    known = 1 if calls.shared_first else 0
    if known:
        tally.known_call(first, 0, None, 1.0, stop)
    step = tally.max_tokens + FEEDBACK_TOKENS  # each earlier round adds an answer and its feedback
    # generation calls after the known one; a later round's prompt holds the rounds before it
    later_max = calls.repeats * calls.rounds - known
    later_expected = calls.repeats * reach - known
    tally.unknown_calls(later_max, later_expected, calls.repeats * _history_tokens(calls.rounds, 1.0, base, step)
                        - known * base, calls.repeats * _history_tokens(calls.rounds, go if calls.stops else 1.0,
                                                                          base, step) - known * base)  # fmt: skip
    if calls.critic:
        critique = tokens(critic_prompt(domain, instance)) + tally.max_tokens
        most, mean = calls.repeats * calls.rounds * calls.critic, calls.repeats * reach * calls.critic
        tally.unknown_calls(most, mean, most * critique, mean * critique)


def _history_tokens(rounds: int, go: float, base: int, step: int) -> float:
    """Sum over rounds r = 0..rounds-1 of go^r * (base + r * step): the prompt tokens of a repetition's
    generation calls, each weighted by the chance of reaching it (closed forms: rounds may be huge)."""
    if go >= 1.0:
        return rounds * base + step * rounds * (rounds - 1) / 2
    if go <= 0.0:
        return float(base)
    total = (1 - go**rounds) / (1 - go)  # sum of go^r
    weighted = go * (1 - rounds * go ** (rounds - 1) + (rounds - 1) * go**rounds) / (1 - go) ** 2  # sum of r go^r
    return base * total + step * weighted


def estimate_calls(calls: Iterable[tuple[list[dict[str, str]], Mapping[str, Any]]], model: str, endpoint: str,
                   params: Mapping[str, Any], store: Path, runs: int, done: int,
                   unknown: Iterable[list[dict[str, str]]] = (), notes: Sequence[str] = ()) -> Estimate:  # fmt: skip
    """The estimate of a fixed list of single calls, each (messages, the domain's `call_options`) (a
    verification-only study's judged answers); `unknown` are calls whose answer text is not known yet (measured
    without it), each one new."""
    with _reader(store) as db:
        tally = _Tally(db, model, endpoint, params)
        for messages, options in calls:
            tally.known_call(messages, 0, None, 1.0, options.get("stop"))
        for messages in unknown:
            size = tokens(messages)
            tally.unknown_calls(1, 1.0, size, size)
        return tally.estimate(runs, done, unit="answers to judge", notes=notes)


def critic_prompt(domain: Domain, instance: Instance) -> list[dict[str, str]]:
    """The loop verifier's prompt for an empty answer (its size), or none for a domain without one."""
    if isinstance(domain, Judged) and domain.purposes.get("critique", "") is None:
        return domain.judge_prompt(instance, "critique", "")
    return []
