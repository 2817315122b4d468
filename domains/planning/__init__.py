"""STRIPS planning domains from PDDL: PlanBench's Blocksworld, Mystery Blocksworld and Logistics, or any
folder with a ``domain.pddl`` and its problems (IPC, AutoPlanBench and PlanBench layouts alike; the refinement
study's ``NAME_domain.pddl`` beside its problems too).

    domain = load_planning_domain("blocksworld")                  # shipped domain, nl prompts
    domain = load_planning_domain("path/to/my_domain", "pddl")   # a user folder, raw-PDDL prompts
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from critiquebench.domains.options import COMMON, signature_options
from critiquebench.domains.planning.domain import PlanningDomain
from critiquebench.domains.planning.instances import domain_file
from critiquebench.domains.planning.prompts import PROMPT_STYLES
from critiquebench.domains.planning.replay import REPLAY_OPTIONS, Replay, ReplayedPlanning, Replaying, replay_of
from critiquebench.domains.planning.strips import PlanningError
from critiquebench.domains.prompts import DEFAULT, Prompts
from critiquebench.domains.registry import BUILTIN

# Planning examples in a pddl-style prompt when a study gives none (`domain_options.NAME.shots`). The intrinsic
# self-critique paper's sets: 16, its No-Critique baseline (step 0, "a 16-shot planning prompt", 001:145; "chose it
# to be 16 exemplars", 001:149; Table 5's "16 few-shot for the plan prediction", 001:216). Other domains: 3, ours.
PAPER_SHOTS, OTHER_SHOTS = 16, 3
# Views of the one domain table (`domains.registry`): the shipped planning domains, and the intrinsic
# self-critique paper's generated sets with the shipped folder each uses.
BUILTIN_PLANNING: tuple[str, ...] = tuple(n for n, d in BUILTIN.items() if d.folder and not d.generated)
PAPER_PLANNING: dict[str, str] = {n: d.folder for n, d in BUILTIN.items() if d.folder and d.generated}
DATA_DIR = Path(__file__).resolve().parents[1] / "data"

__all__ = [
    "BUILTIN_PLANNING",
    "PAPER_PLANNING",
    "PROMPT_STYLES",
    "PlanningDomain",
    "PlanningError",
    "Replay",
    "ReplayedPlanning",
    "Replaying",
    "load_planning_domain",
]


def load_planning_domain(
    name_or_folder: str | Path,
    prompt_style: str | None = None,
    *,
    strict: bool = False,
    shots: int | None = None,
    intro: str | None = None,
    prompts: Prompts | None = None,
    verifier: str = "open",
    verdict: str = "study",
    replay: Replay | Mapping[str, Any] | None = None,
    **recorded: Any,
) -> PlanningDomain | ReplayedPlanning:
    """A builtin planning domain by name, or a PDDL domain folder as it is (domain.pddl, problems in
    instances/, orig_problems/ or the folder itself, optional natural-language templates).

    `prompt_style` is one of `PROMPT_STYLES` (None: nl when the folder has templates, else pddl); `strict`
    makes action-like lines that cannot be read invalidate a plan (PlanBench skips them); `shots` is the
    number of examples in the pddl style (None: `PAPER_SHOTS` for the intrinsic self-critique paper's generated
    sets, whose No-Critique baseline is the 16-shot planner prompt, else `OTHER_SHOTS`); `intro`, `prompts`,
    `verifier` and `verdict` as in `PlanningDomain`. A recorded run's `replay` record (a `Replay`, or the table a
    study's `domain_options.NAME.replay` stores: `Replay.parse` reads it; definitions stored before it had a table
    give its fields one by one, `replay.REPLAY_OPTIONS`) gives a `ReplayedPlanning` that replays it.
    """
    unknown = sorted(set(recorded) - set(REPLAY_OPTIONS))
    if unknown:
        raise TypeError(f"load_planning_domain() got unexpected keyword argument(s) {', '.join(unknown)}")
    if shots is not None and shots < 0:  # a negative count sliced the pool from its end: all but |shots| examples
        raise PlanningError(f"shots must be 0 or more (solved examples in a pddl-style prompt), not {shots}")
    replay = replay_of(replay, recorded)
    options: dict[str, Any] = dict(intro=intro, prompts=prompts or DEFAULT, verifier=verifier, verdict=verdict)
    builtin = BUILTIN.get(str(name_or_folder))
    if builtin is not None and builtin.folder:
        name = str(name_or_folder)
        live = PlanningDomain(
            name,
            DATA_DIR / builtin.folder,
            prompt_style or ("pddl" if builtin.generated else "nl"),
            strict,
            (PAPER_SHOTS if builtin.generated else OTHER_SHOTS) if shots is None else shots,
            generator=name,
            optimal=builtin.generated,
            shipped=True,
            **options,
        )
        return live if replay is None else ReplayedPlanning(live, replay)
    folder = Path(name_or_folder).expanduser()
    if not folder.is_dir():
        raise PlanningError(
            f"{name_or_folder}: not a builtin planning domain "
            f"({', '.join([*BUILTIN_PLANNING, *PAPER_PLANNING])}) nor a folder"
        )
    if domain_file(folder) is None:
        raise PlanningError(f"{folder}: a planning domain folder needs domain.pddl (or one NAME_domain.pddl)")
    live = PlanningDomain(
        folder.resolve().name,
        folder.resolve(),
        prompt_style,
        strict,
        OTHER_SHOTS if shots is None else shots,
        fewer_shots=shots is None,
        **options,
    )
    return live if replay is None else ReplayedPlanning(live, replay)


# Option name -> type, as `domains.options` reads a domain module's table (beside the options every domain takes):
# the loader's own, a recorded run's `replay` table, and its fields one by one as older definitions stored them
# (the loader's `**recorded`), typed by the replay record.
OPTIONS: dict[str, Any] = {
    **{k: v for k, v in signature_options(load_planning_domain).items() if k not in ("replay", *COMMON)},
    "replay": dict,
    **typing.get_type_hints(Replay),
}
