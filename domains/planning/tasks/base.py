"""What every PlanBench task shares: the `PlanTask` interface and PlanBench's text pieces.

A task is a prompt builder, an answer evaluator and the task's random choices (`params`: which example
instances, which plan prefix, which perturbation, ...). Fresh runs draw the choices from a seeded RNG
(`choose`); an imported PlanBench file supplies the choices its run drew, read back from the recorded query
(`recover`), so the prompt we build from them can be compared byte for byte with the one PlanBench sent.

The texts are PlanBench's, in domains/prompts/planbench.toml (`statement`, `plan-block`, `task.*`); a task
fills them from its domain's prompt set (`dom.base.texts`), so a user's prompt file reaches them.

Two fact orders are PlanBench's and both are used, as its code does: statements built by `fill_template`
(t1, t5, t8) sort facts as tarski atoms (`NLConfig.prompt_facts`), the executor-based ones (t2, t3, t4, t6,
t7) sort "pred_arg" strings (`NLConfig.state_facts`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from critiquebench.domains.contract import Instance, Verdict
from critiquebench.domains.memo import ObjectMemo
from critiquebench.domains.planning.prompts import PLANBENCH, plan_text
from critiquebench.domains.planning.prompts import fill_template as fill_template  # the tasks' statements
from critiquebench.domains.planning.strips import Fact, PlanningError, State, Task
from critiquebench.domains.planning.templates import NLConfig
from critiquebench.domains.planning.validator import check_plan, error_sentences
from critiquebench.domains.prompts import DEFAULT, PromptSet

if TYPE_CHECKING:
    from critiquebench.domains.planning.tasks.domain import TaskDomain

Step = tuple[str, tuple[str, ...]]
Params = dict[str, Any]
STATEMENT = "\n[STATEMENT]\n"  # what splits a recorded query into its statements (`statements`)


class PlanTask:
    """One PlanBench task. Subclasses set `name`, `title` and override what differs."""

    name: str = ""
    title: str = ""
    # The dataset sub-folder with the task's problems ("generated" for t5's larger problems).
    folder: str = "instances"

    def choose(self, dom: TaskDomain, inst: Instance, rng: random.Random) -> Params:
        """The task's random choices for a fresh run of `inst`."""
        return {}

    def recover(self, dom: TaskDomain, inst: Instance, record: Mapping[str, Any]) -> Params:
        """The choices PlanBench drew for `record` (one entry of a results file), read from its query."""
        return {}

    def prompt(self, dom: TaskDomain, inst: Instance, params: Params) -> str:
        raise NotImplementedError

    def evaluate(self, dom: TaskDomain, inst: Instance, params: Params, text: str) -> Verdict:
        """Whether `text` solves the task; the verdict's `valid` is the task's correctness."""
        raise NotImplementedError


# ---- PlanBench's text pieces ----


def plan_block(cfg: NLConfig, steps: Sequence[Step], texts: PromptSet | None = None, key: str = "plan-block") -> str:
    """A shown plan as PlanBench writes it: "\\n" + one English action per line + its end marker line
    (`key`: PlanBench's `plan-block`, or `task.t7.action-sequence` for t7's executed actions)."""
    return (DEFAULT[PLANBENCH] if texts is None else texts).render(key, steps=plan_text(cfg, steps))


def facts(cfg: NLConfig, task: Task) -> dict[str, str]:
    """The `init` and `goal` fields of the executor-based tasks' statements (PlanBench's `get_state_translation`
    order, the initial state stripped as its task_utils.py does)."""
    return {"init": cfg.state_facts(task.init).strip(), "goal": cfg.state_facts(task.goal)}


def ordered_goal(cfg: NLConfig, facts: Sequence[Fact]) -> str:
    """Facts in the given order, joined like PlanBench's statements ("a, b and c")."""
    texts = [t for t in (cfg.fact_text(f) for f in facts) if t]
    if len(texts) > 1:
        return ", ".join(texts[:-1]) + f" and {texts[-1]}"
    return texts[0] if texts else ""


def simulate(task: Task, steps: Sequence[Step], state: State | None = None) -> State:
    """The state after applying `steps` (assumed executable, as PlanBench's executor does)."""
    state = task.init if state is None else state
    for name, args in steps:
        action = task.ground(name, args)
        if action is None:
            raise PlanningError(f"{name} {' '.join(args)} is not an action of problem {task.name}")
        state = action.apply(state)
    return state


def with_state(task: Task, init: Iterable[Fact] | None = None, goal: Iterable[Fact] | None = None) -> Task:
    """`task` with another initial state and/or goal (a fresh grounding cache: actions do not change)."""
    return replace(
        task,
        init=task.init if init is None else frozenset(init),
        goal=task.goal if goal is None else frozenset(goal),
        neg_goal=task.neg_goal if goal is None else frozenset(),
        _cache={},
    )


