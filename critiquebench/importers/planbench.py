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
  the conversation before it; replayed by `sound-first`. PlanBench's PDDL backprompting runs
  (`..._1_history_...` in the task name) sent a window of one exchange instead: the first prompt (after a system
  message only where the run had one), the last answer and its feedback, as each step's recorded
  `sent_messages` show; they replay by `sound-first:history=last` with the feedback each answer was sent
  (`RecordedFeedback`), since its wording (`full_validator`) is not published.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from critiquebench.domains.planning.domain import PlanningDomain
from critiquebench.domains.planning.planbench_reading import TRANSLATION, answer_digest
from critiquebench.domains.planning.styles import PDDL_STYLES
from critiquebench.domains.planning.tasks import TASKS, task_of
from critiquebench.domains.prompts import DEFAULT
from critiquebench.importers.planbench_checkout import (
    checkout_above,
    find_source,
    materialize,
    planbench_name,
    shipped_name,
)
from critiquebench.importers.planbench_file import ImportError_, RecordedFile, RecordedInstance, read_file
from critiquebench.importers.planbench_recorded import (
    pddl_queries,
    rebuild,
    recorded_domain,
    with_recorded_domain,
    with_stated_problems,
)
from critiquebench.importers.planbench_styles import producing_reader, recognise
from critiquebench.nodes.context import RECORDED_CONTEXT_OVERFLOW
from critiquebench.store.cache import CallCache, sampling_params
from critiquebench.store.db import opened
from critiquebench.store.results import ensure_schema, load_study, save_study
from critiquebench.studies.config import StudyConfig, validate
from critiquebench.studies.provenance import SAMPLING

PLANBENCH_SYSTEM = DEFAULT["planbench"].text("system")  # PlanBench's chat queries were sent after it
# PDDL domains whose recorded answers replay through PlanBench's own reader (`reading = "planbench"`).
_READ_BY_PLANBENCH = ("logistics-strips",)
RECORDED_ENDPOINT = "recorded:planbench"
# PlanBench names engines after the API flavour ("gpt-4_chat"); the model is the part before it.
_ENGINE_SUFFIXES = ("_chat",)


@dataclass(frozen=True)
class RecordedCall:
    messages: tuple[Mapping[str, str], ...]
    response: str
    sample: int = 0  # the n-th time a run sent these messages (a windowed run can repeat a request)


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
    unanswered: tuple[int, ...] = ()  # instances without a recorded answer: skipped, as PlanBench does
    source: RecordedFile | None = field(default=None, repr=False, compare=False)
    # PDDL backprompting's window of one exchange and the feedback each answer was sent (None: full history)
    windowed: RecordedFeedback | None = None

    @property
    def scheme(self) -> str:
        """The scheme replaying the file: its kind's (`KINDS`)."""
        assert self.source is not None
        return kind_of(self.source).scheme(self.windowed)

    @property
    def domain_key(self) -> str:
        """The study's domain: the planning domain for t1 and backprompting, "DOMAIN:TASK" otherwise."""
        return self.domain if self.task == "t1" else f"{self.domain}:{self.task}"

    def queries(self) -> list[str]:
        """The first user message of every call: the problem's prompt."""
        return [next(m["content"] for m in c.messages if m["role"] == "user") for c in self.calls]


def read_planbench(path: Path) -> PlanBenchRun:
    """Parse a PlanBench results JSON file; raises ImportError_ with the reason (file, instance, field) when it
    is not one. Instances without a recorded answer are left out and counted (`PlanBenchRun.unanswered`)."""
    recorded = read_file(path)
    engine = recorded.engine
    model = next((engine[: -len(s)] for s in _ENGINE_SUFFIXES if engine.endswith(s)), engine)
    # e.g. "blocksworld/generated_basic": the domain, then PlanBench's instance set within it; PlanBench's 2023
    # runs name Mystery Blocksworld "mystery", its 3-block sets "blocksworld_3": the shipped domain they run on
    domain = shipped_name(recorded.domain)
    task = task_of(recorded.task) or task_of(Path(path).name) or "t1"
    if recorded.kind == "backprompting":
        task = "t1"
    calls, windowed = kind_of(recorded).calls(path, recorded)
    ids = tuple(inst.ident for inst in recorded.instances)
    plans = _example_plans(recorded.instances) if task == "t1" else {}
    return PlanBenchRun(
        recorded.kind, model, domain, ids, tuple(calls), task, plans, recorded.unanswered, recorded, windowed
    )


