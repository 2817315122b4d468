"""The one LLM client path: langchain-openai's ChatOpenAI against any OpenAI-compatible endpoint, with the
call cache in front of it.

- `LLMSettings`: frozen configuration of one endpoint + sampling parameters.
- `Completion`: one answered call.
- `LLMClient(settings, cache).complete(messages, sample=0, temperature=None) -> Completion` is thread-safe
  (`temperature` overrides the settings' for one call, e.g. a sampling scheme's own; so do `max_tokens`,
  where None means no cap: the endpoint's own limit, and `stop`, e.g. a domain's stop sequence as its study's
  code sent it); it returns cached
  answers without contacting the endpoint, and raises `LLMCallError` when a call still fails after retries
  (the failure is recorded in the cache's log first), `BudgetExceeded` once the budget cap is reached, and
  `ReplayMiss` in replay mode when a call is not in the cache.
- Calls are made once across processes too: a process that misses the cache for a call another process is
  making (an `llm_inflight` marker in the store) waits for that answer and counts it as a hit.
- `open_llm(settings, cache)`: a client in a context; serves the embedded model when no endpoint is set.

The API key comes from `$OPENAI_API_KEY` only when the ChatOpenAI client is built; it never enters settings,
cache keys, the store or log messages.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from critiquebench.llm.budget import UNCAPPED_REPLY_TOKENS, Budget, TokenBudget
from critiquebench.llm.errors import BudgetExceeded, EndpointUnreachable, LLMCallError, LLMError, ReplayMiss
from critiquebench.llm.urls import (
    API_KEY_ENV,
    endpoint_identity,
    has_userinfo,
    redact_text,
    redact_url,
    remember_secrets,
    split_query,
)
from critiquebench.store.cache import (
    CachedAnswer,
    CallCache,
    CallRecord,
    cache_key,
    normalise_messages,
    sampling_params,
    storable_text,
)
from critiquebench.store.claims import lease_seconds

if TYPE_CHECKING:
    from tenacity import RetryCallState

log = logging.getLogger(__name__)

_INFLIGHT_POLL_S = 0.05  # how often a process waiting for another one's answer looks at the cache
__all__ = [
    "BudgetExceeded", "Completion", "EndpointUnreachable", "LLMCallError", "LLMClient", "LLMError", "LLMSettings",
    "ReplayMiss", "chat_model", "endpoint_identity", "open_llm",
]  # fmt: skip

BASE_URL_ENV = "OPENAI_BASE_URL"
NO_KEY = "sk-no-key"  # OpenAI-compatible local servers accept any key, but the client insists on one
ROLES = ("system", "user", "assistant")
_RETRY_STATUS = frozenset({408, 409, 429})
_MAX_RETRY_AFTER_S = 600.0
MAX_USAGE_TOKENS = 10**9  # a reported count this large (or negative) is not believed: no reply is that long
SETTINGS_CAP = "settings"  # `max_tokens` of a call: the settings' cap (an int or None overrides it)


@dataclass(frozen=True)
class LLMSettings:
    model: str = "smollm2-135m-instruct"
    base_url: str | None = None  # None: $OPENAI_BASE_URL, else serve the embedded default model
    temperature: float = 0.0
    max_tokens: int | None = 512  # None: no cap, the request carries no length field (the endpoint's own limit)
    stop: tuple[str, ...] = ()
    timeout: float = 120.0
    concurrency: int = 4
    max_retries: int = 6
    budget_tokens: int | None = None  # no new calls once this client spent this many (see llm.budget)
    replay: bool = False  # every call must be a cache hit; no endpoint is contacted
    endpoint_id: str | None = None  # identity in cache keys; default derived from base_url
    top_p: float | None = None
    backoff_s: float = 1.0  # first retry delay; doubles per attempt, with jitter, up to max_backoff_s
    max_backoff_s: float = 60.0
    cost_per_1k: tuple[float, float] | None = None  # USD per 1K (prompt, completion) tokens of this model
    # The endpoint serves one request at a time and works on each until it answers (the embedded llama.cpp server):
    # a request past `timeout` is waited for, never sent again, since the copy would queue behind the one still
    # being served and each retry would add the same work to its queue; the first such wait is said once.
    serial: bool = False

    def sampling_params(self) -> dict[str, Any]:
        """The parameters that enter cache keys (use the same ones with `CallCache.put_recorded`)."""
        return sampling_params(self.temperature, self.max_tokens, self.stop, self.top_p)

    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get(BASE_URL_ENV) or None

    def endpoint(self) -> str:
        """The endpoint's identity in cache keys: stable across runs, no credentials, no random ports."""
        if self.endpoint_id:
            return self.endpoint_id
        base_url = self.resolved_base_url()
        if base_url is None:
            from critiquebench.llm.embedded import embedded_endpoint_id

            return embedded_endpoint_id()
        return endpoint_identity(base_url)


