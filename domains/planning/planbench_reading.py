"""PlanBench's own reading of a Logistics answer and VAL's feedback on it: the replay protocol of its runs.

PlanBench (karthikv792/LLMs-Planning, `text_to_plan_logistics` and `get_val_feedback` /
`get_validation_message`) reads a Logistics answer line by line and hands the plan to VAL. Replaying GPT-4's
recorded Logistics backprompting run turn by turn needs that reading, which differs from our sound reader
(`parser.ActionReader`) in ways a live study should not inherit:

- a line is an action when its first word (after a "N." or "NN." number) is a verb of the domain ("load",
  "unload", "drive", "fly"); every word holding a digit is an object, renamed by its first letter and its
  `_`-separated numbers ("airplane_1" -> "a1", "location_0_1" -> "l0-1"), so objects the problem lacks are kept
  (VAL then reports their unmet preconditions) and commentary starting with a verb is read too;
- truck or airplane is told by the letter of the vehicle ("load"/"unload": the second object, else the first);
  "drive" with three objects gets the city of its destination's first digit appended;
- a line it cannot read that way (no vehicle, a bare number, too few objects) raises: PlanBench stops the
  conversation there (`could_not_extract`), with no feedback;
- VAL rejects a plan holding an action of the wrong arity or name (an answer cut off mid-action): it gives no
  repair advice, and PlanBench's feedback is then Python's `None`, sent as the next user turn ("None" as
  recorded);
- in VAL's advice, facts whose English template is empty (the kind facts OBJ, TRUCK, ...) count for
  "precondition" vs "preconditions" but are not written out.

`import planbench` stores this as the study's `reading = "planbench"` domain option (only for Logistics, whose
answers PlanBench reads with this function); live studies keep the sound reader.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from critiquebench.domains.planning.strips import Fact, Task
from critiquebench.domains.planning.templates import NLConfig

Step = tuple[str, tuple[str, ...]]



@dataclass(frozen=True)
class Reading:
    """One of PlanBench's plan readers, as a replay's `reading` option names it."""

    name: str
    code: str  # PlanBench's code it reproduces
    reads: str  # what it reads


# docs/planbench.md's reader table is generated from these rows (docs/generate.py).
READERS: tuple[Reading, ...] = (
    Reading("planbench", "`text_to_plan_logistics` + VAL's advice",
            "Logistics answers (the NL backprompting replay)"),
    Reading("planbench-whole", "`plan-bench/utils/text_to_pddl.py:193-253` (every commit before HEAD)",
            "every line of the whole answer with an action verb as a word and the action's number of objects"),
    Reading("planbench-head", "`llm_planning_analysis/utils/text_to_pddl.py:444-515`",
            "the same after cutting to `### plan:` and the first `[PLAN]...[PLAN END]` block, `*` removed"),
    Reading("planbench-whole-nostar", "none (reproduces the plans stored with GPT-4o's Blocksworld labels)",
            "the whole answer with `*` removed from each line"),
    Reading("planbench-translation", "`text_to_plan_with_llm` (`llm_planning_analysis/response_evaluation.py:93`)",
            "the plan GPT-4o's translation stored for that very answer (`translations`), as VAL reads the file "
            "(characters its lexer has no token for skipped, the steps before the first word kept)"),
    Reading("planbench-pddl", "`save_gpt3_response` (`llm_planning_analysis/utils/llm_utils.py:193-210` at "
            "27b0c44; HEAD's `evaluate_plan_pddl` calls a version it does not publish), then `validate_plan` / "
            "`validate_plan_unsolvable` (`utils/__init__.py:249-264` at 1540aef)",
            "PDDL answers: each line up to `[PLAN END]`, the text between its first `(` and `)` when its first "
            "word is an action of the domain; VAL on the problem file (a name its lexer reads as `{flawed}`, "
            "digits then a letter, makes VAL exit: no plan is valid); an unsolvable set: right only when that "
            "plan holds 'no plan possible'"),
)  # fmt: skip
READINGS = tuple(r.name for r in READERS)
# PlanBench's newest evaluator had GPT-4o translate each answer into a PDDL plan (`text_to_plan_with_llm`,
# `llm_planning_analysis/response_evaluation.py:93`); a replay reads the plan it stored for that very answer
# (`translations`: answer digest -> plan lines), since that translation call is not ours to repeat.
TRANSLATION = "planbench-translation"
# PlanBench's reading of a PDDL answer and VAL's run on the files (`pddl_answer_lines`, `val_exits_on`).
PDDL_READING = "planbench-pddl"
# The (mystery) Blocksworld readers, by PlanBench version (`blocksworld_plan`).
BLOCKSWORLD_READINGS = ("planbench-whole", "planbench-head", "planbench-whole-nostar")
# PlanBench's get_validation_message returns None when VAL gave no advice; it was sent as the user turn.
NO_ADVICE = "None"


class NotExtracted(ValueError):
    """PlanBench's reader raised on this answer: its loop stops without feedback."""


