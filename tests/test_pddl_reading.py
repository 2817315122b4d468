"""PDDL is read by the `pddl` package (issue 21 item 6): what it refuses in files from the wild (an explicit
`object` type, undeclared requirements, sections out of the grammar's order) is normalised first, so those files
load as they are; what is really wrong (a cycle in the type hierarchy, a type nobody declared, broken syntax)
gets one line naming the file, where the hand-written reader before it accepted the first two silently."""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest
from pddl.parser.domain import DomainParser

from critiquebench.domains.planning import PlanningError, load_planning_domain, pddl_grammar
from critiquebench.domains.planning.instances import read_plan_file
from critiquebench.domains.planning.pddl_io import normalise, parse_domain_text, parse_problem_text, strip_comments
from critiquebench.domains.planning.plain_problem import read_plain
from critiquebench.domains.planning.validator import check_plan
from tests.conftest import DATASETS
from tests.test_planning_pddl_domains import steps_of

GRIPPER = DATASETS / "autoplanbench" / "gripper"
UNDECLARED = """(define (domain lights)
  (:requirements :strips)
  (:predicates (on ?l) (broken ?l))
  (:functions (total-cost) - number)
  (:types lamp)
  (:action switch :parameters (?l - lamp)
    :precondition (and (not (on ?l)) (not (broken ?l)))
    :effect (and (on ?l) (increase (total-cost) 1))))
"""


def test_files_pddl_refuses_as_they_are_are_normalised_and_load() -> None:
    gripper = (GRIPPER / "domain.pddl").read_text()
    for text in (gripper, UNDECLARED):  # object declared as a type; negation undeclared, sections out of order
        with pytest.raises(Exception):  # noqa: B017, PT011 - what `pddl` itself says varies by version
            DomainParser()(text)
        DomainParser()(normalise(text, "x"))
    model = parse_domain_text(UNDECLARED, "lights")
    assert model.schemas["switch"].neg_pre == (("on", "?l"), ("broken", "?l"))
    assert model.schemas["switch"].param_types == (frozenset({"lamp"}),)
    domain = load_planning_domain(GRIPPER)
    gold = sorted((GRIPPER / "orig_gold_plans").glob("instance-*_gold_plan.txt"))[:5]
    assert len(gold) == 5
    for plan in gold:
        (inst,) = domain.load(plan.name.split("_")[0].removeprefix("instance-"))
        assert check_plan(domain.task(inst), steps_of(read_plan_file(plan))).valid


@pytest.mark.parametrize(
    ("types", "parameter", "says"),
    [
        ("(:types a - b b - a)", "?x - a", "cycle detected in the type hierarchy"),
        ("(:types a b)", "?x - nosuch", "nosuch"),
    ],
)
def test_a_type_error_is_one_line_naming_the_file(tmp_path: Path, types: str, parameter: str, says: str) -> None:
    (tmp_path / "domain.pddl").write_text(
        f"(define (domain bad) (:requirements :strips :typing) {types} (:predicates (p ?x))\n"
        f"  (:action act :parameters ({parameter}) :precondition (p ?x) :effect (not (p ?x))))"
    )
    with pytest.raises(PlanningError) as caught:
        load_planning_domain(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'domain.pddl'}: malformed PDDL: ") and says in message
    assert "\n" not in message


def test_malformed_pddl_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sys, "tracebacklimit", raising=False)  # pddl's own parser, called raw above, sets it
    for text in ("(define (domain d) (:predicates (p ?x)) (:action", "(define (domain d)))", "", "\x00(((("):
        with pytest.raises(PlanningError) as caught:
            parse_domain_text(text, "f.pddl")
        assert str(caught.value).startswith("f.pddl: malformed PDDL: ") and "\n" not in str(caught.value)
    deep = "(and " * 100_000 + "(p)" + ")" * 100_000  # the audit's hostile precondition
    with pytest.raises(PlanningError) as caught:
        parse_domain_text(f"(define (domain d) (:predicates (p)) (:action a :parameters () :precondition {deep}))",
                          "f.pddl")  # fmt: skip
    assert str(caught.value).startswith("f.pddl: ") and "\n" not in str(caught.value)
    # after all these failures the next file still parses, and tracebacks still show (pddl turned them off)
    assert parse_domain_text((GRIPPER / "domain.pddl").read_text(), "gripper").name == "gripper-strips"
    assert getattr(sys, "tracebacklimit", None) is None


