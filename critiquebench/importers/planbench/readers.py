"""The domain options replaying a t1 (or backprompting) file: the prompt style its queries were built in
(`styles`) and the plan reader its labels were produced with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from critiquebench.domains.planning.domain import PlanningDomain
from critiquebench.domains.planning.planbench_reading import TRANSLATION, answer_digest
from critiquebench.domains.planning.styles import PDDL_STYLES
from critiquebench.importers.planbench.file import ImportError_
from critiquebench.importers.planbench.kinds import PlanBenchRun, first_queries, kind_of
from critiquebench.importers.planbench.styles import producing_reader, recognise

# PDDL domains whose recorded answers replay through PlanBench's own reader (`reading = "planbench"`).
_READ_BY_PLANBENCH = ("logistics-strips",)


def plan_generation_options(
    run: PlanBenchRun, path: Path, base: str, dataset: Path, reading: str | None, given: Mapping[str, Any] = {}
) -> dict[str, Any]:
    """The domain options replaying a t1 (or backprompting) file: the prompt style its queries were built in,
    and the plan reader its labels were produced with (`given` options kept as they are)."""
    from critiquebench.domains import get_domain

    queries = dict(zip(run.instance_ids, first_queries(run), strict=True))
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
            answer_digest(inst.answer or ""): _plan_lines(inst.fields.get("extracted_llm_plan")) for inst in translated
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
