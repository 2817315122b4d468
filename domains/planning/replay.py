"""A recorded PlanBench run replayed: the replay protocol, kept out of the live planning domain.

`Replay` is the one record of what a recorded run did that a live study never does (the example plans its prompts
showed, its reader, the feedback it sent, ...); `import planbench` stores these options with the study.
`ReplayedPlanning` holds a live `PlanningDomain` and honours them (a `domains.replayed.Wrapper`): its prompts,
verdicts, feedback and backprompts are the recorded run's; everything else is the live domain's, forwarded.
`load_planning_domain` builds one only when a replay option is given, so a live study never constructs a
`Replay`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from critiquebench.domains.contract import FeedbackLevel, Instance, Verdict
from critiquebench.domains.planning.domain import (
    DOMAIN_HEADER,
    NO_PLAN_POSSIBLE,
    PlanningDomain,
    Step,
    pddl_line,
)
from critiquebench.domains.planning.planbench_reading import (
    BLOCKSWORLD_READINGS,
    NO_ADVICE,
    PDDL_READING,
    READINGS,
    TRANSLATION,
    NotExtracted,
    answer_digest,
    blocksworld_plan,
    logistics_plan,
    pddl_answer_lines,
    val_exits_on,
    val_feedback,
)
from critiquebench.domains.planning.prompts import PROMPT_STYLES
from critiquebench.domains.planning.strips import PlanningError, Task
from critiquebench.domains.planning.styles import LIVE, STYLES
from critiquebench.domains.planning.val_words import val_steps
from critiquebench.domains.planning.validator import check_plan, error_sentences, is_sound_feedback
from critiquebench.domains.replayed import Wrapper

NOT_RECORDED = (
    "no recorded PlanBench feedback for this answer: this study replays PlanBench's PDDL backprompting runs, whose "
    "feedback was written by `full_validator`, a module PlanBench does not publish (back_prompting_parallel.py:9), "
    "so it cannot be sent for a new answer; run a live study with sound-first (our own feedback) instead"
)


def _lines(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(line, str) for line in value)


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _table(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, Mapping) and all(isinstance(k, str) and check(v) for k, v in value.items())


def _schema(default: Any, check: Callable[[Any], bool], shape: str) -> Any:
    """A `Replay` field: its default, and how a stored value is checked (`Replay.parse`) and described."""
    return field(default=default, metadata={"check": check, "shape": shape})


@dataclass(frozen=True)
class Replay:
    """What a recorded PlanBench run did that a live study does not. One schema: the importer builds it, a study
    definition stores it as `domain_options.NAME.replay` (`to_options`), and `parse` reads it back (also from the
    flat keys studies imported before it had a table of its own)."""

    # Known plans of example instances (id -> PDDL action lines): the plans the recorded prompts showed.
    example_plans: Mapping[str, list[str]] | None = _schema(None, _table(_lines), "a table of id -> PDDL lines")
    # PlanBench's older GPT-4 pipeline sent one more newline at the end of every prompt (as `nl_legacy` does).
    newline: bool = _schema(False, lambda v: isinstance(v, bool), "true or false")
    # reading "planbench-translation": the plan GPT-4o's translation gave for each recorded answer (answer
    # digest -> PDDL lines)
    translations: Mapping[str, list[str]] | None = _schema(None, _table(_lines), "a table of digest -> PDDL lines")
    # How answers are read and judged: one of PlanBench's readers (`planbench_reading.READINGS`; "planbench" is
    # its Logistics code and VAL), None for our sound reader and validator.
    reading: str | None = _schema(None, lambda v: v in READINGS, f"one of {', '.join(READINGS)}")
    # A PDDL backprompting run: instance id -> answer digest -> the user turn PlanBench sent after that answer
    # (None: its run ended there). The wording is `full_validator`'s, a module `back_prompting_parallel.py:9`
    # imports and the repository does not hold, so only recorded answers have feedback (`NOT_RECORDED`).
    recorded_feedback: Mapping[str, Mapping[str, str | None]] | None = _schema(
        None, _table(_table(lambda v: v is None or isinstance(v, str))), "a table of id -> digest -> text or null"
    )
    # A PDDL backprompting run's conversations that ended at an answer they had given before, after which the
    # same answer had been sent feedback (instance id -> its count of answers): the digest cannot say where such a
    # run ended (o1-preview's mystery_new run, 74 and 80), so it ends after that many rounds (`recorded_end`).
    ends: Mapping[str, int] | None = _schema(
        None, _table(lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1), "a table of id -> count"
    )
    # PlanBench's system message before its prompts; its o1 and DeepSeek-R1 backprompting runs sent none.
    system: bool = _schema(True, lambda v: isinstance(v, bool), "true or false")
    # The domain name each PDDL prompt showed, where it is not domain.pddl's (instance id -> name): PlanBench's
    # obfuscated runs drew a random name per prompt (`prompt_generation.py:433`, `:452`).
    domain_names: Mapping[str, str] | None = _schema(None, _table(_text), "a table of id -> name")
    # The one-shot example every prompt showed (an instance id), where a recorded run's prompts show one example
    # whatever their `example_instance_ids` say (PlanBench's GPT-4 Blocksworld-3 state-tracking run shows
    # instance 1 in all); None: PlanBench's rule, the instance before.
    example: str | None = _schema(None, _text, "an instance id (text)")

    def to_options(self) -> dict[str, Any]:
        """The record as a study definition stores it: the fields that differ from a live study's, as JSON."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) != f.default}

    @classmethod
    def parse(cls, stored: Any) -> Replay:
        """The record a study definition stores (`to_options`), checked field by field: PlanningError naming the
        first unknown key or ill-shaped value (a definition written by hand, or by a version of critiquebench
        with other replay options: import the file again)."""
        if isinstance(stored, Replay):
            return stored
        if not isinstance(stored, Mapping):
            raise PlanningError(f"replay options: a table of {', '.join(REPLAY_OPTIONS)} expected, not {stored!r:.80}")
        unknown = sorted(str(k) for k in stored if k not in REPLAY_OPTIONS)
        if unknown:
            raise PlanningError(
                f"replay options: unknown {', '.join(unknown)} (known: {', '.join(REPLAY_OPTIONS)}); "
                "import the recorded file again"
            )
        for f in fields(cls):
            value = stored.get(f.name)
            if value is not None and not f.metadata["check"](value):
                raise PlanningError(f"replay option {f.name}: {f.metadata['shape']} expected, not {value!r:.80}")
        return cls(**{k: v for k, v in stored.items() if v is not None})


