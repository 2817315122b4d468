"""Any PDDL domain folder as it is: the 12 AutoPlanBench domains and small typed domains, judged as
unified-planning's validator judges them (unified-planning is the truth here, and only here)."""

from __future__ import annotations

import functools
import random
import warnings
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.planning import PlanningDomain, PlanningError, load_planning_domain
from critiquebench.domains.planning.instances import read_plan_file
from critiquebench.domains.planning.validator import check_plan
from critiquebench.llm.client import LLMClient
from critiquebench.studies.execute import execute_run
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer

AUTOPLANBENCH = DATASETS / "autoplanbench"
DOMAINS = sorted(p.name for p in AUTOPLANBENCH.iterdir() if (p / "domain.pddl").is_file())
Step = tuple[str, tuple[str, ...]]


def steps_of(lines: list[str]) -> list[Step]:
    words = [line.strip("() ").lower().split() for line in lines]
    return [(w[0], tuple(w[1:])) for w in words if w]


@functools.cache
def up_tools() -> tuple[Any, Any, Any]:
    import unified_planning.shortcuts as shortcuts  # the dev extra, installed by scripts/setup.sh
    from unified_planning.engines.plan_validator import SequentialPlanValidator
    from unified_planning.io import PDDLReader

    env = shortcuts.get_environment()
    env.credits_stream = None
    env.error_used_name = False  # floortile has an action and a predicate both called "up"
    return PDDLReader(), SequentialPlanValidator(), env


@functools.cache
def up_problem(domain_text: str, problem_text: str) -> Any:
    """unified-planning's reading of a problem, made once: each problem's several plans are validated against it
    (its reader was two thirds of this file's CPU, reading the same domain and problem for every plan)."""
    reader, _validator, _env = up_tools()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return reader.parse_problem_string(domain_text, problem_text)