@dataclass(frozen=True)
class Completion:
    text: str
    key: str  # cache key of this call
    cached: bool  # answered from the cache, no endpoint contacted
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    tokens_estimated: bool = False  # no usage reported, or not counts (`_tokens`): counts are len(text) // 4


SERIAL_WAIT_S = 86_400.0
_slots_lock = threading.Lock()
_slots: dict[tuple[str, int], threading.BoundedSemaphore] = {}


def _endpoint_slots(endpoint: str, concurrency: int) -> threading.BoundedSemaphore:
    """One semaphore per endpoint, shared by every client of this process that talks to it."""
    with _slots_lock:
        return _slots.setdefault((endpoint, concurrency), threading.BoundedSemaphore(max(1, concurrency)))


class LLMClient:
    def __init__(self, settings: LLMSettings, cache: CallCache, budget: Budget | None = None) -> None:
        self.settings = settings
        self.cache = cache
        # A study passes its stored budget; a client on its own keeps `budget_tokens` in memory.
        limit = settings.budget_tokens
        self.budget = budget if budget is not None or limit is None else TokenBudget(limit)
        self.endpoint = settings.endpoint()
        self._params = settings.sampling_params()
        self._chat: Any = None
        self._base_url = ""
        remember_secrets(settings.resolved_base_url())  # kept out of every message and log line from now on
        self.shown_endpoint = redact_url(settings.resolved_base_url() or self.endpoint)  # for messages
        if not settings.replay:
            base_url = settings.resolved_base_url()
            if base_url is None:
                raise ValueError(
                    "no endpoint: set base_url (or $OPENAI_BASE_URL) or use open_llm() for the embedded model"
                )
            self._base_url = base_url  # the chat client is built at the first call (`_chat_model`)
        self._slots = _endpoint_slots(self.endpoint, settings.concurrency)
        self._lock = threading.Lock()
        self._inflight: dict[str, _Flight] = {}
        self._answered = False  # the endpoint answered a call: a later refused connection may be a restart
        self._random = random.Random()
        self._usage = {"calls": 0, "hits": 0, "failed": 0, "prompt_tokens": 0, "completion_tokens": 0, "retries": 0}

    def params_at(
        self, temperature: float | None, max_tokens: int | None | str = SETTINGS_CAP, stop: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """The sampling parameters of a call at `temperature` (None: the settings' own) with `max_tokens`
        (`SETTINGS_CAP`: the settings' own; None: no cap) and `stop` sequences (None: the settings' own)."""
        changes: dict[str, Any] = {}
        if temperature is not None and float(temperature) != self._params["temperature"]:
            changes["temperature"] = float(temperature)
        if max_tokens != SETTINGS_CAP and max_tokens != self._params["max_tokens"]:
            changes["max_tokens"] = None if max_tokens is None else int(max_tokens)
        if stop is not None and [str(s) for s in stop] != self._params["stop"]:
            changes["stop"] = [str(s) for s in stop]
        return {**self._params, **changes} if changes else self._params

    def key(
        self,
        messages: Sequence[Mapping[str, str]],
        sample: int = 0,
        temperature: float | None = None,
        max_tokens: int | None | str = SETTINGS_CAP,
        stop: Sequence[str] | None = None,
    ) -> str:
        params = self.params_at(temperature, max_tokens, stop)
        return cache_key(self.settings.model, self.endpoint, messages, params, sample)

    def usage(self) -> dict[str, Any]:
        """What this client did: calls, hits, failed, tokens spent, retries (attempts sent again after a transient
        failure), cost_usd (None without cost_per_1k)."""
        with self._lock:
            usage: dict[str, Any] = dict(self._usage)
        cost = self.settings.cost_per_1k
        usage["cost_usd"] = (
            None if cost is None else (usage["prompt_tokens"] * cost[0] + usage["completion_tokens"] * cost[1]) / 1000
        )
        return usage

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        sample: int = 0,
        temperature: float | None = None,
        max_tokens: int | None | str = SETTINGS_CAP,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        """Sample `sample` of `messages` at `temperature` (None: the settings' temperature), at most
        `max_tokens` long (`SETTINGS_CAP`: the settings' cap; None: no cap), ending at any of `stop` (None: the
        settings' stop sequences); the same messages, parameters and sample are the same cached draw, whichever
        scheme asks."""
        msgs = normalise_messages(messages)
        bad = [m["role"] for m in msgs if m["role"] not in ROLES]
        if bad or not msgs:
            raise ValueError(f"messages need roles among {ROLES} and at least one message (got {bad or 'none'})")
        params = self.params_at(temperature, max_tokens, stop)
        key = cache_key(self.settings.model, self.endpoint, msgs, params, sample)
        with self._flight(key) as flight:  # two threads asking for the same call make one request
            if flight.error is not None:  # it failed for the thread that made it: one failure for all waiters
                raise type(flight.error)(*flight.error.args)
            hit = self.cache.answer(key)
            if hit is not None:
                return self._hit(hit)
            if self.settings.replay:
                raise ReplayMiss(self.cache.explain_miss(self.settings.model, self.endpoint, msgs, params, sample))
            # two processes asking for the same call make one request: the second waits for the answer (a
            # reservation is refused once the answer is in, so one answered since the look-up is found here)
            while not self.cache.reserve(key, self._inflight_lease()):
                hit = self.cache.answer(key)
                if hit is not None:
                    return self._hit(hit)
                time.sleep(_INFLIGHT_POLL_S)
            done: Completion | None = None
            stored = False
            try:
                reserved = self._reserve(msgs)
                try:
                    done, record, note = self._call(key, msgs, sample, params)
                    # paid from here on: the budget is charged even if storing fails (a full disk, say)
                    self.cache.answered(record, note)  # the answer, its 'call' event, the end of its marker
                    stored = True
                    self._count(calls=1, prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens)
                    return done
                except LLMCallError as exc:
                    flight.error = exc
                    raise
                finally:
                    if self.budget is not None:
                        self.budget.settle(reserved, done.prompt_tokens + done.completion_tokens if done else 0)
            finally:
                if not stored:  # an answered call's marker went with its answer (`CallCache.answered`)
                    self.cache.unreserve(key)

    def _hit(self, hit: CachedAnswer) -> Completion:
        self.cache.log_event(hit.key, self.settings.model, "hit", None, hit.prompt_tokens, hit.completion_tokens)
        self._count(hits=1)
        return Completion(
            hit.response,
            hit.key,
            True,
            hit.prompt_tokens,
            hit.completion_tokens,
            hit.latency_s,
            hit.tokens_estimated,
        )

    def _inflight_lease(self) -> float:
        """Seconds an in-flight marker lives: the call's timeout plus the longest backoff and slack; renewed
        before every attempt, so a crashed process's marker stops holding others back soon."""
        return self.settings.timeout + self.settings.max_backoff_s + lease_seconds()

    def _call(
        self, key: str, messages: list[dict[str, str]], sample: int, params: dict[str, Any]
    ) -> tuple[Completion, CallRecord, str | None]:
        """Make the request (with retries); the answer, its record to store, and a note on what had to be
        replaced for the store to hold it (None: nothing)."""
        settings = self.settings
        # A scheme's own temperature and length cap override the model's for this request only.
        overrides = {} if params is self._params else _overrides(params, self._params, _is_openai(self._base_url))
        retrying = self._retrying()
        started = time.monotonic()
        try:
            for attempt in retrying:
                with attempt:
                    if attempt.retry_state.attempt_number > 1:
                        self.cache.reserve(key, self._inflight_lease())
                    started, reply = self._attempt(messages, overrides)
        except Exception as exc:  # noqa: BLE001 - every failure is classified, recorded or retried
            error = self._describe(exc)
            self.cache.log_event(key, settings.model, "failed", error)
            self._count(failed=1)
            if self._refused_before_answering(exc):
                raise EndpointUnreachable(
                    f"cannot connect to {self.shown_endpoint} (connection refused): is the server running?"
                ) from exc
            tries = retrying.statistics.get("attempt_number", 1)
            raise LLMCallError(
                f"{settings.model} at {self.shown_endpoint} failed after {tries} attempt(s): {error}"
            ) from exc
        self._answered = True
        latency = time.monotonic() - started
        # An endpoint's JSON may decode to text no store can hold (a lone surrogate where output was cut inside an
        # emoji, a NUL): it is stored with U+FFFD in their place, and the 'call' event says so.
        text, replaced = storable_text(str(reply.text))  # a plain str: langchain's `.text` is a str subclass
        note = f"the reply held {replaced} character(s) no store can hold, stored as U+FFFD" if replaced else None
        prompt_tokens, completion_tokens, estimated, bad_usage = self._tokens_of(reply, messages, text)
        note = "; ".join(x for x in (note, bad_usage) if x) or None
        record = CallRecord(key, settings.model, self.endpoint, messages, params, sample, text, prompt_tokens,
                            completion_tokens, estimated, latency, time.time())  # fmt: skip
        return Completion(text, key, False, prompt_tokens, completion_tokens, latency, estimated), record, note

    def _attempt(self, messages: list[dict[str, str]], overrides: dict[str, Any]) -> tuple[float, Any]:
        """One request: (when it was sent, the reply)."""
        with self._slots, self._slow_notice():
            # the clock starts at the request: not while the client is built (its imports, 1-4 s in a fresh
            # process) nor while the call waits for a concurrency slot
            model = self._chat_model()
            started = time.monotonic()
            return started, _ask(model, messages, overrides)

    def _retrying(self) -> Any:
        """A call's retry policy: transient failures only, up to `max_retries` more attempts, Retry-After or
        backoff between, each logged (tenacity, imported by the first request: a replay makes none, and it
        brings asyncio, 20 ms of a start)."""
        from tenacity import Retrying, retry_if_exception, stop_after_attempt

        return Retrying(
            stop=stop_after_attempt(self.settings.max_retries + 1),
            wait=self._retry_wait,
            retry=retry_if_exception(self._transient),
            before_sleep=self._log_retry,
            reraise=True,
        )

    @contextmanager
    def _slow_notice(self) -> Iterator[None]:
        """On a serial endpoint, say once when a request has been served for longer than the timeout (it is
        waited for, not retried: see `LLMSettings.serial`); elsewhere nothing."""
        if not self.settings.serial:
            yield
            return
        said = (f"the local model at {self.shown_endpoint} is slow: a call has been answered for over "
                f"{self.settings.timeout:g} s; it serves one request at a time, so the call is waited for, not sent "
                "again")  # fmt: skip
        timer = threading.Timer(self.settings.timeout, _say_once, [said])
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

    def _tokens_of(self, reply: Any, messages: list[dict[str, str]], text: str) -> tuple[int, int, bool, str | None]:
        """(prompt tokens, completion tokens, estimated, a note on usage not believed) of a reply: the endpoint's
        counts, else (none, or not counts, see `_tokens`) estimates from the text at 4 characters a token."""
        usage = reply.usage_metadata or {}
        reported = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
        prompt_tokens, completion_tokens = (_tokens(n) for n in reported)
        note = None
        if prompt_tokens is None or completion_tokens is None:  # stored all the same, so it is never paid twice
            note = f"usage ({', '.join(repr(n)[:40] for n in reported)}) not counts below {MAX_USAGE_TOKENS}"
            _say_once(  # once per endpoint and process (a study): each call's 'call' event keeps its own numbers
                f"{self.shown_endpoint} reports token usage that is not a count below {MAX_USAGE_TOKENS:,}: such "
                "calls count as unknown usage, estimated from the text (4 characters a token) for budgets"
            )
            prompt_tokens = completion_tokens = 0
        if prompt_tokens or completion_tokens:
            return prompt_tokens or 0, completion_tokens or 0, False, note
        return sum(len(m["content"]) for m in messages) // 4, len(text) // 4, True, note

    def _chat_model(self) -> Any:
        """The ChatOpenAI, built at the first call: langchain-openai takes a second to import, which a study
        answered wholly from the cache (or from finished runs) never needs."""
        with self._lock:
            if self._chat is None:
                self._chat = chat_model(self.settings, self._base_url)
            return self._chat

    def _transient(self, exc: BaseException) -> bool:
        """Worth retrying: 408/409/429/5xx, timeouts, dropped connections, a garbled response body. Not: other
        statuses, any other error, or a refused connection to an endpoint that never answered."""
        import openai  # with the endpoint's first error: a replay never imports the SDK (about 1 s of CPU)

        if isinstance(exc, openai.APIStatusError):
            return exc.status_code in _RETRY_STATUS or exc.status_code >= 500
        if isinstance(exc, openai.APIConnectionError):  # timeouts are APIConnectionErrors too
            return not self._refused_before_answering(exc)
        return isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError)

    def _refused_before_answering(self, exc: BaseException) -> bool:
        return not self._answered and _connection_refused(exc)

    def _retry_wait(self, state: RetryCallState) -> float:
        """The server's Retry-After when it sent one, else exponential backoff with jitter."""
        import openai

        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, openai.APIStatusError):
            retry_after = _retry_after(exc.response.headers)
            if retry_after is not None:
                return retry_after
        backoff = min(self.settings.max_backoff_s, self.settings.backoff_s * 2 ** (state.attempt_number - 1))
        return backoff * self._random.uniform(0.5, 1.0)

    def _log_retry(self, state: RetryCallState) -> None:
        self._count(retries=1)  # the live display counts them (`critiquebench.cli.terminal`)
        exc = state.outcome.exception() if state.outcome is not None else None
        delay = state.next_action.sleep if state.next_action is not None else 0.0
        log.warning(
            "%s attempt %d failed (%s); retrying in %.2fs",
            self.settings.model, state.attempt_number, self._describe(exc) if exc else "?", delay,
        )  # fmt: skip

    def _describe(self, exc: BaseException) -> str:
        from critiquebench.llm.deadline import ReplyDeadline

        late = _cause(exc, ReplyDeadline)  # the SDK says only "Request timed out."
        return redact_text(f"{type(exc).__name__}: {late or exc}")[:1000]

    def _reserve(self, messages: list[dict[str, str]]) -> int:
        """Reserve the call's worst case (prompt at 4 characters a token + max_tokens) in the budget."""
        if self.budget is None:
            return 0
        cap = self.settings.max_tokens
        need = sum(len(m["content"]) for m in messages) // 4 + (UNCAPPED_REPLY_TOKENS if cap is None else cap)
        if not self.budget.reserve(need):
            limit, spent = self.budget.state()
            raise BudgetExceeded(
                f"token budget of {limit} reached ({spent} tokens spent); no new calls are made: "
                "raise it with --budget-tokens"
            )
        return need

    def _count(self, **deltas: int) -> None:
        with self._lock:
            for name, delta in deltas.items():
                self._usage[name] += delta

    @contextmanager
    def _flight(self, key: str) -> Iterator[_Flight]:
        """The in-flight record of `key`, held exclusively: the first thread makes the call, the others wait
        and then find its answer in the cache, or its failure here (kept until the last waiter has seen it)."""
        with self._lock:
            flight = self._inflight.setdefault(key, _Flight())
            flight.waiters += 1
        try:
            with flight.lock:
                yield flight
        finally:
            with self._lock:
                flight.waiters -= 1
                if flight.waiters == 0:
                    del self._inflight[key]