# back_prompting_parallel.py names its runs `..._{history}_history_...` (`--history N`: the last N exchanges
# are sent) or `..._history_...` (history -1: the whole conversation), `task_1_plan_generation_backprompting*`
_HISTORY = re.compile(r"_(\d+)_history(_|$)")
# PlanBench's `iterations` default (back_prompting_parallel.py:562)
PLANBENCH_ITERATIONS = 15


def history_window(task: str) -> int | None:
    """The number of exchanges a backprompting run sent with each query (None: the whole conversation)."""
    found = _HISTORY.search(task)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class RecordedFeedback:
    """A windowed backprompting run's protocol: the feedback sent after each answer (instance id -> answer
    digest -> the user turn, None where the run ended), whether a system message came first, and the rounds."""

    sent: Mapping[str, Mapping[str, str | None]]
    system: bool
    rounds: int


def _window_calls(
    path: Path, instances: Sequence[RecordedInstance], window: int
) -> tuple[list[RecordedCall], RecordedFeedback]:
    """Each answer as the call PlanBench made: the opening messages (a system message where the run had one,
    the prompt), then the last exchange; checked against each step's recorded `sent_messages`."""
    if window != 1:
        raise ImportError_(f"{path}: a backprompting window of {window} exchanges is not replayable (only 1 or all)")
    calls: list[RecordedCall] = []
    sent: dict[str, dict[str, str | None]] = {}
    systems: set[bool] = set()
    ended_wrong: set[int] = set()
    for recorded in instances:
        raw = list(recorded.messages)
        first = next(i for i, m in enumerate(raw) if m["role"] == "user")
        opening = raw[: first + 1]
        systems.add(opening[0]["role"] == "system")
        answers = [i for i, m in enumerate(raw) if m["role"] == "assistant"]
        steps = recorded.fields.get("step_wise_dict")
        feedback: dict[str, str | None] = {}
        start = len(calls)
        for k, i in enumerate(answers):
            before = [] if k == 0 else raw[answers[k - 1] : answers[k - 1] + 2]
            messages = tuple(opening + before)
            step = steps.get(str(k)) if isinstance(steps, dict) else None
            shown = step.get("sent_messages") if isinstance(step, dict) else None
            if shown is not None and [dict(m) for m in messages] != shown:
                raise ImportError_(
                    f"{path}: instance {recorded.ident} step {k}: the recorded sent_messages are not the first "
                    "prompt and the last exchange (PlanBench's window of one)"
                )
            answer = raw[i]["content"]
            # the same window again (the same answer and feedback) is the next sample of that request
            calls.append(RecordedCall(messages, answer, sum(c.messages == messages for c in calls[start:])))
            after = raw[i + 1]["content"] if i + 1 < len(raw) and raw[i + 1]["role"] == "user" else None
            feedback.setdefault(answer_digest(answer), after)
        sent[str(recorded.ident)] = feedback
        fields = recorded.fields
        if not _truth(fields.get("act_correct")) and not any(
            _truth(fields.get(k)) for k in ("could_not_extract", "context_window_hit")
        ):
            ended_wrong.add(len(answers))
    if len(systems) > 1:
        raise ImportError_(f"{path}: some conversations open with a system message and some without")
    # PlanBench stopped a failing run after `iterations` answers: where every failure stopped at one count, that
    # was it; else its default
    rounds = ended_wrong.pop() if len(ended_wrong) == 1 else PLANBENCH_ITERATIONS
    return calls, RecordedFeedback(sent, systems == {True}, rounds)


@dataclass(frozen=True)
class FileKind:
    """One shape of PlanBench results file: which files have it, how their recorded calls are cut, and the scheme
    that replays them."""

    name: str
    description: str
    matches: Callable[[RecordedFile], bool]
    calls: Callable[[Path, RecordedFile], tuple[list[RecordedCall], RecordedFeedback | None]]
    scheme: Callable[[RecordedFeedback | None], str]


def _windowed_calls(path: Path, recorded: RecordedFile) -> tuple[list[RecordedCall], RecordedFeedback | None]:
    return _window_calls(path, recorded.instances, history_window(recorded.task) or 0)


