"""A study's runs, rounds and LLM calls as flat tables with documented columns, written as JSON lines, CSV or Parquet.

`run_records(db, study)` has one row per run (instance x scheme spec x trial), `round_records(db, study)` one
row per round of every run and `call_records(db, study)` one row per recorded LLM call. Each row says what
produced it: the model, endpoint (credentials and secret-looking query values redacted), temperature and length
cap the run itself was made with (recorded on its row when it started, `critiquebench.studies.provenance`: a
study resumed on another endpoint keeps each earlier run's own), empty where its source did not record them;
runs add their cost, endpoint latency, timestamps, critiquebench version and git commit and the problem as the
model saw it; rounds the sound verifier's reason. `RUN_COLUMNS`, `ROUND_COLUMNS` and `CALL_COLUMNS` name, type
and explain every column (docs/reports.md, generated); `write_records` writes rows in one of `FORMATS` or raises
`ExportError` (one line) before writing anything. Files are written as `critiquebench.outputs` writes every
output: a failed export leaves no half file behind, and an output path that is a store is refused.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from critiquebench.outputs import json_text, open_output, spreadsheet_row

FORMATS = ("jsonl", "csv", "parquet")
TABLES = ("rounds", "runs", "calls")
ANALYSIS_HINT = "pip install '.[analysis]' in the critiquebench checkout (scripts/setup.sh installs it)"


class ExportError(ValueError):
    """The export cannot be written as asked; the message is one line saying what to change."""


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # "str", "int", "float" or "bool" (every column may be empty)
    doc: str


def row_columns(row: type, docs: Mapping[str, str]) -> tuple[Column, ...]:
    """The columns of a report's rows (a dataclass whose fields are its JSON/CSV columns, in order): each field's
    name and type (`int | None` is "int"; a mapping, JSON text in CSV, "str") with its meaning from `docs`, which
    must document every field and nothing else."""
    names = [f.name for f in fields(row)]
    if set(docs) != set(names):
        raise ValueError(f"{row.__name__} columns: undocumented {sorted(set(names) - set(docs))}, "
                         f"not fields {sorted(set(docs) - set(names))}")  # fmt: skip
    kinds = {f.name: str(f.type).split(" | ")[0] for f in fields(row)}
    return tuple(Column(n, kinds[n] if kinds[n] in ("int", "float", "bool") else "str", docs[n]) for n in names)


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
    Column("model", "str", "model the run called, as recorded when it started (runs stored before it was "
                           "recorded: the study's)"),
    Column("endpoint", "str", "where the run's calls went, as recorded when it started: the base URL with secrets "
                              "redacted, the embedded model's identity, or a replay's recorded source (runs stored "
                              "before: the endpoint of its first recorded call, else the study's)"),
    Column("temperature", "float", "sampling temperature of the run's calls (the scheme's own when it sets one); "
                                   "empty when its source did not record it"),
    Column("max_tokens", "int", "completion token limit per call; empty when the run had no cap or its source did "
                                "not record one (see unrecorded)"),
    Column("unrecorded", "str", "the settings among temperature, max_tokens that the run's source did not record "
                                "(a replayed PlanBench run: temperature,max_tokens), comma-separated; empty: all "
                                "recorded"),
)  # fmt: skip
_USAGE = (
    Column("prompt_tokens", "int", "prompt tokens"),
    Column("completion_tokens", "int", "completion tokens"),
    Column("llm_calls", "int", "LLM calls, cache hits included"),
    Column("cache_hits", "int", "calls answered from the call cache"),
)
_ROUND = Column("round", "int", "round number, from 1")
_LATENCY = Column("latency_s", "float", "seconds the endpoint took to answer the calls, from each request to its "
                                        "answer (cache hits at the time their call took when it was made); empty "
                                        "when no call was timed (imported or replayed answers)")  # fmt: skip
RUN_COLUMNS: tuple[Column, ...] = (
    *_IDENTITY,
    Column("status", "str", "done, failed, pending (stopped by the token budget) or running"),
    Column("correct", "bool", "the sound verifier accepted the answer the scheme output (empty until done)"),
    Column("final_answer", "str", "the raw text of the answer the scheme output"),
    Column("final_round", "int", "the round of that answer"),
    Column("rounds", "int", "rounds the run took"),
    *_USAGE,
    Column("cost_usd", "float", "what the run's calls would cost made afresh: USD of all its tokens at its model's "
                                "price, cache hits priced as the call they repeat (see critiquebench.llm.prices); "
                                "empty when the model has no price"),
    Column("spent_usd", "float", "USD of the calls this run made itself (cache_hit false in the calls table; "
                                 "replayed or imported answers cost nothing); empty when the model has no price"),
    Column("tokens_estimated", "bool", "some of the run's calls reported no usage (replays, imports): its tokens "
                                       "and cost are estimates at 4 characters a token"),
    _LATENCY,
    Column("started_at", "str", "when the run (last) started, ISO 8601 UTC; empty for runs stored before it was "
                                "recorded"),
    Column("finished_at", "str", "when a done or failed run ended, ISO 8601 UTC"),
    Column("error", "str", "why a failed run failed"),
    Column("study_failed", "bool", "a done run that ended where the study's own code failed on a reply (it marked "
                                   "the instance failed, or crashed): scored by its answer, as the study scored it"),
    *_SETTINGS,
    Column("version", "str", "critiquebench version that ran the run; empty for runs stored before it was recorded"),
    Column("git_commit", "str", "git commit of the critiquebench checkout that ran it (-dirty: with local changes); "
                                "empty outside a checkout"),
    Column("input", "str", "the problem as the model saw it: the last user message of the run's first generator "
                           "call; empty when that call is not recorded"),
)  # fmt: skip
ROUND_COLUMNS: tuple[Column, ...] = (
    *_IDENTITY,
    _ROUND,
    Column("answer", "str", "the model's raw answer"),
    Column("canonical", "str", "the parsed answer (JSON), empty when it did not parse"),
    Column("sound_status", "str", "the sound verifier's verdict: valid, invalid or malformed"),
    Column("sound_valid", "bool", "the sound verifier accepted the answer"),
    Column("sound_reason", "str", "why the sound verifier did not accept it (its error sentences); empty when valid"),
    Column("llm_verdict", "bool", "an LLM verifier's verdict on the answer (empty when none judged it)"),
    Column("llm_critique", "str", "the LLM verifier's critique"),
    Column("feedback", "str", "what was handed back to the generator"),
    Column("stopped", "bool", "the scheme output this round's answer"),
    Column("study_failed", "bool", "the study's own code failed on this round's reply (the run ended here)"),
    *_USAGE,
    _LATENCY,
    *_SETTINGS,
)
CALL_COLUMNS: tuple[Column, ...] = (
    *_IDENTITY,
    _ROUND,
    Column("node", "str", "the graph node that made the call: generator, critic, verifier, ..."),
    Column("call", "int", "the call's place among its node's calls in that round, from 0"),
    Column("key", "str", "the call's cache key"),
    Column("model", "str", "model called"),
    Column("endpoint", "str", "the endpoint's identity (no credentials, no query), or a replay's recorded source"),
    Column("temperature", "float", "the call's sampling temperature; empty when the run's source did not record it"),
    Column("max_tokens", "int", "the call's completion token limit; empty: no cap, or not recorded"),
    *_USAGE[:2],  # prompt and completion tokens
    Column("tokens_estimated", "bool", "the endpoint reported no usage: tokens counted at 4 characters a token"),
    Column("cache_hit", "bool", "false on the one row of the run that made the call, true on every reuse of it "
                                "(another run's, an earlier study's, or a replayed or imported answer)"),
    Column("latency_s", "float", "seconds from the request to its answer (the answering attempt); empty when the "
                                 "call was never timed (imported or replayed answers)"),
    Column("created_at", "str", "when the call was answered, ISO 8601 UTC"),
)
COLUMNS = {"runs": RUN_COLUMNS, "rounds": ROUND_COLUMNS, "calls": CALL_COLUMNS}


def endpoint_of(config: Mapping[str, Any]) -> str:
    """The endpoint a study was defined with, as it may be shown: its redacted base URL, a replay's recorded
    source, or 'embedded'."""
    from critiquebench.llm.urls import redact_url

    if config.get("base_url"):
        return redact_url(str(config["base_url"]))
    return str(config.get("endpoint_id") or "embedded")


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _when(ts: Any) -> str | None:
    """A Unix time as ISO 8601 UTC (milliseconds); None for none."""
    if not ts:
        return None
    return datetime.fromtimestamp(float(ts), UTC).isoformat(timespec="milliseconds")


@dataclass
class _Study:
    """What every row of one study's export is built from, read once: its definition, its runs' recorded steps
    (thread id -> round -> [(node, call keys, sound reason)]) and the facts of those calls."""

    config: dict[str, Any]
    steps: dict[str, dict[int, list[tuple[str, list[str], str | None]]]]
    calls: dict[str, dict[str, Any]]
    created_at: float = 0.0  # when the study was defined: a call answered before it is not one the study made

    @classmethod
    def read(cls, db: Any, study: str) -> _Study:
        from critiquebench.store.reads import call_facts, study_created_at, study_steps
        from critiquebench.studies.define import study_config

        config = study_config(db, study)
        steps: dict[str, dict[int, list[tuple[str, list[str], str | None]]]] = {}
        for tid, round_, node, keys, reason in study_steps(db, study):
            steps.setdefault(tid, {}).setdefault(round_, []).append((node, keys, reason))
        keys = [k for rounds in steps.values() for nodes in rounds.values() for _, ks, _ in nodes for k in ks]
        return cls(config, steps, call_facts(db, keys), study_created_at(db, study))

    def makers(self, runs: Iterable[Mapping[str, Any]]) -> dict[str, str]:
        """Cache key -> thread id of the run that made the call: the first run to use the key, in the order the
        runs started, when the call was answered by an endpoint after the study was defined; every other use is a
        reuse (the store records no maker per call, and a run cannot make a call before its study exists)."""
        made: dict[str, str] = {}
        seen: set[str] = set()
        for row in sorted(runs, key=lambda r: (r.get("started_at") or 0.0, str(r["thread_id"]))):
            tid = str(row["thread_id"])
            for key in self.keys(tid):
                if key in seen:
                    continue
                seen.add(key)
                call = self.calls.get(key)
                if call and not _recorded(call) and float(call["created_at"] or 0) >= self.created_at:
                    made[key] = tid
        return made

    def keys(self, tid: str, round_: int | None = None) -> list[str]:
        rounds = self.steps.get(tid, {})
        chosen = rounds.values() if round_ is None else [rounds.get(round_, [])]
        return [k for nodes in chosen for _, ks, _ in nodes for k in ks]

    def latency(self, tid: str, round_: int | None = None) -> float | None:
        found = [t for k in self.keys(tid, round_) if k in self.calls and (t := _timed(self.calls[k])) is not None]
        return float(sum(found)) if found else None

    def reason(self, tid: str, round_: int) -> str | None:
        return next((r for _, _, r in self.steps.get(tid, {}).get(round_, []) if r), None)

    def settings(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The model, endpoint, temperature, cap and unrecorded settings of a run's row: as recorded on it, or
        for a run stored before they were (no `model` on its row) the study's, with the endpoint its first
        recorded call went to."""
        from critiquebench.studies.provenance import unrecorded_settings

        params = json.loads(row.get("params") or "{}")
        if row.get("model") is not None:
            model, endpoint = row["model"], row.get("endpoint")
            temperature, cap = row.get("temperature"), row.get("max_tokens")
            unrecorded = tuple(filter(None, str(row.get("unrecorded") or "").split(",")))
        else:
            first = next((self.calls[k] for k in self.keys(str(row["thread_id"])) if k in self.calls), None)
            model, endpoint = self.config.get("model"), first["endpoint"] if first else endpoint_of(self.config)
            temperature, cap = self.config.get("temperature", 0.0), self.config.get("max_tokens")
            unrecorded = unrecorded_settings(self.config)
        if params.get("temperature") is not None:
            temperature = params["temperature"]
        return {
            "model": model,
            "endpoint": endpoint,
            "temperature": None if "temperature" in unrecorded or temperature is None else float(temperature),
            "max_tokens": None if "max_tokens" in unrecorded else cap,
            "unrecorded": ",".join(unrecorded) or None,
        }


