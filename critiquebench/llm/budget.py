"""Token budgets: no new LLM call once the tokens spent (plus those the calls in flight may spend) reach a limit.

Before a call that will reach the endpoint (cache hits are free), the client reserves the call's worst case:
its prompt at 4 characters a token plus `max_tokens` (`UNCAPPED_REPLY_TOKENS` without a cap). A call starts
only while the tokens spent plus those reserved by calls in flight are below the limit (checked and taken in
one step); when only the reservations stand in the way it waits for calls in flight to end, and it is refused
only once the tokens actually spent reach the limit. After the call its reservation gives way to the tokens the
endpoint reported. So concurrent calls never overshoot the limit by more than the calls in flight when it was reached.

- `TokenBudget`: in memory, for one client (`LLMSettings.budget_tokens`).
- `StudyBudget`: a study's budget in the store's `budgets` table (study, limit_tokens, spent_tokens,
  reserved_tokens): the tokens spent count across resumes, and processes sharing the store share it (one UPDATE
  checks and reserves). `resume NAME --budget-tokens N` sets a new limit.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Protocol

from critiquebench.store import budgets
from critiquebench.store.db import connect

# The reply length assumed for a call without a length cap, where nothing but the model's context window bounds
# it: what the budget reserves (then settled at what the call spent) and what a dry run counts. Ours: the cap the
# paper studies had before they sent none, as their code did; a longer reply is simply counted when it comes.
UNCAPPED_REPLY_TOKENS = 1024
_POLL_S = 0.05  # how often a waiting call looks again (other processes sharing the store do not notify)


def _reserve_or_wait(try_take: Callable[[], bool], spent_out: Callable[[], bool], changed: threading.Condition) -> bool:
    """Take a reservation, waiting while calls in flight hold the rest; False once the spent tokens reach the
    limit."""
    with changed:
        while not try_take():
            if spent_out():
                return False
            changed.wait(_POLL_S)
    return True


class Budget(Protocol):
    def reserve(self, tokens: int) -> bool:
        """Take `tokens` for a call about to start; False (and nothing taken) once the limit is reached."""
        ...

    def settle(self, reserved: int, spent: int) -> None:
        """Replace a call's reservation by the tokens it spent (0 when it failed)."""
        ...

    def state(self) -> tuple[int, int]:
        """(limit, tokens spent so far)."""
        ...


class TokenBudget:
    """A budget held in memory by one client."""

    def __init__(self, limit: int) -> None:
        self.limit, self.spent, self.reserved = limit, 0, 0
        self._changed = threading.Condition()

    def reserve(self, tokens: int) -> bool:
        def take() -> bool:
            if self.spent + self.reserved >= self.limit:
                return False
            self.reserved += tokens
            return True

        return _reserve_or_wait(take, lambda: self.spent >= self.limit, self._changed)

    def settle(self, reserved: int, spent: int) -> None:
        with self._changed:
            self.reserved = max(0, self.reserved - reserved)
            self.spent += max(0, spent)  # a call never gives tokens back
            self._changed.notify_all()

    def state(self) -> tuple[int, int]:
        with self._changed:
            return self.limit, self.spent


class StudyBudget:
    """A study's budget kept in the store (see module docstring). Thread-safe; one connection of its own."""

    def __init__(self, store: str | os.PathLike[str], study: str) -> None:
        self.study = study
        self._conn = connect(store)  # SQLite or Postgres, like the rest of the store
        self._lock = threading.Lock()  # one statement at a time on the shared connection
        self._changed = threading.Condition()  # a call of this process settled
        budgets.ensure_budgets(self._conn)

    @classmethod
    def open(cls, store: str | os.PathLike[str], study: str, limit: int | None) -> StudyBudget | None:
        """The study's budget with `limit` set (None: the stored one, if any), or None when it has none.

        Reservations left by a process that was killed are dropped: call this before the study's calls start.
        """
        budget = cls(store, study)
        with budget._lock:
            found = budgets.open_budget(budget._conn, study, limit)
        if not found:
            budget.close()
            return None
        return budget

    def reserve(self, tokens: int) -> bool:
        def take() -> bool:
            with self._lock:
                return budgets.try_reserve(self._conn, self.study, tokens)

        def spent_out() -> bool:
            limit, spent = self.state()
            return spent >= limit

        return _reserve_or_wait(take, spent_out, self._changed)

    def settle(self, reserved: int, spent: int) -> None:
        with self._lock:
            budgets.settle(self._conn, self.study, reserved, spent)
        with self._changed:
            self._changed.notify_all()

    def state(self) -> tuple[int, int]:
        with self._lock:
            return budgets.budget_state(self._conn, self.study)

    def close(self) -> None:
        self._conn.close()
