"""`domains.replayed.Replayed`: a live domain asked the recorded generation prompts of some instances, with the
inner domain's capabilities exactly and nothing of it patched (issue 40 item 1: the replay path's wrapper)."""

from __future__ import annotations

import copy
import typing

import pytest

from critiquebench.domains import BUILTIN, get_domain, load_instances
from critiquebench.domains.replayed import CAPABILITIES, Replayed, members, unwrapped
from tests.test_study_cli import DATASETS

SENT = [{"role": "user", "content": "Use 1 1 4 6 to make 24, as someone else asked."}]
GRIPPER = str(DATASETS / "autoplanbench" / "gripper")


@pytest.mark.parametrize("name", [*BUILTIN, GRIPPER])
def test_the_wrapper_has_the_inner_domains_capabilities_and_changes_only_the_prompt(name: str) -> None:
    inner = get_domain(name)
    spec = BUILTIN.get(name)
    generated = spec is not None and spec.generated
    selection = "1,2" if name == "coloring" else "2,3"
    dataset = None if name == GRIPPER else DATASETS
    first, second = inner.generate(2, 1) if generated else load_instances(inner, selection, dataset)
    domain = get_domain(name, recorded_prompts={first.id: SENT})
    assert isinstance(domain, Replayed) and unwrapped(domain).name == inner.name == domain.name
    assert [c.__name__ for c in CAPABILITIES if isinstance(domain, c)] == [
        c.__name__ for c in CAPABILITIES if isinstance(inner, c)
    ]
    assert domain.prompt(first) == SENT  # what was sent, for the instance recorded with it
    assert domain.prompt(second) == inner.prompt(second)  # the live prompt for the others
    assert domain.prompt(first, shots=0) == inner.prompt(first, shots=0)  # and for any other style or shots
    assert "prompt" not in vars(unwrapped(domain))  # nothing patched: the inner domain is as its class made it
    verdict, canonical = domain.assess(first, "no answer")
    assert (verdict, canonical) == inner.assess(first, "no answer")
    assert copy.copy(domain).prompt(first) == SENT


def test_the_stop_sequences_and_the_recorded_prompts_go_together() -> None:
    domain = get_domain("game24", stop=["[ANSWER END]"], recorded_prompts={"901": SENT})
    assert domain.call_options == {"stop": ("[ANSWER END]",)} and domain.prompt(
        load_instances(domain, "901", DATASETS)[0]
    ) == SENT


def test_members_are_each_capability_protocols_own() -> None:
    for capability in CAPABILITIES:
        declared = getattr(capability, "__protocol_attrs__", None) or typing._get_protocol_attrs(capability)  # type: ignore[attr-defined]  # noqa: E501
        assert set(members(capability)) == set(declared), capability.__name__



def test_a_replayed_planbench_run_holds_a_live_planning_domain() -> None:
    """The PlanBench replay is a wrapper too: the live domain keeps no hook for it and is never subclassed."""
    from critiquebench.domains.planning import PlanningDomain, ReplayedPlanning, load_planning_domain
    from critiquebench.domains.replayed import Wrapper

    live = load_planning_domain("mystery_blocksworld")
    replayed = load_planning_domain("mystery_blocksworld", reading="planbench-whole", newline=True)
    assert isinstance(replayed, ReplayedPlanning) and isinstance(replayed, Wrapper)
    assert not isinstance(replayed, PlanningDomain) and type(unwrapped(replayed)) is PlanningDomain
    assert [c for c in CAPABILITIES if isinstance(replayed, c)] == [c for c in CAPABILITIES if isinstance(live, c)]
    hooks = ("example_of", "known_plan", "sent", "newline", "_own_feedback")
    assert not [h for h in hooks if hasattr(PlanningDomain, h)]
    (instance,) = load_instances(live, "2", DATASETS)
    ours, theirs = live.prompt(instance)[-1]["content"], replayed.prompt(instance)[-1]["content"]
    assert theirs == ours + "\n"  # PlanBench's older pipeline's trailing newline: the replay's alone
    assert replayed.purposes == live.purposes and replayed.candidate_kinds == live.candidate_kinds