@dataclass
class _Flight:
    lock: threading.Lock = field(default_factory=threading.Lock)
    waiters: int = 0
    error: LLMCallError | None = None


def _tokens(value: object) -> int | None:
    """A reported token count, or None when it is not a count an endpoint could mean (negative, huge, not a
    whole number): such usage would overflow the store's integers or run a budget backwards."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_USAGE_TOKENS:
        return value
    return None


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and the exceptions it was raised from or during, innermost last."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    return next((e for e in _chain(exc) if isinstance(e, kind)), None)


def _connection_refused(exc: BaseException) -> bool:
    """Whether `exc` (or an exception it was raised from) is a refused TCP connection."""
    return any(isinstance(e, ConnectionRefusedError) or "Connection refused" in str(e) for e in _chain(exc))


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds; HTTP dates are left to the backoff)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if seconds >= 0:
            return min(seconds, _MAX_RETRY_AFTER_S)
    return None


def _is_openai(base_url: str) -> bool:
    return (urlsplit(base_url).hostname or "").endswith("api.openai.com")


def _overrides(params: Mapping[str, Any], default: Mapping[str, Any], is_openai: bool) -> dict[str, Any]:
    """The request arguments that change `default` sampling parameters into `params` for one call. No cap
    leaves the length field out of the request (the endpoint's own limit), rather than sending null."""
    import openai

    out: dict[str, Any] = {}
    if params["temperature"] != default["temperature"]:
        out["temperature"] = params["temperature"]
    if params["max_tokens"] != default["max_tokens"]:
        cap = params["max_tokens"]
        out["max_tokens"] = openai.NOT_GIVEN if cap is None else cap
        if not is_openai:  # see `chat_model`: these servers read `max_tokens` from the body
            out["extra_body"] = {} if cap is None else {"max_tokens": cap}
    if params["stop"] != default["stop"]:
        out["stop"] = list(params["stop"])
    return out


_said: set[str] = set()


def _say_once(message: str) -> None:
    """Log a warning once per process (every client of a study builds its own chat model)."""
    with _slots_lock:
        if message in _said:
            return
        _said.add(message)
    log.warning("%s", message)


def _ask(model: Any, messages: list[dict[str, str]], overrides: dict[str, Any]) -> Any:
    """ChatOpenAI's reply (an AIMessage) to `messages`, made by its `_generate`: the request, its retries off, and
    the reply read as `invoke` makes and reads them, without what `invoke` wraps around them per call (a callback
    manager and its run, tracing hooks, the LangChain cache look-up, a rate limiter), none of which a study sets:
    about 1.5 ms of CPU a call of ChatOpenAI's 7 against a loopback server (benchmarks/bench_scale.py)."""
    return model._generate(messages, **overrides).generations[0].message


_chat_class: Any = None
# Arguments of the SDK's `create` that are not fields of the request's JSON
_SDK_ARGUMENTS = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})
_PROBE = [{"role": role, "content": "probe"} for role in ROLES]