# not `OPTIONS`: domains/options.py reads a domain module's `OPTIONS` as its table of option types. The flat keys
# of studies imported before `Replay` had its own table (`load_planning_domain(**recorded)`).
REPLAY_OPTIONS: tuple[str, ...] = tuple(f.name for f in fields(Replay))
LIVE_REPLAY = Replay()  # every field at its default: what a live study does


def _plain(value: Any) -> Any:
    """`value` as JSON holds it (tables as dicts, lines as lists)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True)
class Replaying:
    """A recorded run's domain options as the importer recognises them: the live prompt style and intro its prompts
    were built in, and its `Replay` record. `options()` is what its study's definition stores."""

    prompt_style: str | None = None
    intro: str | None = None
    replay: Replay = LIVE_REPLAY

    def with_replay(self, **changes: Any) -> Replaying:
        """These options with the replay record's fields `changes` (`dataclasses.replace`: a misspelt one raises)."""
        return replace(self, replay=replace(self.replay, **changes))

    def options(self) -> dict[str, Any]:
        """The study definition's `domain_options.NAME` (read back by `load_planning_domain`)."""
        recorded = self.replay.to_options()
        return {
            **({} if self.prompt_style is None else {"prompt_style": self.prompt_style}),
            **({} if self.intro is None else {"intro": self.intro}),
            **({"replay": recorded} if recorded else {}),
        }

    def describe(self) -> str:
        """The style and what else decided its prompts and reader, as the importer's messages name them."""
        shown = (("intro", self.intro), ("newline", self.replay.newline or None), ("reading", self.replay.reading),
                 ("example", self.replay.example))  # fmt: skip
        extra = [f"{name}={value}" for name, value in shown if value is not None]
        return str(self.prompt_style) + (f" ({', '.join(extra)})" if extra else "")


@dataclass(frozen=True)
class TaskReplay:
    """A recorded PlanBench task file (t2-t7) replayed: the file, the folder of its problems and (t7) how its answers
    are read; `options()` is its study's `domain_options.DOMAIN:TASK`, the fields `tasks.TaskDomain` takes."""

    recorded: str
    instances: str
    state_reading: str | None = None

    def options(self) -> dict[str, Any]:
        return {name: value for name, value in asdict(self).items() if value is not None}


