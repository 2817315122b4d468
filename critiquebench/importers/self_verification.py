"""`import self-verification`: GPT-4's recorded runs of the self-verification study (kstechly/gpt-and-i) as a
study that replays them through our own graphs with 0 calls.

gpt-and-i's `llm-csp/responses/<domain>/<engine>/[backprompting-<type>/]responses.json` files hold, per instance,
the calls its loop made, in one of two formats (`FORMATS`):

- 2023 (`response_generation.py@ada66fc6`): `{query, response, "backprompt i", "response i", ...}`. The first
  call sent `query`; call i+1 sent the trace's values so far joined by "\\n" (l.132). The LLM critic's queries
  were not kept (only its reply, inside the wrapper that handed it back, `graph_coloring.py@ada66fc6:300-304`),
  nor the critic reply that stopped a run (l.126-129): the first are rebuilt by the 2023 protocol's critic
  prompt (the same text, `llm-query` l.293-299), the second recorded as `STOPPED_REPLY`. `backprompting-NNtopT`
  files hold NN replies to `query` at temperature T (`response 0`...). Some early runs were converted from an
  older one-string format (`convert`, l.391-430): their backprompts start with the converter's "\\n", which the
  reader drops (counted as `converted`).
- 2024 (`response_generation.py@b583c3c9`): `{prompts, responses, stopped}`: prompt i (the whole transcript) was
  answered by response i.

The domain, scheme and variant come from the path (`PATH_RULES`); `color_verification/<kind>` files are the
verification-only study's replies (Table 2, A2-A4). Game of 24 files of the history (puzzles 1-100, older prompts
than 000 prints) read and store; they replay only where their prompts are ours (`mismatch` names the first line
where they are not).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from critiquebench.importers.recording import BadRecord, RecordedCall

SYSTEM = "You are a constraint satisfaction solver that solves various CSP problems."  # @ada66fc6:192, @b583c3c9
STOPPED_REPLY = ("[critiquebench: the study kept no reply here: its loop stopped because the critic's reply contained "
                 "'Verifier confirmed success' (response_generation.py@ada66fc6:126-129)]")  # fmt: skip
_LLM_WRAPPER = re.compile(r"\AThis is incorrect\. Feedback:\n(?P<reply>.*)\n\nUsing this feedback, please try again\. ",
                          re.DOTALL)  # fmt: skip
STOP = "verifier confirmed success"  # response_generation.py@ada66fc6:163, compared in lower case
_TOP = re.compile(r"(?P<k>\d\d)top(?P<t>\d+(?:\.\d+)?)")
_ENGINE = re.compile(r"(?P<model>.+?)_chat")

# (path part, what it says), for the docs' generated table (`docs/generate.py`)
PATH_RULES: tuple[tuple[str, str], ...] = (
    ("graph_coloring/", "domain coloring"),
    ("game24/", "domain game24"),
    ("color_verification/<kind>/", "coloring verification replies of candidate kind <kind> (Table 2, A2-A4)"),
    ("<model>_chat/", "the study's model (gpt-4_chat: gpt-4)"),
    ("responses.json (no backprompting- folder)", "standard"),
    ("backprompting-passfail/", "sound-binary"),
    ("backprompting-first/", "sound-first"),
    ("backprompting-full/", "sound-all"),
    ("backprompting-llm/", "llm-llm (2023: critique_last=false)"),
    ("backprompting-NNtopT/", "sampling:k=NN,temperature=T and self-consistency:k=NN,temperature=T,vote=text"),
)
FORMATS: tuple[tuple[str, str, str], ...] = (
    ("2023", '{"query", "response", "backprompt i", "response i"}',
     "response_generation.py@ada66fc6:92-147; protocol 2023, rounds 16 (1 + MAX_BACKPROMPT_LENGTH, l.12)"),
    ("2023 samples", '{"query", "response 0", ..., "response NN-1"}', "response_generation.py@ada66fc6:64-81"),
    ("2024", '{"prompts": [...], "responses": [...], "stopped"}',
     "response_generation.py@b583c3c9:60-101; protocol 2024, stop [ANSWER END], rounds 15"),
)  # fmt: skip
SCHEMES = {"passfail": "sound-binary", "first": "sound-first", "full": "sound-all", "llm": "llm-llm"}


class SelfVerificationError(ValueError):
    """The file cannot be imported; the message is one line."""


@dataclass(frozen=True)
class FileKind:
    """What a file's path says: domain, model, the schemes it replays (or the verification kind), temperature."""

    domain: str
    model: str
    variant: str  # "standard", "passfail", "first", "full", "llm", "15top1", or "verify:<kind>"
    schemes: tuple[str, ...] = ()
    temperature: float = 0.0

    @property
    def verification(self) -> str | None:
        return self.variant.removeprefix("verify:") if self.variant.startswith("verify:") else None


