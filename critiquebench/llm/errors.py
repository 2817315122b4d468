"""The errors an LLM call can end in (importable without loading the HTTP client)."""

from __future__ import annotations


class LLMError(RuntimeError):
    """Base of the errors a call can end in."""


class LLMCallError(LLMError):
    """The endpoint did not answer after all retries; the failure is recorded."""


class EndpointUnreachable(LLMCallError):
    """The endpoint refused the connection before it ever answered: retrying cannot help, stop the study."""


class BudgetExceeded(LLMError):
    """The token budget cap was reached; no new calls are made."""


class ReplayMiss(LLMError):
    """Replay mode met a call that is not in the cache; the message names the first differing message."""
