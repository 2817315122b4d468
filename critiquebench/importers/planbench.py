"""Import PlanBench's recorded GPT-4 runs as LLM-cache entries plus a study that replays them.

A recorded answer is stored under exactly the key a live call would use (model, endpoint identity, message
list, sampling parameters, sample 0), so replaying the study through our own graphs is a cache hit on every turn
if, and only if, our prompts and feedback are PlanBench's own, byte for byte.

Two file shapes are understood:
- plan generation (`instances[*].query` / `llm_raw_response`): the query was sent as the user message after
  PlanBench's system message; replayed by the `standard` scheme with the `nl_legacy` prompt style;
- backprompting (`instances[*].messages`, `steps`): every assistant turn is one recorded call whose messages are
  the conversation before it; replayed by `sound-first`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critiquebench.store.cache import CallCache, sampling_params
from critiquebench.store.db import connect
from critiquebench.store.results import ensure_schema, load_study, save_study
from critiquebench.studies.config import StudyConfig, validate

PLANBENCH_SYSTEM = "You are the planner assistant who comes up with correct plans."
RECORDED_ENDPOINT = "recorded:planbench"
# PlanBench names engines after the API flavour ("gpt-4_chat"); the model is the part before it.
_ENGINE_SUFFIXES = ("_chat",)


class ImportError_(ValueError):
    """A file that is not a PlanBench results file of a known shape; the message says why."""


@dataclass(frozen=True)
class RecordedCall:
    messages: tuple[Mapping[str, str], ...]
    response: str


@dataclass(frozen=True)
class PlanBenchRun:
    """One results file read into recorded calls and the study facts that replaying them needs."""

    kind: str  # "one_shot" | "backprompting"
    model: str
    domain: str
    instance_ids: tuple[int, ...]
    calls: tuple[RecordedCall, ...]

    @property
    def scheme(self) -> str:
        return "standard" if self.kind == "one_shot" else "sound-first"

    @property
    def prompt_style(self) -> str:
        # PlanBench's published one-shot run predates the last line of today's Blocksworld intro.
        return "nl_legacy" if self.kind == "one_shot" else "nl"


def read_planbench(path: Path) -> PlanBenchRun:
    """Parse a PlanBench results JSON file; raises ImportError_ with the reason when it is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ImportError_(f"{path}: cannot read a JSON results file: {exc}") from None
    instances = data.get("instances") if isinstance(data, dict) else None
    if not isinstance(instances, list) or not instances:
        raise ImportError_(f"{path}: no 'instances' list: not a PlanBench results file")
    engine = str(data.get("engine") or "unknown")
    model = next((engine[: -len(s)] for s in _ENGINE_SUFFIXES if engine.endswith(s)), engine)
    # e.g. "blocksworld/generated_basic": the domain, then PlanBench's instance set within it
    domain = str(data.get("domain") or "blocksworld").split("/")[0]
    if all("messages" in inst for inst in instances):
        kind, calls = "backprompting", _conversation_calls(path, instances)
    elif all("query" in inst and "llm_raw_response" in inst for inst in instances):
        kind, calls = "one_shot", _one_shot_calls(instances)
    else:
        raise ImportError_(f"{path}: instances have neither 'messages' nor 'query'/'llm_raw_response'")
    ids = tuple(int(inst["instance_id"]) for inst in instances)
    return PlanBenchRun(kind, model, domain, ids, tuple(calls))


# PlanBench's logger sometimes appended the response (and extracted plans) to the stored query, after this
# marker (instance 12 of the GPT-4 Blocksworld run); the prompt actually sent ends right before it.
_RESPONSE_MARKER = "\n--------- GPT4 response ---------"


def sent_query(query: str) -> str:
    """The user message PlanBench sent, from a stored `query`."""
    cut = query.find(_RESPONSE_MARKER)
    return query if cut < 0 else query[:cut] + "\n"


def _one_shot_calls(instances: Sequence[Mapping[str, Any]]) -> list[RecordedCall]:
    return [
        RecordedCall(
            ({"role": "system", "content": PLANBENCH_SYSTEM}, {"role": "user", "content": sent_query(inst["query"])}),
            str(inst["llm_raw_response"]),
        )
        for inst in instances
    ]


def _conversation_calls(path: Path, instances: Sequence[Mapping[str, Any]]) -> list[RecordedCall]:
    calls = []
    for inst in instances:
        messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in inst["messages"]]
        for i, message in enumerate(messages):
            if message["role"] == "assistant":
                calls.append(RecordedCall(tuple(messages[:i]), message["content"]))
        if not any(m["role"] == "assistant" for m in messages):
            raise ImportError_(f"{path}: instance {inst.get('instance_id')} has no assistant turn")
    return calls


def import_planbench(
    path: Path,
    store: Path,
    study: str,
    dataset: Path | None = None,
    temperature: float = 0.0,
    max_tokens: int = 512,
) -> tuple[StudyConfig, int]:
    """Record the file's calls in the store's cache and define `study` over the same instances.

    Returns the study and how many calls were newly recorded (0 on a repeated import). `dataset` is the
    PlanBench domain folder with instances/; by default the sibling of the file's `reference/` folder.
    """
    run = read_planbench(path)
    if dataset is None:
        dataset = Path(path).resolve().parent.parent / run.domain
    config = StudyConfig(
        name=study,
        domains=(run.domain,),
        instances={run.domain: ",".join(str(i) for i in run.instance_ids)},
        schemes=(run.scheme,),
        dataset=str(Path(dataset).resolve()),
        model=run.model,
        temperature=temperature,
        max_tokens=max_tokens,
        domain_options={run.domain: {"prompt_style": run.prompt_style}},
        endpoint_id=RECORDED_ENDPOINT,
        replay=True,
    )
    validate(config)
    db = connect(store)
    ensure_schema(db)
    existing = load_study(db, study)
    if existing is not None and StudyConfig.from_dict(existing).differences(config):
        raise ImportError_(f"study {study!r} already exists with another definition; choose another name")
    cache = CallCache(db)
    params = sampling_params(temperature=temperature, max_tokens=max_tokens)
    before = cache.db.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
    for call in run.calls:
        cache.put_recorded(run.model, RECORDED_ENDPOINT, call.messages, call.response, sample=0, params=params)
    added = cache.db.execute("SELECT count(*) FROM llm_calls").fetchone()[0] - before
    save_study(db, study, config.to_dict())
    return config, added
