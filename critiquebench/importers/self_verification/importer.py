"""`import self-verification`: the reader's records checked against our requests and stored through the shared
writer (`importers.recording`), as a loop study per file, or a verification-only study of the color_verification
replies (see `reader` for the formats and path rules)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from critiquebench.importers.recording import BadRecord, RecordedCall
from critiquebench.importers.self_verification.reader import (
    FileKind,
    SelfVerificationError,
    Trace,
    calls,
    first_mismatch,
    kind_of,
    load,
    messages,
    sampling_schemes,
    traces,
)


@dataclass(frozen=True)
class Imported:
    """What `import_files` did: the study, calls newly recorded, records skipped, and notes for the user."""

    config: Any
    added: int
    bad: tuple[BadRecord, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class StudyCode:
    """The domain options that send what a file's code sent (`domain_options`): the study's one-message transcript,
    the code's version (colouring; Game of 24's 2023 code), the study's reader (Game of 24) and its stop sequence.
    `options()` is the study definition's `domain_options.DOMAIN`."""

    form: str = "transcript"
    protocol: str | None = None
    reader: str | None = None
    stop: tuple[str, ...] = ()

    def options(self) -> dict[str, Any]:
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in asdict(self).items() if value not in (None, ())}  # fmt: skip


def domain_options(kind: FileKind, protocol: str) -> dict[str, Any]:
    """The domain options that send what the file's code sent (`StudyCode`)."""
    if kind.domain == "coloring":
        code = StudyCode(protocol=protocol)
    elif protocol == "2023":  # Game of 24 @c9a5d349, which sent "[ANSWER END]" as its stop (l.62)
        code = StudyCode(protocol=protocol, reader="study", stop=("[ANSWER END]",))
    else:
        code = StudyCode(reader="study")
    if protocol == "2024":
        code = replace(code, stop=("[ANSWER END]",))  # response_generation.py@b583c3c9:14, sent at l.133
    return code.options()


def _requests(domain: Any, instance: Any, trace: Trace, kind: FileKind) -> list[list[dict[str, str]]]:
    """The requests our graph sends for the trace's replies, in the order of `calls`: the domain's prompt, its
    transcript of the history with the domain's own feedback (sound loops) or the recorded critiques (llm)."""
    level = {"passfail": "binary", "first": "first", "full": "all"}.get(kind.variant)
    first = [dict(m) for m in domain.prompt(instance)]
    if trace.samples:
        return [first] * len(trace.samples)
    out, turns = [], []
    for n, reply in enumerate(trace.replies):
        out.append(domain.conversation([*first, *turns]) if turns else first)
        verdict, _ = domain.assess(instance, reply)
        if kind.variant == "llm" and not verdict.final:
            out.append(domain.judge_prompt(instance, "critique", reply))
            critique = trace.critiques[n] if n < len(trace.critiques) else ""
        else:
            critique = domain.feedback(instance, verdict, level or "binary")
        turns += [{"role": "assistant", "content": reply}, {"role": "user", "content": domain.backprompt(instance,
                                                                                                          critique)}]
    return out


