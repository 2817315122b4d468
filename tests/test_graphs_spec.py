"""Scheme specs: parsing, defaults, validation, canonical names."""

from __future__ import annotations

import pytest
from critiquebench.graphs import SCHEMES, format_spec, normalize_spec, parse_spec

from critiquebench.studies.execute import thread_id_for


def test_parse_spec_types_and_keeps_given_params_only() -> None:
    assert parse_spec("sampling:k=25") == ("sampling", {"k": 25})
    assert parse_spec(" llm-llm : rounds=10, critic=llm-cot ") == (
        "llm-llm",
        {"rounds": 10, "critic": "llm-cot"},
    )
    assert parse_spec("intrinsic:show_critique=yes") == ("intrinsic", {"show_critique": True})
    assert parse_spec("standard") == ("standard", {})
    assert parse_spec("llm-llm:critic=sound,critic_level=all")[1] == {
        "critic": "sound",
        "critic_level": "all",
    }


def test_defaults_follow_the_papers() -> None:
    assert SCHEMES["llm-llm"].params({})["rounds"] == 15
    assert SCHEMES["llm-llm-cot"].params({})["critic"] == "llm-cot"
    assert SCHEMES["sound-all"].params({})["feedback"] == "all"
    assert SCHEMES["sampling"].params({})["k"] == SCHEMES["self-consistency"].params({})["k"] == 15
    intrinsic = SCHEMES["intrinsic"].params({})
    assert (intrinsic["votes"], intrinsic["rounds"], intrinsic["style"]) == (5, 10, "pddl")
    assert SCHEMES["refine"].params({})["rounds"] == 4
    assert SCHEMES["sampling"].max_rounds({"k": 25}) == 25


@pytest.mark.parametrize(
    "spec,message",
    [
        ("nope", "unknown scheme 'nope'; available: standard, llm-llm"),
        ("sampling:rounds=3", "unknown parameter 'rounds' for scheme 'sampling'; valid: k, style"),
        ("sampling:k=many", "parameter 'k' of scheme 'sampling' must be an integer, not 'many'"),
        ("sampling:k=0", "must be >= 1"),
        ("intrinsic:show_critique=maybe", "must be true or false"),
        ("sampling:k", "bad parameter 'k'"),
        ("standard:critic_x=1", "unknown parameter 'critic_x'"),
        ("sound-first:history=some", "must be one of full, last, not 'some'"),
        ("refine:feedback=loud", "must be one of binary, first, all"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_spec(spec)


def test_canonical_spec_names_threads() -> None:
    assert normalize_spec("llm-llm:votes=3, rounds=10") == "llm-llm:rounds=10,votes=3"
    assert format_spec("intrinsic", {"show_critique": False}) == "intrinsic:show_critique=false"
    assert thread_id_for("s", "game24", "sampling: k=25", "901", 2) == "s/game24/sampling:k=25/901/2"
