"""Rows of a samples source (JSON lines, CSV, Parquet or a DataFrame) read into `Row`s, or `BadLine`s saying why
not, for `import samples` (`importers.samples`)."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# a CSV cell may be as long as an answer a JSON line brings (a 60 MB one was imported); csv's own limit of 131,072
# characters kept long answers out of CSV altogether
MAX_CSV_CELL_CHARS = 64 * 2**20
SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}
_TRUE = {"true", "1", "yes", "valid", "correct", "pass", "passed"}
_FALSE = {"false", "0", "no", "invalid", "incorrect", "wrong", "fail", "failed"}


class SamplesError(ValueError):
    """The import cannot go ahead; the message is one line."""


@dataclass(frozen=True)
class Row:
    """One sample as read from the source."""

    line: int
    instance: str
    response: str
    sample: int | None = None
    messages: tuple[dict[str, str], ...] | None = None
    label: bool | None = None
    model: str | None = None
    temperature: float | None = None


@dataclass(frozen=True)
class BadLine:
    line: int
    reason: str

    def describe(self) -> str:
        return f"line {self.line}: {self.reason}"


# ---- reading rows ------------------------------------------------------------------------------------------


def read_rows(source: Path | Any) -> Iterator[tuple[int, Mapping[str, Any] | str]]:
    """(line or row number, the row as a mapping, or why it is not one) for every non-blank row of `source`."""
    if not isinstance(source, str | Path):
        if not hasattr(source, "to_dict"):
            raise SamplesError("samples must be a file (.jsonl, .csv, .parquet) or a pandas DataFrame")
        for number, record in enumerate(source.to_dict("records"), start=1):
            yield number, record
        return
    path = Path(source)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise SamplesError(f"{path}: a samples file is .jsonl, .csv or .parquet ({', '.join(SUFFIXES)})")
    try:
        if kind == "parquet":
            import pandas

            yield from read_rows(pandas.read_parquet(path))
            return
        with path.open(encoding="utf-8", errors="replace", newline="") as handle:
            if kind == "csv":
                csv.field_size_limit(max(csv.field_size_limit(), MAX_CSV_CELL_CHARS))
                reader = csv.DictReader(handle)
                try:
                    for number, record in enumerate(reader, start=2):  # line 1 is the header
                        yield number, {k: v for k, v in record.items() if k is not None and v != ""}
                except csv.Error as exc:  # the reader cannot go on past it: the file is refused, naming the line
                    raise SamplesError(f"{path}: line {reader.line_num}: {exc}; nothing was imported") from None
                return
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, _json_object(line)
    except ImportError as exc:
        raise SamplesError(f"{path}: reading Parquet needs the analysis extra ({exc})") from None
    except OSError as exc:
        raise SamplesError(f"{path}: {exc.strerror or exc}") from None


def _json_object(line: str) -> Mapping[str, Any] | str:
    try:
        item = json.loads(line)
    except ValueError as exc:
        return f"bad JSON: {exc}"
    except RecursionError:
        return "bad JSON: nested too deeply to read"
    return item if isinstance(item, dict) else "a line must be a JSON object"


def parse_row(number: int, record: Mapping[str, Any] | str) -> Row | BadLine:
    """The row's sample, or the first reason it is not one."""
    if isinstance(record, str):
        return BadLine(number, record)
    record = {k: v for k, v in record.items() if not _missing(v)}
    instance = record.get("instance")
    if isinstance(instance, float) and instance.is_integer():  # a CSV/Parquet column of ids read as numbers
        instance = int(instance)
    if isinstance(instance, int) and not isinstance(instance, bool):
        instance = str(instance)
    if not isinstance(instance, str) or not instance.strip():
        return BadLine(number, "missing 'instance' (an instance id of the domain)")
    response = record.get("response")
    if not isinstance(response, str):
        return BadLine(number, "missing 'response' (the sampled answer text)")
    try:
        sample = _index(record.get("sample"))
        messages = _messages(record.get("messages"), record.get("prompt"))
        label = _label(record.get("label"))
        temperature = _temperature(record.get("temperature"))
    except (ValueError, OverflowError, RecursionError) as exc:  # a value Python cannot hold is a bad row too
        return BadLine(number, str(exc))
    model = record.get("model")
    if model is not None and not isinstance(model, str):
        return BadLine(number, f"'model' must be a string, not {model!r}")
    return Row(number, instance.strip(), response, sample, messages, label, model, temperature)


def _missing(value: Any) -> bool:
    """None, or a DataFrame's missing value (NaN)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _index(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if hasattr(value, "__index__") and not isinstance(value, bool) and int(value) >= 0:
        return int(value)
    raise ValueError(f"'sample' must be an index >= 0, not {value!r:.40}")


def _messages(messages: Any, prompt: Any) -> tuple[dict[str, str], ...] | None:
    if messages is None:
        if prompt is None:
            return None
        if not isinstance(prompt, str):
            raise ValueError(f"'prompt' must be the text sent, not {type(prompt).__name__}")
        return ({"role": "user", "content": prompt},)
    if isinstance(messages, str):  # a CSV cell
        try:
            messages = json.loads(messages)
        except (ValueError, RecursionError):
            raise ValueError("'messages' must be a JSON list of {role, content}") from None
    if hasattr(messages, "tolist"):  # a Parquet list column
        messages = messages.tolist()
    ok = isinstance(messages, list) and messages and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
        for m in messages
    )  # fmt: skip
    if not ok:
        raise ValueError("'messages' must be a non-empty list of {role, content} strings")
    return tuple({"role": m["role"], "content": m["content"]} for m in messages)


def _label(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    # compared, not converted: float() of a 401-digit integer overflows
    text = str(int(value)) if isinstance(value, int | float) and value in (0, 1) else str(value)
    if text.strip().lower() in _TRUE:
        return True
    if text.strip().lower() in _FALSE:
        return False
    raise ValueError(f"'label' must be true/false (or valid/invalid, 1/0), not {value!r:.40}")


def _temperature(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not 0.0 <= number <= 2.0:
        raise ValueError(f"'temperature' must be a number in [0, 2], not {value!r:.40}")
    return number