def replay_of(table: Any, flat: Mapping[str, Any]) -> Replay | None:
    """The one reading of a study's stored replay options: `table` (`domain_options.NAME.replay`, or a `Replay`) or
    `flat`, the keys of definitions stored before the record had a table; None for a live study. PlanningError
    (one line) for a value `Replay.parse` refuses, or for both forms at once."""
    if table is None and not flat:
        return None  # a live study: no record is built
    if flat and table is not None:
        raise PlanningError(f"replay options given twice: as `replay` and as {', '.join(sorted(flat))}")
    record = Replay.parse(table if table is not None else flat)
    return None if record == LIVE_REPLAY else record


def stored_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """A planning study's stored `domain_options.NAME` with its replay record as `Replaying.options` writes it,
    whether stored so or as the flat keys of older imports (an old definition then equals a new import's)."""
    flat = {k: v for k, v in options.items() if k in REPLAY_OPTIONS}
    replay = replay_of(options.get("replay"), flat)
    rest = {k: v for k, v in options.items() if k not in flat and k != "replay"}
    return {**rest, **({} if replay is None else {"replay": replay.to_options()})}


class ReplayedPlanning(Wrapper):
    """A recorded PlanBench run (`replay`) replayed on a live planning domain (`inner`), which it holds: its
    prompts show what the recorded run's showed (it is their `styles.Shown`), its answers are read, judged and
    answered as the run's were; everything else is the live domain's."""

    inner: PlanningDomain

    def __init__(self, inner: PlanningDomain, replay: Replay) -> None:
        super().__init__(inner)
        self.replay = replay
        self._examples: dict[str, dict[str, Any]] = {}
        self._examples_lock = threading.Lock()
        reading = replay.reading
        if reading is not None and reading not in READINGS:
            raise PlanningError(f"unknown reading {reading!r}; known: {', '.join(READINGS)}")
        if reading == "planbench" and inner.model.name != "logistics-strips":
            raise PlanningError("reading 'planbench' is PlanBench's Logistics reader: it needs the logistics domain")
        if reading == TRANSLATION and replay.translations is None:
            raise PlanningError("reading 'planbench-translation' needs the recorded translations (import planbench)")
        if reading in BLOCKSWORLD_READINGS and "blocksworld" not in inner.cfg.domain_name:
            raise PlanningError(
                f"reading {reading!r} is PlanBench's (mystery) Blocksworld reader: it needs such a domain"
            )
        # the live domain's hand-back, with PlanBench's "None" (a reader's failure) counted as our own feedback
        self.handback = replace(inner.handback, own=self._own_feedback)

    def _args(self) -> tuple[Any, ...]:
        return self.inner, self.replay

    def __repr__(self) -> str:
        return f"ReplayedPlanning({self.inner!r}, {self.replay!r})"

    # ---- prompts: the recorded run's example, plans, names, newline and system message (`styles.Shown`) ----
    def prompt(self, instance: Instance, style: str | None = None, shots: int | None = None) -> list[dict[str, str]]:
        row = STYLES.get(style or self.inner.prompt_style or "")
        if row is None:
            raise PlanningError(f"unknown prompt style {style!r}; known: {PROMPT_STYLES}")
        return row.build(self.inner, instance, shots, self)

    def example_of(self, domain: PlanningDomain, instance: Instance) -> dict[str, Any] | None:
        """The one-shot example: `Replay.example` when set (loaded once), else the instance before it."""
        wanted = self.replay.example
        if wanted is None:
            return LIVE.example_of(domain, instance)
        pool = instance.data.get("train_pool", instance.data.get("train", []))
        for known in (*instance.data.get("examples", []), *pool):
            if str(known["id"]) == wanted:
                return known
        with self._examples_lock:
            found = self._examples.get(wanted)
        if found is None:
            [loaded] = domain.load(wanted)
            found = {"id": loaded.id, "problem": loaded.data["problem"], "plan": None}
            with self._examples_lock:
                self._examples[wanted] = found
        return found

    def known_plan(self, example: Mapping[str, Any]) -> list[str] | None:
        return (self.replay.example_plans or {}).get(str(example["id"])) or example.get("plan")

    @property
    def newline(self) -> bool:
        return self.replay.newline

    def sent(self, domain: PlanningDomain, text: str, instance: Instance | None = None) -> list[dict[str, str]]:
        """PlanBench's messages for `text`: under the instance's drawn domain name (`Replay.domain_names`:
        PlanBench replaced the name wherever the query held it, `prompt_generation.py:452`), after its system
        message unless the run sent none."""
        name = None if instance is None else (self.replay.domain_names or {}).get(str(instance.id))
        found = DOMAIN_HEADER.search(domain.domain_pddl)
        if name is not None and found is not None:
            text = text.replace(found.group(1), name)
        return LIVE.sent(domain, text) if self.replay.system else [{"role": "user", "content": text}]

    # ---- verdicts: PlanBench's readers, and the feedback the run sent ----
    def verify(self, instance: Instance, text: str) -> Verdict:
        if self.replay.reading is not None:
            return self.assess(instance, text)[0]
        return self.inner.verify(instance, text)

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        # PlanBench's PDDL evaluation judges a "no plan" answer on the plan it extracted, not on the answer
        claim = None if self.replay.reading == PDDL_READING else self.inner._no_plan_claim(instance, text)
        if claim is not None:
            verdict, canonical = claim, None
        elif self.replay.reading is not None:
            verdict, canonical = self._planbench_verdict(instance, text)
        else:
            verdict, canonical = self.inner.assess(instance, text)
        if self.replay.recorded_feedback is not None:
            verdict = self._recorded(instance, text, verdict)
        return verdict, canonical

    def assess_val(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        """A recorded run is judged by its own reading and feedback, whatever scheme replays it."""
        return self.assess(instance, text)

    def recorded_end(self, instance: Instance) -> int | None:
        """The round at which the recorded run of `instance` ended where its answers cannot say so (`Replay.ends`:
        its last answer was given, and answered, before); None: where its answers say (`_recorded`)."""
        return (self.replay.ends or {}).get(str(instance.id))

    def _recorded(self, instance: Instance, text: str, verdict: Verdict) -> Verdict:
        """`verdict` (ours) with the feedback PlanBench's recorded run sent after this answer; where that run
        ended at the answer and we judge it invalid, the loop ends here too (there is nothing recorded to send)."""
        answers = (self.replay.recorded_feedback or {}).get(str(instance.id), {})
        key = answer_digest(text or "")
        if key not in answers:
            raise PlanningError(NOT_RECORDED)
        sent = answers[key]
        if verdict.valid:
            return verdict
        return replace(verdict, final=True) if sent is None else replace(verdict, sent=sent)

    def _planbench_verdict(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        """PlanBench's reading and VAL's verdict (`planbench_reading`): a reader failure ends the loop, a plan
        VAL cannot take is malformed (its feedback is PlanBench's "None")."""
        reading = self.replay.reading
        task = self.inner.task(instance)
        if reading == TRANSLATION:
            lines = (self.replay.translations or {}).get(answer_digest(text or ""))
            if lines is None:
                return Verdict("malformed", ("No recorded translation of this answer.",), None, final=True), None
            if any(NO_PLAN_POSSIBLE in line.lower() for line in lines):  # PlanBench's rule on the translated plan
                claim = self.inner._no_plan_claim(instance, NO_PLAN_POSSIBLE)
                return (claim or Verdict("invalid", (), None)), None
            # PlanBench wrote the stored plan to a file and ran VAL on it (`validate_plan`): VAL's lexer skips
            # characters it has no token for (code fences' backticks, backslashes), and its parser keeps the
            # steps before the first word ("[PDDL PLAN]", "Here is ..."), so the file is read as VAL reads it
            read = val_steps("\n".join(lines))
            steps, parsed = read if read is not None else ([], True)
            if not parsed:  # a rule left open ("()", a step cut off): VAL builds no plan
                return Verdict("invalid", ("VAL cannot read the translated plan.",), None), None
        elif reading == PDDL_READING:
            return self._pddl_verdict(task, text)
        elif reading in BLOCKSWORLD_READINGS:
            steps = self._blocksworld_steps(text)
        else:
            verbs = sorted({name.split("-")[0] for name in self.inner.model.schemas})
            try:
                steps = logistics_plan(text or "", verbs)
            except NotExtracted as exc:
                return Verdict("malformed", (str(exc),), None, final=True), None
            answer = [pddl_line(s) for s in steps]
            result = val_feedback(self.inner.cfg, task, steps)
            if result.sentence is None:
                return Verdict("malformed", (), answer), "\n".join(answer)
            status = "valid" if result.valid else "invalid"
            return Verdict(status, (result.sentence,) if result.sentence else (), answer), "\n".join(answer)
        answer = [pddl_line(s) for s in steps]
        check = check_plan(task, steps)
        status = "valid" if check.valid else "invalid"
        errors = error_sentences(self.inner.cfg, task, check, self.inner.texts)
        return Verdict(status, errors, answer), "\n".join(answer)

    def _pddl_verdict(self, task: Task, text: str) -> tuple[Verdict, str | None]:
        """PlanBench's `evaluate_plan_pddl`: the plan `save_gpt3_response` writes (`pddl_answer_lines`); on an
        unsolvable set right only when it holds "no plan possible" (`validate_plan_unsolvable`), else VAL's
        verdict on the plan file, which is no plan valid where VAL's lexer exits on the problem's files."""
        lines = pddl_answer_lines(text, self.inner.model.schemas)
        canonical = "\n".join(lines)
        if "unsolvable" in self.inner.cfg.domain_name:
            if NO_PLAN_POSSIBLE in canonical:
                return Verdict("valid", (), lines), canonical
            said = "PlanBench's extracted plan does not say 'no plan possible'."
            return Verdict("invalid", (said,), lines), canonical
        flawed = val_exits_on(task)
        if flawed is not None:
            reason = f"VAL exits on the name {flawed!r} of the problem's files (its lexer's Illegal symbol)."
            return Verdict("invalid", (reason,), lines), canonical
        read = val_steps(canonical)
        steps, parsed = read if read is not None else ([], True)
        if not parsed:
            return Verdict("invalid", ("VAL cannot read the extracted plan.",), lines), canonical
        check = check_plan(task, steps)
        errors = error_sentences(self.inner.cfg, task, check, self.inner.texts)
        return Verdict("valid" if check.valid else "invalid", errors, lines), canonical

    def _blocksworld_steps(self, text: str) -> list[Step]:
        reading = self.replay.reading
        arity = {name: len(schema.params) for name, schema in self.inner.model.schemas.items()}
        head, nostar = reading == "planbench-head", reading == "planbench-whole-nostar"
        return blocksworld_plan(text or "", self.inner.cfg, arity, head=head, nostar=nostar)

    def read_plan(self, instance: Instance, text: str) -> str | None:
        """The plan `assess` reads from `text` (its canonical lines), without judging it: the importer compares
        each reader's plans with the ones PlanBench stored, and VAL's verdict plays no part there."""
        if self.replay.reading in BLOCKSWORLD_READINGS and self.inner._no_plan_claim(instance, text) is None:
            return "\n".join(pddl_line(s) for s in self._blocksworld_steps(text))
        return self.assess(instance, text)[1]

    def feedback(self, instance: Instance, verdict: Verdict, level: FeedbackLevel) -> str:
        if verdict.sent is None and self.replay.reading is not None and verdict.status == "malformed":
            if not verdict.final:
                return NO_ADVICE
        return self.inner.feedback(instance, verdict, level)

    def backprompt(self, instance: Instance, critique: str) -> str:
        """A recorded run's feedback goes back as it was sent."""
        if self.replay.recorded_feedback is not None:
            return critique
        return self.handback(critique)

    def _own_feedback(self, text: str) -> bool:
        return is_sound_feedback(text) or (self.replay.reading is not None and text == NO_ADVICE)


def view(domain: PlanningDomain, shown: Replaying | None = None) -> PlanningDomain | ReplayedPlanning:
    """`domain` under another prompt style, intro and replay record (`shown`; None: its defaults), sharing its
    parsed problems and files (`PlanningDomain.with_options`): the importer tries many option sets on one file's
    domain, built once. A `ReplayedPlanning` holding it when the replay record is set."""
    shown = shown or Replaying()
    made = domain.with_options(prompt_style=shown.prompt_style, intro=shown.intro)
    return made if shown.replay == LIVE_REPLAY else ReplayedPlanning(made, shown.replay)
