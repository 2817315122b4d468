"""PDDL is read by the `pddl` package (issue 21 item 6): what it refuses in files from the wild (an explicit
`object` type, undeclared requirements, sections out of the grammar's order) is normalised first, so those files
load as they are; what is really wrong (a cycle in the type hierarchy, a type nobody declared, broken syntax)
gets one line naming the file, where the hand-written reader before it accepted the first two silently."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pddl.parser.domain import DomainParser

from critiquebench.domains.planning import PlanningError, load_planning_domain
from critiquebench.domains.planning.instances import read_plan_file
from critiquebench.domains.planning.pddl_io import normalise, parse_domain_text
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
