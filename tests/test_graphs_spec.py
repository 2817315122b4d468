"""Scheme specs: parsing, defaults, validation, canonical names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.graphs import SCHEMES, format_spec, normalize_spec, parse_spec
from critiquebench.store.db import connect
from critiquebench.studies.execute import thread_id_for


def test_parse_spec_types_and_keeps_given_params_only() -> None:
    assert parse_spec("sampling:k=25") == ("sampling", {"k": 25})
    assert parse_spec(" llm-llm : rounds=10, critic=llm-cot ") == (
        "llm-llm",
        {"rounds": 10, "critic": "llm-cot"},
    )
    assert parse_spec("intrinsic:domain_definition=no") == ("intrinsic", {"domain_definition": False})
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
    assert (intrinsic["votes"], intrinsic["steps"], intrinsic["shots"], intrinsic["style"]) == (1, 10, 16, "pddl")
    assert (intrinsic["critic"], intrinsic["critique_shots"], intrinsic["runs"]) == ("intrinsic", 0, 1)
    assert SCHEMES["intrinsic"].max_rounds({}) == 11  # steps 0..10
    assert SCHEMES["intrinsic-oracle"].params({})["critic"] == "sound"
    assert SCHEMES["intrinsic-sc"].max_rounds({}) == 55
    assert SCHEMES["refine"].params({})["rounds"] == 4
    assert SCHEMES["sampling"].max_rounds({"k": 25}) == 25


@pytest.mark.parametrize(
    "spec,message",
    [
        ("nope", "unknown scheme 'nope'; available: standard, llm-llm"),
        ("sampling:rounds=3", "unknown parameter 'rounds' for scheme 'sampling'; valid: k, style"),
        ("sampling:k=many", "parameter 'k' of scheme 'sampling' must be an integer, not 'many'"),
        ("sampling:k=0", "must be >= 1"),
        ("intrinsic:domain_definition=maybe", "must be true or false"),
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
    assert format_spec("intrinsic", {"domain_definition": False}) == "intrinsic:domain_definition=false"
    assert thread_id_for("s", "game24", "sampling: k=25", "901", 2) == "s/game24/sampling:k=25/901/2"


def test_parameters_are_declared_once_with_types_choices_and_help() -> None:
    for scheme in SCHEMES.values():
        for param in scheme.declared:
            assert param.help and param.type in (bool, int, float, str), (scheme.name, param.name)
            if param.default is not None:  # the default is valid for its own declaration
                assert param.coerce(param.default, scheme.name) == param.default
    assert parse_spec("standard:style=pddl") == ("standard", {"style": "pddl"})
    assert parse_spec("intrinsic:style=none").given == {"style": None}
    spec = parse_spec("sampling:k=25")
    assert (spec.label, spec.max_rounds, spec.params["style"]) == ("sampling:k=25", 25, None)
    assert parse_spec("sampling:k=25") is spec  # parsed once per distinct string


@pytest.mark.parametrize(
    "spec,message",
    [
        (
            "standard:style=typo",
            "'style' of scheme 'standard' must be one of nl, nl_legacy, pddl, refine, nl_zero_shot, pddl_planbench, "
            "pddl_zero_shot, pddl_zero_shot_2023, state_tracking, none, not 'typo'",
        ),
        ("llm-llm:critic=nobody", "unknown critic 'nobody'; available: llm, intrinsic, llm-cot, sound"),
        ("sound-first:rounds=2.5", "'rounds' of scheme 'sound-first' must be an integer, not '2.5'"),
    ],
)
def test_bad_values_name_the_valid_ones(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_spec(spec)


def test_schemes_command_lists_every_parameter(tmp_path: Path) -> None:
    listed = CliRunner().invoke(app, ["schemes", "--json"])
    assert listed.exit_code == 0, listed.output
    by_name = {s["name"]: {p["name"]: p for p in s["params"]} for s in json.loads(listed.output)}
    assert set(by_name) == set(SCHEMES)
    assert by_name["sampling"]["k"] == {
        "name": "k", "type": "int", "default": 15, "choices": None, "minimum": 1, "maximum": 1000,
        "nullable": False, "help": "number of samples of the same prompt",
    }  # fmt: skip
    assert by_name["sound-all"]["feedback"]["default"] == "all"
    assert "style=none" in CliRunner().invoke(app, ["schemes"]).output
    assert "k=15                   int, 1..1000: number of samples" in CliRunner().invoke(app, ["schemes"]).output


def test_a_bad_parameter_stops_run_before_anything_is_stored(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    args = ["run", "typo", "--domains", "game24", "--instances", "gen:2:1", "--store", str(store)]
    result = CliRunner().invoke(app, [*args, "--schemes", "standard:style=typo"])
    assert result.exit_code == 2
    assert "error: scheme 'standard:style=typo': parameter 'style' of scheme 'standard' must be one of" in (
        result.output
    )
    assert "Traceback" not in result.output
    assert (
        not store.exists()
        or not connect(store).execute("SELECT name FROM sqlite_master WHERE name = 'studies'").fetchall()
        or not connect(store).execute("SELECT * FROM studies").fetchall()
    )
