"""`TaskDomain`: a planning domain asked one PlanBench task (the `Domain` protocol, so every scheme runs it).

Its name is "DOMAIN:TASK" (e.g. "blocksworld:t3"), so one study can hold several tasks of one domain. Each
instance carries the task's random choices in `data["params"]`: drawn from `seed` for fresh runs, or read back
from a recorded PlanBench results file (`recorded`), whose entries are matched by instance id.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from critiquebench.domains.contract import FeedbackLevel, Instance, Judgement, Verdict
from critiquebench.domains.datasets import resolve_data_path
from critiquebench.domains.planning import prompts
from critiquebench.domains.planning.domain import PlanningDomain
from critiquebench.domains.planning.instances import instance_id
from critiquebench.domains.planning.planbench_reading import STATE_READINGS
from critiquebench.domains.planning.planner import find_plan
from critiquebench.domains.planning.strips import PlanningError, Task
from critiquebench.domains.planning.tasks.base import Params, PlanTask, Step, TextIndex, shared_index, step_of
from critiquebench.domains.planning.validator import render

_RECORDS: dict[str, dict[str, Mapping[str, Any]]] = {}
_RECORDS_LOCK = threading.Lock()


def recorded_entries(path: str | Path) -> dict[str, Mapping[str, Any]]:
    """A PlanBench results file's entries by instance id (read once per process)."""
    key = str(Path(path).resolve())
    with _RECORDS_LOCK:
        if key not in _RECORDS:
            try:
                data = json.loads(Path(key).read_text(encoding="utf-8"))
                entries = data["instances"]
            except (OSError, ValueError, KeyError, TypeError) as err:
                raise PlanningError(f"{path}: cannot read PlanBench results: {err}") from None
            _RECORDS[key] = {str(e.get("instance_id")): e for e in entries if isinstance(e, dict)}
        return _RECORDS[key]


@dataclass
class _Problem:
    ident: str
    text: str
    task: Task
    plan: list[Step] | None = None
    index: TextIndex | None = None


