"""The planning domain's prompt styles as one table: `STYLES`, one `PromptStyle` row each.

A row says how the style's generation prompt is built (`build`), how its plans are answered (PDDL action lines or
English), whether it shows one solved example, whether it needs English templates, whether it is PlanBench's
own prompt (sent after PlanBench's system message), and, for the importer, the text a recorded PlanBench query
is recognised by, the intros worth trying and whether PlanBench's older pipeline's trailing newline applies.
`PlanningDomain.prompt` is `STYLES[style].build(...)`; `import planbench` tries the rows whose `recognised` holds
for a recorded query (`critiquebench.importers.planbench.styles`); docs/planbench.md's style table is generated
from the rows (docs/generate.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from critiquebench.domains.contract import Instance
from critiquebench.domains.planning import planbench_prompts as pp
from critiquebench.domains.planning import prompts as plan_prompts
from critiquebench.domains.planning.strips import PlanningError

if TYPE_CHECKING:
    from critiquebench.domains.planning.domain import PlanningDomain

log = logging.getLogger("critiquebench.domains.planning.domain")  # the domain's warnings, under its name
Messages = list[dict[str, str]]
Builder = Callable[["PlanningDomain", Instance, "int | None", "Shown"], Messages]


class Shown:
    """What a prompt shows of its example and how it is sent: the live rule, PlanBench's (the instance before it,
    its known plan, after PlanBench's system message). A recorded run's replay (`replay.ReplayedPlanning`) shows
    its own: the example, plans, domain names, system message and trailing newline its prompts had."""

    newline = False  # PlanBench's older pipeline's trailing newline after each prompt: only a replay sends it

    def example_of(self, domain: PlanningDomain, instance: Instance) -> dict[str, Any] | None:
        """The one-shot example of `instance`'s prompt (id, problem, known plan)."""
        return next(iter(instance.data.get("examples", [])), None)

    def known_plan(self, example: Mapping[str, Any]) -> list[str] | None:
        """The plan an example is known by (PDDL lines), None for our planner's."""
        return example.get("plan")

    def sent(self, domain: PlanningDomain, text: str, instance: Instance | None = None) -> Messages:
        """A PlanBench prompt as sent: after PlanBench's system message."""
        return plan_prompts.messages(text, domain.prompts)


LIVE = Shown()


@dataclass(frozen=True)
class PromptStyle:
    name: str
    build: Builder
    pddl_answer: bool  # its plans are PDDL action lines (else English lines ending "[PLAN END]")
    one_shot: bool  # shows one solved example: by PlanBench's rule the instance before
    english: bool  # needs the folder's English templates (config.yaml or domain_description*.json)
    planbench: bool  # PlanBench's own prompt, sent after its system message
    source: str  # where the prompt comes from
    recorded_in: str = ""  # the PlanBench results files recorded in it
    # How a recorded PlanBench query is recognised as this style (None: never a recorded PlanBench style)
    recognised: Callable[[str], bool] | None = None
    intros: tuple[str | None, ...] = (None,)  # the intros the importer tries (None: the config's domain_intro)
    newline: bool = False  # PlanBench's older pipeline's trailing newline may follow it (`Replay.newline`)
    recognised_by: str = ""  # `recognised` in words, for the docs table


def _nl(domain: PlanningDomain, instance: Instance, shots: int | None, shown: Shown, legacy: bool = False) -> Messages:
    domain.require_english("nl_legacy" if legacy else "nl")
    example = shown.example_of(domain, instance)
    examples = [] if example is None else [domain.solved(example, shown.known_plan(example))]
    intro = None if domain.intro is None else domain.intro_text(domain.intro)
    task = domain.task(instance)
    text = plan_prompts.nl_prompt(domain.cfg, task, examples, legacy=legacy, intro=intro, prompts=domain.prompts)
    return plan_prompts.messages(text + ("\n" if shown.newline and not legacy else ""), domain.prompts)


def _nl_legacy(domain: PlanningDomain, instance: Instance, shots: int | None, shown: Shown) -> Messages:
    return _nl(domain, instance, shots, shown, legacy=True)