def _windowed(recorded: RecordedFile) -> bool:
    return recorded.kind == "backprompting" and history_window(recorded.task) is not None


KINDS: tuple[FileKind, ...] = (
    FileKind("one-shot", "`instances[*].query` / `llm_raw_response`: one call per instance, after PlanBench's "
             "system message", lambda f: f.kind != "backprompting",
             lambda path, f: (_one_shot_calls(f.instances), None), lambda _: "standard"),
    FileKind("conversation", "`instances[*].messages`: every assistant turn one call, the conversation before it "
             "its messages", lambda f: f.kind == "backprompting" and not _windowed(f),
             lambda path, f: (_conversation_calls(path, f.instances), None), lambda _: "sound-first"),
    FileKind("windowed", "`..._1_history_...` backprompting: the first prompt, the last answer and its feedback "
             "(each step's `sent_messages`)", _windowed, _windowed_calls,
             lambda w: f"sound-first:history=last,rounds={w.rounds if w else PLANBENCH_ITERATIONS}"),
)  # fmt: skip


def kind_of(recorded: RecordedFile) -> FileKind:
    """The row of `KINDS` a results file is."""
    return next(kind for kind in KINDS if kind.matches(recorded))


def _truth(value: Any) -> bool:
    """A PlanBench flag as it logged it (a bool, 0/1, or their text)."""
    return value is True or value == 1 or (isinstance(value, str) and value.strip().lower() in ("true", "1"))


def _example_plans(instances: Sequence[RecordedInstance]) -> dict[str, str]:
    """Example instance id -> the plan text its one-shot example showed (the first [PLAN] block of the query).
    Older files name the example `example_instance_id` (one id), newer ones `example_instance_ids` (a list)."""
    plans: dict[str, str] = {}
    for inst in instances:
        examples = inst.fields.get("example_instance_ids", inst.fields.get("example_instance_id"))
        examples = examples if isinstance(examples, list) else [examples] if examples is not None else []
        if len(examples) != 1:
            continue
        query = inst.query or next((m["content"] for m in inst.messages if m["role"] == "user"), "")
        start = query.find("[PLAN]")
        ends = [e for e in (query.find("[PLAN END]"), query.find("[PLAN_END]")) if e > start >= 0]
        if ends:  # "[PLAN_END]" closes the example of PlanBench's PDDL prompt
            plans.setdefault(str(examples[0]), query[start + len("[PLAN]") : min(ends)])
    return plans


# PlanBench's logger sometimes appended the response (and extracted plans) to the stored query, after this
# marker (instance 12 of the GPT-4 Blocksworld run); the prompt actually sent ends right before it.
_RESPONSE_MARKER = "\n--------- GPT4 response ---------"


def sent_query(query: str) -> str:
    """The user message PlanBench sent, from a stored `query`."""
    cut = query.find(_RESPONSE_MARKER)
    return query if cut < 0 else query[:cut] + "\n"


def _one_shot_calls(instances: Sequence[RecordedInstance]) -> list[RecordedCall]:
    return [
        RecordedCall(
            (
                {"role": "system", "content": PLANBENCH_SYSTEM},
                {"role": "user", "content": sent_query(inst.query or "")},
            ),
            inst.answer or "",
        )
        for inst in instances
    ]


def _conversation_calls(path: Path, instances: Sequence[RecordedInstance]) -> list[RecordedCall]:
    calls = []
    for recorded in instances:
        inst = recorded.fields
        raw = list(recorded.messages)  # checked by `planbench_file` (a null feedback turn is already "None")
        answers = [i for i, m in enumerate(raw) if m["role"] == "assistant"]
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
    steps = int(steps) if isinstance(steps, str) and steps.isdigit() else steps
    if not isinstance(steps, int):
        return set(candidates)
    ended = bool(inst.get("could_not_extract") or inst.get("context_window_hit"))
    return set(candidates[: max(0, answers - steps - int(ended))])


