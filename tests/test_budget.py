"""The token budget: reserved before each call, so concurrent calls (threads, or processes sharing a store)
overshoot it by at most the calls in flight; kept in the store across sessions."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from critiquebench.llm.budget import StudyBudget, TokenBudget


def spend(budget: TokenBudget | StudyBudget, calls: int, tokens: int, in_flight: list[int]) -> int:
    made = 0
    for _ in range(calls):
        if not budget.reserve(tokens):
            break
        in_flight.append(1)
        time.sleep(0.002)  # the call
        in_flight.pop()
        budget.settle(tokens, tokens)
        made += 1
    return made


def test_threads_on_two_handles_of_one_store_never_pass_the_limit_by_more_than_in_flight(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    first = StudyBudget.open(store, "s", 1000)
    second = StudyBudget.open(store, "s", None)  # another process resuming the same study
    assert first is not None and second is not None
    in_flight: list[int] = []
    made: list[int] = []
    threads = [
        threading.Thread(target=lambda b=b: made.append(spend(b, 50, 60, in_flight)))
        for b in (first, second) * 8
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    limit, spent = first.state()
    assert limit == 1000 and spent == 60 * sum(made)
    # a call starts while spent + reserved < 1000 and reserves all it spends: the last one may pass by < 60
    assert 1000 <= spent < 1000 + 60, spent
    assert not first.reserve(1)  # spent out: refused at once, nothing waits
    first.close()
    second.close()
    again = StudyBudget.open(store, "s", None)  # a later session sees what was spent
    assert again is not None and again.state() == (1000, spent)
    raised = StudyBudget.open(store, "s", 2000)
    assert raised is not None and raised.reserve(60)
    assert StudyBudget.open(store, "other", None) is None  # a study without a budget has none


def test_a_call_waits_for_calls_in_flight_instead_of_being_refused() -> None:
    budget = TokenBudget(100)
    assert budget.reserve(100)  # in flight, may spend all 100
    refused: list[bool] = []
    waiter = threading.Thread(target=lambda: refused.append(not budget.reserve(90)))
    waiter.start()
    time.sleep(0.1)
    assert waiter.is_alive()  # 100 reserved, nothing spent: it waits
    budget.settle(100, 20)  # the call spent 20: the waiter may go
    waiter.join(2)
    assert refused == [False] and budget.state() == (100, 20)
