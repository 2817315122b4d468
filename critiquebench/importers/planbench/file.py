"""Reading a PlanBench results JSON file without trusting it.

A results file is data from elsewhere: every field the importer uses is checked here, once, and the first thing
that is wrong is one `ImportError_` line naming the file, the instance and the field. Nothing is stored before the
whole file has been read, so a bad file leaves no half-import behind.

What PlanBench itself tolerates is kept: an instance whose `llm_raw_response` is empty, `null` or missing, and
that carries no verdict, had no answer yet, and PlanBench's evaluator skips it
(`llm_planning_analysis/response_evaluation.py:79-82`, `:160-164`); we skip it too and count it
(`RecordedFile.unanswered`). A `null` user turn in a conversation is PlanBench's Python `None` feedback, which
went out as the text "None".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROLES = ("system", "user", "assistant")
# PlanBench's per-instance verdict, by pipeline version (see `labels`)
LABELS = ("act_correct", "llm_correct_binary", "llm_correct", "correct")
MAX_ID = 10**7  # PlanBench's sets hold at most a few thousand problems; larger ids are damage, not data
_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,100}$")
_DOMAIN = re.compile(r"^[A-Za-z0-9_]{1,100}(/[A-Za-z0-9_]{1,100}){0,2}$")


class ImportError_(ValueError):
    """A file that is not a PlanBench results file of a known shape; the message says why."""


@dataclass(frozen=True)
class RecordedInstance:
    """One answered instance: its id and either a one-shot query/answer or a conversation."""

    ident: int
    fields: Mapping[str, Any]  # the instance's JSON object, checked for the fields the shape needs
    query: str | None = None
    answer: str | None = None
    messages: tuple[Mapping[str, str], ...] = ()


@dataclass(frozen=True)
class RecordedFile:
    kind: str  # "one_shot" | "backprompting"
    engine: str
    domain: str  # the file's `domain` field as written ("blocksworld/generated_basic_3")
    task: str  # the file's `task` field, else the file name's stem
    instances: tuple[RecordedInstance, ...]
    unanswered: tuple[int, ...]  # ids PlanBench recorded no answer for: skipped, as its evaluator does
    header: Mapping[str, Any]


def load_json(path: Path) -> Any:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ImportError_(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportError_(f"{path}: not UTF-8 text (byte {exc.start}): not a PlanBench results file") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportError_(f"{path}: not JSON ({exc.msg} at line {exc.lineno}): not a PlanBench results file") from None
    except RecursionError:
        raise ImportError_(f"{path}: JSON nested too deeply: not a PlanBench results file") from None


def read_file(path: Path) -> RecordedFile:
    data = load_json(path)
    if not isinstance(data, dict):
        raise ImportError_(f"{path}: the top level is a {_kind(data)}, not an object: not a PlanBench results file")
    instances = data.get("instances")
    if not isinstance(instances, list) or not instances:
        raise ImportError_(f"{path}: no 'instances' list: not a PlanBench results file")
    engine = _name(path, data, "engine", Path(path).resolve().parent.name or "unknown")
    domain = data.get("domain", "blocksworld")
    if not isinstance(domain, str) or not _DOMAIN.match(domain):
        raise ImportError_(f"{path}: field 'domain' must be a PlanBench domain name such as 'blocksworld_3' or "
                           f"'blocksworld/generated_basic', not {_shown(domain)}")
    task = data.get("task", Path(path).stem)
    if not isinstance(task, str):
        raise ImportError_(f"{path}: field 'task' must be text, not {_shown(task)}")
    seen: set[int] = set()
    kept: list[RecordedInstance] = []
    unanswered: list[int] = []
    conversations = any(isinstance(inst, dict) and "messages" in inst for inst in instances)
    for pos, inst in enumerate(instances):
        if not isinstance(inst, dict):
            raise ImportError_(f"{path}: instances[{pos}] is a {_kind(inst)}, not an object")
        ident = _ident(path, pos, inst)
        if ident in seen:
            raise ImportError_(f"{path}: instance {ident}: 'instance_id' {ident} appears twice")
        seen.add(ident)
        where = f"{path}: instance {ident}"
        if conversations:
            recorded = _conversation(where, ident, inst)
        else:
            recorded = _one_shot(where, ident, inst)
        if recorded is None:
            unanswered.append(ident)
        else:
            kept.append(recorded)
    if not kept:
        raise ImportError_(f"{path}: none of its {len(instances)} instance(s) has a recorded answer")
    header = {k: v for k, v in data.items() if k != "instances"}
    kind = "backprompting" if conversations else "one_shot"
    return RecordedFile(kind, engine, domain, task, tuple(kept), tuple(unanswered), header)


def _name(path: Path, data: Mapping[str, Any], key: str, default: str) -> str:
    value = data.get(key) or default
    if not isinstance(value, str) or not _NAME.match(value):
        raise ImportError_(f"{path}: field '{key}' must be a short name (letters, digits, _.+-), not {_shown(value)}")
    return value


def _ident(path: Path, pos: int, inst: Mapping[str, Any]) -> int:
    ident = inst.get("instance_id")
    if isinstance(ident, bool) or not isinstance(ident, int):
        raise ImportError_(f"{path}: instances[{pos}]: 'instance_id' must be an integer, not {_shown(ident)}")
    if not 0 <= ident < MAX_ID:
        raise ImportError_(f"{path}: instances[{pos}]: 'instance_id' {ident} is out of range (0 to {MAX_ID - 1})")
    return ident


def _one_shot(where: str, ident: int, inst: Mapping[str, Any]) -> RecordedInstance | None:
    answer = inst.get("llm_raw_response")
    if (answer is None or answer == "") and not any(key in inst for key in LABELS):
        return None  # not answered and so never judged: PlanBench's evaluator skips it
    answer = answer or ""  # judged although empty (an old run's logging fault): replayed as the empty answer
    if not isinstance(answer, str):
        raise ImportError_(f"{where}: 'llm_raw_response' must be text or null, not {_shown(answer)}")
    query = inst.get("query")
    if not isinstance(query, str) or not query:
        raise ImportError_(f"{where}: 'query' must be the prompt's text, not {_shown(query)}")
    _examples(where, inst)
    return RecordedInstance(ident, inst, query=query, answer=answer)


def _conversation(where: str, ident: int, inst: Mapping[str, Any]) -> RecordedInstance | None:
    raw = inst.get("messages")
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise ImportError_(f"{where}: 'messages' must be a list of messages, not {_shown(raw)}")
    messages = []
    for k, m in enumerate(raw):
        if not isinstance(m, dict):
            raise ImportError_(f"{where}: messages[{k}] is a {_kind(m)}, not an object with 'role' and 'content'")
        role, content = m.get("role"), m.get("content")
        if role not in ROLES:
            raise ImportError_(f"{where}: messages[{k}]: 'role' must be one of {', '.join(ROLES)}, not {_shown(role)}")
        if content is None and role == "user":
            content = "None"  # PlanBench's feedback was Python's None where VAL gave no advice; it went out so
        if not isinstance(content, str):
            raise ImportError_(f"{where}: messages[{k}] ({role}): 'content' must be text, not {_shown(content)}")
        messages.append({"role": role, "content": content})
    if not any(m["role"] == "assistant" for m in messages):
        if not messages:
            return None
        raise ImportError_(f"{where}: 'messages' has no assistant turn")
    if not any(m["role"] == "user" for m in messages):
        raise ImportError_(f"{where}: 'messages' has no user turn")
    steps = inst.get("steps")
    if isinstance(steps, str) and steps.isdigit():  # PlanBench's loop turns its step count into text
        steps = int(steps)
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 0):
        raise ImportError_(f"{where}: 'steps' must be a count, not {_shown(steps)}")
    _examples(where, inst)
    return RecordedInstance(ident, inst, messages=tuple(messages))


def _examples(where: str, inst: Mapping[str, Any]) -> None:
    for key in ("example_instance_ids", "example_instance_id"):
        value = inst.get(key)
        if value is None:
            continue
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            raise ImportError_(f"{where}: '{key}' must be instance ids, not {_shown(value)}")


def _kind(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _shown(value: Any) -> str:
    text = json.dumps(value)[:40] if not isinstance(value, str) else repr(value[:40])
    return f"{_kind(value)} {text}"


def label(inst: Mapping[str, Any]) -> bool | None:
    """PlanBench's verdict on an instance: `act_correct` (backprompting, `back_prompting_parallel.py:443-445`),
    `llm_correct_binary` (t3), `llm_correct` (`response_evaluation.py`), or `correct` (the older GPT-4 files)."""
    for key in LABELS:
        value = inst.get(key)
        if isinstance(value, bool) or value in (0, 1):
            return bool(value)
    return None