def dataset_folder(path: Path, domain: str, planbench: str | None = None, instances: Path | None = None) -> Path:
    """The folder of `domain`'s problems (DOMAIN/instances/) nearest above the results file, else the
    default dataset of the domain. `planbench` is the file's PlanBench domain name where it is not `domain`
    ("blocksworld_3", whose 3-block problems do not ship): its problems are `instances` (--instances DIR), the
    dataset only the shipped one's."""
    variant = planbench is not None and planbench != domain
    for parent in Path(path).resolve().parents:
        if (parent / domain / "instances").is_dir() and not variant:
            return parent / domain
    if variant and instances is None:
        raise ImportError_(
            f"{path}: PlanBench's {planbench!r} problems do not ship with critiquebench (its {domain!r} ones are "
            "another set): pass --instances DIR (the checkout's instances/ folder of that set) or --planbench ROOT"
        )
    from critiquebench.domains.datasets import DatasetNotFound, resolve_data_path

    try:
        return resolve_data_path(domain, None)
    except DatasetNotFound as exc:
        ask = "pass --dataset DIR" if instances is not None else "pass --instances DIR"
        raise ImportError_(f"{path}: no dataset folder for domain {domain!r}: {ask} ({exc})") from None


def _shipped(path: Path, run: PlanBenchRun) -> bool:
    """Whether the file's problems are found without a checkout (above the file, or in the datasets root)."""
    assert run.source is not None
    try:
        dataset_folder(path, run.domain, planbench_name(run.source.domain))
    except ImportError_:
        return False
    return True


@dataclass(frozen=True)
class Imported:
    """What `import_file` did: the study, calls newly recorded, instances skipped for want of an answer, and
    the prompt style and reader recognised (t1 and backprompting files)."""

    config: StudyConfig
    added: int
    unanswered: tuple[int, ...]
    options: Mapping[str, Any]
    rebuilt: bool = False  # problems or domain text read back from the recorded PDDL prompts (`planbench_recorded`)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.config, self.added))


def import_planbench(*args: Any, **kwargs: Any) -> Imported:
    """`import_file`; the result also unpacks as (study, calls newly recorded)."""
    return import_file(*args, **kwargs)


def import_file(
    path: Path,
    store: Path,
    study: str,
    dataset: Path | None = None,
    temperature: float = 0.0,
    max_tokens: int = 512,
    instances: Path | None = None,
    planbench: Path | None = None,
    reading: str | None = None,
) -> Imported:
    """Record the file's calls in the store's cache and define (or extend) `study` over the same instances.

    Newly recorded calls are 0 on a repeated import. `planbench` is a
    PlanBench checkout: the file's domain config, instances and example plans are taken from it
    (`planbench_checkout`), laid out as a PDDL domain folder beside the store. Without it, `dataset` is the
    PlanBench domain folder with instances/ (default: found above the file, else the shipped dataset);
    `instances` the folder of the problems a task file's ids refer to (default: the task's folder in the
    dataset, `generated/` for t5). `reading` overrides the plan reader. Nothing is stored unless the whole file
    imports.
    """
    run = read_planbench(path)
    assert run.source is not None
    rebuilt = False
    laid_out: Path | None = None  # the checkout's domain folder, once laid out
    if planbench is None and dataset is None and instances is None and not _shipped(path, run):
        planbench = checkout_above(Path(path))  # a file in a checkout, whose problems do not ship: its checkout's
    try:
        if planbench is not None:
            source = find_source(Path(planbench), Path(path), run.source.domain)
            dataset = laid_out = materialize(source, domains_folder(store))
            base = str(dataset)
        else:
            # a t1 file's problems are its dataset, as are a set's that does not ship (blocksworld_3):
            # --instances DIR names them as it does for the other tasks
            variant = planbench_name(run.source.domain) != run.domain
            if instances is not None and (run.task == "t1" or variant):
                dataset = Path(instances)
            elif dataset is None:
                dataset = dataset_folder(path, run.domain, planbench_name(run.source.domain), instances)
            base = run.domain
        options: dict[str, Any] = {}
        if run.task == "t1":
            options = _plan_generation_options(run, Path(path), base, Path(dataset), reading)
    except ImportError_ as exc:
        queries = dict(zip(run.instance_ids, _first_queries(run), strict=True))
        if run.task != "t1":
            raise
        dataset, base, options = _from_prompts(run, Path(path), queries, laid_out, store, reading, exc)
        rebuilt = True
    if run.task == "t1":
        if run.windowed is not None:
            options["recorded_feedback"] = {k: dict(v) for k, v in run.windowed.sent.items()}
            if not run.windowed.system:
                options["system"] = False
    else:
        folder = Path(instances) if instances else Path(dataset) / TASKS[run.task].folder
        if not folder.is_dir():
            folder = Path(dataset)
        options.update(recorded=str(Path(path).resolve()), instances=str(folder.resolve()))
    key = base if run.task == "t1" else f"{base}:{run.task}"
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
        unrecorded=SAMPLING,  # the file records neither: `temperature` and `max_tokens` only label the cache keys
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
            cache.put_recorded(
                run.model, RECORDED_ENDPOINT, call.messages, call.response, sample=call.sample, params=params
            )
        added = cache.count() - before
        save_study(db, study, config.to_dict())
    return Imported(config, added, run.unanswered, options, rebuilt)