@dataclass(frozen=True)
class ValResult:
    """VAL's judgement of a plan as PlanBench turned it into feedback."""

    valid: bool
    sentence: str | None  # the error sentence, as `validator.error_sentences` words them (None: VAL gave no advice)


def logistics_plan(text: str, verbs: Sequence[str]) -> list[Step]:
    """The plan PlanBench reads from `text` (see the module doc); raises NotExtracted where it raised."""
    steps: list[Step] = []
    for raw in text.split("\n"):
        line = raw.strip().lower()
        if not line:
            continue
        try:
            line = _unnumbered(line)
            words = line.split()
            verb = words[0]  # an empty rest ("1.") raised in PlanBench too
        except IndexError:
            raise NotExtracted(f"cannot read line {raw.strip()!r}") from None
        if verb not in verbs:
            continue
        objects = [_object(w) for w in words if any(c.isdigit() for c in w)]
        steps.append(_action(verb, objects, raw))
    return steps


def _unnumbered(line: str) -> str:
    """The line without PlanBench's "N." / "NN." prefix (periods dropped then); IndexError where it raised."""
    if line[0].isdigit() and line[1] == ".":
        return line[2:].replace(".", "")
    if line[0].isdigit() and line[1].isdigit() and line[2] == ".":
        return line[3:].replace(".", "")
    return line


def _object(word: str) -> str:
    return word[0] + "-".join(word.split("_")[1:])


def _action(verb: str, objects: list[str], raw: str) -> Step:
    try:
        vehicle = objects[1] if "load" in verb else objects[0]
    except IndexError:
        raise NotExtracted(f"no vehicle in {raw.strip()!r}") from None
    if "a" in vehicle:
        name = verb + "-airplane"
    elif "t" in vehicle:
        name = verb + "-truck"
    else:
        raise NotExtracted(f"no truck or airplane in {raw.strip()!r}")
    if name == "drive-truck" and len(objects) == 3:
        digits = [c for c in objects[1] if c.isdigit()]
        if not digits:
            raise NotExtracted(f"no city for {raw.strip()!r}")
        objects = [*objects, "c" + digits[0]]
    return name, tuple(objects)


def val_feedback(cfg: NLConfig, task: Task, steps: Sequence[Step]) -> ValResult:
    """What VAL said about `steps`, as PlanBench worded it: the first inexecutable step with all its unmet
    preconditions (objects the problem lacks hold no fact), else the unmet goals."""
    schemas = task.domain.schemas
    if any(name not in schemas or len(args) != len(schemas[name].params) for name, args in steps):
        return ValResult(False, None)
    state = task.init
    for i, (name, args) in enumerate(steps, start=1):
        action = task.ground_any(name, args)
        missing = action.pre - state
        if missing:
            many = len(missing) > 1
            head = (
                f"The following action at step {i} has unmet preconditions:\n"
                if many
                else f"The following action at step {i} has an unmet precondition:\n"
            )
            tail = "The unmet preconditions are:\n" if many else "The unmet precondition is:\n"
            return ValResult(False, head + cfg.action_text(name, args) + "\n" + tail + _written(cfg, missing))
        state = action.apply(state)
    unmet = task.goal - state
    if not unmet:
        return ValResult(True, "")
    head = "These are the unmet goal conditions:\n" if len(unmet) > 1 else "This is the unmet goal condition:\n"
    return ValResult(False, head + _written(cfg, unmet))


def _written(cfg: NLConfig, facts: frozenset[Fact]) -> str:
    """PlanBench's rendering of VAL's facts: sorted, empty renderings left out, "a, b and c"."""
    texts = [t for t in (cfg.fact_text(f) for f in sorted(facts, key=lambda f: "_".join(f))) if t]
    if len(texts) > 1:
        return ", ".join(texts[:-1]) + f" and {texts[-1]}"
    return texts[0] if texts else ""