def up_valid(domain_text: str, problem_text: str, lines: list[str]) -> bool:
    from unified_planning.engines.results import ValidationResultStatus

    reader, validator, _env = up_tools()
    problem = up_problem(domain_text, problem_text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            plan = reader.parse_plan_string(problem, "\n".join(lines))
        except Exception:  # noqa: BLE001 - unified-planning refuses ill-typed steps outright: not a valid plan
            return False
        return validator.validate(problem, plan).status == ValidationResultStatus.VALID


def mutations(gold: list[str], rng: random.Random) -> dict[str, list[str]]:
    out = {"dropped": gold[:0] + gold[1:], "cut": gold[:-1]}
    if len(gold) > 2:
        i = rng.randrange(1, len(gold) - 1)
        out["dropped"] = gold[:i] + gold[i + 1 :]
    if len(gold) > 1:
        i = rng.randrange(len(gold) - 1)
        swapped = list(gold)
        swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
        out["swapped"] = swapped
    return out


@functools.cache
def autoplanbench(name: str) -> tuple[PlanningDomain, list[Any]]:
    domain = get_domain(str(AUTOPLANBENCH / name))
    assert isinstance(domain, PlanningDomain)
    return domain, load_instances(domain, "all")


@pytest.mark.parametrize("name", DOMAINS)
def test_autoplanbench_folder_loads_as_it_is_and_judges_like_unified_planning(name: str) -> None:
    domain, instances = autoplanbench(name)
    assert domain.prompt_style == "nl" and domain.nl_source is not None  # domain_description_seed1.json
    assert len(instances) == 21
    for inst in instances:
        gold = read_plan_file(AUTOPLANBENCH / name / "orig_gold_plans" / f"instance-{inst.id}_gold_plan.txt")
        assert check_plan(domain.task(inst), steps_of(gold)).valid, (name, inst.id)
    for inst in instances[:3]:
        gold = read_plan_file(AUTOPLANBENCH / name / "orig_gold_plans" / f"instance-{inst.id}_gold_plan.txt")
        for style in ("nl", "pddl"):  # the domain's English and PDDL lines both read back to the plan
            assert list(domain.read(inst, domain.answer_text(steps_of(gold), style)).steps) == steps_of(gold)
    assert all(e["plan"] for e in instances[0].data["examples"])  # gold plans serve the examples
    domain_text = (AUTOPLANBENCH / name / "domain.pddl").read_text()
    rng = random.Random(name)
    for inst in instances[:2]:
        gold = read_plan_file(AUTOPLANBENCH / name / "orig_gold_plans" / f"instance-{inst.id}_gold_plan.txt")
        for kind, plan in mutations(gold, rng).items():
            ours = check_plan(domain.task(inst), steps_of(plan)).valid
            assert ours == up_valid(domain_text, inst.data["problem"], plan), (name, inst.id, kind)


TYPED_DOMAIN = """(define (domain typed-world)
  (:requirements :strips :typing :equality :negative-preconditions)
  (:types truck van - vehicle  vehicle crate - movable  depot shop - place)
  (:constants hq - depot)
  (:predicates (at ?m - movable ?p - place) (sealed ?c - crate) (in ?c - crate ?v - vehicle) (open ?p - place))
  (:action move
    :parameters (?v - vehicle ?from ?to - place)
    :precondition (and (at ?v ?from) (not (= ?from ?to)))
    :effect (and (at ?v ?to) (not (at ?v ?from))))
  (:action load
    :parameters (?c - crate ?v - (either truck van) ?p - place)
    :precondition (and (at ?c ?p) (at ?v ?p) (not (sealed ?c)))
    :effect (and (in ?c ?v) (not (at ?c ?p))))
  (:action unload
    :parameters (?c - crate ?v - vehicle ?p - place)
    :precondition (and (in ?c ?v) (at ?v ?p) (open ?p))
    :effect (and (at ?c ?p) (not (in ?c ?v))))
  (:action seal-at-hq
    :parameters (?c - crate)
    :precondition (and (at ?c hq))
    :effect (and (sealed ?c)))
  (:action inspect
    :parameters (?a ?b - crate)
    :precondition (and (= ?a ?b) (at ?a hq))
    :effect (and (sealed ?a))))
"""
TYPED_PROBLEM = """(define (problem typed-1) (:domain typed-world)
  (:objects t1 - truck v1 - van c1 c2 - crate s1 s2 - shop)
  (:init (at t1 hq) (at v1 s1) (at c1 hq) (at c2 s1) (open s2) (open hq) (sealed c2))
  (:goal (and (at c1 s2) (not (at c1 hq)))))
"""
TYPED_PLANS = {
    "valid": ["(load c1 t1 hq)", "(move t1 hq s2)", "(unload c1 t1 s2)"],
    "van can load": ["(move v1 s1 hq)", "(load c1 v1 hq)", "(move v1 hq s2)", "(unload c1 v1 s2)"],
    "equality violated": ["(load c1 t1 hq)", "(move t1 hq hq)", "(move t1 hq s2)", "(unload c1 t1 s2)"],
    "negative precondition": ["(seal-at-hq c1)", "(load c1 t1 hq)", "(move t1 hq s2)", "(unload c1 t1 s2)"],
    "wrong type": ["(load c1 c2 hq)"],
    "crate is no vehicle": ["(move c1 hq s2)"],
    "= holds": ["(inspect c1 c1)", "(load c1 t1 hq)"],
    "= fails": ["(inspect c1 c2)", "(load c1 t1 hq)", "(move t1 hq s2)", "(unload c1 t1 s2)"],
    "goal unmet": ["(load c1 t1 hq)", "(move t1 hq s2)"],
}


def test_typed_domain_with_either_hierarchy_constants_equality_and_negation(tmp_path: Path) -> None:
    (tmp_path / "domain.pddl").write_text(TYPED_DOMAIN)
    (tmp_path / "p01.pddl").write_text(TYPED_PROBLEM)  # problems in the folder itself, IPC style
    domain = load_planning_domain(tmp_path)
    assert domain.prompt_style == "pddl"  # no templates: PDDL prompts
    (inst,) = domain.load(None)
    task = domain.task(inst)
    verdicts = {k: check_plan(task, steps_of(p)).valid for k, p in TYPED_PLANS.items()}
    # unified-planning's reader has no `either` in parameters; truck and van are all the vehicles there are.
    up_domain = TYPED_DOMAIN.replace("(either truck van)", "vehicle")
    assert verdicts == {k: up_valid(up_domain, TYPED_PROBLEM, p) for k, p in TYPED_PLANS.items()}
    assert verdicts["valid"] and verdicts["van can load"] and not verdicts["equality violated"]
    feedback = domain.feedback(inst, domain.verify(inst, "\n".join(TYPED_PLANS["equality violated"])), "first")
    assert "step 2" in feedback and "it is not the case that (= hq hq)" in feedback


@pytest.mark.parametrize(
    ("construct", "requirement"),
    [
        ("(when (open ?to) (sealed ?to))", ":conditional-effects"),
        ("(increase (fuel ?v) 1)", ":numeric-fluents"),
        ("(forall (?c - crate) (not (sealed ?c)))", ":conditional-effects"),
    ],
)
def test_unsupported_requirement_is_named_not_judged(tmp_path: Path, construct: str, requirement: str) -> None:
    text = TYPED_DOMAIN.replace("(and (at ?v ?to) (not (at ?v ?from)))", f"(and (at ?v ?to) {construct})")
    (tmp_path / "domain.pddl").write_text(text)
    with pytest.raises(PlanningError, match=requirement):
        load_planning_domain(tmp_path)


def test_action_costs_are_ignored_and_nl_prompts_say_which_file_enables_them(tmp_path: Path) -> None:
    text = TYPED_DOMAIN.replace("(:predicates", "(:functions (total-cost) - number)\n  (:predicates").replace(
        "(and (at ?v ?to) (not (at ?v ?from)))", "(and (at ?v ?to) (not (at ?v ?from)) (increase (total-cost) 2))"
    )
    (tmp_path / "domain.pddl").write_text(text)
    (tmp_path / "instances").mkdir()
    (tmp_path / "instances" / "instance-1.pddl").write_text(
        TYPED_PROBLEM.replace("(:init", "(:init (= (total-cost) 0)")
    )
    domain = load_planning_domain(tmp_path)
    (inst,) = domain.load("1")
    assert domain.verify(inst, "\n".join(TYPED_PLANS["valid"])).valid
    with pytest.raises(PlanningError, match=r"config\.yaml or an AutoPlanBench domain_description\*\.json"):
        load_planning_domain(tmp_path, "nl")


def test_sound_first_with_pddl_prompts_runs_on_every_autoplanbench_domain(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    for name in DOMAINS:
        domain = get_domain(str(AUTOPLANBENCH / name), prompt_style="pddl")
        inst = load_instances(domain, "1")[0]
        gold = read_plan_file(AUTOPLANBENCH / name / "orig_gold_plans" / "instance-1_gold_plan.txt")
        first, second = "\n".join(gold[:-1]) + "\n[PLAN END]", "\n".join(gold) + "\n[PLAN END]"
        scripted_server.reply = [("The above plan is invalid", second), ("[PROBLEM]", first)]
        out = execute_run(tmp_path / "store.sqlite", "t", domain, inst, "sound-first", 0, scripted_llm)
        assert (out.status, out.correct, out.rounds) == ("done", True, 2), name
        prompt = scripted_server.calls[-2][0][-1]["content"]
        assert prompt.startswith("The domain definition:\n(define") and "The plan without formatting:\n(" in prompt
        assert "The above plan is invalid." in scripted_server.calls[-1][0][-1]["content"]
