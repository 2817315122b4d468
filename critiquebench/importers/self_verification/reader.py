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
than 000 prints) read and store; the 2023 ones replay under the Game of 24 code of 2023-10-30 (`protocol =
"2023"`, gpt-and-i@c9a5d349) where their prompts are its (`first_mismatch` names the first line where they are
not; docs/replaying.md lists them file by file).
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
# the 2023 wrappers that handed a critic's reply back, by domain (graph_coloring.py@ada66fc6:300-304,
# game24.py@c9a5d349:87-91)
_LLM_WRAPPERS = {
    "coloring": re.compile(r"\AThis is incorrect\. Feedback:\n(?P<reply>.*)\n\nUsing this feedback, please try "
                           r"again\. ", re.DOTALL),
    "game24": re.compile(r"\AFeedback: This is not correct\.\n(?P<reply>.*)\n\nWith this feedback, please try "
                         r"again\. ", re.DOTALL),
}  # fmt: skip
STOP = "verifier confirmed success"  # response_generation.py@ada66fc6:163, compared in lower case
_TOP = re.compile(r"(?P<k>\d\d)top(?P<t>\d+(?:\.\d+)?)")
# samples without their count in the name (`top1`; 2024 format `top-temp1.0`, every prompt the first one again,
# game24.py@f6948676:104-106): k is the fewest samples any instance kept
_TOP_TEMP = re.compile(r"top(?:-temp)?(?P<t>\d+(?:\.\d+)?)")
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
    ("backprompting-topT/, backprompting-top-tempT/", "the same, k the fewest samples any instance holds"),
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
    if top := _TOP_TEMP.fullmatch(loop):
        return FileKind(name, engine, loop, (scheme,) if scheme else (), float(top["t"]))
    if top := _TOP.fullmatch(loop):
        kind = FileKind(name, engine, loop, (), float(top["t"]))
        return replace(kind, schemes=(scheme,) if scheme else sampling_schemes(kind, int(top["k"])))
    if loop not in SCHEMES and scheme is None:
        raise SelfVerificationError(f"{path}: backprompting-{loop} is none of {', '.join(SCHEMES)} (or NNtopT): "
                                    "pass --scheme")  # fmt: skip
    spec = f"{SCHEMES.get(loop, 'standard')}:rounds={rounds}"
    if loop == "llm" and protocol == "2023":
        spec += ",critique_last=false,resample=true"
    return FileKind(name, engine, loop, (scheme or spec,))


def sampled(kind: FileKind) -> bool:
    """Whether the file holds samples of one prompt (`backprompting-NNtopT`, `-top-tempT`), not loop runs."""
    return bool(_TOP.fullmatch(kind.variant) or _TOP_TEMP.fullmatch(kind.variant))


def sampling_schemes(kind: FileKind, k: int) -> tuple[str, ...]:
    """`sampling:k` and `self-consistency:k` at the file's temperature."""
    t = kind.temperature
    return (f"sampling:k={k},temperature={t}", f"self-consistency:k={k},temperature={t},vote=text")


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
        if sampled(kind):
            if any(p != prompts[0] for p in prompts):
                raise ValueError("a sampling record whose prompts are not all its first")
            return Trace(ident, prompts[:1], samples=replies)
        return Trace(ident, prompts[: len(replies)], replies)
    query = record["query"]
    # the files the 2023-11-07 commit kept beside the new format (`responses-old_format20231006/`) add "stopped"
    calls = {key: value for key, value in record.items() if not (key == "stopped" and isinstance(value, bool))}
    if not isinstance(query, str) or not all(isinstance(v, str) for v in calls.values()):
        raise ValueError("every value must be a text")
    if sampled(kind):
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
            found = _LLM_WRAPPERS.get(kind.domain, _LLM_WRAPPERS["coloring"]).match(backprompt)
            if found is None:
                raise ValueError(f"backprompt {i} is not the 2023 LLM wrapper of {kind.domain} (graph_coloring.py@"
                                 "ada66fc6:300-304, game24.py@c9a5d349:87-91)")
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
    where = f"instance {trace.instance}"
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
