"""A PlanBench results file read into recorded calls: its kind (`KINDS`: one-shot, conversation, windowed), how
each kind's calls are cut, and the scheme replaying them."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from critiquebench.domains.planning.planbench_reading import answer_digest
from critiquebench.domains.planning.tasks import task_of
from critiquebench.domains.prompts import DEFAULT
from critiquebench.importers.planbench.checkout import (
    shipped_name,
)
from critiquebench.importers.planbench.file import ImportError_, RecordedFile, RecordedInstance, read_file
from critiquebench.importers.recording import RecordedCall
from critiquebench.nodes.context import RECORDED_CONTEXT_OVERFLOW

PLANBENCH_SYSTEM = DEFAULT["planbench"].text("system")  # PlanBench's chat queries were sent after it


# PlanBench names engines after the API flavour ("gpt-4_chat"); the model is the part before it.
_ENGINE_SUFFIXES = ("_chat",)


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
    # instances left out because their record cannot be replayed as PlanBench ran it (id -> why): named
    left_out: Mapping[int, str] = field(default_factory=dict)

    def without(self, left_out: Mapping[int, str]) -> PlanBenchRun:
        """The run with the instances of `left_out` (id -> why) left out: their ids and calls dropped, named."""
        keep = [k for k, ident in enumerate(self.instance_ids) if ident not in left_out]
        if self.kind != "one_shot" or len(self.calls) != len(self.instance_ids):
            raise ValueError("only a one-shot run's instances are left out this way")
        return replace(
            self,
            instance_ids=tuple(self.instance_ids[k] for k in keep),
            calls=tuple(self.calls[k] for k in keep),
            left_out={**self.left_out, **left_out},
        )

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
    broken = windowed.broken if windowed is not None else {}
    ids = tuple(inst.ident for inst in recorded.instances if inst.ident not in broken)
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
    # instances whose recorded windows are not PlanBench's protocol (id -> why): left out and named, not the file
    broken: Mapping[int, str] = field(default_factory=dict)
    # failing conversations that ended at an answer given (and answered) before in them: id -> their answers
    ends: Mapping[str, int] = field(default_factory=dict)


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
    last_answers: dict[str, str] = {}  # failing conversations: id -> their last answer
    ends: dict[str, int] = {}
    broken: dict[int, str] = {}
    for recorded in instances:
        found = _window_instance(recorded, calls, sent, systems)
        if isinstance(found, str):
            broken[recorded.ident] = found
            continue
        fields = recorded.fields
        if not _truth(fields.get("act_correct")) and not any(
            _truth(fields.get(k)) for k in ("could_not_extract", "context_window_hit")
        ):
            ended_wrong.add(found)
            answers = [m["content"] for m in recorded.messages if m["role"] == "assistant"]
            if answers and answers.count(answers[-1]) == 1:
                last_answers[str(recorded.ident)] = answers[-1]
            elif answers:  # its digest has the feedback an earlier turn was sent: the count marks the end
                ends[str(recorded.ident)] = found
    if len(ended_wrong) > 1:
        # failing conversations stopped after several counts of answers (o1-preview's mystery_new run: 2 to 15,
        # its steps counted otherwise where a call failed): each ends at its recorded last answer, as PlanBench's
        for ident, answer in last_answers.items():
            sent[ident][answer_digest(answer)] = None
    else:
        ends.clear()  # the one count of rounds ends them all
    if len(broken) == len(instances):
        raise ImportError_(f"{path}: instance {next(iter(broken))} {next(iter(broken.values()))}")
    if len(systems) > 1:
        raise ImportError_(f"{path}: some conversations open with a system message and some without")
    # PlanBench stopped a failing run after `iterations` answers: where every failure stopped at one count, that
    # was it; else its default
    rounds = ended_wrong.pop() if len(ended_wrong) == 1 else PLANBENCH_ITERATIONS
    return calls, RecordedFeedback(sent, systems == {True}, rounds, broken, ends)


def _window_mismatch(
    raw: Sequence[Mapping[str, str]],
    answers: Sequence[int],
    windows: Sequence[tuple[Any, ...]],
    shown: Mapping[int, Any],
) -> str | None:
    """Why the recorded `sent_messages` (step -> messages) are not the conversation's windows of one exchange
    (None: they are). After an empty answer (a failed call, judged as the empty plan and answered), PlanBench's
    step record of that call holds the next call's window, and every later record the one after its own
    (o1-preview's mystery_new run: 22 conversations, their empty answer at step 2): those are its windows too."""

    def same(k: int, j: int) -> bool:
        return j < len(windows) and [dict(m) for m in windows[j]] == shown[k]

    if all(same(k, k) for k in shown):
        return None
    empty = next((k for k, i in enumerate(answers) if not raw[i]["content"]), None)
    if empty is not None and all(same(k, k if k < empty else k + 1) for k in shown):
        return None
    k = next(k for k in shown if not same(k, k))
    if any(a["role"] == b["role"] == "user" for a, b in zip(raw, raw[1:], strict=False)):
        return (
            f"step {k}: the conversation holds two feedback turns with no answer between them (a call it recorded "
            "no answer for), and the recorded sent_messages show the next call sent both: no window of one "
            "exchange of the recorded conversation is what was sent"
        )
    return (
        f"step {k}: the recorded sent_messages are not the first prompt and the last exchange (PlanBench's window "
        "of one)"
    )


def _window_instance(
    recorded: RecordedInstance, calls: list[RecordedCall], sent: dict[str, dict[str, str | None]], systems: set[bool]
) -> int | str:
    """One conversation's calls and feedback added to `calls` and `sent` (its answers counted), or why its
    recorded windows are not PlanBench's window of one (`_window_mismatch`; nothing added)."""
    raw = list(recorded.messages)
    first = next(i for i, m in enumerate(raw) if m["role"] == "user")
    opening = raw[: first + 1]
    answers = [i for i, m in enumerate(raw) if m["role"] == "assistant"]
    steps = recorded.fields.get("step_wise_dict")
    windows = [tuple(opening + (raw[answers[k - 1] : answers[k - 1] + 2] if k else [])) for k in range(len(answers))]
    shown = {
        k: step["sent_messages"]
        for k in range(len(answers))
        if isinstance(steps, dict) and isinstance(step := steps.get(str(k)), dict) and step.get("sent_messages")
    }
    wrong = _window_mismatch(raw, answers, windows, shown)
    if wrong is not None:
        return wrong
    feedback: dict[str, str | None] = {}
    start = len(calls)
    for k, i in enumerate(answers):
        messages = windows[k]
        answer = raw[i]["content"]
        # the same window again (the same answer and feedback) is the next sample of that request
        again = sum(c.messages == messages for c in calls[start:])
        calls.append(RecordedCall(messages, answer, again, f"instance {recorded.ident} step {k}"))
        after = raw[i + 1]["content"] if i + 1 < len(raw) and raw[i + 1]["role"] == "user" else None
        feedback.setdefault(answer_digest(answer), after)
    sent[str(recorded.ident)] = feedback
    systems.add(opening[0]["role"] == "system")
    return len(answers)


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
            position=f"instance {inst.ident}",
        )
        for inst in instances
    ]


def _conversation_calls(path: Path, instances: Sequence[RecordedInstance]) -> list[RecordedCall]:
    calls = []
    for recorded in instances:
        inst = recorded.fields
        raw = list(recorded.messages)  # checked by `planbench.file` (a null feedback turn is already "None")
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
                calls.append(RecordedCall(tuple(messages), answer, position=f"instance {recorded.ident} turn {i}"))
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


def first_queries(run: PlanBenchRun) -> list[str]:
    """Each instance's first user message (its problem's prompt), in instance order."""
    assert run.source is not None
    out = []
    broken = {**(run.windowed.broken if run.windowed is not None else {}), **run.left_out}
    for inst in run.source.instances:
        if inst.ident in broken:
            continue
        if inst.query is not None:
            out.append(sent_query(inst.query))
        else:
            out.append(next(m["content"] for m in inst.messages if m["role"] == "user"))
    return out
