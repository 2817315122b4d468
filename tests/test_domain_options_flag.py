"""`--domain-option KEY=VALUE`: a study file's [domain_options] on every command that takes a domain."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_study_cli import DATASETS, invoke

ANSWER = "Answer: (4 * 5) + (10 - 6) = 24"  # puzzle 901 is 4 5 6 10


def _answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"instance": "901", "response": ANSWER}) + "\n", encoding="utf-8")
    return path


def test_score_reads_answer_lines_with_the_lenient_reader(tmp_path: Path) -> None:
    path = _answers(tmp_path)
    default = invoke("score", "--domain", "game24", "--dataset", str(DATASETS), str(path))
    assert json.loads(default.stdout)["verdict"] == "malformed"  # the study's reader: the first line before "="
    lenient = invoke("score", "--domain", "game24", "--domain-option", "reader=lenient", "--dataset",
                     str(DATASETS), str(path))  # fmt: skip
    assert json.loads(lenient.stdout)["verdict"] == "valid"


def test_an_unknown_key_is_one_line_naming_the_domain_options(tmp_path: Path) -> None:
    result = invoke("score", "--domain", "game24", "--domain-option", "raeder=lenient", str(_answers(tmp_path)),
                    check=2)  # fmt: skip
    assert result.stderr.strip().splitlines() == [
        "error: --domain-option raeder: game24 has no option 'raeder'; its options: stop, prompts, prompt_style, "
        "reader, form, paper_levels, verdict, protocol"
    ]


def test_values_are_typed_as_the_domain_declares(tmp_path: Path) -> None:
    from critiquebench.domains.options import options_for

    assert options_for("game24", ["paper_levels=false"]) == {"paper_levels": False}  # not bool("false")
    assert options_for("coloring", ["vertices=5,8"]) == {"vertices": [5, 8]}
    assert options_for("blocksworld", ["shots=2", "example=7"]) == {"shots": 2, "example": "7"}
    bad = invoke("score", "--domain", "blocksworld", "--domain-option", "shots=many", str(_answers(tmp_path)), check=2)
    assert "write an integer" in bad.stderr


def test_run_stores_flagged_options_over_the_file_per_domain(tmp_path: Path) -> None:
    toml = tmp_path / "s.toml"
    toml.write_text('[domain_options.game24]\nform = "chat"\n', encoding="utf-8")
    store = str(tmp_path / "s.sqlite")
    invoke("run", "s", "--config", str(toml), "--domains", "game24,coloring", "--instances", "gen:1:1",
           "--schemes", "standard", "--domain-option", "reader=lenient", "--domain-option", "coloring.form=chat",
           "--dry-run", "--store", store)  # fmt: skip
    from critiquebench.studies.config import build_config

    config = build_config("s", {"domain_options": {"game24": {"form": "chat"}}},
                          {"domains": "game24,coloring", "instances": "gen:1:1", "schemes": "standard",
                           "domain_option": ["reader=lenient", "coloring.form=chat"]})  # fmt: skip
    assert config.domain_options["game24"] == {"form": "chat", "reader": "lenient"}
    assert config.domain_options["coloring"] == {"form": "chat"}


def test_help_texts_show_their_brackets() -> None:
    """Audit: Typer rendered help as rich markup, where "[domain_options]" is a tag, and it vanished from `run
    --help`; the escape written then ("\\[") printed as a stray backslash once the CLI's help became plain click
    text (rich_markup_mode=None). Every help text is plain: no markup escape, brackets as written."""
    import click
    import typer

    from critiquebench.cli import app

    def walk(command: click.Command) -> list[click.Command]:
        subs = getattr(command, "commands", {})
        return [command, *(c for sub in subs.values() for c in walk(sub))]

    escaped = [(command.name, param.name) for command in walk(typer.main.get_command(app))
               for param in command.params if "\\[" in (getattr(param, "help", None) or "")]  # fmt: skip
    assert escaped == []
    for args in (("run", "--help"), ("score", "--help"), ("prompt", "--help")):
        shown = " ".join(invoke(*args).stdout.split())
        assert "study file's [domain_options]" in shown and "\\[" not in shown, args


def test_a_negative_number_of_shots_is_one_line_not_most_of_the_pool() -> None:
    """Probe C9 of the rel48 re-run: `shots=-5` was accepted and a pddl-style prompt showed all but 5 of the
    500-problem training pool as examples (the count sliced the pool from its end); 0 shows none."""
    args = ["prompt", "--domain", "blocksworld", "--instance", "1", "--dataset", str(DATASETS),
            "--domain-option", "prompt_style=pddl"]  # fmt: skip
    bad = invoke(*args, "--domain-option", "shots=-5", check=2)
    assert bad.stderr.strip().splitlines() == [
        "error: shots must be 0 or more (solved examples in a pddl-style prompt), not -5"
    ]
    sizes = [len(invoke(*args, "--domain-option", f"shots={n}").stdout) for n in (0, 1, 3)]
    assert sizes[0] < sizes[1] < sizes[2] == len(invoke(*args).stdout)  # 3: the folder's default
