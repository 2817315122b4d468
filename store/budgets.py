"""Studies' token budgets (`critiquebench.llm.budget.StudyBudget`): limits and spending shared by every process.

Table
- `budgets(study PK, limit_tokens, spent_tokens, reserved_tokens)`: `reserved_tokens` is what calls in flight
  may still spend. One UPDATE checks and reserves, so processes sharing the store never both take the last
  tokens.
"""

from __future__ import annotations

from critiquebench.store.db import Store, ensure_tables

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS budgets (study TEXT PRIMARY KEY, limit_tokens INTEGER NOT NULL,
        spent_tokens INTEGER NOT NULL DEFAULT 0, reserved_tokens INTEGER NOT NULL DEFAULT 0)""",
)


def ensure_budgets(db: Store) -> None:
    ensure_tables(db, SCHEMA)


def open_budget(db: Store, study: str, limit: int | None) -> bool:
    """Set the study's limit (None: keep the stored one) and drop reservations left by killed processes; False
    when the study has no budget."""
    if limit is not None:
        db.execute(
            "INSERT INTO budgets (study, limit_tokens) VALUES (?, ?) "
            "ON CONFLICT(study) DO UPDATE SET limit_tokens = excluded.limit_tokens",
            [study, limit],
        )
    return bool(db.execute("UPDATE budgets SET reserved_tokens = 0 WHERE study = ?", [study]).rowcount)


def try_reserve(db: Store, study: str, tokens: int) -> bool:
    """Reserve `tokens` while the tokens spent and reserved are below the limit (one statement)."""
    return bool(
        db.execute(
            "UPDATE budgets SET reserved_tokens = reserved_tokens + ? "
            "WHERE study = ? AND spent_tokens + reserved_tokens < limit_tokens",
            [tokens, study],
        ).rowcount
    )


def settle(db: Store, study: str, reserved: int, spent: int) -> None:
    """Replace a call's reservation by the tokens it spent."""
    db.execute(
        "UPDATE budgets SET reserved_tokens = MAX(0, reserved_tokens - ?), spent_tokens = spent_tokens + ? "
        "WHERE study = ?",
        [reserved, max(0, spent), study],  # a call never gives tokens back
    )


def budget_state(db: Store, study: str) -> tuple[int, int]:
    """(limit, tokens spent) of the study's budget; (0, 0) without one."""
    row = db.execute("SELECT limit_tokens, spent_tokens FROM budgets WHERE study = ?", [study]).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)