def _pddl(domain: PlanningDomain, instance: Instance, shots: int | None, shown: Shown) -> Messages:
    count = domain.shots if shots is None else shots
    pool = domain.training_pool(instance)
    if count > len(pool) and shots is None and domain.fewer_shots:
        count = len(pool)
        _say_fewer(domain, len(pool))
    if count > len(pool):
        raise PlanningError(
            f"{count} planning examples asked for, but the training pool of {domain.name} instance "
            f"{instance.id} holds {len(pool)} problems (disjoint from the test instances): ask for fewer"
        )
    chosen = [(e["problem"], domain.plan_of(e, shown.known_plan(e))) for e in pool[:count]]
    text = plan_prompts.pddl_prompt(domain.domain_pddl, instance.data["problem"], chosen, domain.prompts)
    return [{"role": "user", "content": text}]  # no system message: the paper gives none


def _say_fewer(domain: PlanningDomain, held: int) -> None:
    with domain._lock:
        if domain._said_fewer:
            return
        domain._said_fewer = True
    log.warning(
        "%s: the folder holds %d other problem(s), so its pddl prompts show %d example(s), not %d "
        "(domain_options.%s.shots sets the number)", domain.name, held, held, domain.shots, domain.name,
    )  # fmt: skip


def _refine(domain: PlanningDomain, instance: Instance, shots: int | None, shown: Shown) -> Messages:
    return plan_prompts.refine_messages(domain.domain_pddl, instance.data["problem"], domain.prompts,
                                        as_read=not domain.shipped)  # fmt: skip


def _nl_zero_shot(domain: PlanningDomain, instance: Instance, shots: int | None, shown: Shown) -> Messages:
    # PlanBench's zero-shot prompt starts with the intro giving an example of each action when the config has one
    # (`prompt_generation.py:232-235`); `intro` names another
    intro = domain.intro_text(domain.intro or "zero_shot") or domain.cfg.domain_intro
    text = pp.zero_shot_nl(domain.cfg, domain.task(instance), intro, shown.newline, domain.texts)
    return shown.sent(domain, text)


def _pddl_zero_shot(domain: PlanningDomain, instance: Instance, shots: int | None, shown: Shown) -> Messages:
    return shown.sent(domain, pp.pddl_zero_shot(domain.domain_pddl, instance.data["problem"], domain.texts), instance)


def _pddl_zero_shot_2023(domain: PlanningDomain, instance: Instance, shots: int | None, shown: Shown) -> Messages:
    problem = instance.data["problem"]
    text = pp.pddl_zero_shot_2023(domain.domain_pddl, problem, shown.newline, domain.texts)
    return shown.sent(domain, text, instance)


def _example(domain: PlanningDomain, instance: Instance, shown: Shown) -> dict:
    example = shown.example_of(domain, instance)
    if example is None:
        raise PlanningError(f"instance {instance.id}: a one-shot prompt needs an example instance")
    return example


def _pddl_planbench(domain: PlanningDomain, instance: Instance, shots: int | None, shown: Shown) -> Messages:
    example = _example(domain, instance, shown)
    lines = ["(" + " ".join((name, *args)) + ")" for name, args in domain.solved(example, shown.known_plan(example))[1]]
    problem = instance.data["problem"]
    return shown.sent(
        domain, pp.pddl_one_shot(domain.domain_pddl, example["problem"], lines, problem, shown.newline, domain.texts)
    )


def _state_tracking(domain: PlanningDomain, instance: Instance, shots: int | None, shown: Shown) -> Messages:
    domain.require_english("state_tracking")
    example = _example(domain, instance, shown)
    example_task, plan = domain.solved(example, shown.known_plan(example))
    intro = domain.cfg.domain_intro_state_tracking
    if intro is None:
        raise PlanningError(f"{domain.nl_source}: the state-tracking prompt needs `domain_intro_state_tracking`")
    task = domain.task(instance)
    return shown.sent(domain, pp.state_tracking(domain.cfg, intro, example_task, plan, task, domain.texts))


def _zero_shot_english(query: str) -> bool:
    return pp.ZERO_SHOT_INSTRUCTION in query


def _state_tracked(query: str) -> bool:
    return "\n   Action: " in query and "Resulting State: " in query


def _otherwise(query: str) -> bool:
    """The one-shot English prompts: a recorded query no other row recognises."""
    return True


