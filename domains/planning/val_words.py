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
before the goal's (the unmet preconditions in the order the action writes them, the unmet goals in the problem's).
Our validator is not VAL (no durative actions, no numeric fluents), so these are VAL's words for the failures our
STRIPS simulation finds; on every recorded reply of the refinement study (1093) and PlanBench's 500 GPT-4 one-shot
Blocksworld plans they are the real VAL's byte for byte (`critiquebench.reports.val_agreement`,
tests/test_val_binary.py), which a study can run instead (`validator=val`, `val_binary`).

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
from collections.abc import Callable, Sequence
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


_NUMBER = re.compile(r"-?\d+(\.\d*)?")  # the lexer's {int} and {float} (`pddl+.l`)
_TIMED_LINE = re.compile(r"^\s*-?\d+(\.\d*)?\s*:\s*\(")  # "0.0: (pick-up b1)", a line `c_step_t_d` opens


class _BadPlan(Exception):
    """VAL's parser met a token that fits no rule and reduced no plan: "Bad plan description!"."""


def val_steps(text: str) -> tuple[list[Step], bool] | None:
    """The plan VAL reads from the raw reply file, and whether it reads one at all.

    VAL's plan grammar (KCL-Planning/VAL `libraries/VAL/src/Parser/pddl+.y`, rules `c_plan`, `c_step_t_d`,
    `c_step_d`, `c_step`, `c_float`) is a run of steps, each `[c_float ":"] "(" NAME c_const_symbols ")"
    ["[" c_float "]"]` (a start time, a duration), with `TIME c_float` (a line opening "time") anywhere between.
    At a token that cannot open another step (a word, ":", "."), bison's default reduction ends `c_plan` (it may be
    empty) and `mystartsymbol : c_plan {top_thing= $1;}` keeps the steps read so far; the syntax error that
    follows does not undo it. So a reply opening with prose ("Here is the plan:") or a language-tagged fence
    ("```pddl": the backticks are skipped by the lexer, `pddl` is a NAME) is read as the empty plan, and what
    follows a solution is not read (the study's pddl_4_12_temp2.txt, a solution followed by prose, repeats and a
    cut-off action, ended its loop as valid). A token that opens a rule no token then completes ("1." then "(",
    a start time without ":", "[" without its "]", a step left open or holding no name: a reply cut off
    mid-action, "(put") reduces nothing: VAL has no plan ("Bad plan description!"): (steps, False). None when no
    line starts with "(" or a timed step (a plan in English: the study never had one, and our reader's reading
    stands in)."""
    if not any(line.strip().startswith("(") or _TIMED_LINE.match(line) for line in text.splitlines()):
        return None
    steps: list[Step] = []
    i = _skip(text, 0)
    try:
        while i < len(text):
            char = text[i]
            if char == "(":
                i = _step(text, i, steps)
            elif _NUMBER.match(text, i) and (char != "-" or text[i + 1 : i + 2].isdigit()):
                # c_step_t_d : c_float COLON c_step_d (a start time, read and not kept: our steps are untimed)
                i = _skip(text, _NUMBER.match(text, i).end())  # type: ignore[union-attr]
                if not text.startswith(":", i):
                    raise _BadPlan
                i = _skip(text, i + 1)
                if not text.startswith("(", i):
                    raise _BadPlan
                i = _step(text, i, steps)
            elif _time_keyword(text, i):  # c_plan : TIME FLOATVAL c_plan | TIME INTVAL c_plan
                i = _skip(text, i + 4)
                found = _NUMBER.match(text, i)
                if found is None:
                    raise _BadPlan
                i = _skip(text, found.end())
            else:
                return steps, True
    except _BadPlan:
        return [], False
    return steps, True


def _skip(text: str, i: int) -> int:
    """The next token's start: whitespace, `;` comments and characters the lexer has no token for (it echoes
    and skips them: code fences' backticks, commas) are passed over."""
    while i < len(text):
        char = text[i]
        if char == ";":  # a comment, to the end of the line
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif char.isspace() or char not in _TOKEN_CHARS:
            i += 1
        else:
            return i
    return i


def _step(text: str, i: int, steps: list[Step]) -> int:
    """c_step_d : c_step OPEN_SQ c_float CLOSE_SQ | c_step, with c_step : OPEN_BRAC NAME c_const_symbols
    CLOSE_BRAC, read from the "(" at `i`; the step joins `steps`; the position after it."""
    close = text.find(")", i)
    words = "".join(c if c in _TOKEN_CHARS else " " for c in text[i + 1 : close]).split() if close > 0 else []
    if not words or not all(_NAME.fullmatch(w) for w in words):
        raise _BadPlan
    steps.append((words[0].lower(), tuple(w.lower() for w in words[1:])))
    i = _skip(text, close + 1)
    if text.startswith("[", i):  # a duration, read and not kept
        found = _NUMBER.match(text, _skip(text, i + 1))
        if found is None:
            raise _BadPlan
        i = _skip(text, found.end())
        if not text.startswith("]", i):
            raise _BadPlan
        i = _skip(text, i + 1)
    return i


def _time_keyword(text: str, i: int) -> bool:
    """The lexer's `^"time"`: "time" opening a line (any case), not the start of a longer name."""
    word = text[i : i + 4].lower() == "time" and (i == 0 or text[i - 1] == "\n")
    after = text[i + 4 : i + 5]
    return word and not (after.isalnum() or after in "_-" and after != "")


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
            order = _precondition_order(task, name, args)
            return ValRun(len(steps), i, "precondition", i, atom(name, args), order(missing), order(present))
        state = action.apply(state)
    unmet, unwanted = task.goal - state, task.neg_goal & state
    if unmet or unwanted:
        return ValRun(len(steps), len(steps), "goal", None, "", _written(task, unmet), _written(task, unwanted))
    return ValRun(len(steps), len(steps))


def repair_advice(run: ValRun) -> str:
    """VAL's repair advice for the first failure ("" for a valid plan), in the planner's PDDL names."""
    if run.failure == "no-action":
        return f"No matching action defined for {run.action.strip('()').split()[0]}"  # the name only, as VAL -v
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


def _written(task: Task, facts: frozenset[Fact]) -> tuple[Fact, ...]:
    """Unmet goal literals in the order the problem writes them, as VAL's repair advice lists them (the study's
    pddl_8_6: "(on b2 b1)", "(on b8 b2)", then "(clear b8)"); any the order lacks follow, sorted."""
    first = [f for f in task.goal_order if f in facts]
    return (*first, *sorted(facts - set(first)))


def _precondition_order(task: Task, name: str, args: Sequence[str]) -> Callable[[frozenset[Fact]], tuple[Fact, ...]]:
    """Unmet preconditions in the order the action's schema writes them, as VAL's repair advice lists them
    (real VAL on PlanBench's GPT-4 plans: "(Set (on d b) to true)" before "and (Set (clear d) to true)" for
    `unstack`, tests/test_val_binary.py); facts the schema does not write (equalities) follow, sorted."""
    schema = task.domain.schemas.get(name)
    slots = dict(zip(schema.params, args, strict=False)) if schema is not None else {}
    atoms = () if schema is None else (*schema.pre, *schema.neg_pre)
    written = [(a[0], *(slots.get(t, t) for t in a[1:])) for a in atoms]

    def order(facts: frozenset[Fact]) -> tuple[Fact, ...]:
        first = [f for f in dict.fromkeys(written) if f in facts]
        return (*first, *sorted(facts - set(first)))

    return order