def import_files(paths: Sequence[Path], store: Path | str, study: str, *, domain: str | None = None,
                 scheme: str | None = None, protocol: str | None = None, dataset: Path | None = None,
                 check: bool = True) -> list[Imported]:  # fmt: skip
    """Record every loop file of `paths` (files, or folders searched for responses.json) in the store's cache as
    study `study` (one file) or `study-VARIANT` each (several: every file is its own run, whose first answers
    differ from the others'), replaying them. With `check`, a request of ours that is not the recorded one is a
    SelfVerificationError naming the instance and the first differing line (nothing is stored)."""
    from critiquebench.domains import get_domain
    from critiquebench.domains.datasets import resolve_data_path
    from critiquebench.importers.planbench.styles import first_difference
    from critiquebench.importers.recording import Recording, RecordingError, content_source, write_recording
    from critiquebench.store.cache import sampling_params
    from critiquebench.studies.config import StudyConfig, canonical_schemes

    files = [f for p in paths for f in (sorted(Path(p).rglob("responses.json")) if Path(p).is_dir() else [Path(p)])]
    if not files:
        raise SelfVerificationError(f"no responses.json in {', '.join(map(str, paths))}")
    done: list[Imported] = []
    unread: list[str] = []
    verify: list[tuple[Path, FileKind]] = []
    for path in files:
        bad: list[BadRecord] = []
        notes: list[str] = []
        data_format = "2024" if any("prompts" in v for v in load(path).values() if isinstance(v, Mapping)) else "2023"
        chosen = protocol or data_format
        kind = kind_of(path, domain, scheme, chosen)
        if kind.domain == "game24" and protocol is None:
            # every Game of 24 file of gpt-and-i's history asked the prompts.json of c9a5d349, whichever format
            chosen = "2023"
            kind = kind_of(path, domain, scheme, chosen)
        if kind.verification is not None:
            verify.append((path, kind))
            continue
        name = study if len(files) == 1 else f"{study}-{kind.variant}"
        options = domain_options(kind, chosen)
        live = get_domain(kind.domain, **options)
        folder = Path(dataset) if dataset else None
        instances = {i.id: i for i in live.load(None, resolve_data_path(kind.domain, folder))}
        read, skipped = traces(path, kind)
        bad += [BadRecord(f"{path.name} {b.position}", b.reason) for b in skipped]
        if not read:  # nothing of it replays: said, and the other files go on
            unread.append(f"{path}: no instance read" + (f" ({bad[0].describe()})" if bad else ""))
            continue
        if not kind.schemes:  # backprompting-top-tempT: k from the samples kept
            kind = replace(kind, schemes=sampling_schemes(kind, min(len(t.samples) for t in read)))
        read = [t for t in read if t.instance in instances] if read else []
        file_calls: list[RecordedCall] = []
        answered: dict[tuple[str, int], RecordedCall] = {}  # (request, sample) -> the call that recorded it
        kept: list[Trace] = []
        differ: list[str] = []
        for trace in read:
            instance = instances[trace.instance]
            critic = _critic(live, instance) if kind.variant == "llm" else None
            recorded = calls(trace, critic, getattr(live, "give_up", ()))
            ours = _requests(live, instance, trace, kind)
            n = first_mismatch(recorded, ours)
            if n is not None:
                theirs, mine = recorded[n].messages[-1]["content"], ours[n][-1]["content"]
                why = f"{recorded[n].position}: our request is not the recorded one: {first_difference(theirs, mine)}"
                if check:
                    raise SelfVerificationError(f"{path}: {why}")
                differ.append(why)
            recorded = _resampled(recorded)
            if clash := _clash(recorded, answered):
                bad.append(clash)
                continue
            file_calls += recorded
            kept.append(trace)
        read = kept
        if differ:
            notes.append(f"{len(differ)} instance(s) sent other requests than ours (stored as recorded, they replay "
                         f"only up to there: a replay asks the rest anew), first {differ[0]}")
        converted = sum(t.converted for t in read)
        if converted:
            notes.append(f"{path.name} ({kind.variant}): {converted} trace(s) converted from the older one-string "
                         "format: their backprompts' leading newline dropped")  # fmt: skip
        ids = sorted(int(t.instance) for t in read)
        config = StudyConfig(
            name=name, domains=(kind.domain,), instances={kind.domain: ",".join(map(str, ids))},
            schemes=canonical_schemes(kind.schemes), dataset=str(Path(dataset).resolve()) if dataset else None,
            model=kind.model, temperature=0.0, max_tokens=None, domain_options={kind.domain: options}, replay=True,
        )  # fmt: skip
        stop = options.get("stop", ())
        params = sampling_params(temperature=kind.temperature, max_tokens=None, stop=stop)
        recording = Recording(content_source("self-verification", kind.model, file_calls), config, file_calls, params)
        try:
            written = write_recording(store, recording, _merged)
        except RecordingError as exc:
            raise SelfVerificationError(str(exc)) from None
        done.append(Imported(written.config, written.added, tuple(bad), tuple(notes)))
    if verify:
        name = study if len(files) == len(verify) else f"{study}-verify"
        done.append(_import_verification(verify, store, name, dataset, check))
    if not done:
        raise SelfVerificationError("; ".join(unread) or "nothing to import")
    return done


VERIFY_CANDIDATES = "self_verification/color_verification"  # the candidate files the replies judged (README)


