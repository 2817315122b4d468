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
