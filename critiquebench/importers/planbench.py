"""Import PlanBench's recorded runs (any task, model or domain) as LLM-cache entries plus a study replaying them.

A recorded answer is stored under exactly the key a live call would use (model, endpoint identity, message
list, sampling parameters, sample 0), so replaying the study through our own graphs is a cache hit on every turn
if, and only if, our prompts and feedback are PlanBench's own, byte for byte.

Two file shapes are understood:
- one-shot task files (`instances[*].query` / `llm_raw_response`): the query was sent as the user message after
  PlanBench's system message; replayed by the `standard` scheme. Plan generation (t1) runs on the plain
  planning domain (prompt style `nl_legacy` or `nl`, whichever intro the queries start with); every other task
  on the domain "DOMAIN:TASK" (`domains/planning/tasks`), which reads its random choices back from the file.
  Importing several task files into one study adds one domain per task, so `report` shows them side by side;
- backprompting (`instances[*].messages`, `steps`): every assistant turn is one recorded call whose messages are
  the conversation before it; replayed by `sound-first`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from critiquebench.domains.planning.tasks import TASKS, task_of
from critiquebench.domains.prompts import DEFAULT
from critiquebench.nodes.context import RECORDED_CONTEXT_OVERFLOW
from critiquebench.store.cache import CallCache, sampling_params
from critiquebench.store.db import opened
from critiquebench.store.results import ensure_schema, load_study, save_study
from critiquebench.studies.config import StudyConfig, validate

PLANBENCH_SYSTEM = DEFAULT["planbench"].text("system")  # PlanBench's chat queries were sent after it
# PDDL domains whose recorded answers replay through PlanBench's own reader (`reading = "planbench"`).
_READ_BY_PLANBENCH = ("logistics-strips",)
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
    task: str = "t1"  # our PlanBench task name (domains/planning/tasks)
    # example instance id -> the plan (PlanBench's English, as sent) its one-shot example showed
    example_plans: Mapping[str, str] = field(default_factory=dict)

    @property
    def scheme(self) -> str:
        return "standard" if self.kind == "one_shot" else "sound-first"

    @property
    def domain_key(self) -> str:
        """The study's domain: the planning domain for t1 and backprompting, "DOMAIN:TASK" otherwise."""
        return self.domain if self.task == "t1" else f"{self.domain}:{self.task}"

    def queries(self) -> list[str]:
        """The first user message of every call: the problem's prompt."""
        return [next(m["content"] for m in c.messages if m["role"] == "user") for c in self.calls]

    def prompt_style(self, domain_intro: str) -> str:
        # PlanBench's published GPT-4 one-shot run predates the last line of today's Blocksworld intro.
        if self.kind == "one_shot" and not all(q.startswith(domain_intro) for q in self.queries()):
            return "nl_legacy"
        return "nl"