def _from_prompts(
    run: PlanBenchRun,
    path: Path,
    queries: Mapping[int, str],
    laid_out: Path | None,
    store: Path,
    reading: str | None,
    failed: ImportError_,
) -> tuple[Path, str, dict[str, Any]]:
    """The folder, domain key and options of a t1 file whose prompts the checkout does not rebuild, from what its
    prompts show (`FALLBACKS`, the first that replays); `failed` (the checkout's error) with each attempt's reason
    when none does."""
    assert run.source is not None
    reasons: list[str] = []
    attempts: list[tuple[Path, dict[str, Any]]] = []
    try:
        for fallback in FALLBACKS:  # every folder is laid out before any is tried, as one import step
            if (found := fallback(run, path, queries, laid_out, domains_folder(store))) is not None:
                attempts.append(found)
    except ImportError_ as exc:
        reasons.append(str(exc).removeprefix(f"{path}: "))
    for folder, fixed in attempts:
        try:
            return folder, str(folder), _plan_generation_options(run, path, str(folder), folder, reading, fixed)
        except ImportError_ as exc:
            reasons.append(str(exc).removeprefix(f"{path}: "))
    if not reasons:
        raise failed
    raise ImportError_(f"{failed}; read back from its prompts: {'; '.join(reasons)}") from None


Fallback = Callable[
    [PlanBenchRun, Path, Mapping[int, str], "Path | None", Path], "tuple[Path, dict[str, Any]] | None"
]


def _shown_domain(
    run: PlanBenchRun, path: Path, queries: Mapping[int, str], laid_out: Path | None, into: Path
) -> tuple[Path, dict[str, Any]] | None:
    """The checkout's problems with the domain text the prompts show (2023 GPT-4 Logistics)."""
    shown = recorded_domain(queries)
    folder = with_recorded_domain(laid_out, shown, into) if shown and laid_out else None
    return None if folder is None else (folder, {})


def _stated_problems(
    run: PlanBenchRun, path: Path, queries: Mapping[int, str], laid_out: Path | None, into: Path
) -> tuple[Path, dict[str, Any]] | None:
    """The problems read back from English prompts, where the checkout lacks them."""
    if not laid_out or recorded_domain(queries):
        return None
    folder = with_stated_problems(path, laid_out, queries, into)
    return None if folder is None else (folder, {})


def _pddl_problems(
    run: PlanBenchRun, path: Path, queries: Mapping[int, str], laid_out: Path | None, into: Path
) -> tuple[Path, dict[str, Any]] | None:
    """Every problem read back from its PDDL prompt (obfuscated runs drew a domain name per prompt)."""
    if not pddl_queries(queries):
        return None
    assert run.source is not None
    found = rebuild(path, planbench_name(run.source.domain), queries, into)
    return found.folder, ({"domain_names": found.domain_names} if found.domain_names else {})


# Where a t1 file's problems come from when the checkout cannot rebuild its prompts, in the order tried.
FALLBACKS: tuple[Fallback, ...] = (_shown_domain, _stated_problems, _pddl_problems)


def domains_folder(store: Path | str) -> Path:
    """Where domain folders laid out from a PlanBench checkout live: beside a store file, else in the working
    directory (a Postgres store)."""
    text = str(store)
    base = Path.cwd() if "://" in text else Path(text).expanduser().resolve().parent
    return base / "planbench-domains"


