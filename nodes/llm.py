"""The one LLM client path: langchain-openai's ChatOpenAI against any OpenAI-compatible endpoint, with the call
cache in front of it.

CONTRACT (other modules code against these names; the implementation is being written):
- `LLMSettings`: frozen configuration of one endpoint + sampling parameters.
- `Completion`: one answered (or failed) call.
- `LLMClient(settings, cache).complete(messages, sample=0) -> Completion` is thread-safe; it returns cached
  answers without contacting the endpoint, and raises `LLMCallError` when a call still fails after retries
  (the failure is recorded in the cache's log first), `BudgetExceeded` once the budget cap is reached, and
  `ReplayMiss` in replay mode when a call is not in the cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class LLMSettings:
    model: str = "smollm2-135m-instruct"
    base_url: str | None = None  # None: serve the embedded default model
    temperature: float = 0.0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    timeout: float = 120.0
    concurrency: int = 4
    max_retries: int = 6
    budget_tokens: int | None = None  # stop new calls once this many tokens were spent
    replay: bool = False  # every call must be a cache hit; no endpoint is contacted
    endpoint_id: str | None = None  # identity in cache keys; default derived from base_url


@dataclass(frozen=True)
class Completion:
    text: str
    key: str  # cache key of this call
    cached: bool  # answered from the cache, no endpoint contacted
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0


class LLMError(RuntimeError):
    """Base of the errors a call can end in."""


class LLMCallError(LLMError):
    """The endpoint did not answer after all retries; the failure is recorded."""


class BudgetExceeded(LLMError):
    """The token budget cap was reached; no new calls are made."""


class ReplayMiss(LLMError):
    """Replay mode met a call that is not in the cache; the message names the first differing message."""


class LLMClient:
    def __init__(self, settings: LLMSettings, cache: object) -> None:
        raise NotImplementedError

    def complete(self, messages: Sequence[Mapping[str, str]], sample: int = 0) -> Completion:
        raise NotImplementedError