# `history` intros (a domain's historical ones, `NLConfig.intros`) are tried after these where a row lists "*".
HISTORY = "*"
_ROWS = (
    PromptStyle("nl", _nl, pddl_answer=False, one_shot=True, english=True, planbench=False,
                source="`task_1_plan_generation` (one-shot English; also the 2023 studies' backprompting prompt)",
                recorded_in="t1 one-shot, NL backprompting", recognised=_otherwise,
                intros=(None, "zero_shot", "legacy", HISTORY), newline=True, recognised_by="any other query"),
    PromptStyle("nl_legacy", _nl_legacy, pddl_answer=False, one_shot=True, english=True, planbench=False,
                source="the same at PlanBench's older commit: the Blocksworld intro without its last line, a newline "
                "after `[PLAN]`", recorded_in="GPT-4's 2023 one-shot runs", recognised=_otherwise,
                recognised_by="any other query"),
    PromptStyle("pddl", _pddl, pddl_answer=True, one_shot=False, english=False, planbench=False,
                source="the intrinsic self-critique paper's many-shot PDDL planner prompt (001 A.1)"),
    PromptStyle("refine", _refine, pddl_answer=True, one_shot=False, english=False, planbench=False,
                source="the validator-guided refinement paper's zero-shot PDDL prompt"),
    PromptStyle("pddl_planbench", _pddl_planbench, pddl_answer=True, one_shot=True, english=False, planbench=True,
                source="`task_1_plan_generation_pddl`: header, `[DOMAIN]`, example `[PROBLEM]` and "
                "`[PLAN]...[PLAN_END]`, `[QUERY PROBLEM]`", recorded_in="`*_pddl.json` (one-shot)",
                recognised=lambda q: q.startswith(pp.PDDL_ONE_SHOT_HEADER), newline=True,
                recognised_by="starts with the one-shot PDDL header"),
    PromptStyle("pddl_zero_shot", _pddl_zero_shot, pddl_answer=True, one_shot=False, english=False, planbench=True,
                source="`task_1_plan_generation_zero_shot_pddl` (HEAD): the \"following is a PDDL specification\" "
                "header, the problem re-wrapped, `[PLAN]`", recorded_in="`*_zero_shot_pddl.json` of 2024-25",
                recognised=lambda q: q.startswith(pp.PDDL_ZERO_SHOT_HEADER),
                recognised_by="starts with the zero-shot PDDL header"),
    PromptStyle("pddl_zero_shot_2023", _pddl_zero_shot_2023, pddl_answer=True, one_shot=False, english=False,
                planbench=True, source="the same function at commit fbc6449: \"Here is a pddl domain, a planning "
                "problem.\"", recorded_in="GPT-4's zero-shot PDDL runs",
                recognised=lambda q: q.startswith(pp.PDDL_ZERO_SHOT_HEADER_2023), newline=True,
                recognised_by="starts with the 2023 zero-shot PDDL header"),
    PromptStyle("nl_zero_shot", _nl_zero_shot, pddl_answer=False, one_shot=False, english=True, planbench=True,
                source="`task_1_plan_generation_zero_shot`: the intro (`domain_intro_zero_shot` when the config has "
                "one), the statement, \"What is the plan to achieve my goal? Just give the actions in the plan.\"",
                recorded_in="every `*_zero_shot.json`", recognised=_zero_shot_english,
                intros=(None, "legacy", HISTORY), newline=True, recognised_by="holds the zero-shot instruction"),
    PromptStyle("state_tracking", _state_tracking, pddl_answer=False, one_shot=True, english=True, planbench=True,
                source="`task_1_plan_generation_state_tracking` with `generate_plan_cot`",
                recorded_in="`*_state_tracking.json`", recognised=_state_tracked, intros=("state_tracking",),
                recognised_by="shows `Action:` and `Resulting State:` lines"),
)  # fmt: skip
STYLES: dict[str, PromptStyle] = {row.name: row for row in _ROWS}

# Views of the table, for the code that asks one question of every style.
PDDL_STYLES = tuple(name for name, row in STYLES.items() if row.pddl_answer)
NL_STYLES = tuple(name for name, row in STYLES.items() if row.english)
PLANBENCH_STYLES = tuple(name for name, row in STYLES.items() if row.planbench)
ONE_SHOT_STYLES = tuple(name for name, row in STYLES.items() if row.one_shot)


def recognised(query: str) -> list[PromptStyle]:
    """The rows a recorded PlanBench query may have been built by: the first row in the table's order that
    recognises it by its own text, else the rows that take any other query (the one-shot English prompts)."""
    rows = [row for row in STYLES.values() if row.recognised is not None]
    mine = next((row for row in rows if row.recognised is not _otherwise and row.recognised(query)), None)
    return [mine] if mine is not None else [row for row in rows if row.recognised is _otherwise]