def read_planbench(path: Path) -> PlanBenchRun:
    """Parse a PlanBench results JSON file; raises ImportError_ with the reason when it is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ImportError_(f"{path}: cannot read a JSON results file: {exc}") from None
    instances = data.get("instances") if isinstance(data, dict) else None
    if not isinstance(instances, list) or not instances:
        raise ImportError_(f"{path}: no 'instances' list: not a PlanBench results file")
    # PlanBench keeps results under results/DOMAIN/ENGINE/; a file without `engine` is named by its folder.
    engine = str(data.get("engine") or Path(path).resolve().parent.name or "unknown")
    model = next((engine[: -len(s)] for s in _ENGINE_SUFFIXES if engine.endswith(s)), engine)
    # e.g. "blocksworld/generated_basic": the domain, then PlanBench's instance set within it
    domain = str(data.get("domain") or "blocksworld").split("/")[0]
    task = task_of(str(data.get("task") or "")) or task_of(Path(path).name) or "t1"
    if all("messages" in inst for inst in instances):
        kind, calls = "backprompting", _conversation_calls(path, instances)
    elif all("query" in inst and "llm_raw_response" in inst for inst in instances):
        kind, calls = "one_shot", _one_shot_calls(instances)
    else:
        raise ImportError_(f"{path}: instances have neither 'messages' nor 'query'/'llm_raw_response'")
    try:
        ids = tuple(int(inst["instance_id"]) for inst in instances)
    except (KeyError, TypeError, ValueError):
        raise ImportError_(f"{path}: every instance needs an integer 'instance_id'") from None
    task = task if kind == "one_shot" else "t1"
    return PlanBenchRun(kind, model, domain, ids, tuple(calls), task, _example_plans(instances) if task == "t1" else {})


def _example_plans(instances: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Example instance id -> the plan text its one-shot example showed (the first [PLAN] block of the query)."""
    plans: dict[str, str] = {}
    for inst in instances:
        examples = inst.get("example_instance_ids")
        if not isinstance(examples, list) or len(examples) != 1:
            continue
        query = inst.get("query") or next((m["content"] for m in inst.get("messages", []) if m["role"] == "user"), "")
        start, end = str(query).find("[PLAN]"), str(query).find("[PLAN END]")
        if 0 <= start < end:
            plans.setdefault(str(examples[0]), str(query)[start + len("[PLAN]") : end])
    return plans


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
        # PlanBench's feedback was Python's None where VAL gave no advice; it went out as the user turn.
        raw = [{"role": str(m["role"]), "content": str(m["content"])} for m in inst["messages"]]
        answers = [i for i, m in enumerate(raw) if m["role"] == "assistant"]
        if not answers:
            raise ImportError_(f"{path}: instance {inst.get('instance_id')} has no assistant turn")
        retried = _retries(raw, inst, len(answers))
        # A call that outgrew the context window ended PlanBench's loop with an empty answer: recorded as that
        # failure, so the replay ends there too.
        overflow = answers[-1] if inst.get("context_window_hit") and not raw[answers[-1]]["content"] else None
        messages: list[dict[str, str]] = []
        for i, message in enumerate(raw):
            if i in retried or i - 1 in retried:
                continue
            if message["role"] == "assistant":
                answer = RECORDED_CONTEXT_OVERFLOW if i == overflow else message["content"]
                calls.append(RecordedCall(tuple(messages), answer))
            messages.append(message)
    return calls


def _retries(raw: Sequence[Mapping[str, str]], inst: Mapping[str, Any], answers: int) -> set[int]:
    """The assistant turns that were failed calls PlanBench retried (left out with the repeated message after
    them, so the replay makes the call once).

    A retried call is an empty answer followed by the same user message again (PlanBench's rate-limit branch
    resends its query and does not count the step). An empty answer from any other failure is a counted step,
    judged as an empty plan, and its feedback may repeat the message before it too (every call after a `None`
    feedback failed so); PlanBench's `steps` tell how many retries there were: the answers it neither counted
    nor ended on (could not extract a plan, context window hit). The earliest such pairs are taken: the later
    ones have the same messages."""
    candidates = [
        i
        for i in range(1, len(raw) - 1)
        if raw[i]["role"] == "assistant" and not raw[i]["content"] and raw[i + 1] == raw[i - 1]
    ]
    steps = inst.get("steps")
    if not isinstance(steps, int):
        return set(candidates)
    ended = bool(inst.get("could_not_extract") or inst.get("context_window_hit"))
    return set(candidates[: max(0, answers - steps - int(ended))])


def dataset_folder(path: Path, domain: str) -> Path:
    """The folder of `domain`'s problems (DOMAIN/instances/) nearest above the results file, else the
    default dataset of the domain."""
    for parent in Path(path).resolve().parents:
        if (parent / domain / "instances").is_dir():
            return parent / domain
    from critiquebench.domains.datasets import DatasetNotFound, resolve_data_path

    try:
        return resolve_data_path(domain, None)
    except DatasetNotFound as exc:
        raise ImportError_(f"{path}: no dataset folder for domain {domain!r}: pass --instances DIR ({exc})") from None