def blocksworld_plan(
    text: str, cfg: NLConfig, schemas: Mapping[str, int], head: bool, nostar: bool = False
) -> list[Step]:
    """The plan PlanBench's `text_to_plan_blocksworld` reads from an answer in a (mystery) Blocksworld domain.

    Two versions produced PlanBench's labels (`../shared/audits/planbench_breadth.md`, class 4):
    - whole (`head=False`): `plan-bench/utils/text_to_pddl.py:193-253`, the reader of every commit before HEAD:
      every line of the whole answer holding an action verb as a word and exactly as many known objects as the
      action takes is an action;
    - head (`head=True`): `llm_planning_analysis/utils/text_to_pddl.py:444-515`: the same, after cutting the
      answer at `### plan:` and to its first `[PLAN]...[PLAN END]` block, with `*` removed from each line;
    - whole without `*` (`nostar=True`): the whole answer with `*` removed from each line, a reader in no commit
      of PlanBench's repository that reproduces every plan stored with GPT-4o's Blocksworld labels
      (`llm_planning_analysis/results/blocksworld/gpt-4o_chat/task_1_plan_generation.json`; the audit's
      `planbench_label_provenance.py`), offered so that file replays with the reader its labels came from.
    Verbs are matched after the English action phrase is replaced by the action's name ("pick up" ->
    "pick-up"), in the domain's action order; objects in the order they appear in the line (each at most once).
    `schemas` maps action name -> number of parameters, in the domain file's order."""
    words = {}
    for name in schemas:
        template = cfg.actions.get(name, "")
        word = template.split(" ")[0]
        words[name] = name.replace("-", " ") if word in name else word
    objects = {v.lower(): k for k, v in cfg.encoded_objects.items()}
    text = text.lower().strip()
    if head:
        if "### plan:" in text:
            text = text.split("### plan:")[1]
        if "[plan]" in text:
            text = text.split("[plan]")[1]
            if "[plan end]" in text:
                text = text.split("[plan end]")[0]
    for name, phrase in words.items():
        text = text.replace(phrase, name)
    steps: list[Step] = []
    for raw in text.split("\n"):
        line = raw.strip().replace("*", "") if head or nostar else raw.strip()
        tokens = line.split()
        verb = next((name for name in schemas if name in tokens), None)
        if verb is None:
            continue
        found = sorted((line.index(obj), obj) for obj in objects if obj in line)
        if len(found) != schemas[verb]:
            continue
        steps.append((verb, tuple(objects[obj] for _, obj in found)))
    return steps


def answer_digest(text: str) -> str:
    """The key of an answer's recorded translation."""
    import hashlib

    return hashlib.sha256((text or "").encode("utf-8", "surrogatepass")).hexdigest()[:20]


# ---- t7 (plan execution): the state an answer describes, as PlanBench read it ----


# PlanBench's readings of a t7 answer (a state), as a t7 replay's `state_reading` option names them;
# docs/planbench.md's reader table lists these beside `READERS` (docs/generate.py).
STATE_READERS: tuple[Reading, ...] = (
    Reading("planbench-state", "`text_to_state` (`plan-bench/utils/text_to_pddl.py:263-357`, every commit "
                 "since `9bd2478`), compared as `response_evaluation.py:158-161`",
                 "clauses split at \" and \" and commas; a clause with \" not \" skipped; the first "
                 "`predicate_mapping` phrase it holds, then the first known object of each part around it"),
    Reading("planbench-state-commas", "the same without `.replace(' and ', ',')`: in no commit, it gives "
                 "every `extracted_llm_plan` stored with the four t7 files' labels (GPT-4 and text-davinci-002, "
                 "Blocksworld and Blocksworld-3: 1,200 of 1,200)",
                 "clauses split at commas only, so \"X is on the table and Y is on the table\" is one clause "
                 "naming X"),
)  # fmt: skip
STATE_READINGS = tuple(r.name for r in STATE_READERS)


