"""One writer for recorded runs: any source's answers into the call cache plus the study that replays them.

A source is a reader module that turns its files into a `Recording`: where the answers came from (`source`, a
stable id such as "samples:<sha256 of what was read>[:12]"), the replayable study, the ordered calls (each the
request exactly as our graph will send it on replay, and the reply recorded for it), the sampling parameters
labelling their cache keys, and the records it could not read, each by position. `write_recording` stores it:
every call and the study definition in one transaction, or nothing.

Answers are keyed by where they came from: a new study's endpoint is `recorded:<source>`, so two imports of
the same instances (two prompting methods, two runs of one model) never share or shadow each other's answers.
A study grows only within itself: another recording imported into an existing study is stored under that
study's endpoint (studies imported before answers were keyed by source keep `recorded:planbench` or
`recorded:samples`, which their stored definitions name), and an answer that would replace a different one
already recorded there is refused, naming both. The study's definition is read, grown (`merge`) and saved
inside the same write transaction, and not while a process holds one of the study's runs (the run claims that
keep two resumers apart, `store.claims`): two imports into one study at once both land or the second is
refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from critiquebench.store.cache import CallCache, CallRecord, cache_key, normalise_messages, storable_text
from critiquebench.store.claims import live_holders
from critiquebench.store.db import opened, transaction
from critiquebench.store.results import ensure_schema, load_study, save_study
from critiquebench.studies.config import StudyConfig, validate

RECORDED = "recorded:"


class RecordingError(ValueError):
    """A recording cannot be stored; the message is one line."""


@dataclass(frozen=True)
class RecordedCall:
    """One recorded request and its reply. `position` says where in the source it was read (shown if its answer
    clashes with one already recorded)."""

    messages: tuple[dict[str, str], ...]  # the request exactly as our graph will send it on replay
    reply: str
    sample: int = 0
    position: str = ""


@dataclass(frozen=True)
class BadRecord:
    """A record of the source that was skipped, and why."""

    position: str  # "line 12", "graph 7", "pddl_3_1 round 2": where in the source
    reason: str

    def describe(self) -> str:
        return f"{self.position}: {self.reason}"


@dataclass(frozen=True)
class Recording:
    """What a reader made of its source, ready for `write_recording`."""

    source: str  # stable id of where the answers came from (`content_source`)
    config: StudyConfig  # the replayable study; the writer sets its endpoint_id
    calls: Sequence[RecordedCall]
    params: Mapping[str, Any]  # `store.cache.sampling_params(...)` labelling the cache keys
    bad: Sequence[BadRecord] = ()
    extra: Callable[[Any, StudyConfig], None] | None = None  # more rows in the same transaction (db, final config)


@dataclass(frozen=True)
class Written:
    """What `write_recording` stored: the study as saved, answers newly recorded, records skipped."""

    config: StudyConfig
    added: int
    bad: tuple[BadRecord, ...]


def recorded_endpoint(source: str) -> str:
    """The endpoint identity (a part of every cache key) of answers recorded from `source`."""
    return RECORDED + source


def source_kind(endpoint: str | None) -> str | None:
    """The kind of source ("planbench", "samples", ...) a recorded study's endpoint names; None for a live one."""
    if not endpoint or not endpoint.startswith(RECORDED):
        return None
    return endpoint[len(RECORDED) :].split(":", 1)[0]


def content_source(kind: str, model: str, calls: Iterable[RecordedCall]) -> str:
    """`kind:<12 hex digits>`: a sha256 over the model and every call's request, sample and reply, in order.
    The same answers read twice (the same file, or the same rows from CSV and Parquet) are one source; any other
    answer makes another."""
    digest = hashlib.sha256(model.encode("utf-8"))
    for call in calls:
        record = [call.messages, call.sample, call.reply]
        digest.update(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))
    return f"{kind}:{digest.hexdigest()[:12]}"


def write_recording(
    store: Path | str,
    recording: Recording,
    merge: Callable[[StudyConfig, StudyConfig], StudyConfig] | None = None,
) -> Written:
    """Store `recording`'s calls and its study in one transaction (see the module docstring). If the study
    exists, `merge(existing, new)` returns its grown definition or raises (without `merge`, only an identical
    definition is accepted); `new` then carries the existing study's endpoint. Raises RecordingError."""
    config = replace(recording.config, endpoint_id=recorded_endpoint(recording.source))
    validate(config)
    name = config.name
    with opened(store) as db:
        ensure_schema(db)
        cache = CallCache(db)
        with transaction(db):  # the definition is read, grown and saved with the calls, or nothing is
            stored = load_study(db, name)
            if stored is not None:
                config = _grown(db, StudyConfig.from_dict(stored), config, merge)
            added = _put_calls(cache, config, recording)
            if recording.extra is not None:
                recording.extra(db, config)
            save_study(db, name, config.to_dict())
    return Written(config, added, tuple(recording.bad))


def _grown(
    db: Any, existing: StudyConfig, new: StudyConfig, merge: Callable[[StudyConfig, StudyConfig], StudyConfig] | None
) -> StudyConfig:
    """The existing study with `new` added, or RecordingError: a recorded study grows under its own endpoint,
    and not while one of its runs is held by a process."""
    clash = f"study {new.name!r} already exists with another definition; choose another name"
    if source_kind(existing.endpoint_id) is None:
        raise RecordingError(f"{clash} (it is not a recorded study)")
    new = replace(new, endpoint_id=existing.endpoint_id)
    if not existing.differences(new):
        return existing
    if merge is None:
        raise RecordingError(clash)
    grown = merge(existing, new)
    if grown != existing:
        running = live_holders(db, "run_claims", f"{new.name}/")
        if running:
            raise RecordingError(f"study {new.name} is running ({', '.join(running[:3])} holds its runs): let it "
                                 "finish (or stop it), then import again")  # fmt: skip
    return grown


def _put_calls(cache: CallCache, config: StudyConfig, recording: Recording) -> int:
    """Every call under the study's endpoint; the number newly recorded. A key already holding another reply is
    an error naming both sources (the same reply again is the same answer: nothing to add)."""
    model, endpoint = config.model, str(config.endpoint_id)
    params = dict(recording.params)
    added = 0
    for call in recording.calls:
        messages = normalise_messages(call.messages)
        reply = storable_text(call.reply)[0]
        key = cache_key(model, endpoint, messages, params, call.sample)
        estimated = (sum(len(m["content"]) for m in messages) // 4, len(reply) // 4)
        record = CallRecord(key, model, endpoint, messages, params, call.sample, reply, *estimated, True)
        if cache.put(record):
            added += 1
            continue
        held = cache.get(key)
        if held is not None and held.response != reply:
            where = f" ({call.position})" if call.position else ""
            raise RecordingError(
                f"{recording.source}{where}: another answer to this call (sample {call.sample}) is already recorded "
                f"for study {config.name} from {endpoint.removeprefix(RECORDED)}: import it as another study"
            )
    return added
