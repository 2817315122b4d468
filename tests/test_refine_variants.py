"""refine's prompt variants (004:45-49) on the scripted server: the study's other system prompts (or none) and its
chain-of-thought line, each request built from the study's own texts (Singh8899/LLM-Planning-Leonardo @315ac15,
`llama_planning_framework/prompts.py`; the system prompts' values in tests/data/refinement/prompts_py/, see its
SOURCE.md), on the study's own Blocksworld folder and its Llama run on pddl_4_20 (two rounds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.llm.client import LLMClient
from critiquebench.studies.execute import execute_run
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer
from tests.test_refine_scheme import scripted
from tests.test_refinement_import import FOLDER, OUTPUTS, SYSTEM, study_prompt

TEXTS = Path(__file__).resolve().parent / "data" / "refinement" / "prompts_py"
SYSTEMS = ("system_prompt", "system_prompt_pddl", "system_prompt_pddl_updated", "system_prompt_pddl_predicates",
           "system_prompt_pddl_predicates_complex")  # fmt: skip


def study_system(name: str) -> str:
    return (TEXTS / f"{name}.txt").read_text(encoding="utf-8")


def cot_prompt(prompt: str) -> str:
    """prompts.py:1-3 @315ac15, as the code applies it after `ppdl_problem_prompt` (pddl_processor.py:49-52)."""
    return f"""{prompt}
Let's reason step by step to identify the correct sequence of actions to solve the problem."""


def test_the_fixture_holds_the_text_the_study_s_code_sends() -> None:
    # model_manager.py:226-227 sends `system_prompt_pddl`; the importer's test restates it from prompts.py:54-61
    assert study_system("system_prompt_pddl") == SYSTEM
    assert "(:requirements \n" in study_system("system_prompt_pddl_predicates")  # its trailing spaces kept


@pytest.mark.parametrize("cot", [False, True])
@pytest.mark.parametrize("system", [*SYSTEMS, "none"])
def test_each_variant_sends_the_study_s_texts_in_every_round(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient, system: str, cot: bool
) -> None:
    domain = get_domain(str(FOLDER))
    (instance,) = load_instances(domain, "pddl_4_20", FOLDER)
    replies = OUTPUTS / "model_outputs_llama_blocksword" / "blocksworld"
    answers = [(replies / f"pddl_4_20_temp{i}.txt").read_text() for i in range(2)]  # rejected, then accepted
    scripted_server.reply = scripted(answers)
    given = [f"system={system}"] * (system != "system_prompt_pddl") + ["cot=true"] * cot
    spec = "refine" + (":" + ",".join(given) if given else "")
    out = execute_run(tmp_path / "s.sqlite", "variants", domain, instance, spec, 0, scripted_llm)
    assert (out.status, out.rounds, out.correct) == ("done", 2, True)

    # the study's prompt on the files as its read_file gives them (pddl_processor.py:42-52), then its system
    # prompt, or none (add_system_prompt=False; model_manager.py:226-228)
    user = study_prompt((FOLDER / "blocksworld_domain.pddl").read_text(), (FOLDER / "pddl_4_20.pddl").read_text())
    user = cot_prompt(user) if cot else user
    head = [] if system == "none" else [{"role": "system", "content": study_system(system)}]
    first = [*head, {"role": "user", "content": user}]
    (sent1, params1), (sent2, _) = scripted_server.calls
    assert sent1 == first
    # round 2 keeps the variant's messages under the conversation (model_manager.py:291, 316-317)
    assert sent2[: len(first)] == first and sent2[len(first)] == {"role": "assistant", "content": answers[0]}
    assert sent2[-1]["content"].startswith("The plan you provided is invalid. ") and len(sent2) == len(first) + 2
    assert params1.get("max_tokens") == 5000


def test_a_variant_of_another_style_s_prompt_fails_its_run_in_one_line(
    tmp_path: Path, scripted_server: ScriptedServer, scripted_llm: LLMClient
) -> None:
    """The variants swap the refinement paper's own system prompt: PlanBench's prompt (style=nl) has none of it,
    so the run fails with one line naming why, and nothing is sent."""
    domain = get_domain("blocksworld")
    (instance,) = load_instances(domain, "2", DATASETS / "planbench" / "blocksworld")
    out = execute_run(tmp_path / "s.sqlite", "bad", domain, instance, "refine:style=nl,cot=true", 0, scripted_llm)
    assert out.status == "failed" and "style=refine" in (out.error or "") and "\n" not in (out.error or "")
    assert scripted_server.calls == []