@dataclass
class TaskDomain:
    base: PlanningDomain
    task: PlanTask
    recorded: str | None = None
    instances: str | None = None  # the folder of the problems the instance ids refer to
    seed: int = 0
    # t7: read answers as PlanBench's code read them (`planbench_reading.STATE_READINGS`), None: our reader
    state_reading: str | None = None
    name: str = field(init=False)
    candidate_kinds: tuple[str, ...] = ()
    _dir: Path | None = field(default=None, init=False, repr=False)
    _known: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)
    _problems: dict[str, _Problem] = field(default_factory=dict, init=False, repr=False)
    _stated: dict[tuple[str, str], str] | None = field(default=None, init=False, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)

    def __post_init__(self) -> None:
        self.name = f"{self.base.name}:{self.task.name}"
        if self.state_reading is not None and self.state_reading not in STATE_READINGS:
            raise PlanningError(f"unknown state_reading {self.state_reading!r}; known: {', '.join(STATE_READINGS)}")

    # ---- problems of the task's folder, by id ----
    def folder(self, path: Path | None) -> Path:
        """The folder of the task's problem files (t5: the domain's `generated/` folder)."""
        if self.instances:
            return Path(self.instances).expanduser()
        # The datasets root or the domain's own folder, as for the planning domain itself.
        root = resolve_data_path(self.base.name, path)
        if not (root / "instances").is_dir() and (root / self.base.name / "instances").is_dir():
            root = root / self.base.name  # the planbench/ folder that holds every domain's folder
        if self.task.folder != "instances" and (root / self.task.folder).is_dir():
            return root / self.task.folder
        return root / "instances" if (root / "instances").is_dir() else root

    def problem(self, ident: str) -> _Problem:
        with self._lock:
            found = self._problems.get(ident)
            if found is not None:
                return found
            if self._dir is None:
                raise PlanningError(f"{self.name}: load instances before asking for problem {ident}")
            source = self._dir / f"instance-{ident}.pddl"
            try:
                text = source.read_text(encoding="utf-8")
            except OSError as err:
                raise PlanningError(f"{source}: cannot read: {err}") from None
            # Through the planning domain, whose cache already holds the problems its load() parsed.
            task = self.base.task(Instance(self.base.name, ident, {"problem": text, "source": str(source)}))
            found = _Problem(ident, text, task)
            self._problems[ident] = found
            return found

    def plan(self, ident: str) -> list[Step]:
        """The problem's optimal plan: PlanBench's (optimal_plans.json) when known, else our planner's."""
        prob = self.problem(ident)
        with self._lock:
            if prob.plan is None:
                known = self._known.get(ident)
                prob.plan = [step_of(s) for s in known] if known else [(a.name, a.args) for a in find_plan(prob.task)]
            return prob.plan

    def knows_plan(self, ident: str) -> bool:
        """Whether PlanBench's own optimal plan for `ident` is known (optimal_plans.json)."""
        return ident in self._known

    def index(self, ident: str) -> TextIndex:
        prob = self.problem(ident)
        with self._lock:
            if prob.index is None:
                prob.index = shared_index(self.base.cfg, prob.task)
            return prob.index

    def problem_stated(self, init: str, goal: str) -> str | None:
        """The id of the folder's problem whose initial state and goal PlanBench's executor writes as `init` and
        `goal` (t3 shows random other problems and records only the text)."""
        with self._lock:
            if self._stated is None:
                cfg = self.base.cfg
                self._stated = {}
                for ident in self.ids():
                    task = self.problem(ident).task
                    self._stated.setdefault((cfg.state_facts(task.init).strip(), cfg.state_facts(task.goal)), ident)
            return self._stated.get((init, goal))

    def ids(self) -> list[str]:
        assert self._dir is not None
        found = [instance_id(p) for p in self._dir.glob("instance-*.pddl")]
        return sorted(found, key=lambda i: (0, int(i)) if i.isdigit() else (1, 0))

    def _read_known(self, folder: Path) -> None:
        for candidate in (folder / "optimal_plans.json", folder.parent / "optimal_plans.json"):
            # The parent's file names the parent's instances/ problems only.
            if candidate.parent != folder and folder.name != "instances":
                continue
            if candidate.is_file():
                try:
                    raw = json.loads(candidate.read_text(encoding="utf-8"))
                except ValueError as err:
                    raise PlanningError(f"{candidate}: malformed JSON: {err}") from None
                self._known = {
                    instance_id(Path(k)): [ln.strip() for ln in v["plan"].splitlines() if ln.strip()]
                    for k, v in raw.items()
                    if isinstance(v, dict) and isinstance(v.get("plan"), str)
                }
                return

    # ---- Domain protocol ----
    def load(self, selection: str | None = None, path: Path | None = None) -> list[Instance]:
        folder = self.folder(path)
        self._dir = folder
        self._read_known(folder)
        instances = self.base.load(selection, folder)
        records = recorded_entries(self.recorded) if self.recorded else {}
        for inst in instances:
            record = records.get(inst.id)
            if self.recorded and record is None:
                raise PlanningError(f"{self.recorded}: no record for instance {inst.id}")
            inst.data["params"] = self.params(inst, record)
        return instances

    def params(self, inst: Instance, record: Mapping[str, Any] | None = None) -> Params:
        if record is not None:
            return self.task.recover(self, inst, record)
        rng = random.Random(f"{self.seed}:{self.task.name}:{inst.id}")
        return self.task.choose(self, inst, rng)

    def generate(self, n: int, seed: int) -> list[Instance]:
        raise PlanningError(f"task {self.task.name} runs on PlanBench-style instance folders, not generated ones")

    def prompt(self, instance: Instance, style: str | None = None, shots: int | None = None) -> list[dict[str, str]]:
        return prompts.messages(self.task.prompt(self, instance, instance.data.get("params") or {}), self.base.prompts)

    def verify(self, instance: Instance, text: str) -> Verdict:
        try:
            return self.task.evaluate(self, instance, instance.data.get("params") or {}, text or "")
        except PlanningError as err:
            return Verdict("malformed", (str(err),), None)

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        verdict = self.verify(instance, text)
        return verdict, None if verdict.answer is None else json.dumps(verdict.answer, sort_keys=True)

    def parse(self, instance: Instance, text: str) -> Any:
        return self.verify(instance, text).answer

    def feedback(self, instance: Instance, verdict: Verdict, level: FeedbackLevel) -> str:
        return render(verdict.errors, level, verdict.valid, self.base.texts)

    def canonical(self, instance: Instance, text: str) -> str | None:
        answer = self.parse(instance, text)
        return None if answer is None else json.dumps(answer, sort_keys=True)

    def candidate(self, instance: Instance, kind: str, rng: random.Random) -> str:
        raise PlanningError(f"task {self.task.name} has no candidate answers")

    @property
    def purposes(self) -> Mapping[str, str | None]:
        return self.base.purposes

    def judge_prompt(self, instance: Instance, purpose: str, answer: str) -> list[dict[str, str]]:
        return self.base.judge_prompt(instance, purpose, answer)

    def judge_reply(self, instance: Instance, purpose: str, answer: str, reply: str) -> Judgement:
        return self.base.judge_reply(instance, purpose, answer, reply)

    def backprompt(self, instance: Instance, critique: str) -> str:
        return self.base.backprompt(instance, critique)