def _chat_openai() -> Any:
    """ChatOpenAI, its request's text messages and plain fields sent in the SDK's `extra_body`, its reply read as
    the JSON dict langchain-openai turns into a message (made once, at the first call).

    The OpenAI SDK passes a request's arguments through `maybe_transform`, which walks every message against the
    union of message types (the fields' aliases and formats): about 0.35 ms of CPU per message, as much as the
    whole of a raw request for a few rounds of history (benchmarks/bench_scale.py), and each other field against
    its annotation (hashing `model`'s, a union with a literal of every OpenAI model name, alone costs more than a
    message). For messages of a role and a text, as every scheme sends, and fields of plain values (numbers,
    strings, lists of strings) it changes nothing, so they go in `extra_body`, which the SDK merges into the
    request's JSON as it is (the two arguments it requires, `model` and `messages`, are passed as `omit`, which
    it leaves out of the JSON): the body sent is the same. Any other message keeps the SDK's path. The fields
    are langchain-openai's own payload for the call's overrides, worked out once per set of overrides: its
    messages are only converted (dicts to LangChain messages and back, about 0.1 ms each) to find that text
    messages come out as they went in, which a probe of each role checks once. With the reply read as a dict
    (`_DictReplies`), `_generate` went from about 4.9 to 2.6 ms of CPU a call (one at a time, a loopback server,
    four messages; a raw httpx POST: 1.2 ms)."""
    global _chat_class
    if _chat_class is None:
        from langchain_openai import ChatOpenAI
        from pydantic import PrivateAttr

        class TextChatOpenAI(ChatOpenAI):
            _payloads: dict[str, tuple[dict[str, Any], dict[str, Any]] | None] = PrivateAttr(default_factory=dict)

            def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
                if isinstance(input_, list) and input_ and all(map(_text_message, input_)):
                    fields = self._text_fields(stop, kwargs)
                    if fields is not None:
                        params, extra = fields
                        messages = [dict(m) for m in input_]
                        return {**params, "extra_body": {**extra, "messages": messages}}
                payload = super()._get_request_payload(input_, stop=stop, **kwargs)
                messages = payload.get("messages")
                if isinstance(messages, list) and messages and all(map(_text_message, messages)):
                    payload["messages"] = []
                    payload["extra_body"] = {**(payload.get("extra_body") or {}), "messages": messages}
                return payload

            def _text_fields(self, stop: list[str] | None, kwargs: dict[str, Any]) -> Any:
                """(the SDK's arguments, the JSON's fields but its messages) of a request of text messages with
                these overrides, or None when langchain-openai changes such messages (o-series models rename
                the system role) or sends no `messages` (the Responses API)."""
                key = repr((stop, sorted(kwargs.items())))
                if key not in self._payloads:
                    payload = super()._get_request_payload(_PROBE, stop=stop, **dict(kwargs))
                    fields = None
                    if payload.get("messages") == _PROBE and isinstance(payload.get("model"), str):
                        import openai

                        omit = getattr(openai, "omit", openai.NOT_GIVEN)  # older SDKs: NOT_GIVEN
                        params: dict[str, Any] = {"model": omit, "messages": omit}
                        extra = dict(payload.get("extra_body") or {})
                        for name, value in payload.items():
                            if name in ("messages", "extra_body"):
                                continue
                            # a stream is the SDK's to read
                            if name not in _SDK_ARGUMENTS and _plain(value) and not (name == "stream" and value):
                                extra.setdefault(name, value)  # as the SDK merges them: extra_body's wins
                            else:
                                params[name] = value
                        fields = (params, extra)
                    self._payloads[key] = fields
                return self._payloads[key]

        _chat_class = TextChatOpenAI
    return _chat_class


