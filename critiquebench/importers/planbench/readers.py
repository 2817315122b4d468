"""The domain options replaying a t1 (or backprompting) file: the prompt style its queries were built in
(`styles`) and the plan reader its labels were produced with."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from critiquebench.domains.planning.domain import PlanningDomain
from critiquebench.domains.planning.planbench_reading import PDDL_READING, TRANSLATION, answer_digest
from critiquebench.domains.planning.replay import Replay, Replaying
from critiquebench.domains.planning.styles import PDDL_STYLES
from critiquebench.importers.planbench.file import ImportError_, RecordedInstance
from critiquebench.importers.planbench.kinds import PlanBenchRun, first_queries, kind_of
from critiquebench.importers.planbench.styles import producing_reader, recognise

# PDDL domains whose recorded answers replay through PlanBench's own reader (`reading = "planbench"`).
_READ_BY_PLANBENCH = ("logistics-strips",)


@dataclass(frozen=True)
class Recognised:
    """What choosing a file's reader looks at: the file, its domain, the options its prompts were recognised with
    (`styles.recognise`) and the `--reading` asked for (None: the producing one)."""

    run: PlanBenchRun
    base: str
    dataset: Path
    reading: str | None
    options: Replaying
    cfg: Any  # the domain's NLConfig (None for a domain that is not a planning one)

    @property
    def translated(self) -> list[RecordedInstance]:
        assert self.run.source is not None
        return [inst for inst in self.run.source.instances if "raw_translation" in inst.fields]


@dataclass(frozen=True)
class ReaderRule:
    """One row of how a file's answers are read in replay: `pick` gives the options where the row applies
    (None where it does not); the first row that applies decides."""

    name: str
    description: str
    pick: Callable[[Recognised], Replaying | None]


def _translation(r: Recognised) -> Replaying | None:
    if r.reading not in (None, TRANSLATION) or r.run.kind != "one_shot" or not r.translated:
        return None
    plans = {answer_digest(i.answer or ""): _plan_lines(i.fields.get("extracted_llm_plan")) for i in r.translated}
    return r.options.with_replay(reading=TRANSLATION, translations=plans)


def _pddl_2024(r: Recognised) -> Replaying | None:
    if r.reading is not None or r.run.kind != "one_shot" or r.options.prompt_style != "pddl_zero_shot":
        return None
    return r.options.with_replay(reading=PDDL_READING)


def _pddl_lines(r: Recognised) -> Replaying | None:
    if r.options.prompt_style not in PDDL_STYLES or r.options.replay.reading != "planbench":
        return None
    return r.options.with_replay(reading=None)


def _producing(r: Recognised) -> Replaying | None:
    if r.cfg is None or "blocksworld" not in r.cfg.domain_name:
        return None
    assert r.run.source is not None
    answers = {  # a conversation's stored plan is its last answer's
        inst.ident: (
            inst.answer if inst.answer is not None else _last_answer(inst.messages),
            inst.fields.get("extracted_llm_plan"),
        )
        for inst in r.run.source.instances
        if "raw_translation" not in inst.fields  # a GPT-4o translation, not a reader, made those plans
    }
    conversation = kind_of(r.run.source).name == "conversation"
    found, share = producing_reader(r.base, r.options, r.dataset, answers, conversation)
    if found is not None:
        return r.options.with_replay(reading=found)
    if share < UNREAD_BY_RULES and len(answers) >= MIN_STORED and r.run.kind == "one_shot" and not _gpt4_era(r.run):
        # No rule-based reader made these stored plans (o1-preview's reruns on Mystery keep GPT-4o's plans
        # without its raw text): they are read back as recorded translations
        plans = {answer_digest(answer): _plan_lines(plan) for answer, plan in answers.values() if plan is not None}
        return r.options.with_replay(reading=TRANSLATION, translations=plans)
    return None


# How a t1 (or backprompting) file's answers are read in replay, in the order tried. `--reading NAME` other than
# the translation is fixed before the prompts are recognised (the example plans are read with it), as is
# PlanBench's reader for English Logistics (`_READ_BY_PLANBENCH`).
READER_RULES: tuple[ReaderRule, ...] = (
    ReaderRule("translation", "one-shot files labelled from GPT-4o's `raw_translation`: the plan it stored for "
               "each answer (`planbench-translation`)", _translation),
    ReaderRule("given", "`--reading NAME`: that reader (`sound`: ours)", lambda r: None if r.reading is None
               else r.options),
    ReaderRule("PDDL answers (2024-25)", "one-shot files of HEAD's zero-shot PDDL prompt (`pddl_zero_shot`): "
               "PlanBench's `evaluate_plan_pddl` (`planbench-pddl`: `save_gpt3_response`'s lines, VAL on the "
               "problem's files, the unsolvable sets' rule on the extracted plan)", _pddl_2024),
    ReaderRule("PDDL answers", "PDDL prompts of a domain PlanBench reads in English (Logistics): ours, as PlanBench "
               "read PDDL answers as PDDL lines (`save_gpt3_response`)", _pddl_lines),
    ReaderRule("producing", "Blocksworld and Mystery: the reader whose plans equal the stored `extracted_llm_plan` "
               "on the most answers (`styles.producing_reader`; a tie keeps ours, except in a conversation); "
               "recorded translations where no rule-based reader made half of the stored plans of a post-GPT-4 "
               "one-shot file", _producing),
    ReaderRule("ours", "every other file: our sound reader (PlanBench's for English Logistics)",
               lambda r: r.options),
)  # fmt: skip


def plan_generation_options(
    run: PlanBenchRun, path: Path, base: str, dataset: Path, reading: str | None, given: Replay | None = None
) -> Replaying:
    """The domain options replaying a t1 (or backprompting) file: the prompt style its queries were built in,
    and the plan reader its labels were produced with (`READER_RULES`; the `given` replay record kept as it is)."""
    from critiquebench.domains import get_domain

    queries = dict(zip(run.instance_ids, first_queries(run), strict=True))
    try:
        domain = get_domain(base)
    except (ValueError, OSError) as exc:
        raise ImportError_(f"{path}: {exc}") from None
    fixed = given or Replay()
    planning = domain if isinstance(domain, PlanningDomain) else None
    pddl_name = planning.model.name if planning is not None else None
    if reading is not None:
        if reading not in ("sound", TRANSLATION):  # "sound": our own reader, whatever produced the labels
            fixed = replace(fixed, reading=reading)
    elif pddl_name in _READ_BY_PLANBENCH:  # PlanBench read these answers with its own reader and VAL
        fixed = replace(fixed, reading="planbench")
    options = recognise(path, base, dataset, queries, run.example_plans, fixed)
    found = Recognised(run, base, dataset, reading, options, planning.cfg if planning is not None else None)
    return next(picked for rule in READER_RULES if (picked := rule.pick(found)) is not None)


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


def state_reading(path: Path, base: str, reading: str | None) -> str | None:
    """How a t7 file's answers are read in replay: PlanBench's `text_to_state` in the version whose facts equal
    the file's stored `extracted_llm_plan` on most instances (ties: the committed one), so the replay's verdict is
    the file's label; our own reader (None) where no version gives half of them, or the file stores none (nothing
    then says how its labels were read); `--reading sound`: ours."""
    from critiquebench.domains.planning import load_planning_domain
    from critiquebench.domains.planning.planbench_reading import STATE_READINGS, planbench_state
    from critiquebench.importers.planbench.file import load_json

    if reading == "sound":
        return None
    if reading in STATE_READINGS:
        return reading
    cfg = load_planning_domain(base).cfg
    records = [r for r in load_json(path).get("instances", []) if isinstance(r, dict)]
    stored = [(str(r.get("llm_raw_response") or ""), r["extracted_llm_plan"]) for r in records
              if isinstance(r.get("extracted_llm_plan"), list)]  # fmt: skip
    try:
        scores = {name: sum(planbench_state(text, cfg, {}, commas=name.endswith("commas")) == facts
                            for text, facts in stored) for name in STATE_READINGS}  # fmt: skip
    except ValueError:  # a domain PlanBench's text_to_state has no reader for: ours
        return None
    best = max(STATE_READINGS, key=lambda name: scores[name])
    return best if stored and 2 * scores[best] >= len(stored) else None
