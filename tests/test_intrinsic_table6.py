"""Table 6 of the intrinsic self-critique paper (001:270-279): self-critique with "the self-critique templates from
stechly2024selfverification" (001:274), "Formatted" and "CoT+Formatted", after natural-language and PDDL prompts.

001 does not reprint those templates: they are paper 000's format-based and chain-of-thought JSON verification
prompts (000 A.5.2: 000:2220, 000:2328). The expected instructions are cut from 000's text
(`tests.test_paper_000_002_planning.instruction`), the natural-language frame is PlanBench's, built independently of
our modules (`tests.test_planning_verification_prompts.zero_shot`), and nothing is read from our prompt files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from critiquebench.domains import get_domain, load_instances
from critiquebench.llm.client import LLMClient
from critiquebench.store.db import connect
from critiquebench.store.results import attempts
from critiquebench.studies.execute import execute_run
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer
from tests.test_intrinsic import paper as paper_001
from tests.test_paper_000_002_planning import instruction
from tests.test_planning_verification_prompts import PLANBENCH, SYSTEM, action_text, zero_shot

NO = '[THOUGHTS]\nStep 1 fails.\n[JSON]\n{"unmet_preconditions": {"action": "(pick-up a)", "preconditions": ' \
     '["(clear a)"]}, "valid": false}\n[JSON_END]'  # fmt: skip
YES = '[JSON]\n{"valid": true}\n[JSON_END]'
VERIFY = "Verify whether the above plan is valid."
FORMS = {"formatted": "format", "cot-formatted": "cot"}  # Table 6's row -> 000's prompt (000:2220, 000:2328)


def test_table_6_names_the_self_verification_papers_templates() -> None:
    assert "self-critique templates from stechly2024selfverification" in paper_001(274)
    assert [paper_001(n).split(" ")[-3] for n in (276, 277, 278, 279)] == [
        "Formatted", "CoT+Formatted", "Formatted", "CoT+Formatted"]  # fmt: skip


class Script:
    """Planner calls get a wrong plan first, then the gold one; critic calls (they hold 000's instruction) get
    `verdicts` in turn."""

    def __init__(self, wrong: str, right: str, verdicts: list[str]) -> None:
        self.wrong, self.right, self.verdicts = wrong, right, verdicts
        self.plans: list[list[dict[str, Any]]] = []
        self.critiques: list[list[dict[str, Any]]] = []

    def __call__(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        if VERIFY in messages[-1]["content"]:
            self.critiques.append(messages)
            return self.verdicts[len(self.critiques) - 1]
        self.plans.append(messages)
        return self.wrong if len(self.plans) == 1 else self.right


@pytest.mark.parametrize("domain_style", ["pddl", None])
@pytest.mark.parametrize("which", list(FORMS))
def test_pddl_prompts_with_table_6_templates(tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient,
                                             which: str, domain_style: str | None) -> None:  # fmt: skip
    """Table 6's PDDL rows: the critic's frame follows the planner's PDDL prompt, also on PlanBench's Blocksworld,
    whose own default style is English (`domain_style` None): no system message, no English plan (issue 32)."""
    domain = get_domain("blocksworld", prompt_style=domain_style)
    inst = load_instances(domain, "20", DATASETS)[0]
    gold = domain.answer_text(domain.reference_plan(inst), "pddl")
    script = Script("(pick-up a)\n", gold, [NO, YES])
    scripted_server.reply = script
    out = execute_run(tmp_path / "s.sqlite", "t", domain, inst, f"intrinsic:steps=2,instructions={which}", 0,
                      scripted_llm)  # fmt: skip
    rows = attempts(connect(tmp_path / "s.sqlite"), out.thread_id)
    assert [r["llm_verdict"] for r in rows] == [0, 1] and out.correct  # read by the JSON's "valid" key
    first, second = (c[-1]["content"] for c in script.critiques)
    said = first[first.index(VERIFY):]
    assert " ".join(said.split()) == instruction(FORMS[which], "blocksworld")
    # our frame (001 prints none for PDDL): the domain, the problem and the plan as the critic sees it
    assert first.startswith("Given the domain definition:\n") and inst.data["problem"].strip() in first
    assert "The suggested solution:\n(pick-up a)\n\n" + VERIFY in first
    assert all(len(c) == 1 and c[0]["role"] == "user" for c in script.critiques)  # 000's system message is NL's
    # the critique goes back in the paper's Revise-Prompt (D.1 001:420, 600): plan, critique, request
    assert script.plans[1][-1]["content"].endswith(
        f"\nThe clean plan:\n(pick-up a)\n{NO}\n\nPlease can you explain the error and fix it.")
    assert second.endswith(said)


def test_natural_language_prompts_with_table_6_templates(tmp_path: Path, scripted_server: ScriptedServer,
                                                         scripted_llm: LLMClient) -> None:  # fmt: skip
    """Table 6's "Natural Language" rows: PlanBench's 1-shot prompt (valmeekam2023planning) and 000's templates in
    000's frame (PlanBench's verification prompt and system message, 000:2131-2220)."""
    domain = get_domain("blocksworld", prompt_style="nl")
    inst = load_instances(domain, "20", DATASETS)[0]
    config = yaml.safe_load((PLANBENCH / "blocksworld" / "config.yaml").read_text())
    pddl = (PLANBENCH / "blocksworld" / "instances" / "instance-20.pddl").read_text()
    gold = domain.answer_text(domain.reference_plan(inst))
    for which, form in FORMS.items():
        script = Script(gold, gold, [YES])
        scripted_server.reply = script
        out = execute_run(tmp_path / f"{which}.sqlite", "t", domain, inst,
                          f"intrinsic:steps=0,style=nl,shots=1,instructions={which}", 0, scripted_llm)  # fmt: skip
        assert out.correct
        (system, user) = script.critiques[0]
        frame = zero_shot(config, pddl, domain.parse(inst, gold)).split("[PLAN END]\n\n")[0] + "[PLAN END]\n\n"
        assert system == {"role": "system", "content": SYSTEM} and user["content"].startswith(frame)
        assert " ".join(user["content"][len(frame):].split()) == instruction(form, "blocksworld")


@pytest.mark.parametrize("which", list(FORMS))
def test_natural_language_rows_revise_in_the_english_prompts_names(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient, which: str
) -> None:
    """Table 6's NL rows over a wrong plan and its critique: the critic gets 000's English frame at every step, and
    the Revise-Prompt (D.1's words, 001:420, 600) writes the plan as PlanBench's English names it after the
    prompt's "[PLAN]", never the PDDL names ("(pick-up a)") the English prompt does not show (issue 32)."""
    domain = get_domain("blocksworld", prompt_style="pddl")  # the planner's style decides, not the domain's
    inst = load_instances(domain, "20", DATASETS)[0]
    config = yaml.safe_load((PLANBENCH / "blocksworld" / "config.yaml").read_text())
    wrong = action_text(config, "(pick-up a)")
    gold = domain.answer_text(domain.reference_plan(inst))
    script = Script(wrong + "\n", gold, [NO, YES])
    scripted_server.reply = script
    out = execute_run(tmp_path / "s.sqlite", "t", domain, inst,
                      f"intrinsic:steps=2,style=nl,shots=1,instructions={which}", 0, scripted_llm)  # fmt: skip
    assert out.correct and len(script.plans) == 2 and len(script.critiques) == 2
    for system, user in script.critiques:
        assert system == {"role": "system", "content": SYSTEM} and "[PLAN]\n" in user["content"]
    first_critique = script.critiques[0][1]["content"]
    assert f"[PLAN]\n{wrong}\n[PLAN END]" in first_critique and "(pick-up" not in first_critique
    revised = script.plans[1][-1]["content"]
    assert revised.startswith(script.plans[0][-1]["content"]) and script.plans[0][-1]["content"].endswith("[PLAN]")
    assert revised.endswith(f"\nThe clean plan:\n{wrong}\n{NO}\n\nPlease can you explain the error and fix it.")
    assert "(pick-up" not in revised.replace(NO, "")  # the critique's own JSON may quote PDDL; nothing else does


def test_exemplars_are_refused_with_table_6_templates() -> None:
    from critiquebench.graphs import build_graph

    with pytest.raises(ValueError, match="without exemplars"):
        build_graph("intrinsic:instructions=formatted,critique_shots=8")