def plan_verdict(dom: TaskDomain, inst: Instance, text: str, task: Task | None = None) -> Verdict:
    """The sound verdict on the plan in `text` for `task` (default: the instance's own problem)."""
    task = task or dom.base.task(inst)
    parsed = dom.base.read(inst, text)
    if parsed is None:
        # No action at all is the empty plan, which is right when the goal already holds (VAL's verdict on an
        # empty plan file, which PlanBench's evaluator validates); otherwise there is nothing to judge.
        if task.goal_reached(task.init):
            return Verdict("valid", (), [])
        return Verdict("malformed", (dom.base.texts.text("feedback.no-plan"),), None)
    check = check_plan(task, parsed.steps)
    errors = error_sentences(dom.base.cfg, task, check, dom.base.texts)
    return Verdict("valid" if check.valid else "invalid", errors, [pddl(s) for s in parsed.steps])


def recorded_intro(cfg: NLConfig, query: str) -> dict[str, str]:
    """{"intro": NAME} when a recorded query starts with one of PlanBench's historical intros of the domain
    (`NLConfig.intros`, e.g. the first Mystery intro) instead of today's; else {}."""
    if query.startswith(cfg.domain_intro):
        return {}
    return next(({"intro": name} for name, text in cfg.intros.items() if query.startswith(text)), {})


def pddl(step: Step) -> str:
    return "(" + " ".join((step[0], *step[1])) + ")"


def step_of(line: str) -> Step:
    words = line.strip().strip("()").lower().split()
    return words[0], tuple(words[1:])


# ---- reading PlanBench's own texts back (recorded queries) ----


_INDEXES = ObjectMemo(2048)  # t5's generated problems have ~400 object sets


class TextIndex:
    """Exact English of every ground action and fact of a problem, read back to PDDL."""

    @classmethod
    def of(cls, cfg: NLConfig, task: Task) -> TextIndex:
        """The index of `task`, shared by the problems over the same objects (and static facts, which decide the
        actions that can ever apply): a PlanBench set has few object sets (Blocksworld's 500 problems two), and
        each of its tasks reads every shown plan back, so building one per problem was a replay's main cost."""
        static = task.domain.static_predicates
        key = (frozenset(task.objects.items()), frozenset(f for f in task.init if f[0] in static))
        return _INDEXES.get((cfg, task.domain), key, lambda: cls(cfg, task))

    def __init__(self, cfg: NLConfig, task: Task) -> None:
        self.cfg = cfg
        objects = sorted(task.objects)
        self.actions: dict[str, Step] = {}
        for action in sorted(task.ground_all(), key=lambda a: (a.name, a.args)):
            self.actions.setdefault(cfg.action_text(action.name, action.args), (action.name, action.args))
        self.facts: dict[str, Fact] = {}
        for pred, arity in task.domain.predicates.items():
            for args in _tuples(objects, arity):
                text = cfg.fact_text((pred, *args))
                if text:
                    self.facts.setdefault(text, (pred, *args))
        # compiled on first use: only the tasks that read fact lists back (goals, replanning) need it, and one
        # pattern of every fact was a quarter of what building the index cost (docs/generate.py's t2-t8 table)
        self._fact_re: re.Pattern[str] | None = None

    def plan(self, block: str) -> list[Step] | None:
        """The steps of a plan block's lines; None when a line is not an action's exact English."""
        steps = []
        for line in block.strip("\n").splitlines():
            if line.strip() in ("", "[PLAN END]", "[ACTION SEQUENCE END]"):
                continue
            step = self.actions.get(line.strip())
            if step is None:
                return None
            steps.append(step)
        return steps

    def fact_list(self, text: str) -> list[Fact]:
        """The facts of a PlanBench fact list ("a, b and c"), in order; unknown pieces are skipped."""
        if not self.facts:
            return []
        if self._fact_re is None:
            self._fact_re = re.compile("|".join(re.escape(t) for t in sorted(self.facts, key=len, reverse=True)))
        return [self.facts[m.group(0)] for m in self._fact_re.finditer(text)]


def _tuples(objects: list[str], n: int) -> Iterable[tuple[str, ...]]:
    import itertools

    return itertools.product(objects, repeat=n)


def statements(query: str) -> list[str]:
    """The statements of a query, each starting right after its ``[STATEMENT]`` line."""
    return query.split(STATEMENT)[1:]


def between(text: str, start: str, end: str) -> str:
    """The text after the first `start` up to the next `end` ("" when `start` is missing)."""
    i = text.find(start)
    if i < 0:
        return ""
    i += len(start)
    j = text.find(end, i)
    return text[i:] if j < 0 else text[i:j]