class _DictReplies:
    """A ChatOpenAI's `client` (the SDK's chat completions) whose raw responses parse to the reply's JSON dict,
    which langchain-openai's `_create_chat_result` reads as it reads the SDK's `ChatCompletion` (it dumps that
    to the same dict first): building the typed reply only to dump it again is work no caller reads. A reply
    that is not a JSON object keeps the SDK's parsing (its text, or its error)."""

    def __init__(self, completions: Any) -> None:
        self._completions = completions
        self.with_raw_response = _DictRawResponses(completions.with_raw_response)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)


class _DictRawResponses:
    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def create(self, **payload: Any) -> Any:
        return _DictParse(self._raw.create(**payload))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class _DictParse:
    def __init__(self, response: Any) -> None:
        self._response = response

    def parse(self) -> Any:
        http = self._response.http_response
        content_type = http.headers.get("content-type", "*").split(";")[0]
        if content_type.endswith("json"):
            data = http.json()  # garbled JSON raises here, as in the SDK's parse
            if isinstance(data, dict):
                return data
        return self._response.parse()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._response, name)


def _plain(value: Any) -> bool:
    """A JSON value the SDK's transform sends as it is."""
    if value is None or type(value) in (str, int, float, bool):
        return True
    return type(value) is list and all(type(x) is str for x in value)