def import_planbench(
    path: Path,
    store: Path,
    study: str,
    dataset: Path | None = None,
    temperature: float = 0.0,
    max_tokens: int = 512,
    instances: Path | None = None,
) -> tuple[StudyConfig, int]:
    """Record the file's calls in the store's cache and define (or extend) `study` over the same instances.

    Returns the study and how many calls were newly recorded (0 on a repeated import). `dataset` is the
    PlanBench domain folder with instances/ (default: found above the file); `instances` the folder of the
    problems a task file's ids refer to (default: the task's folder in the dataset, `generated/` for t5).
    """
    run = read_planbench(path)
    if dataset is None:
        dataset = dataset_folder(path, run.domain)
    options: dict[str, Any] = {}
    if run.task == "t1":
        from critiquebench.domains import get_domain
        from critiquebench.domains.planning import PlanningDomain

        try:
            found = get_domain(run.domain)
        except ValueError:
            found = None
        domain = found if isinstance(found, PlanningDomain) else None
        cfg = domain.cfg if domain is not None else None
        options["prompt_style"] = run.prompt_style(cfg.domain_intro if cfg else "")
        # GPT-4's Logistics backprompting run was sent PlanBench's intro that gives an example of each action.
        zero_shot = cfg.domain_intro_zero_shot if cfg else None
        if zero_shot and all(q.startswith(zero_shot) for q in run.queries()):
            options["intro"] = "zero_shot"
        pddl_name = domain.model.name if domain is not None else None
        if pddl_name in _READ_BY_PLANBENCH:  # PlanBench read these answers with its own reader and VAL
            options["reading"] = "planbench"
        if domain is not None and run.example_plans:
            plans = _recorded_example_plans(run, domain, Path(dataset))
            if plans:
                options["example_plans"] = plans
    else:
        folder = Path(instances) if instances else Path(dataset) / TASKS[run.task].folder
        if not folder.is_dir():
            folder = Path(dataset)
        options.update(recorded=str(Path(path).resolve()), instances=str(folder.resolve()))
    key = run.domain_key
    config = StudyConfig(
        name=study,
        domains=(key,),
        instances={key: ",".join(str(i) for i in run.instance_ids)},
        schemes=(run.scheme,),
        dataset=str(Path(dataset).resolve()),
        model=run.model,
        temperature=temperature,
        max_tokens=max_tokens,
        domain_options={key: options},
        endpoint_id=RECORDED_ENDPOINT,
        replay=True,
    )
    validate(config)
    with opened(store) as db:
        ensure_schema(db)
        existing = load_study(db, study)
        if existing is not None:
            config = _merged(StudyConfig.from_dict(existing), config)
        cache = CallCache(db)
        params = sampling_params(temperature=temperature, max_tokens=max_tokens)
        before = cache.count()
        for call in run.calls:
            cache.put_recorded(run.model, RECORDED_ENDPOINT, call.messages, call.response, sample=0, params=params)
        added = cache.count() - before
        save_study(db, study, config.to_dict())
    return config, added


def _recorded_example_plans(run: PlanBenchRun, domain: Any, dataset: Path) -> dict[str, list[str]]:
    """PlanBench's own plans of the example instances the run showed, as PDDL lines, for the examples our
    dataset knows no plan of (e.g. Logistics ships no optimal plans; our planner may pick another equally
    short plan). Stored with the study, they make the replayed prompts the recorded ones."""
    from critiquebench.domains import Instance

    selection = ",".join(str(i) for i in run.instance_ids)
    try:
        instances = domain.load(selection, dataset)
    except (ValueError, OSError):  # a dataset we cannot read leaves the planner's plans in place
        return {}
    plans: dict[str, list[str]] = {}
    for inst in instances:
        for example in inst.data.get("examples", [])[:1]:
            ident = str(example["id"])
            text = run.example_plans.get(ident)
            if text is None or example.get("plan") or ident in plans:
                continue
            parsed = domain.parse(Instance(domain.name, ident, {"problem": example["problem"], "source": ident}), text)
            if parsed:
                plans[ident] = parsed
    return plans


def _merged(existing: StudyConfig, new: StudyConfig) -> StudyConfig:
    """`existing` with `new`'s domain added (another task of a recorded study), or an error saying why not."""
    if not existing.differences(new):
        return existing
    [key] = new.domains
    clash = "already exists with another definition; choose another name"
    same_run = {k: v for k, v in existing.identity().items() if k not in ("domains", "instances", "domain_options")}
    theirs = {k: v for k, v in new.identity().items() if k not in ("domains", "instances", "domain_options")}
    if same_run != theirs or key in existing.domains:
        raise ImportError_(f"study {existing.name!r} {clash}")
    return replace(
        existing,
        domains=(*existing.domains, key),
        instances={**existing.instances, **new.instances},
        domain_options={**existing.domain_options, **new.domain_options},
    )