def kind_of(path: Path, domain: str | None = None, scheme: str | None = None, protocol: str = "2023") -> FileKind:
    """The file's kind by its path (`PATH_RULES`); `domain` and `scheme` override what the path says."""
    parts = Path(path).resolve().parts
    found = next((p for p in parts if p in ("graph_coloring", "game24", "color_verification")), None)
    if found is None and domain is None:
        raise SelfVerificationError(f"{path}: the path names no graph_coloring/, game24/ or color_verification/ "
                                    "folder: pass --domain")  # fmt: skip
    engine = next((m["model"] for p in parts if (m := _ENGINE.fullmatch(p))), "gpt-4")
    loop = next((p.removeprefix("backprompting-") for p in parts if p.startswith("backprompting-")), None)
    rounds = 16 if protocol == "2023" else 15
    if found == "color_verification":
        index = parts.index(found)
        kind = parts[index + 2] if len(parts) > index + 3 else "llm"
        return FileKind(domain or "coloring", engine, f"verify:{kind}")
    name = domain or ("coloring" if found == "graph_coloring" else "game24")
    if loop is None:
        return FileKind(name, engine, "standard", (scheme or "standard",))
    if top := _TOP.fullmatch(loop):
        k, temp = int(top["k"]), float(top["t"])
        wanted = (f"sampling:k={k},temperature={temp}", f"self-consistency:k={k},temperature={temp},vote=text")
        return FileKind(name, engine, loop, (scheme,) if scheme else wanted, temp)
    if loop not in SCHEMES and scheme is None:
        raise SelfVerificationError(f"{path}: backprompting-{loop} is none of {', '.join(SCHEMES)} (or NNtopT): "
                                    "pass --scheme")  # fmt: skip
    spec = f"{SCHEMES.get(loop, 'standard')}:rounds={rounds}"
    if loop == "llm" and protocol == "2023":
        spec += ",critique_last=false,resample=true"
    return FileKind(name, engine, loop, (scheme or spec,))


