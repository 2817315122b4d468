"""The one table of built-in domains: each name with its factory, where its instances live under the datasets
root, and (planning) its shipped PDDL folder. `get_domain`, the dataset lookup (`domains.datasets`) and the
planning package's loader all read it, so a built-in domain is added in one place.

A package adds a domain without touching this table, through the entry-point group `critiquebench.domains`.
"""

from __future__ import annotations

from dataclasses import dataclass

PLANNING = "critiquebench.domains.planning:load_planning_domain"  # takes the domain's name first


@dataclass(frozen=True)
class BuiltinDomain:
    """One built-in domain."""

    factory: str  # "module:factory"; the factory takes `get_domain`'s keyword options
    data: str | None = None  # its instances under the datasets root (`--dataset`), when it reads any
    folder: str | None = None  # planning: its PDDL folder under domains/data
    # the intrinsic self-critique paper's sets: instances from gen:N:SEED only, PDDL prompts, and example plans
    # that are proven shortest (breadth-first search, or A* with the Logistics bound)
    generated: bool = False
    # example plans from another dataset folder beside this one, action names renamed (Mystery Blocksworld is
    # Blocksworld renamed: PlanBench's Mystery prompts show Blocksworld's optimal plans, renamed)
    plans_from: tuple[str, tuple[tuple[str, str], ...]] | None = None


BUILTIN: dict[str, BuiltinDomain] = {
    "game24": BuiltinDomain("critiquebench.domains.game24:make_game24", data="game24/24.csv"),
    "coloring": BuiltinDomain("critiquebench.domains.coloring:make_coloring", data="graph_coloring"),
    "blocksworld": BuiltinDomain(PLANNING, data="planbench/blocksworld", folder="blocksworld"),
    "mystery_blocksworld": BuiltinDomain(
        PLANNING, data="planbench/mystery_blocksworld", folder="mystery_blocksworld",
        plans_from=("blocksworld", (("pick-up", "attack"), ("put-down", "succumb"), ("stack", "overcome"),
                                    ("unstack", "feast"))),
    ),
    "logistics": BuiltinDomain(PLANNING, data="planbench/logistics", folder="logistics"),
    "blocksworld_3_7": BuiltinDomain(PLANNING, folder="blocksworld", generated=True),
    "logistics_star": BuiltinDomain(PLANNING, folder="logistics", generated=True),
    "logistics_hard": BuiltinDomain(PLANNING, folder="logistics", generated=True),
    "minigrid": BuiltinDomain(PLANNING, folder="minigrid", generated=True),
    "minigrid_hard": BuiltinDomain(PLANNING, folder="minigrid", generated=True),
}
