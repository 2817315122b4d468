"""Other tools' sample logs as rows for `import samples` (`--from lm-eval`, `--from inspect`, `--field`).

Each reader yields what `importers.samples.read_rows` yields: (line or row number, a mapping with
`parse_row`'s fields: instance, response, sample, ...; or the reason the line is not one), so every format goes
through the same row parser, judging and study writer.

- `lm-eval`: lm-evaluation-harness's `--log_samples` file (`samples_TASK_*.jsonl`): one JSON object per document
  with `doc_id`, `doc`, `target`, `resps` (per request, the list of generations: `[[g1, g2, ...]]` with
  `repeats`) and `filtered_resps`. Each generation of `resps` is one sample (`--field response=filtered_resps`
  reads the filtered ones instead); the instance id is `doc_id` unless `--field instance=PATH` names it (a
  domain's ids are rarely the harness's document index: e.g. `--field instance=doc.rank`).
- `inspect`: an inspect_ai eval log (`.eval` or `.json`), read with inspect_ai's own `read_eval_log`: one sample
  per (sample, epoch), the instance id from the sample's `id` unless `--field instance=metadata.KEY`, the
  response its output's completion, the epoch its sample index.
- any JSON lines with `--field response=PATH --field instance=PATH` (and optionally sample, label, model,
  temperature): PATH is dotted, list items by index (`doc.numbers`, `resps.0`); a response PATH that holds a list
  of texts gives one sample per text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from critiquebench.importers.sample_rows import SamplesError

FORMATS = ("samples", "lm-eval", "inspect")
FIELDS = ("instance", "response", "sample", "label", "model", "temperature", "prompt", "messages")

Rows = Iterator[tuple[int, Mapping[str, Any] | str]]


class FormatError(SamplesError):
    """The file cannot be read in the format asked for; one line."""


def parse_fields(given: list[str] | None) -> dict[str, str]:
    """`--field NAME=PATH` flags as {name: path}; FormatError for an unknown name or a flag without "="."""
    fields: dict[str, str] = {}
    for text in given or []:
        name, sep, path = text.partition("=")
        if not sep or not path.strip():
            raise FormatError(f"--field {text}: write NAME=PATH, e.g. response=resps.0 or instance=doc.id")
        if name.strip() not in FIELDS:
            raise FormatError(f"--field {text}: NAME is one of {', '.join(FIELDS)}")
        fields[name.strip()] = path.strip()
    return fields


def at(value: Any, path: str) -> Any:
    """The value at dotted `path` in `value` (dict keys; list items by index); None where it leads nowhere."""
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part)
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _texts(value: Any) -> list[Any]:
    """A response value as its samples: a list (of lists, as lm-eval nests them) flattened, else itself."""
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]
    return [value]


def mapped_rows(records: Rows, fields: Mapping[str, str], defaults: Mapping[str, str] | None = None) -> Rows:
    """Rows whose fields are read from each record at `fields`' paths (over `defaults`); a response path that
    holds several texts gives one row per text, numbered as samples 0, 1, ... unless a sample path says."""
    paths = {**(defaults or {}), **fields}
    for number, record in records:
        if isinstance(record, str):
            yield number, record
            continue
        row = {name: at(record, path) for name, path in paths.items() if name != "response"}
        texts = _texts(at(record, paths["response"])) if "response" in paths else [None]
        if not texts:
            yield number, f"no response at {paths['response']!r}"
            continue
        for i, text in enumerate(texts):
            sample = row.get("sample")
            yield number, {**row, "response": text, "sample": i if sample is None or len(texts) > 1 else sample}


def json_lines(path: Path) -> Rows:
    from critiquebench.importers.sample_rows import read_rows

    if path.suffix.lower() not in (".jsonl", ".ndjson", ".json"):
        raise FormatError(f"{path}: --from lm-eval and --field read JSON lines (.jsonl)")
    yield from read_rows(path)


def lm_eval_rows(path: Path, fields: Mapping[str, str]) -> Rows:
    """lm-evaluation-harness `--log_samples` lines as rows (see the module docstring)."""
    return mapped_rows(json_lines(path), fields, {"instance": "doc_id", "response": "resps"})


def inspect_rows(path: Path, fields: Mapping[str, str]) -> Rows:
    """An inspect_ai eval log's samples as rows, read by inspect_ai's own reader (see the module docstring)."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise FormatError("--from inspect reads logs with inspect_ai's own reader: pip install '.[interop]' in the "
                          "critiquebench checkout") from None
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - a missing file, a log of another version, a corrupt zip alike
        raise FormatError(f"{path}: not an inspect_ai eval log ({' '.join(str(exc).split())[:200]})") from None
    model = getattr(log.eval, "model", None)
    temperature = getattr(getattr(log.plan, "config", None), "temperature", None) if log.plan else None
    records = []
    for number, sample in enumerate(log.samples or [], start=1):
        record = json.loads(sample.model_dump_json())
        record.update(instance=str(sample.id), response=sample.output.completion if sample.output else None,
                      sample=max(int(sample.epoch or 1) - 1, 0), model=model, temperature=temperature)  # fmt: skip
        records.append((number, record))
    if not fields:
        yield from ((n, {k: r[k] for k in ("instance", "response", "sample", "model", "temperature")})
                    for n, r in records)  # fmt: skip
        return
    keep = {"instance": "instance", "response": "response", "sample": "sample", "model": "model",
            "temperature": "temperature"}  # fmt: skip
    yield from mapped_rows(iter(records), fields, keep)


def format_rows(path: Path, fmt: str, fields: Mapping[str, str]) -> Rows:
    """Rows of file `path` in format `fmt` (`FORMATS`; "samples" with `fields` maps any JSON lines)."""
    from critiquebench.importers.sample_rows import read_rows

    if fmt == "lm-eval":
        return lm_eval_rows(path, fields)
    if fmt == "inspect":
        return inspect_rows(path, fields)
    if fmt != "samples":
        raise FormatError(f"--from {fmt}: one of {', '.join(FORMATS)}")
    if fields:
        return mapped_rows(json_lines(path), fields)
    return read_rows(path)
