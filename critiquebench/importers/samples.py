"""Import anyone's recorded samples (k answers per instance, generated elsewhere) as a study that replays them.

A source is JSON lines, CSV or Parquet (by the file's suffix), or rows given directly (a pandas DataFrame through
`critiquebench.api.import_samples`): one sample per row, `instance` and `response` required; optional `sample`
(its index; default: its order within its instance), `messages` (a list of {role, content}) or `prompt` (one user
message) for what was sent, `label` (the source's own verdict), `model` and `temperature`. A bad row is reported
by its line (or row) number and skipped; nothing is stored unless the import as a whole succeeds.

Every sample is judged by the domain's sound verifier once, here, and kept with its verdict (`store.samples`):
the pass@k and labels reports read those. Every sample also goes into the call cache under the key the study's
schemes ask (model, the recorded endpoint, the prompt, the sampling parameters, sample i), as `import planbench`
records its answers: `standard` (sample 0), `sampling:k=K` and `self-consistency:k=K` then replay through our own
graphs with 0 LLM calls (`critiquebench resume NAME --replay`). Where a row says what was sent and it differs
from our prompt, the recorded prompt is the domain's prompt for that instance (`recorded_prompts`): what a
replay sends and its transcript shows.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from critiquebench.domains import call_options, get_domain
from critiquebench.domains.contract import Domain, Instance, Transcribed
from critiquebench.domains.references import InstanceCache
from critiquebench.store.cache import CallCache, sampling_params
from critiquebench.store.db import opened, transaction
from critiquebench.store.results import has_runs, load_study, save_study
from critiquebench.store.samples import ensure_samples_schema, replace_samples
from critiquebench.studies.config import StudyConfig, canonical_schemes, validate

RECORDED_ENDPOINT = "recorded:samples"
DEFAULT_MODEL = "recorded"
DEFAULT_TEMPERATURE = 1.0  # a source that does not say: samples are drawn, not the one greedy answer
MAX_ANSWER_CHARS = 100_000  # as `score`: a runaway answer is judged on its first 100,000 characters
SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}
# Schemes the recorded samples answer alone (every call is sample i of the bare prompt); any other scheme needs
# new calls (a verifier's, or rounds with feedback).
REPLAYED = ("standard", "sampling", "self-consistency")
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


@dataclass(frozen=True)
class Imported:
    """What an import did: the study, how many samples of how many instances, rows skipped, and notes."""

    config: StudyConfig
    samples: int
    instances: int
    valid: int
    labelled: int
    bad: tuple[BadLine, ...]
    notes: tuple[str, ...] = ()
    left_out: tuple[str, ...] = field(default=())


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
                for number, record in enumerate(csv.DictReader(handle), start=2):  # line 1 is the header
                    yield number, {k: v for k, v in record.items() if k is not None and v != ""}
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
    except ValueError as exc:
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
    raise ValueError(f"'sample' must be an index >= 0, not {value!r}")


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
        except ValueError:
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
    text = str(int(value)) if isinstance(value, int | float) and float(value) in (0, 1) else str(value)
    if text.strip().lower() in _TRUE:
        return True
    if text.strip().lower() in _FALSE:
        return False
    raise ValueError(f"'label' must be true/false (or valid/invalid, 1/0), not {value!r}")


def _unrecorded(rows: Sequence[Row], base_url: str | None) -> tuple[str, ...]:
    """The sampling settings a replayed samples study cannot know: a sample file records no length cap, and maybe
    no temperature (with `base_url`, live schemes make real calls at the study's settings: nothing is left out)."""
    if base_url is not None:
        return ()
    return ("temperature", "max_tokens") if all(r.temperature is None for r in rows) else ("max_tokens",)


def _temperature(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not 0.0 <= number <= 2.0:
        raise ValueError(f"'temperature' must be a number in [0, 2], not {value!r}")
    return number


# ---- the import ----------------------------------------------------------------------------------------------


@dataclass
class _Judged:
    row: Row
    index: int
    verdict: Any
    canonical: str | None


def import_samples(
    source: Path | Any,
    store: Path | str,
    study: str,
    domain: str,
    *,
    options: Mapping[str, Any] | None = None,
    dataset: Path | None = None,
    ks: Sequence[int] | None = None,
    schemes: Sequence[str] = (),
    base_url: str | None = None,
    model: str | None = None,
    vote: str = "answer",
    fmt: str = "samples",
    fields: Mapping[str, str] | None = None,
) -> Imported:
    """Judge and record `source`'s samples as study `study` of `domain` (see the module docstring). `ks`: the k of
    the sampling and self-consistency schemes (default every k up to the most samples an instance has);
    `schemes`: more schemes, which need new LLM calls and are left out (with a note) unless `base_url` is given;
    `model`: the study's model (the endpoint's name for it), over the rows' own; `vote`: what self-consistency
    counts (`nodes.voting.VOTE_ON`: canonical answers, or reply texts as the self-verification study's code);
    `fmt` and `fields`: another tool's log, or where any JSON line holds each field (`importers.sample_formats`).
    Raises SamplesError (or ConfigError) when nothing can be imported."""
    options = dict(options or {})
    try:
        chosen = get_domain(domain, **options)
    except Exception as exc:  # noqa: BLE001 - unknown names, broken PDDL folders, bad options alike
        raise SamplesError(f"--domain {domain}: {exc}") from None
    if dataset is not None and not Path(dataset).exists():
        raise SamplesError(f"--dataset {dataset} does not exist")
    if isinstance(source, str | Path) and (fmt != "samples" or fields):
        from critiquebench.importers.sample_formats import format_rows

        records = format_rows(Path(source), fmt, fields or {})
    else:
        records = read_rows(source)
    parsed = [parse_row(number, record) for number, record in records]
    bad = [p for p in parsed if isinstance(p, BadLine)]
    rows = [p if model is None else replace(p, model=model) for p in parsed if isinstance(p, Row)]
    model, temperature, notes = _common(rows, bad)
    rows = [r for r in rows if (r.model or DEFAULT_MODEL) == model and _same(r.temperature, temperature)]
    judged, instances = _judge(chosen, rows, dataset, bad)
    if not judged:
        shown = "; ".join(b.describe() for b in sorted(bad, key=lambda b: b.line)[:3])
        raise SamplesError(f"no sample could be imported{': ' + shown if shown else ''}")
    per = {ref: len(items) for ref, items in judged.items()}
    ks = _ks(ks, per, notes)
    voted = "" if vote == "answer" else f",vote={vote}"
    wanted = ["standard", *(f"sampling:k={k}" for k in ks), *(f"self-consistency:k={k}{voted}" for k in ks)]
    extra, left_out = _extra_schemes(schemes, base_url)
    spec_list = canonical_schemes(tuple(dict.fromkeys([*wanted, *extra])))
    ids = [instances[ref].id for ref in judged]
    messages = {ref: _prompt(chosen, instances[ref], items) for ref, items in judged.items()}
    recorded = {instances[ref].id: list(m) for ref, (m, ours) in messages.items() if not ours}
    domain_options = {**options, **({"recorded_prompts": recorded} if recorded else {})}
    config = StudyConfig(
        name=study, domains=(domain,), instances={domain: _selection(ids)}, schemes=spec_list,
        dataset=str(Path(dataset).resolve()) if dataset else None, model=model, base_url=base_url,
        temperature=temperature, max_tokens=None, domain_options={domain: domain_options} if domain_options else {},
        endpoint_id=RECORDED_ENDPOINT, replay=base_url is None, unrecorded=_unrecorded(rows, base_url),
    )  # fmt: skip
    validate(config)
    stop = tuple(call_options(get_domain(domain, **domain_options)).get("stop") or ())
    params = sampling_params(temperature=temperature, max_tokens=None, stop=stop)
    with opened(store) as db:
        ensure_samples_schema(db)
        config = _with_existing(db, config)
        cache = CallCache(db)
        with transaction(db):  # every sample or none
            for ref, items in judged.items():
                sent = messages[ref][0]
                for item in items:
                    cache.put_recorded(model, RECORDED_ENDPOINT, sent, item.row.response, item.index, params)
            replace_samples(db, study, domain, _sample_rows(judged, instances, model, temperature))
            save_study(db, study, config.to_dict())
    valid = sum(item.verdict.valid for items in judged.values() for item in items)
    labelled = sum(item.row.label is not None for items in judged.values() for item in items)
    count = sum(per.values())
    return Imported(config, count, len(judged), valid, labelled, tuple(sorted(bad, key=lambda b: b.line)),
                    tuple(notes), tuple(left_out))  # fmt: skip


def _common(rows: list[Row], bad: list[BadLine]) -> tuple[str, float, list[str]]:
    """The study's model and temperature (the first row's); rows saying otherwise become bad lines."""
    notes: list[str] = []
    first = rows[0] if rows else Row(0, "", "")
    model = first.model or DEFAULT_MODEL
    temperature = first.temperature
    for row in rows:
        if (row.model or DEFAULT_MODEL) != model:
            bad.append(BadLine(row.line, f"model {row.model or DEFAULT_MODEL!r} is not the study's {model!r} "
                                         "(import each model as its own study)"))  # fmt: skip
        elif not _same(row.temperature, temperature):
            bad.append(BadLine(row.line, f"temperature {row.temperature} is not the study's {temperature} "
                                         "(import each temperature as its own study)"))  # fmt: skip
    if temperature is None:
        notes.append(f"no temperature recorded: the study says {DEFAULT_TEMPERATURE} (a cache-key label only)")
        temperature = DEFAULT_TEMPERATURE
    return model, temperature, notes


def _same(value: float | None, study: float | None) -> bool:
    return value is None or study is None or value == study


def _judge(domain: Domain, rows: list[Row], dataset: Path | None, bad: list[BadLine]
           ) -> tuple[dict[str, list[_Judged]], dict[str, Instance]]:  # fmt: skip
    """Each instance's samples in index order, judged; rows that cannot be (unknown instance, a repeated or
    missing index, a verifier failure) become bad lines."""
    found = InstanceCache(domain, Path(dataset) if dataset else None)
    found.preload(r.instance for r in rows)
    grouped: dict[str, list[Row]] = defaultdict(list)
    instances: dict[str, Instance] = {}
    for row in rows:
        instance = found.get(row.instance)
        if isinstance(instance, str):
            bad.append(BadLine(row.line, instance))
            continue
        instances[row.instance] = instance
        grouped[row.instance].append(row)
    judged: dict[str, list[_Judged]] = {}
    for ref, group in grouped.items():
        indexed = _indexed(group, bad)
        if not indexed:
            continue
        items = []
        for index, row in indexed:
            try:
                verdict, canonical = domain.assess(instances[ref], row.response[:MAX_ANSWER_CHARS])
            except Exception as exc:  # noqa: BLE001 - a verifier bug must not lose the other rows
                bad.append(BadLine(row.line, f"verifier failed: {exc}"))
                items = []
                break
            items.append(_Judged(row, index, verdict, canonical))
        if items:
            judged[ref] = items
    return judged, instances


def _indexed(group: list[Row], bad: list[BadLine]) -> list[tuple[int, Row]]:
    """An instance's rows by sample index (given, else the next free one in file order), which must be 0..n-1:
    a repeated index is a bad line, a gap makes the whole instance's rows bad (sample i of k would be missing)."""
    taken: dict[int, Row] = {}
    for row in group:
        if row.sample is None:
            continue
        if row.sample in taken:
            bad.append(BadLine(row.line, f"sample {row.sample} of instance {row.instance} is also line "
                                         f"{taken[row.sample].line}"))  # fmt: skip
            continue
        taken[row.sample] = row
    free = (i for i in range(len(group) * 2 + 1) if i not in taken)
    for row in group:
        if row.sample is None:
            taken[next(free)] = row
    if sorted(taken) != list(range(len(taken))):
        gap = next(i for i in range(len(taken)) if i not in taken)
        bad += [BadLine(r.line, f"instance {r.instance} has no sample {gap} (indices must be 0..n-1)")
                for r in taken.values()]  # fmt: skip
        return []
    return sorted(taken.items())


def _ks(given: Sequence[int] | None, per: Mapping[str, int], notes: list[str]) -> list[int]:
    most = max(per.values())
    if not given:
        return list(range(1, most + 1))
    ks = sorted(set(given))
    if ks[0] < 1 or ks[-1] > most:
        raise SamplesError(f"--k {','.join(map(str, ks))}: each k must be 1..{most} (the most samples an instance has)")
    short = sum(n < ks[-1] for n in per.values())
    if short:
        notes.append(f"{short} instance(s) have fewer than {ks[-1]} samples: their runs at larger k need new calls "
                     "(replay stops there); pass@k counts instances with at least k samples")  # fmt: skip
    return ks


def _extra_schemes(schemes: Sequence[str], base_url: str | None) -> tuple[list[str], list[str]]:
    """Schemes beyond the replayed ones: kept with an endpoint, else left out with one line each."""
    extra = [s for s in canonical_schemes(tuple(schemes)) if s.split(":")[0] not in REPLAYED]
    if base_url is not None:
        return extra, []
    return [], [f"{s} needs new LLM calls (beyond the recorded samples): left out; give --base-url URL (and the "
                "model's name as recorded) to make them" for s in extra]  # fmt: skip


def _prompt(domain: Domain, instance: Instance, items: list[_Judged]) -> tuple[list[dict[str, str]], bool]:
    """What the study's schemes send for `instance` (as the generator sends it), and whether it is our own
    prompt (else the recorded one, which the study keeps as the instance's prompt)."""
    ours = list(domain.prompt(instance))
    given = next((item.row.messages for item in items if item.row.messages is not None), None)
    chosen = ours if given is None or list(given) == ours else list(given)
    sent = list(domain.conversation(chosen)) if isinstance(domain, Transcribed) else chosen
    return sent, chosen is ours


def _selection(ids: Iterable[str]) -> str:
    """The instance selection naming exactly `ids` (dataset ids), or `gen:N:SEED` for generated ones."""
    ids = list(ids)
    if all(i.isdigit() for i in ids):
        return ",".join(sorted(ids, key=int))
    seeds = {i.split("-")[1] for i in ids if i.startswith("gen-") and i.count("-") == 2}
    if len(seeds) == 1 and all(i.startswith("gen-") for i in ids):
        return f"gen:{max(int(i.split('-')[2]) for i in ids)}:{seeds.pop()}"
    raise SamplesError("instances must be the domain's dataset ids (901, 2, ...) or generated ones (gen-SEED-I) "
                       f"to define a study; got {', '.join(ids[:3])}")  # fmt: skip


def _with_existing(db: Any, config: StudyConfig) -> StudyConfig:
    """`config`, or the stored study with this domain added (a samples study of the same model, temperature and
    schemes): importing a domain again replaces its samples; anything else is an error naming the clash."""
    stored = load_study(db, config.name)
    if stored is None:
        return config
    existing = StudyConfig.from_dict(stored)
    if not existing.differences(config):
        return existing
    shared = ("domains", "instances", "domain_options", "dataset")
    mine = {k: v for k, v in config.identity().items() if k not in shared}
    theirs = {k: v for k, v in existing.identity().items() if k not in shared}
    if existing.endpoint_id != RECORDED_ENDPOINT or mine != theirs or (existing.dataset or config.dataset) and \
            existing.dataset != config.dataset:  # fmt: skip
        raise SamplesError(f"study {config.name!r} already exists with another definition; choose another name "
                           f"(or critiquebench studies delete {config.name})")  # fmt: skip
    [domain] = config.domains
    if domain in existing.domains and has_runs(db, config.name):
        raise SamplesError(f"study {config.name!r} has replayed runs of {domain}: import the new samples as "
                           "another study")  # fmt: skip
    return replace(
        existing,
        domains=tuple(dict.fromkeys([*existing.domains, domain])),
        instances={**existing.instances, **config.instances},
        domain_options={**{d: v for d, v in existing.domain_options.items() if d != domain},
                        **config.domain_options},
    )  # fmt: skip


def _sample_rows(judged: Mapping[str, list[_Judged]], instances: Mapping[str, Instance], model: str,
                 temperature: float) -> Iterator[dict[str, Any]]:  # fmt: skip
    for ref, items in judged.items():
        for item in items:
            verdict = item.verdict
            yield {
                "instance_id": instances[ref].id, "sample": item.index, "line": item.row.line,
                "response": item.row.response, "answer": _shown(verdict.answer), "canonical": item.canonical,
                "sound_status": verdict.status, "sound_valid": int(verdict.valid),
                "reason": " ".join(verdict.errors) if verdict.errors else "",
                "label": None if item.row.label is None else int(item.row.label), "model": model,
                "temperature": temperature,
            }  # fmt: skip


def _shown(answer: Any) -> str | None:
    """A parsed answer as text (a plan's steps, a colouring: JSON)."""
    return answer if answer is None or isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