def _text_message(message: Any) -> bool:
    return (isinstance(message, dict) and message.keys() == {"role", "content"} and message["role"] in ROLES
            and type(message["content"]) is str)  # fmt: skip


def chat_model(settings: LLMSettings, base_url: str) -> Any:
    """The ChatOpenAI that `LLMClient` calls for `settings` (benchmarks time it bare, without the client)."""
    from critiquebench.llm.deadline import deadline_client

    ChatOpenAI = _chat_openai()  # noqa: N806 - the class

    # ChatOpenAI sends `max_completion_tokens`, which llama.cpp-style servers ignore; they read `max_tokens`.
    is_openai = _is_openai(base_url)
    # The SDK appends the route to the base URL as text, so a query in it would end up inside the path.
    base_url, query = split_query(base_url)
    if has_userinfo(base_url) and os.environ.get(API_KEY_ENV):
        _say_once(
            f"{redact_url(base_url)}: the URL's credentials are sent as HTTP Basic auth in place of ${API_KEY_ENV} "
            "(a request has one Authorization header); take them out of the URL to send the key"
        )
    # No cap sends no length field at all (not a null, which some servers refuse).
    extra_body = None if is_openai or settings.max_tokens is None else {"max_tokens": settings.max_tokens}
    # A serial endpoint's request is waited for (`LLMSettings.serial`): a day bounds it, the server's own end.
    timeout = SERIAL_WAIT_S if settings.serial else settings.timeout
    chat = ChatOpenAI(
        model=settings.model,
        base_url=base_url,
        api_key=os.environ.get(API_KEY_ENV) or NO_KEY,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        stop=list(settings.stop) or None,
        top_p=settings.top_p,
        timeout=timeout,
        # `timeout` bounds each read; this bounds the whole request, so a reply that trickles in cannot hang a call
        http_client=deadline_client(timeout),
        default_query=query or None,
        max_retries=0,  # retried here (transient errors only), so failures are logged and Retry-After honoured
        n=1,
        extra_body=extra_body,
        # Our CallCache is the only cache: a global LangChain cache (set_llm_cache) would key by prompt alone
        # and hand every sample index the same answer.
        cache=False,
    )
    chat.client = _DictReplies(chat.client)
    return chat


@contextmanager
def open_llm(settings: LLMSettings, cache: CallCache, budget: Budget | None = None) -> Iterator[LLMClient]:
    """A client for `settings`; with no endpoint configured, serves the embedded model for the block."""
    if settings.replay or settings.resolved_base_url() is not None:
        yield LLMClient(settings, cache, budget)
        return
    from critiquebench.llm.embedded import EmbeddedServer

    with EmbeddedServer(model_alias=settings.model) as server:
        # llama_cpp.server answers one request at a time: more in flight would only queue inside the server,
        # where the wait counts against each request's timeout.
        served = replace(
            settings,
            base_url=server.base_url,
            endpoint_id=settings.endpoint_id or server.endpoint_id,
            concurrency=1,
            serial=True,
        )
        yield LLMClient(served, cache, budget)