def _import_verification(files: Sequence[tuple[Path, FileKind]], store: Path | str, study: str,
                         dataset: Path | None, check: bool) -> Imported:  # fmt: skip
    """The color_verification replies as one verification-only study (`verify-study`) over the study's own
    candidate files: every query is the candidate's verification prompt with the study's system message."""
    from critiquebench.domains import get_domain
    from critiquebench.domains.base import verification_messages
    from critiquebench.domains.datasets import default_root, resolve_data_path
    from critiquebench.domains.study_files import candidates
    from critiquebench.importers.planbench.styles import first_difference
    from critiquebench.importers.recording import Recording, RecordingError, content_source, write_recording
    from critiquebench.store.cache import sampling_params
    from critiquebench.studies.config import VERIFY, StudyConfig

    root = Path(dataset) if dataset else default_root()
    live = get_domain("coloring", form="transcript")
    graphs = {i.id: i for i in live.load(None, resolve_data_path("coloring", root))}
    kinds, ids, recorded, bad = [], set(), [], []
    for path, kind in files:
        name = kind.verification.replace("-", "_") if kind.verification else ""
        kinds.append(name)
        for ident, record in load(path).items():
            where = f"{path.parent.name} graph {ident}"
            if not isinstance(record, Mapping) or not isinstance(record.get("query"), str) or ident not in graphs:
                bad.append(BadRecord(where, "no query of a known graph"))
                continue
            call = RecordedCall(messages(record["query"]), str(record.get("response", "")), 0, where)
            if check:
                text = candidates(root / VERIFY_CANDIDATES, ident).get(name)
                ours = verification_messages(live, graphs[ident], text or "")
                if text is None or first_mismatch([call], [ours]) is not None:
                    shown = first_difference(record["query"], ours[-1]["content"]) if text else f"no {name} candidate"
                    raise SelfVerificationError(f"{path}: graph {ident}: our request is not the recorded one: {shown}")
            recorded.append(call)
            ids.add(int(ident))
    config = StudyConfig(
        name=study, domains=("coloring",), instances={"coloring": ",".join(map(str, sorted(ids)))}, kind=VERIFY,
        kinds=tuple(kinds), candidate_files={"coloring": VERIFY_CANDIDATES}, dataset=str(root.resolve()),
        model=files[0][1].model, temperature=0.0, max_tokens=None, domain_options={"coloring": {"form": "transcript"}},
        replay=True,
    )  # fmt: skip
    recording = Recording(content_source("self-verification", config.model, recorded), config, recorded,
                          sampling_params(temperature=0.0, max_tokens=None))  # fmt: skip
    try:
        written = write_recording(store, recording)
    except RecordingError as exc:
        raise SelfVerificationError(str(exc)) from None
    return Imported(written.config, written.added, tuple(bad))


def _resampled(recorded: Sequence[RecordedCall]) -> list[RecordedCall]:
    """The calls with a repeated request (the critic asked about an answer it judged before) as its next sample,
    as `llm-llm:resample=true` asks it: the study's loop sent it again and got a reply of its own."""
    seen: dict[str, int] = {}
    out = []
    for call in recorded:
        key = json.dumps(call.messages)
        out.append(replace(call, sample=seen.get(key, 0)))
        seen[key] = seen.get(key, 0) + 1
    return out


def _clash(recorded: Sequence[RecordedCall], answered: dict[tuple[str, int], RecordedCall]) -> BadRecord | None:
    """A trace that sent a request another instance sent and got another reply (the 2023 Game of 24 critic asked
    every accepted answer the same "Verifier confirmed success."): a replay answers one request with one reply,
    so it is skipped, named; else its calls join `answered`."""
    keys = [(json.dumps(call.messages), call.sample) for call in recorded]
    for key, call in zip(keys, recorded, strict=True):
        if (first := answered.get(key)) is not None and first.reply != call.reply:
            return BadRecord(call.position, f"sends the request of {first.position} and got another reply (one "
                                            "request replays one reply)")  # fmt: skip
    answered.update((key, call) for key, call in zip(keys, recorded, strict=True) if key not in answered)
    return None


def _critic(domain: Any, instance: Any) -> Any:
    return lambda reply: domain.judge_prompt(instance, "critique", reply)


def _merged(existing: Any, new: Any) -> Any:
    """Another file of the same domain and model into the study: its schemes added, over the instances both hold."""
    from dataclasses import replace

    from critiquebench.studies.config import canonical_schemes

    if existing.dataset is None and new.dataset is not None:
        # stored with the default datasets lookup (a main job before it passed the study's folder): the folder
        # named now is where its graphs are read from, wherever the command runs
        existing = replace(existing, dataset=new.dataset)
        if not existing.differences(new):  # the same file imported again
            return existing
    same = ("model", "temperature", "max_tokens", "domains", "domain_options", "dataset")
    if any(getattr(existing, k) != getattr(new, k) for k in same):
        raise SelfVerificationError(f"study {existing.name!r} holds another domain, model or protocol: import into "
                                    "another study")  # fmt: skip
    [name] = new.domains
    held = set(existing.instances[name].split(",")) & set(new.instances[name].split(","))
    return replace(existing, schemes=canonical_schemes((*existing.schemes, *new.schemes)),
                   instances={name: ",".join(sorted(held, key=int))})  # fmt: skip
