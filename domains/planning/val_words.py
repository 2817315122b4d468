"""VAL's view of a plan, in VAL's own words, from our validator's simulation.

The papers hand on what VAL (KCL-Planning/VAL's `Validate`) prints, and VAL stops at the first failure: it
checks each happening in turn ("Checking next happening (time N)" under `-v`, printed before the step's
preconditions are checked, so the failing step is counted), and a step whose preconditions do not hold ends
the run ("Plan failed to execute"); only a plan that executes has its goal checked ("Goal not satisfied",
"Plan invalid"). A step naming no action of the domain is "No matching action defined for ..."; one whose
objects do not fit is a "Bad plan description!". `VAL -v` also gives repair advice for the first failure:

    (unstack b a) has an unsatisfied precondition at time 3
    (Set (clear b) to true)

with "(Follow each of:" ... "and (Set ...)" ... ")" around several conditions, and "The goal is not satisfied"
before the goal's. Our validator is not VAL (no durative actions, no numeric fluents), so these are VAL's words
for the failures our STRIPS simulation finds, not VAL's output byte for byte.

`read_val` reads the raw reply as VAL reads a plan file (the study's code hands VAL the reply as it is, its
`formatter` commented out): the parenthesised actions up to the first word outside them (code fences' backticks
are skipped by VAL's lexer); a step left open (a reply cut off mid-action) leaves no plan (VAL's parser fails:
"Bad plan description!", `applications/Validate/src/main.cpp:132-140`); on an untyped domain a step naming an
object the problem lacks is executed and fails there.

Used by: the refinement study's verdict and request reason (`requests`: what its code, Singh8899/LLM-Planning-Leonardo
`generate_with_validation`, extracts from VAL's output run without `-v`), its meta-network features
(`critiquebench.confidence.features`, read from `VAL -v` by its `dataset_generator.py`), and the intrinsic
self-critique paper's oracle, whose critique is the validator's feedback (`001:142`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from critiquebench.domains.planning.strips import Fact, GroundAction, Task

Step = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class ValRun:
    """What VAL finds in a plan of `plan_size` steps: `checked` happenings checked (the failing one included),
    the first `failure` ("no-action", "bad-plan", "precondition", "goal"; None: valid) at 1-based `step`,
    its `action` as written in a plan, and the facts that would have had to be true (`unmet`) or false
    (`unmet_negative`)."""

    plan_size: int
    checked: int
    failure: str | None = None
    step: int | None = None
    action: str = ""
    unmet: tuple[Fact, ...] = ()
    unmet_negative: tuple[Fact, ...] = ()

    @property
    def valid(self) -> bool:
        return self.failure is None


def typed(task: Task) -> bool:
    """Whether VAL would type-check a plan for this domain (it declares types for some action's parameters)."""
    return any(kind is not None for schema in task.domain.schemas.values() for kind in schema.param_types)


# VAL's lexer (`libraries/VAL/src/Parser/pddl+.l`) has a token for these characters (and for names and numbers);
# any other character it echoes and skips, so code fences' backticks and commas vanish.
_TOKEN_CHARS = frozenset("()[]=+-*/<>?.:_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def val_steps(text: str) -> tuple[list[Step], bool] | None:
    """The plan VAL reads from the raw reply file, and whether it reads one at all. VAL's plan grammar
    (`pddl+.y:1549-1587`) is a run of "(name args)" steps: its parser builds the plan from the steps read before
    the first token that cannot continue it (a word, a number, a full stop) and stops there, so what follows is
    not read (the study's pddl_4_12_temp2.txt, a solution followed by prose, repeats and a cut-off action, ended
    its loop as valid). A step left open or holding no name (a reply cut off mid-action, "(put") builds nothing:
    (steps, False). None when no line starts with "(" (a plan in English: the study never had one, and our
    reader's reading stands in)."""
    if not any(line.strip().startswith("(") for line in text.splitlines()):
        return None
    steps: list[Step] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == ";":  # a comment, to the end of the line
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if char.isspace() or char not in _TOKEN_CHARS:
            i += 1
            continue
        if char != "(":
            return steps, True
        close = text.find(")", i)
        words = "".join(c if c in _TOKEN_CHARS else " " for c in text[i + 1 : close]).split() if close > 0 else []
        if not words or not all(_NAME.fullmatch(w) for w in words):
            return [], False
        steps.append((words[0].lower(), tuple(w.lower() for w in words[1:])))
        i = close + 1
    return steps, True


def read_val(task: Task, text: str, known_actions: Sequence[str]) -> tuple[list[Step], ValRun] | None:
    """VAL's run over the raw reply `text` (see the module doc) with the steps it read; None for a reply with no
    PDDL line (English), which VAL's reading says nothing about."""
    read = val_steps(text or "")
    if read is None:
        return None
    steps, parsed = read
    if not parsed:  # VAL cannot build a plan from the file
        return steps, ValRun(0, 0, "bad-plan")
    return steps, run_val(task, steps, known_actions, any_objects=not typed(task))


def atom(name: str, args: Sequence[str]) -> str:
    return "(" + " ".join((name, *args)) + ")"


def run_val(task: Task, steps: Sequence[Step], known_actions: Sequence[str] = (), any_objects: bool = False) -> ValRun:
    """VAL's run over `steps`. `known_actions` are the domain's action names (a step naming another is "No
    matching action"); without them every step that does not ground is a "Bad plan description!".
    `any_objects`: a step may name objects the problem lacks, as VAL executes a plan on an untyped domain
    (`Task.ground_any`: nothing holds of such an object, so the step fails its preconditions)."""
    names = {n.lower() for n in known_actions}

    def ground(name: str, args: tuple[str, ...]) -> GroundAction | None:
        schema = task.domain.schemas.get(name)
        if any_objects and schema is not None and len(args) == len(schema.params):
            return task.ground(name, args) or task.ground_any(name, args)
        return task.ground(name, args)

    for i, (name, args) in enumerate(steps, start=1):
        if ground(name, args) is None:
            # VAL reads and type-checks the whole plan before executing any of it
            kind = "no-action" if names and name.lower() not in names else "bad-plan"
            return ValRun(len(steps), 0, kind, i, atom(name, args))
    state = task.init
    for i, (name, args) in enumerate(steps, start=1):
        action = ground(name, args)
        assert action is not None  # checked above
        if not action.applicable(state):
            missing, present = action.unmet(state)
            return ValRun(len(steps), i, "precondition", i, atom(name, args), _sorted(missing), _sorted(present))
        state = action.apply(state)
    unmet, unwanted = task.goal - state, task.neg_goal & state
    if unmet or unwanted:
        return ValRun(len(steps), len(steps), "goal", None, "", _sorted(unmet), _sorted(unwanted))
    return ValRun(len(steps), len(steps))


def repair_advice(run: ValRun) -> str:
    """VAL's repair advice for the first failure ("" for a valid plan), in the planner's PDDL names."""
    if run.failure == "no-action":
        return f"No matching action defined for {run.action}"
    if run.failure == "bad-plan":
        return "Bad plan description!"
    sets = [f"(Set {_fact(f)} to true)" for f in run.unmet] + [f"(Set {_fact(f)} to false)" for f in run.unmet_negative]
    if run.failure == "precondition":
        head = f"{run.action} has an unsatisfied precondition at time {run.step}"
    elif run.failure == "goal":
        head = "The goal is not satisfied"
    else:
        return ""
    if len(sets) == 1:
        return f"{head}\n{sets[0]}"
    body = "\n".join("    " + ("" if k == 0 else "and ") + s for k, s in enumerate(sets))
    return f"{head}\n(Follow each of:\n{body}\n)"


def _fact(fact: Fact) -> str:
    return atom(fact[0], fact[1:])


def _sorted(facts: frozenset[Fact]) -> tuple[Fact, ...]:
    return tuple(sorted(facts))