# Problems are read by a plain-shape reader when they have that shape (`plain_problem.read_plain`, 10x faster than
# the `pddl` package, issue 31), and by the `pddl` package otherwise: the same `Task` either way.
PLAIN_DOMAIN = """(define (domain post) (:requirements :strips :typing :negative-preconditions :equality)
  (:types parcel place - object van - vehicle vehicle)
  (:predicates (at ?x ?p) (free ?v) (link ?a ?b))
  (:action drive :parameters (?v - van ?a ?b - place)
    :precondition (and (at ?v ?a) (link ?a ?b)) :effect (and (at ?v ?b) (not (at ?v ?a)))))"""
PROBLEM_SHAPES = {
    "plain": "(define (problem p1) (:domain post) (:objects v1 - van a b - place) (:init (at v1 a) (link a b))"
    " (:goal (and (at v1 b) (not (at v1 a)))))",
    "plain, one goal atom, untyped objects, a comment": "(define (problem p2) (:domain post) ; hello\n"
    " (:objects v1 a b) (:init (at v1 a) (free v1)) (:goal (at v1 b)))",
    "plain, digit name": "(define (problem 8kq) (:domain post) (:objects v1 - van a b - place) (:init (at v1 a))"
    " (:goal (at v1 b)))",
    "requirements": "(define (problem p3) (:domain post) (:requirements :strips) (:objects v1 - van a - place)"
    " (:init (at v1 a)) (:goal (at v1 a)))",
    "cost": "(define (problem p6) (:domain post) (:objects v1 - van a - place) (:init (at v1 a) (= (total-cost) 0))"
    " (:goal (at v1 a)))",
    "nested and": "(define (problem p7) (:domain post) (:objects v1 - van a - place) (:init (at v1 a))"
    " (:goal (and (and (at v1 a)))))",
}
PROBLEM_ERRORS = {
    "undeclared object": "(define (problem e1) (:domain post) (:objects a - place) (:init (at v9 a))"
    " (:goal (at v9 a)))",
    "undeclared predicate": "(define (problem e2) (:domain post) (:objects a - place) (:init (near a))"
    " (:goal (near a)))",
    "either": "(define (problem e7) (:domain post) (:objects v1 - (either van vehicle) a - place) (:init (at v1 a))"
    " (:goal (at v1 a)))",
    "equality in a goal": "(define (problem e8) (:domain post) (:objects v1 - van a b - place) (:init (at v1 a))"
    " (:goal (and (at v1 a) (not (= a b)))))",
    "repeated object": "(define (problem e3) (:domain post) (:objects a a - place) (:init) (:goal (link a a)))",
    "keyword as a name": "(define (problem e4) (:domain post) (:objects and - place) (:init) (:goal (link and and)))",
    "unbalanced": "(define (problem e5) (:domain post) (:objects a - place) (:init (link a a) (:goal (link a a)))",
    "negative init": "(define (problem e6) (:domain post) (:objects a - place) (:init (not (link a a)))"
    " (:goal (link a a)))",
}


@pytest.mark.parametrize("shape", PROBLEM_SHAPES)
def test_a_problem_reads_the_same_by_either_reader(shape: str) -> None:
    model = parse_domain_text(PLAIN_DOMAIN, "post")
    text = PROBLEM_SHAPES[shape]
    assert (read_plain(strip_comments(text)) is not None) == shape.startswith("plain")
    fast = parse_problem_text(text, model, "p.pddl")
    assert fast == parse_problem_text(text, model, "p.pddl", plain=False)
    assert fast.name == text.split("(problem ")[1].split(")")[0]


@pytest.mark.parametrize("case", PROBLEM_ERRORS)
def test_a_bad_problem_gets_the_same_one_line_from_either_reader(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sys, "tracebacklimit", raising=False)
    model = parse_domain_text(PLAIN_DOMAIN, "post")
    said = []
    for plain in (True, False):
        with pytest.raises(PlanningError) as caught:
            parse_problem_text(PROBLEM_ERRORS[case], model, "p.pddl", plain=plain)
        said.append(str(caught.value))
    assert said[0] == said[1] and said[0].startswith("p.pddl: ") and "\n" not in said[0]


