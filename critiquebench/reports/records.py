"""A study's runs and rounds as flat tables with documented columns, written as JSON lines, CSV or Parquet.

`run_records(db, study)` has one row per run (instance x scheme spec x trial) and `round_records(db, study)` one
row per round of every run; both carry the study's model, its endpoint (credentials and secret-looking query
values redacted), the temperature the run sampled at and the scheme's parameters, so a table read on its own
says what produced it. `RUN_COLUMNS` and `ROUND_COLUMNS` name, type and explain every column (README, "Exports");
`write_records` writes rows in one of `FORMATS` or raises `ExportError` (one line) before writing anything.
Files are written as `critiquebench.outputs` writes every output: a failed export leaves no half file behind,
and an output path that is a store is refused.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from critiquebench.outputs import open_output, spreadsheet_row

FORMATS = ("jsonl", "csv", "parquet")
TABLES = ("rounds", "runs")
ANALYSIS_HINT = "pip install 'critiquebench[analysis]' (scripts/setup.sh installs it)"


class ExportError(ValueError):
    """The export cannot be written as asked; the message is one line saying what to change."""


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # "str", "int", "float" or "bool" (every column may be empty)
    doc: str


_IDENTITY = (
    Column("study", "str", "study name"),
    Column("domain", "str", "domain name"),
    Column("scheme", "str", "scheme spec as the study lists it, e.g. sampling:k=5"),
    Column("scheme_name", "str", "the scheme without parameters, e.g. sampling"),
    Column("params", "str", "the scheme's parameters as a JSON object"),
    Column("instance", "str", "instance id"),
    Column("trial", "int", "repetition of (instance, scheme), from 0"),
)
_SETTINGS = (
    Column("model", "str", "model name at the endpoint"),
    Column("endpoint", "str", "base URL with secrets redacted; 'embedded', or the recorded source of a replay"),
    Column("temperature", "float", "sampling temperature of the run (the scheme's own when it sets one)"),
    Column("max_tokens", "int", "completion token limit per call"),
)
_USAGE = (
    Column("prompt_tokens", "int", "prompt tokens"),
    Column("completion_tokens", "int", "completion tokens"),
    Column("llm_calls", "int", "LLM calls, cache hits included"),
    Column("cache_hits", "int", "calls answered from the call cache"),
)
RUN_COLUMNS: tuple[Column, ...] = (
    *_IDENTITY,
    Column("status", "str", "done, failed, pending (stopped by the token budget) or running"),
    Column("correct", "bool", "the sound verifier accepted the answer the scheme output (empty until done)"),
    Column("final_answer", "str", "the raw text of the answer the scheme output"),
    Column("final_round", "int", "the round of that answer"),
    Column("rounds", "int", "rounds the run took"),
    *_USAGE,
    Column("error", "str", "why a failed run failed"),
    *_SETTINGS,
)
ROUND_COLUMNS: tuple[Column, ...] = (
    *_IDENTITY,
    Column("round", "int", "round number, from 1"),
    Column("answer", "str", "the model's raw answer"),
    Column("canonical", "str", "the parsed answer (JSON), empty when it did not parse"),
    Column("sound_status", "str", "the sound verifier's verdict: valid, invalid or malformed"),
    Column("sound_valid", "bool", "the sound verifier accepted the answer"),
    Column("llm_verdict", "bool", "an LLM verifier's verdict on the answer (empty when none judged it)"),
    Column("llm_critique", "str", "the LLM verifier's critique"),
    Column("feedback", "str", "what was handed back to the generator"),
    Column("stopped", "bool", "the scheme output this round's answer"),
    *_USAGE,
    *_SETTINGS,
)
COLUMNS = {"runs": RUN_COLUMNS, "rounds": ROUND_COLUMNS}


def endpoint_of(config: Mapping[str, Any]) -> str:
    """The endpoint a study talked to, as it may be shown: its redacted base URL, a replay's recorded source, or
    'embedded'."""
    from critiquebench.llm.urls import redact_url

    if config.get("base_url"):
        return redact_url(str(config["base_url"]))
    return str(config.get("endpoint_id") or "embedded")


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _common(row: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """The identity and settings columns of a run's row."""
    from critiquebench.reports.metrics import spec_of

    params = json.loads(row.get("params") or "{}")
    temperature = params.get("temperature")
    return {
        "study": row["study"],
        "domain": row["domain"],
        "scheme": spec_of(dict(row)),
        "scheme_name": str(row["scheme"]).partition(":")[0],
        "params": json.dumps(params, sort_keys=True),
        "instance": row["instance_id"],
        "trial": row["trial"],
        "model": config.get("model"),
        "endpoint": endpoint_of(config),
        "temperature": float(config.get("temperature", 0.0) if temperature is None else temperature),
        "max_tokens": config.get("max_tokens"),
    }


