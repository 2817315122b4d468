"""One table of built-in domains: a domain added to `BUILTIN` is built, finds its data and (planning) its PDDL
folder from that entry alone, with no second table to edit."""

from __future__ import annotations

from pathlib import Path

import pytest

from critiquebench.domains import DOMAIN_NAMES, get_domain, load_instances
from critiquebench.domains.planning import BUILTIN_PLANNING, PAPER_PLANNING
from critiquebench.domains.registry import BUILTIN, PLANNING, BuiltinDomain

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def test_a_domain_added_to_the_table_is_built_and_finds_its_data(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = BuiltinDomain(PLANNING, data="planbench/blocksworld", folder="blocksworld")
    monkeypatch.setitem(BUILTIN, "blocks_again", entry)
    domain = get_domain("blocks_again")
    assert domain.name == "blocks_again"
    [instance] = load_instances(domain, "2", DATASETS)  # found under the root by the entry's data path
    assert instance.id == "2"
    original = load_instances(get_domain("blocksworld"), "2", DATASETS)[0]
    assert domain.prompt(instance) == get_domain("blocksworld").prompt(original)


def test_the_planning_views_are_read_from_the_table() -> None:
    assert set(BUILTIN_PLANNING) | set(PAPER_PLANNING) == {n for n, d in BUILTIN.items() if d.folder}
    assert PAPER_PLANNING["minigrid_hard"] == "minigrid" and "logistics" in BUILTIN_PLANNING
    assert DOMAIN_NAMES == tuple(BUILTIN)
    generated = get_domain("logistics_hard")  # the paper's sets: PDDL prompts by default
    assert generated.prompt_style == "pddl" and get_domain("logistics").prompt_style == "nl"