@dataclass
class Trace:
    """One instance's recorded calls, in order: generation requests and replies, critic replies (llm loops),
    sampled replies (NNtopT)."""

    instance: str
    prompts: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    critiques: list[str] = field(default_factory=list)  # the LLM critic's reply after each reply (llm loops)
    samples: list[str] = field(default_factory=list)
    converted: bool = False


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SelfVerificationError(f"{path}: cannot read it: {exc}") from None
    except json.JSONDecodeError as exc:
        raise SelfVerificationError(f"{path}: not JSON (truncated?): {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict) or not data:
        raise SelfVerificationError(f"{path}: a responses file is a JSON object of instance id -> record")
    if next(iter(data.values())) == "https://git-lfs.github.com/spec/v1" or str(data).startswith("version https"):
        raise SelfVerificationError(f"{path}: a Git LFS pointer, not the file")
    return data


def traces(path: Path, kind: FileKind) -> tuple[list[Trace], list[BadRecord]]:
    """Every instance's trace, and the records that are none (by instance id)."""
    out: list[Trace] = []
    bad: list[BadRecord] = []
    for ident, record in load(path).items():
        where = f"instance {ident}"
        if not str(ident).isdigit():
            bad.append(BadRecord(where, "its id is not a number"))
            continue
        if not isinstance(record, Mapping):
            bad.append(BadRecord(where, "not a record of calls (an older one-string format)"))
            continue
        try:
            out.append(_trace(str(ident), record, kind))
        except (KeyError, TypeError, ValueError) as exc:
            bad.append(BadRecord(where, str(exc) if isinstance(exc, ValueError) else f"lacks {exc}"))
    return out, bad


def _trace(ident: str, record: Mapping[str, Any], kind: FileKind) -> Trace:
    if "prompts" in record:  # 2024
        prompts, replies = list(record["prompts"]), list(record["responses"])
        if not all(isinstance(x, str) for x in [*prompts, *replies]):
            raise ValueError("prompts and responses must be texts")
        return Trace(ident, prompts[: len(replies)], replies)
    query = record["query"]
    if not isinstance(query, str) or not all(isinstance(v, str) for v in record.values()):
        raise ValueError("every value must be a text")
    if kind.variant != "standard" and _TOP.fullmatch(kind.variant):
        count = sum(1 for key in record if key.startswith("response "))
        return Trace(ident, [query], samples=[record[f"response {i}"] for i in range(count)])
    trace = Trace(ident, [query], [_reply(record["response"], trace_of := Trace(ident))])
    trace.converted = trace_of.converted
    values = [query, trace.replies[0]]
    i = 0
    while f"backprompt {i}" in record:
        backprompt = record[f"backprompt {i}"]
        if backprompt.startswith("\n"):  # the converter's splitter (graph_coloring.py@ada66fc6:426)
            backprompt, trace.converted = backprompt[1:], True
        if kind.variant == "llm":
            found = _LLM_WRAPPER.match(backprompt)
            if found is None:
                raise ValueError(f"backprompt {i} is not the LLM wrapper (graph_coloring.py@ada66fc6:300-304)")
            trace.critiques.append(found["reply"])
        if f"response {i}" not in record:
            if kind.variant == "llm" and STOP in backprompt.lower() and f"backprompt {i + 1}" not in record:
                break  # the critique that stopped the run, kept by the older code (check_backprompt, l.162-164)
            raise ValueError(f"backprompt {i} has no response {i} (a truncated record)")
        values += [backprompt]
        trace.prompts.append("\n".join(values))  # response_generation.py@ada66fc6:132
        trace.replies.append(_reply(record[f"response {i}"], trace))
        values += [trace.replies[-1]]
        i += 1
    return trace


def _reply(text: str, trace: Trace) -> str:
    """A loop's reply as its code kept it, stripped (`send_query`, l.215): one that is not was converted from the
    older one-string format, whose splitter it still carries."""
    if text != text.strip():
        trace.converted = True
    return text.strip()


def messages(user: str) -> tuple[dict[str, str], ...]:
    """A call as the study's chat calls went out: its system message, one user message."""
    return ({"role": "system", "content": SYSTEM}, {"role": "user", "content": user})


def calls(trace: Trace, critic: Any | None = None, gave_up: Sequence[str] = ()) -> list[RecordedCall]:
    """The trace's calls as our graph asks them: generation i (sample 0, or sample j of a sampling file), and
    for llm loops the critic's call after each reply (`critic(reply)`: its request) with the recorded reply;
    the last reply's critic call, where the run stopped on it and no give-up word ended it, with STOPPED_REPLY."""
    where = f"graph {trace.instance}"
    if trace.samples:
        return [RecordedCall(messages(trace.prompts[0]), text, j, f"{where} sample {j}")
                for j, text in enumerate(trace.samples)]  # fmt: skip
    out = []
    for n, (prompt, reply) in enumerate(zip(trace.prompts, trace.replies, strict=True)):
        out.append(RecordedCall(messages(prompt), reply, 0, f"{where} call {n + 1}"))
        if critic is None or any(word in reply for word in gave_up):
            continue
        if n < len(trace.critiques):
            out.append(RecordedCall(tuple(critic(reply)), trace.critiques[n], 0, f"{where} critique {n + 1}"))
        elif n == len(trace.replies) - 1 and n < 15:  # the run stopped here: the critic said it was right
            out.append(RecordedCall(tuple(critic(reply)), STOPPED_REPLY, 0, f"{where} critique {n + 1}"))
    return out


def first_mismatch(expected: Sequence[RecordedCall], ours: Sequence[Sequence[Mapping[str, str]]]) -> int | None:
    """The index of the first call whose request is not the recorded one, else None."""
    for n, (call, mine) in enumerate(zip(expected, ours, strict=False)):
        if [dict(m) for m in call.messages] != [dict(m) for m in mine]:
            return n
    return None


@dataclass(frozen=True)
class Imported:
    """What `import_files` did: the study, calls newly recorded, records skipped, and notes for the user."""

    config: Any
    added: int
    bad: tuple[BadRecord, ...]
    notes: tuple[str, ...] = ()


def domain_options(kind: FileKind, protocol: str) -> dict[str, Any]:
    """The domain options that send what the file's code sent: the study's one-message transcript, its protocol
    (colouring) or reader (Game of 24), and the 2024 code's stop sequence."""
    options: dict[str, Any] = {"form": "transcript"}
    if kind.domain == "coloring":
        options["protocol"] = protocol
    else:
        options["reader"] = "study"
    if protocol == "2024":
        options["stop"] = ["[ANSWER END]"]  # response_generation.py@b583c3c9:14, sent at l.133
    return options


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
    skipped: list[str] = []
    verify: list[tuple[Path, FileKind]] = []
    for path in files:
        bad: list[BadRecord] = []
        notes: list[str] = []
        data_format = "2024" if any("prompts" in v for v in load(path).values() if isinstance(v, Mapping)) else "2023"
        chosen = protocol or data_format
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
        read = [t for t in read if t.instance in instances] if read else []
        file_calls: list[RecordedCall] = []
        kept: list[Trace] = []
        for trace in read:
            instance = instances[trace.instance]
            critic = _critic(live, instance) if kind.variant == "llm" else None
            recorded = calls(trace, critic, getattr(live, "give_up", ()))
            if check:
                ours = _requests(live, instance, trace, kind)
                n = first_mismatch(recorded, ours)
                if n is not None:
                    theirs, mine = recorded[n].messages[-1]["content"], ours[n][-1]["content"]
                    raise SelfVerificationError(f"{path}: instance {trace.instance}, {recorded[n].position}: our "
                                                f"request is not the recorded one: {first_difference(theirs, mine)}")
            recorded = _resampled(recorded)
            file_calls += recorded
            kept.append(trace)
        read = kept
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
        raise SelfVerificationError("; ".join(skipped) or "nothing to import")
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


def _critic(domain: Any, instance: Any) -> Any:
    return lambda reply: domain.judge_prompt(instance, "critique", reply)


def _merged(existing: Any, new: Any) -> Any:
    """Another file of the same domain and model into the study: its schemes added, over the instances both hold."""
    from dataclasses import replace

    from critiquebench.studies.config import canonical_schemes

    same = ("model", "temperature", "max_tokens", "domains", "domain_options", "dataset")
    if any(getattr(existing, k) != getattr(new, k) for k in same):
        raise SelfVerificationError(f"study {existing.name!r} holds another domain, model or protocol: import into "
                                    "another study")  # fmt: skip
    [name] = new.domains
    held = set(existing.instances[name].split(",")) & set(new.instances[name].split(","))
    return replace(existing, schemes=canonical_schemes((*existing.schemes, *new.schemes)),
                   instances={name: ",".join(sorted(held, key=int))})  # fmt: skip