def _recorded(call: Mapping[str, Any]) -> bool:
    """An answer imported from a file (PlanBench's, recorded samples): no endpoint was called for it."""
    return str(call.get("endpoint") or "").startswith("recorded:")


def _timed(call: Mapping[str, Any]) -> float | None:
    """The call's latency; None for an answer never timed (imports store 0: no request takes no time at all)."""
    latency = call.get("latency_s")
    return None if _recorded(call) or not latency else float(latency)


def _identity(row: Mapping[str, Any]) -> dict[str, Any]:
    """The identity columns of a run's (or its round's) row."""
    from critiquebench.studies.threads import spec_of

    return {
        "study": row["study"],
        "domain": row["domain"],
        "scheme": spec_of(dict(row)),
        "scheme_name": str(row["scheme"]).partition(":")[0],
        "params": json.dumps(json.loads(row.get("params") or "{}"), sort_keys=True),
        "instance": row["instance_id"],
        "trial": row["trial"],
    }


def _usage(row: Mapping[str, Any]) -> dict[str, Any]:
    return {c.name: row[c.name] for c in _USAGE}


def run_records(db: Any, study: str, prices: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One row per run of `study`, with `RUN_COLUMNS` (ReportError when there is no such study); `prices`: the
    price table (default: `critiquebench.llm.prices.load_prices()`)."""
    from critiquebench.llm.prices import load_prices, price_of
    from critiquebench.llm.urls import redact_text
    from critiquebench.store.reads import calls_by_key, study_runs

    facts = _Study.read(db, study)
    table = load_prices() if prices is None else prices
    rows = study_runs(db, study)
    made = facts.makers(rows)
    firsts = {tid: k for tid in facts.steps for k in _first_generator_call(facts, tid)}
    inputs = {key: _last_user(messages) for key, messages, _ in calls_by_key(db, firsts.values())} if firsts else {}
    out = []
    for row in rows:
        tid = str(row["thread_id"])
        record = {**_identity(row), **facts.settings(row)}
        price = price_of(record["model"], table)
        finished = row["status"] in ("done", "failed")
        own = [facts.calls[k] for k in dict.fromkeys(facts.keys(tid)) if made.get(k) == tid]
        used = [facts.calls[k] for k in facts.keys(tid) if k in facts.calls]
        record.update(status=row["status"], correct=_flag(row["correct"]) if row["status"] == "done" else None,
                      final_answer=row["final_answer"], final_round=row["final_round"], rounds=row["rounds"],
                      error=redact_text(row["error"]) if row["error"] else None, **_usage(row),
                      cost_usd=price.cost(row["prompt_tokens"], row["completion_tokens"]) if price else None,
                      spent_usd=sum(price.cost(c["prompt_tokens"], c["completion_tokens"]) for c in own)
                      if price else None, tokens_estimated=any(bool(c["tokens_estimated"]) for c in used),
                      latency_s=facts.latency(tid), started_at=_when(row.get("started_at")),
                      finished_at=_when(row.get("updated_at")) if finished else None, version=row.get("version"),
                      git_commit=row.get("git_commit"), input=inputs.get(firsts.get(tid, "")),
                      study_failed=bool(row.get("study_failed")))  # fmt: skip
        out.append({c.name: record[c.name] for c in RUN_COLUMNS})
    return out


def _first_generator_call(facts: _Study, tid: str) -> list[str]:
    """The key of a run's first generator call (its first round's), as a list of at most one."""
    rounds = facts.steps.get(tid, {})
    for round_ in sorted(rounds):
        for node, keys, _ in rounds[round_]:
            if node == "generator" and keys:
                return keys[:1]
    return []


def _last_user(messages: Any) -> str | None:
    return next((m.get("content") for m in reversed(messages or []) if m.get("role") == "user"), None)


def round_records(db: Any, study: str) -> list[dict[str, Any]]:
    """One row per round of every run of `study`, with `ROUND_COLUMNS` (ReportError when there is no such study)."""
    from critiquebench.store.reads import study_rounds, study_runs

    facts = _Study.read(db, study)
    runs = {r["thread_id"]: r for r in study_runs(db, study, answers=False)}
    out = []
    for row in study_rounds(db, study):
        tid = str(row["thread_id"])
        record = {**_identity(row), **facts.settings(runs.get(tid, row))}
        record.update(round=row["round"], answer=row["answer"], canonical=row["canonical"],
                      sound_status=row["sound_status"], sound_valid=_flag(row["sound_valid"]),
                      sound_reason=facts.reason(tid, row["round"]), llm_verdict=_flag(row["llm_verdict"]),
                      llm_critique=row["llm_critique"], feedback=row["feedback"], stopped=bool(row["stopped"]),
                      study_failed=bool(row.get("study_failed")), latency_s=facts.latency(tid, row["round"]),
                      **_usage(row))  # fmt: skip
        out.append({c.name: record[c.name] for c in ROUND_COLUMNS})
    return out


def call_records(db: Any, study: str) -> list[dict[str, Any]]:
    """One row per recorded LLM call of every run of `study`, in run, round and call order, with `CALL_COLUMNS`
    (calls no longer in the cache are left out)."""
    from critiquebench.store.reads import study_runs

    facts = _Study.read(db, study)
    runs = study_runs(db, study, answers=False)
    made = facts.makers(runs)
    shown: set[tuple[str, str]] = set()
    out = []
    for row in runs:
        tid = str(row["thread_id"])
        unrecorded = facts.settings(row)["unrecorded"] or ""
        for round_, nodes in sorted(facts.steps.get(tid, {}).items()):
            for node, keys, _ in nodes:
                for i, key in enumerate(keys):
                    call = facts.calls.get(key)
                    if call is None:
                        continue
                    params = call["params"]
                    # a run reusing its own call (the same request again) made it once: its first row
                    hit = made.get(key) != tid or (key, tid) in shown
                    shown.add((key, tid))
                    out.append({**_identity(row), "round": round_, "node": node, "call": i, "key": key,
                                "model": call["model"], "endpoint": call["endpoint"],
                                "temperature": None if "temperature" in unrecorded else params.get("temperature"),
                                "max_tokens": None if "max_tokens" in unrecorded else params.get("max_tokens"),
                                "prompt_tokens": call["prompt_tokens"], "completion_tokens": call["completion_tokens"],
                                "tokens_estimated": _flag(call["tokens_estimated"]),
                                "cache_hit": hit,
                                "latency_s": _timed(call),
                                "created_at": _when(call["created_at"])})  # fmt: skip
    return out


def records(db: Any, study: str, table: str) -> list[dict[str, Any]]:
    """The rows of `table` ("runs", "rounds" or "calls") of `study`."""
    if table not in TABLES:
        raise ExportError(f"--table must be one of {', '.join(TABLES)}, not {table!r}")
    builders = {"runs": run_records, "rounds": round_records, "calls": call_records}
    return builders[table](db, study)


def check_format(fmt: str, output: Path | None) -> None:
    """ExportError unless `fmt` can be written to `output` (None: standard output)."""
    from critiquebench.outputs import OutputError, check_suffix

    if fmt not in FORMATS:
        raise ExportError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    try:
        check_suffix(output, fmt)
    except OutputError as exc:
        raise ExportError(str(exc)) from None
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
            fp.write(json_text({n: row.get(n) for n in names}, ensure_ascii=False) + "\n")
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
