"""The prompt sets (domains/prompts/*.toml): one per source, every template tagged with where it comes from."""

from __future__ import annotations

import pytest

from critiquebench.domains.prompts import SETS, builtin


@pytest.mark.parametrize("name", SETS)
def test_every_template_names_its_source(name: str) -> None:
    prompts = builtin(name)
    assert prompts.name == name and prompts.version and prompts.title
    assert prompts.templates
    for key, template in prompts.templates.items():
        assert template.source, f"{name}: {key} has no source"
        if template.source == "ours":
            assert template.note, f"{name}: {key} is ours and must say why"


def test_a_built_in_set_s_label_read_from_its_header_is_its_parsed_label() -> None:
    """`Prompts.labels` (what a study records) reads a built-in set's name and version alone; they are the ones
    the whole file gives, and a set a file replaces keeps its own label."""
    from critiquebench.domains.prompts import SETS, Prompts, builtin, builtin_label

    assert {name: builtin_label(name) for name in SETS} == {name: builtin(name).label for name in SETS}
    assert Prompts().labels() == {name: builtin(name).label for name in SETS}
    with pytest.raises(ValueError, match="unknown prompt set"):
        builtin_label("nope")
