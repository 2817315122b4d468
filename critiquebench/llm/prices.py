"""What LLM tokens cost: a small shipped price table per model, which a user's TOML file extends or overrides.

Prices are USD per million tokens, prompt (`input`) and completion (`output`), each with the source it comes
from. A model missing from the table has no price: its cost is shown empty, never guessed. A user's file
(`--prices FILE`, or `$CRITIQUEBENCH_PRICES`) adds models or replaces shipped ones:

    [models."my-model"]
    input = 0.2        # USD per million prompt tokens
    output = 0.6       # USD per million completion tokens
    source = "my provider's price list, 2026-11"

Used by `run --dry-run`'s cost (when no --price-in/--price-out is given), the live display's cost so far, and the
exports' `cost_usd` column.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from critiquebench.domains.files import read_regular

PRICES_ENV = "CRITIQUEBENCH_PRICES"


# USD per million tokens: far above any price list (GPT-4's was 60), and low enough that no cost a study can
# reach overflows to a non-finite number (a price of 1e308 wrote `"cost_usd": Infinity`, which is not JSON)
MAX_PRICE = 1_000_000


class PriceError(ValueError):
    """A price file cannot be read; the message names the file and what to change."""


@dataclass(frozen=True)
class Price:
    input: float  # USD per million prompt tokens
    output: float  # USD per million completion tokens
    source: str

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        """USD for these tokens."""
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6


_OPENAI = "OpenAI's API price list (openai.com/api/pricing)"
# Only list prices we can cite; every other model (a local server's, an embedded one) has none here.
SHIPPED: dict[str, Price] = {
    # the papers' and PlanBench's GPT-4 runs (8k context), the price the shipped studies' dry runs are shown at
    "gpt-4": Price(30.0, 60.0, _OPENAI + ", gpt-4 (8k)"),
    "gpt-4-0613": Price(30.0, 60.0, _OPENAI + ", gpt-4-0613"),
    "gpt-4-0314": Price(30.0, 60.0, _OPENAI + ", gpt-4-0314"),
    "gpt-4-turbo": Price(10.0, 30.0, _OPENAI + ", gpt-4-turbo"),
    "gpt-4o": Price(2.5, 10.0, _OPENAI + ", gpt-4o (2024-08-06)"),
    "gpt-4o-mini": Price(0.15, 0.6, _OPENAI + ", gpt-4o-mini"),
    "gpt-3.5-turbo": Price(0.5, 1.5, _OPENAI + ", gpt-3.5-turbo-0125"),
}


def load_prices(path: str | os.PathLike[str] | None = None) -> dict[str, Price]:
    """The shipped table with the user's file (`path`, else `$CRITIQUEBENCH_PRICES`) over it."""
    table = dict(SHIPPED)
    chosen = path if path is not None else os.environ.get(PRICES_ENV) or None
    if chosen is not None:
        try:
            table.update(read_prices(Path(chosen)))
        except PriceError as exc:  # say where the path came from: the environment is easy to forget
            raise PriceError(f"{exc} (${PRICES_ENV})" if path is None else str(exc)) from None
    return table


def read_prices(path: Path) -> dict[str, Price]:
    """The `[models.NAME]` tables of a price file; PriceError (one line) for anything else."""
    try:
        data = tomllib.loads(read_regular(path).decode("utf-8"))
    except OSError as exc:
        raise PriceError(f"price file {path} cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise PriceError(f"price file {path} cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise PriceError(f"price file {path} is not TOML ({exc})") from None
    except RecursionError:
        raise PriceError(f"price file {path} is nested too deeply to read (arrays or tables in tables)") from None
    models = data.get("models")
    if set(data) - {"models"} or not isinstance(models, Mapping):
        raise PriceError(f'price file {path}: give one [models."NAME"] table per model (input, output, source)')
    out = {}
    for name, entry in models.items():
        if not isinstance(entry, Mapping) or set(entry) - {"input", "output", "source"}:
            raise PriceError(f"price file {path}: models.{name} takes input, output and source only")
        values = [entry.get("input"), entry.get("output")]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= MAX_PRICE
                   for v in values):  # fmt: skip
            raise PriceError(f"price file {path}: models.{name} needs input and output, USD per million tokens "
                             f"from 0 to {MAX_PRICE:,}")  # fmt: skip
        out[str(name)] = Price(float(values[0]), float(values[1]), str(entry.get("source") or str(path)))  # type: ignore[arg-type]
    return out


def price_of(model: str | None, table: Mapping[str, Price]) -> Price | None:
    """The price of `model` (None when the table has none)."""
    return table.get(model) if model else None