def planbench_state(text: str, cfg: NLConfig, pddl_predicates: Mapping[str, int], commas: bool = False) -> list[str]:
    """The facts PlanBench's `text_to_state` reads from `text` (`plan-bench/utils/text_to_pddl.py:263-357`), as its
    names them ("on_b_c", "handempty"), in reading order and with repeats (its labels compare sorted lists, so a
    fact stated twice fails an answer). `commas`: clauses split at commas only (`STATE_READERS`).
    `pddl_predicates` maps a predicate to its number of parameters (the domain's)."""
    clauses = (text if commas else text.replace(" and ", ",")).split(",")
    name = cfg.domain_name
    if "mystery" in name:
        return _state_mystery(clauses, cfg)
    if "logistics" in name:
        return _state_logistics(clauses)
    if "blocksworld" in name:
        return _state_blocksworld(clauses, cfg, pddl_predicates)
    raise ValueError(f"PlanBench's text_to_state has no reader for domain {name!r}")


def _kept(clauses: Sequence[str]) -> list[str]:
    return [c.strip() for c in clauses if c.strip() and " not " not in c.strip()]


def _state_blocksworld(clauses: Sequence[str], cfg: NLConfig, arity: Mapping[str, int]) -> list[str]:
    # text_to_state_blocksworld: keys are colour words ("red"), each found as a substring in dict order
    blocks = {v.replace(" block", ""): k for k, v in cfg.encoded_objects.items()}
    mapping = cfg.predicate_mapping or {}
    state = []
    for pred in _kept(clauses):
        found = next(((p, words) for p, words in mapping.items() if words in pred), None)
        if found is None:
            continue
        fact, words = found
        objs = [next(b for b in blocks if b in part) for part in pred.split(words) if any(b in part for b in blocks)]
        count = cfg.predicates[fact].count("{}") if fact in cfg.predicates else arity.get(fact, 0)
        state.append("_".join([fact, *(blocks[o] for o in objs[:count])]))
    return state


def _state_mystery(clauses: Sequence[str], cfg: NLConfig) -> list[str]:
    # text_to_state_mystery: the first predicate whose *name* the clause holds, then every encoded object's text
    state = []
    for pred in _kept(clauses):
        fact = next((p for p in cfg.predicates if p in pred), None)
        if fact is None:
            continue
        words = cfg.predicates[fact]
        objs = []
        for part in pred.split(words):
            hit = next((k for k, v in cfg.encoded_objects.items() if v in part), None)
            if hit is not None:
                objs.append(hit)
        state.append(fact + "_" + "_".join(objs))
    return state


def _state_logistics(clauses: Sequence[str]) -> list[str]:
    state = []
    for pred in _kept(clauses):
        for words, fact in ((" is at ", "at_"), (" is in ", "in_")):
            if words in pred:
                state.append(fact + "_".join(p for p in pred.split(words) if p))
                break
    return state


# ---- t1 PDDL prompts (2024-25): the answer's parenthesised lines, and VAL on the problem file ----


def pddl_answer_lines(text: str, actions: Iterable[str]) -> list[str]:
    """PlanBench's `save_gpt3_response` (`llm_planning_analysis/utils/llm_utils.py:193-210` at 27b0c44): each
    line up to one holding `[PLAN END]`, the text between its first "(" and its first ")" (Python's slice: no
    "(" starts at 0, no ")" ends one short), kept as "(...)" when its first word is one of `actions` (any case);
    a plan stated twice is read twice, a line "No plan possible." is dropped."""
    known = {a.lower() for a in actions}
    plan = []
    for line in (text or "").split("\n"):
        if "[PLAN END]" in line:
            break
        action = line[line.find("(") + 1 : line.find(")")]
        if not action.strip():
            continue
        if action.strip().split()[0].lower() in known:
            plan.append(f"({action})")
    return plan


# VAL's lexer (`planner_tools/VAL/src/pddl+.lex`): `flawed {digit}+{char}+` prints "Illegal symbol" and calls
# exit(0), so VAL never prints "Plan valid"; a token is the longest match, so a name opening with digits and a
# letter ("8qm56p09ss7ezhl": {int} matches "8", {flawed} "8qm") is one
_FLAWED = re.compile(r"\d+[A-Za-z_]")


def val_exits_on(task: Task) -> str | None:
    """The first name of the problem file and domain VAL is given that its lexer reads as `{flawed}` (VAL then
    exits before judging any plan), None when there is none. PlanBench's obfuscated Logistics run named 63 of its
    200 problems so (`(problem 8qm56p09ss7ezhl)`): every one is labelled wrong, whatever the plan."""
    model = task.domain
    names = [task.name, model.name, *task.objects, *model.predicates, *model.schemas]
    return next((name for name in names if _FLAWED.match(name)), None)