def _plan_generation_options(
    run: PlanBenchRun, path: Path, base: str, dataset: Path, reading: str | None, given: Mapping[str, Any] = {}
) -> dict[str, Any]:
    """The domain options replaying a t1 (or backprompting) file: the prompt style its queries were built in,
    and the plan reader its labels were produced with (`given` options kept as they are)."""
    from critiquebench.domains import get_domain

    queries = dict(zip(run.instance_ids, _first_queries(run), strict=True))
    try:
        domain = get_domain(base)
    except (ValueError, OSError) as exc:
        raise ImportError_(f"{path}: {exc}") from None
    fixed: dict[str, Any] = dict(given)
    planning = domain if isinstance(domain, PlanningDomain) else None
    pddl_name = planning.model.name if planning is not None else None
    if reading is not None:
        if reading not in ("sound", TRANSLATION):  # "sound": our own reader, whatever produced the labels
            fixed["reading"] = reading
    elif pddl_name in _READ_BY_PLANBENCH:  # PlanBench read these answers with its own reader and VAL
        fixed["reading"] = "planbench"
    options = recognise(path, base, dataset, queries, run.example_plans, fixed)
    if reading is None and options.get("prompt_style") in PDDL_STYLES and options.get("reading") == "planbench":
        # PlanBench read PDDL answers as PDDL lines (save_gpt3_response), not with its English Logistics reader
        del options["reading"]
    cfg = planning.cfg if planning is not None else None
    assert run.source is not None
    translated = [inst for inst in run.source.instances if "raw_translation" in inst.fields]
    if reading in (None, TRANSLATION) and run.kind == "one_shot" and translated:
        # PlanBench's labels came from GPT-4o's translation of each answer: replay reads the plan it stored
        options["reading"] = TRANSLATION
        options["translations"] = {
            answer_digest(inst.answer or ""): _plan_lines(inst.fields.get("extracted_llm_plan"))
            for inst in translated
        }
        return options
    if reading is None and cfg is not None and "blocksworld" in cfg.domain_name:
        assert run.source is not None
        # a conversation's stored plan is its last answer's
        answers = {
            inst.ident: (
                inst.answer if inst.answer is not None else _last_answer(inst.messages),
                inst.fields.get("extracted_llm_plan"),
            )
            for inst in run.source.instances
            if "raw_translation" not in inst.fields  # a GPT-4o translation, not a reader, made those plans
        }
        found, share = producing_reader(base, options, dataset, answers, kind_of(run.source).name == "conversation")
        if found is not None:
            options["reading"] = found
        elif share < UNREAD_BY_RULES and len(answers) >= MIN_STORED and run.kind == "one_shot" and not _gpt4_era(run):
            # No rule-based reader made these stored plans (o1-preview's reruns on Mystery keep GPT-4o's plans
            # without its raw text): they are read back as recorded translations
            options["reading"] = TRANSLATION
            options["translations"] = {
                answer_digest(answer): _plan_lines(plan) for answer, plan in answers.values() if plan is not None
            }
    return options


# below this share of stored plans reproduced by any rule-based reader, the plans came from elsewhere (a translator)
UNREAD_BY_RULES = 0.5
MIN_STORED = 20


def _gpt4_era(run: PlanBenchRun) -> bool:
    """Whether the file is of PlanBench's 2023 GPT-4 pipeline (its verdict field is `correct`, not `llm_correct`):
    it predates GPT-4o, so no translation made its stored plans (they name the blocks by colour, `(pick-up red)`)."""
    assert run.source is not None
    return any("correct" in i.fields and "llm_correct" not in i.fields for i in run.source.instances)


def _last_answer(messages: Sequence[Mapping[str, str]]) -> str:
    return next((m["content"] for m in reversed(messages) if m["role"] == "assistant"), "")


def _plan_lines(plan: Any) -> list[str]:
    """PlanBench's stored plan (text or list of lines) as its non-empty lines."""
    text = "\n".join(map(str, plan)) if isinstance(plan, list) else str(plan or "")
    return [line.strip() for line in text.splitlines() if line.strip()]


def _first_queries(run: PlanBenchRun) -> list[str]:
    """Each instance's first user message (its problem's prompt), in instance order."""
    assert run.source is not None
    out = []
    for inst in run.source.instances:
        if inst.query is not None:
            out.append(sent_query(inst.query))
        else:
            out.append(next(m["content"] for m in inst.messages if m["role"] == "user"))
    return out


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
