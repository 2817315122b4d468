"""Import anyone's recorded samples (k answers per instance, generated elsewhere) as a study that replays them.

A source is JSON lines, CSV or Parquet (by the file's suffix), or rows given directly (a pandas DataFrame through
`critiquebench.api.import_samples`): one sample per row, `instance` and `response` required; optional `sample`
(its index; default: its order within its instance), `messages` (a list of {role, content}) or `prompt` (one user
message) for what was sent, `label` (the source's own verdict), `model` and `temperature`. A bad row is reported
by its line (or row) number and skipped; nothing is stored unless the import as a whole succeeds.

Every sample is judged by the domain's sound verifier once, here, and kept with its verdict (`store.samples`):
the pass@k and labels reports read those. Every sample also goes into the call cache under the key the study's
schemes ask (model, the study's recorded endpoint, the prompt, the sampling parameters, sample i), through the
one writer of recorded runs (`importers.recording`, as `import planbench`): the endpoint names the samples
read (`recorded:samples:<sha256>`), so two logs of the same instances are two sources and never answer each
other's replays. `standard` (sample 0), `sampling:k=K` and `self-consistency:k=K` then replay through our own
graphs with 0 LLM calls (`critiquebench resume NAME --replay`). Where a row says what was sent and it differs
from our prompt, the recorded prompt is the domain's prompt for that instance (the `recorded_prompts` option:
`domains.replayed.Replayed`): what a replay sends and its transcript shows. Importing another domain into a
study of the same model, temperature and schemes adds it (two imports at once both land, see the writer).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from critiquebench.domains import call_options, get_domain
from critiquebench.domains.contract import Domain, Instance, Transcribed
from critiquebench.domains.references import InstanceCache
from critiquebench.importers.recording import (
    BadRecord,
    RecordedCall,
    Recording,
    RecordingError,
    content_source,
    source_kind,
    write_recording,
)
from critiquebench.importers.sample_rows import SUFFIXES, BadLine, Row, SamplesError, parse_row, read_rows
from critiquebench.store.cache import sampling_params
from critiquebench.store.results import has_runs
from critiquebench.store.samples import ensure_samples_schema, replace_samples
from critiquebench.studies.config import StudyConfig, canonical_schemes, validate

DEFAULT_MODEL = "recorded"
DEFAULT_TEMPERATURE = 1.0  # a source that does not say: samples are drawn, not the one greedy answer
MAX_ANSWER_CHARS = 100_000  # as `score`: a runaway answer is judged on its first 100,000 characters
# Schemes the recorded samples answer alone (every call is sample i of the bare prompt); any other scheme needs
# new calls (a verifier's, or rounds with feedback).
REPLAYED = ("standard", "sampling", "self-consistency")
__all__ = ["SUFFIXES", "BadLine", "Imported", "Row", "SamplesError", "import_samples", "parse_row", "read_rows"]


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


def _unrecorded(rows: Sequence[Row], base_url: str | None) -> tuple[str, ...]:
    """The sampling settings a replayed samples study cannot know: a sample file records no length cap, and maybe
    no temperature (with `base_url`, live schemes make real calls at the study's settings: nothing is left out)."""
    if base_url is not None:
        return ()
    return ("temperature", "max_tokens") if all(r.temperature is None for r in rows) else ("max_tokens",)



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
        replay=base_url is None, unrecorded=_unrecorded(rows, base_url),
    )  # fmt: skip
    validate(config)
    stop = tuple(call_options(get_domain(domain, **domain_options)).get("stop") or ())
    params = sampling_params(temperature=temperature, max_tokens=None, stop=stop)
    calls = [RecordedCall(tuple(messages[ref][0]), item.row.response, item.index, f"line {item.row.line}")
             for ref, items in judged.items() for item in items]  # fmt: skip
    replaced: list[str] = []  # the domain, when the import replaces its samples in an existing study

    def merge(existing: StudyConfig, new: StudyConfig) -> StudyConfig:
        if domain in existing.domains:
            replaced.append(domain)
        return _with_existing(existing, new)

    def store_samples(db: Any, final: StudyConfig) -> None:
        if replaced and has_runs(db, study):
            raise SamplesError(f"study {study!r} has replayed runs of {domain}: import the new samples as "
                               "another study")  # fmt: skip
        ensure_samples_schema(db)
        replace_samples(db, study, domain, _sample_rows(judged, instances, model, temperature))

    recording = Recording(content_source("samples", model, calls), config, calls, params,
                          [BadRecord(f"line {b.line}", b.reason) for b in bad], store_samples)  # fmt: skip
    try:
        config = write_recording(store, recording, merge).config
    except RecordingError as exc:
        raise SamplesError(str(exc)) from None
    valid = sum(item.verdict.valid for items in judged.values() for item in items)
    labelled = sum(item.row.label is not None for items in judged.values() for item in items)
    count = sum(per.values())
    return Imported(config, count, len(judged), valid, labelled, tuple(sorted(bad, key=lambda b: b.line)),
                    tuple(notes), tuple(left_out))  # fmt: skip


def _common(rows: list[Row], bad: list[BadLine]) -> tuple[str, float, list[str]]:
    """The study's model (the first row's) and temperature (the first its rows record); rows saying otherwise
    become bad lines, and rows that record none are taken at the study's, with a note."""
    notes: list[str] = []
    first = rows[0] if rows else Row(0, "", "")
    model = first.model or DEFAULT_MODEL
    # the first row that records one: a first row without would make every later temperature a mismatch
    temperature = next((r.temperature for r in rows if (r.model or DEFAULT_MODEL) == model
                        and r.temperature is not None), None)  # fmt: skip
    unstated = sum(1 for r in rows if r.temperature is None and (r.model or DEFAULT_MODEL) == model)
    if temperature is not None and unstated:
        notes.append(f"{unstated} row(s) record no temperature: taken as the study's {temperature}")
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


def _with_existing(existing: StudyConfig, config: StudyConfig) -> StudyConfig:
    """The stored study with this domain added (a samples study of the same model, temperature and schemes):
    importing a domain again replaces its samples; anything else is an error naming the clash."""
    shared = ("domains", "instances", "domain_options", "dataset")
    mine = {k: v for k, v in config.identity().items() if k not in shared}
    theirs = {k: v for k, v in existing.identity().items() if k not in shared}
    if source_kind(existing.endpoint_id) != "samples" or mine != theirs or (existing.dataset or config.dataset) and \
            existing.dataset != config.dataset:  # fmt: skip
        raise SamplesError(f"study {config.name!r} already exists with another definition; choose another name "
                           f"(or critiquebench studies delete {config.name})")  # fmt: skip
    [domain] = config.domains
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