def _usage(row: Mapping[str, Any]) -> dict[str, Any]:
    return {c.name: row[c.name] for c in _USAGE}


def run_records(db: Any, study: str) -> list[dict[str, Any]]:
    """One row per run of `study`, with `RUN_COLUMNS` (ReportError when there is no such study)."""
    from critiquebench.llm.urls import redact_text
    from critiquebench.reports.metrics import study_config
    from critiquebench.store.reads import study_runs

    config = study_config(db, study)
    out = []
    for row in study_runs(db, study):
        record = _common(row, config)
        record.update(status=row["status"], correct=_flag(row["correct"]) if row["status"] == "done" else None,
                      final_answer=row["final_answer"], final_round=row["final_round"], rounds=row["rounds"],
                      error=redact_text(row["error"]) if row["error"] else None, **_usage(row))  # fmt: skip
        out.append({c.name: record[c.name] for c in RUN_COLUMNS})
    return out


def round_records(db: Any, study: str) -> list[dict[str, Any]]:
    """One row per round of every run of `study`, with `ROUND_COLUMNS` (ReportError when there is no such study)."""
    from critiquebench.reports.metrics import study_config
    from critiquebench.store.reads import study_rounds

    config = study_config(db, study)
    out = []
    for row in study_rounds(db, study):
        record = _common(row, config)
        record.update(round=row["round"], answer=row["answer"], canonical=row["canonical"],
                      sound_status=row["sound_status"], sound_valid=_flag(row["sound_valid"]),
                      llm_verdict=_flag(row["llm_verdict"]), llm_critique=row["llm_critique"],
                      feedback=row["feedback"], stopped=bool(row["stopped"]), **_usage(row))  # fmt: skip
        out.append({c.name: record[c.name] for c in ROUND_COLUMNS})
    return out


def records(db: Any, study: str, table: str) -> list[dict[str, Any]]:
    """The rows of `table` ("runs" or "rounds") of `study`."""
    if table not in TABLES:
        raise ExportError(f"--table must be one of {', '.join(TABLES)}, not {table!r}")
    return run_records(db, study) if table == "runs" else round_records(db, study)


def check_format(fmt: str, output: Path | None) -> None:
    """ExportError unless `fmt` can be written to `output` (None: standard output)."""
    if fmt not in FORMATS:
        raise ExportError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if fmt == "parquet":
        if output is None:
            raise ExportError("Parquet is binary: give --output FILE.parquet")
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ExportError(f"writing Parquet needs pyarrow: {ANALYSIS_HINT}") from None


def format_for(fmt: str | None, output: Path | None) -> str:
    """The format asked for, else the one the output file's suffix names, else JSON lines."""
    if fmt is not None:
        return fmt
    suffix = output.suffix.lower().lstrip(".") if output is not None else ""
    return {"csv": "csv", "parquet": "parquet", "pq": "parquet"}.get(suffix, "jsonl")


def write_records(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[Column],
    fmt: str,
    output: Path | None,
    stream: IO[str],
    stores: Sequence[Any] = (),
) -> int:
    """Write `rows` in `fmt` to the file `output` (replaced whole, only once written; never one of `stores`:
    see `critiquebench.outputs`) or to `stream`; the number of rows written."""
    check_format(fmt, output)
    if output is None:
        _write_text(rows, columns, fmt, stream)
        return len(rows)
    if fmt == "parquet":
        with open_output(output, stores, binary=True) as fp:
            _write_parquet(rows, columns, fp)
    else:
        with open_output(output, stores) as fp:
            _write_text(rows, columns, fmt, fp)
    return len(rows)


def _write_text(rows: Iterable[Mapping[str, Any]], columns: Sequence[Column], fmt: str, fp: IO[str]) -> None:
    names = [c.name for c in columns]
    if fmt == "jsonl":
        for row in rows:
            fp.write(json.dumps({n: row.get(n) for n in names}, ensure_ascii=False) + "\n")
        return
    writer = csv.DictWriter(fp, fieldnames=names, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(spreadsheet_row(dict(row)) for row in rows)


def arrow_schema(columns: Sequence[Column]) -> Any:
    """The pyarrow schema of `columns` (every field nullable), so types hold even for an all-empty column."""
    import pyarrow as pa

    types = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
    return pa.schema([pa.field(c.name, types[c.type]) for c in columns])


def _write_parquet(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column], fp: IO[bytes]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema(columns)
    table = pa.Table.from_pylist([{c.name: row.get(c.name) for c in columns} for row in rows], schema=schema)
    pq.write_table(table, fp)