def test_every_shipped_planbench_problem_reads_the_same_by_either_reader() -> None:
    for folder in sorted((DATASETS / "planbench").glob("*/domain.pddl")):
        model = parse_domain_text(folder.read_text(), str(folder))
        problems = sorted((folder.parent / "instances").glob("*.pddl"))[:25]
        assert problems, folder
        for path in problems:
            text = path.read_text()
            assert read_plain(strip_comments(text)) is not None, path  # PlanBench's problems are all plain
            assert parse_problem_text(text, model, str(path)) == parse_problem_text(text, model, str(path), plain=False)


def test_the_grammar_cache_is_private_and_a_bad_one_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gripper = (GRIPPER / "domain.pddl").read_text()
    expected = parse_domain_text(gripper, "gripper")
    made = pddl_grammar.parser(DomainParser)
    [cache] = (tmp_path / f"critiquebench-{os.getuid()}").iterdir()
    assert stat.S_IMODE(cache.parent.stat().st_mode) == 0o700
    assert made(normalise(gripper, "g")).name == "gripper-strips"
    cache.write_bytes(b"not a grammar")  # a damaged cache: lark analyses the grammar again and replaces it
    assert pddl_grammar.parser(DomainParser)(normalise(gripper, "g")).name == "gripper-strips"
    assert cache.read_bytes() != b"not a grammar"
    cache.parent.chmod(0o777)  # a folder others may write to: no pickle is loaded from it, pddl builds its own
    assert pddl_grammar._cache_folder() is None
    assert type(pddl_grammar.parser(DomainParser)) is DomainParser
    assert parse_domain_text(gripper, "gripper") == expected


def test_two_installations_of_pddl_keep_a_grammar_cache_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two environments on one machine (a second checkout's venv) do not rebuild and overwrite each other's
    analysed grammar at every start: lark's check covers where `pddl` is installed, so each has its own file."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gripper = normalise((GRIPPER / "domain.pddl").read_text(), "g")
    assert pddl_grammar.parser(DomainParser)(gripper).name == "gripper-strips"
    [first] = (tmp_path / f"critiquebench-{os.getuid()}").iterdir()
    kept = first.read_bytes()
    other = tmp_path / "other-venv" / "parsers"
    shutil.copytree(pddl_grammar.PARSERS_DIRECTORY, other)
    monkeypatch.setattr(pddl_grammar, "PARSERS_DIRECTORY", other)
    assert pddl_grammar.parser(DomainParser)(gripper).name == "gripper-strips"
    assert len(list(first.parent.iterdir())) == 2 and first.read_bytes() == kept


def test_a_folder_changed_between_two_loads_in_one_process_is_read_again(tmp_path: Path) -> None:
    # One process reads a folder's files, a domain's parse and a problem's parse once (an import and its replay
    # ask up to ten times); a user who edits the folder between two loads (a notebook, the API) gets the edit.
    source = DATASETS / "planbench" / "blocksworld"
    folder = tmp_path / "bw"
    (folder / "instances").mkdir(parents=True)
    for name in ("domain.pddl", "config.yaml"):
        (folder / name).write_text((source / name).read_text())
    for i in (1, 2):
        name = f"instance-{i}.pddl"
        (folder / "instances" / name).write_text((source / "instances" / name).read_text())
    domain = load_planning_domain(folder)
    first = {inst.id: domain.task(inst) for inst in domain.load()}
    assert sorted(first) == ["1", "2"]
    assert load_planning_domain(folder).task(domain.load("1")[0]) is first["1"]  # parsed once, shared

    problem = folder / "instances" / "instance-1.pddl"
    text = problem.read_text()
    edited = text[: text.index("(:goal")] + "(:goal (and (handempty))))\n"
    problem.write_text(edited)
    (folder / "instances" / "instance-3.pddl").write_text((source / "instances" / "instance-3.pddl").read_text())
    (folder / "domain.pddl").write_text((source / "domain.pddl").read_text().replace("(:action", ";\n(:action", 1))

    again = load_planning_domain(folder)
    loaded = {inst.id: inst for inst in again.load()}
    assert sorted(loaded) == ["1", "2", "3"]  # the new file
    assert loaded["1"].data["problem"] == edited  # the new text
    assert again.task(loaded["1"]).goal == frozenset({("handempty",)})  # parsed anew
    assert again.model is not domain.model  # the edited domain file, parsed anew
