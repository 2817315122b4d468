"""The other prompts PlanBench sent for plan generation: zero-shot English, one- and zero-shot PDDL, and
state-tracking, as its code builds them (karthikv792/LLMs-Planning, `llm_planning_analysis/prompt_generation.py`
and `utils/pddl_to_text.py`, `utils/task_utils.py`), so recorded runs of each replay byte for byte.

- ``nl_zero_shot``: `task_1_plan_generation_zero_shot` (:210-262): the intro (its `domain_intro_zero_shot` when
  the config has one), the problem's statement and the instruction `fill_template(..., instruction=True)` adds;
- ``pddl_planbench``: `task_1_plan_generation_pddl` (:330-406): a header, the domain file, the example problem and
  its plan, the query problem;
- ``pddl_zero_shot``: `task_1_plan_generation_zero_shot_pddl` (:408-470): a header, the domain file, the problem
  file re-wrapped, `[PLAN]`;
- ``pddl_zero_shot_2023``: the same function at commit fbc6449: its first header, the domain and problem files;
- ``state_tracking``: `task_1_plan_generation_state_tracking` (:264-328) with `generate_plan_cot`: the
  state-tracking intro, the example's plan with every state, the problem's statement.

The texts themselves are PlanBench's, in domains/prompts/planbench.toml with their sources. A run of
PlanBench's older GPT-4 pipeline sent one more newline at the end of every prompt (`newline`), as `nl_legacy`
does for the one-shot English prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from critiquebench.domains.planning.prompts import PLANBENCH
from critiquebench.domains.planning.strips import Fact, Task
from critiquebench.domains.planning.templates import NLConfig
from critiquebench.domains.prompts import DEFAULT, PromptSet

Step = tuple[str, tuple[str, ...]]

# The texts are PlanBench's, kept with their sources in domains/prompts/planbench.toml (`generate.*`); the
# builders fill the domain's set (`texts`, a user's file over the built-in one). The built-in headers below are
# what the importer recognises PlanBench's recorded queries by.
_TEXTS = DEFAULT[PLANBENCH]
ZERO_SHOT_INSTRUCTION = _TEXTS.text("generate.zero-shot-instruction")
PDDL_ONE_SHOT_HEADER = _TEXTS.text("generate.pddl-one-shot-header")
PDDL_ZERO_SHOT_HEADER = _TEXTS.text("generate.pddl-zero-shot-header")
PDDL_ZERO_SHOT_HEADER_2023 = _TEXTS.text("generate.pddl-zero-shot-header-2023")

# The styles this module builds (rows of `styles.STYLES`, whose `planbench` column says the same).
PLANBENCH_STYLES = ("nl_zero_shot", "pddl_planbench", "pddl_zero_shot", "pddl_zero_shot_2023", "state_tracking")
PDDL_ANSWER_STYLES = ("pddl_planbench", "pddl_zero_shot", "pddl_zero_shot_2023")


def _blocksworld_text(cfg: NLConfig, text: str) -> str:
    # PlanBench's own post-processing of (mystery) Blocksworld statements (pddl_to_text.py:74-75)
    return text.replace("-", " ").replace("ontable", "on the table") if "blocksworld" in cfg.domain_name else text


def zero_shot_nl(cfg: NLConfig, task: Task, intro: str, newline: bool = False, texts: PromptSet = _TEXTS) -> str:
    instruction = texts.text("generate.zero-shot-instruction")
    statement = texts.render("generate.zero-shot-statement", init=cfg.prompt_facts(task.init).strip(),
                             goal=cfg.prompt_facts(task.stated_goal), instruction=instruction)  # fmt: skip
    return intro + _blocksworld_text(cfg, statement) + ("\n" if newline else "")


def pddl_one_shot(domain: str, example: str, example_plan: Sequence[str], problem: str, newline: bool = False,
                  texts: PromptSet = _TEXTS) -> str:  # fmt: skip
    text = texts.text("generate.pddl-one-shot-header") + texts.render("generate.pddl-domain", domain=domain.strip())
    text += texts.render("generate.pddl-example", problem=example.strip(), plan="\n".join(example_plan).strip())
    text += texts.render("generate.pddl-query", problem=problem.strip())
    return text + ("\n" if newline else "")


def pddl_zero_shot(domain: str, problem: str, texts: PromptSet = _TEXTS) -> str:
    # PlanBench re-wraps the problem: everything after the first "(define" but the file's last character
    # (prompt_generation.py:449)
    parts = problem.split("(define")
    body = "(define" + parts[1][:-1].strip() + "\n)" if len(parts) > 1 else problem
    head = texts.text("generate.pddl-zero-shot-header") + texts.render("generate.pddl-domain", domain=domain.strip())
    return head + texts.render("generate.pddl-zero-shot-query", problem=body.strip())


def pddl_zero_shot_2023(domain: str, problem: str, newline: bool = False, texts: PromptSet = _TEXTS) -> str:
    text = texts.text("generate.pddl-zero-shot-header-2023")
    text += texts.render("generate.pddl-domain", domain=domain.strip())
    text += texts.render("generate.pddl-query", problem=problem.strip())
    return text + ("\n" if newline else "")


def state_text(cfg: NLConfig, facts: Sequence[Fact] | frozenset[Fact]) -> str:
    """`get_state_translation`: facts sorted as executor strings ("on_a_b"), "a, b and c"."""
    texts = [t for t in (cfg.fact_text(f) for f in sorted(facts, key=lambda f: "_".join(f))) if t is not None]
    if len(texts) > 1:
        return ", ".join(texts[:-1]) + f" and {texts[-1]}"
    return texts[0] if texts else ""


def state_tracking(cfg: NLConfig, intro: str, example: Task, plan: Sequence[Step], task: Task,
                   texts: PromptSet = _TEXTS) -> str:  # fmt: skip
    """`task_1_plan_generation_state_tracking` with one example (`generate_plan_cot` for both problems)."""
    text = intro
    state = example.init
    steps = ""
    for n, (name, args) in enumerate(plan, start=1):
        action = example.ground_any(name, args)
        after = action.apply(state)
        steps += texts.render(
            "generate.state-tracking-step", n=n, state=state_text(cfg, state), action=cfg.action_text(name, args),
            pre=state_text(cfg, action.pre), after=state_text(cfg, after),
        )
        state = after
    steps += texts.render("generate.state-tracking-end", state=state_text(cfg, state))
    for problem, block in ((example, "[PLAN]" + steps), (task, "[PLAN]")):
        text += texts.render("generate.state-tracking-statement", init=state_text(cfg, problem.init).strip(),
                             goal=state_text(cfg, problem.goal), plan=block)  # fmt: skip
    return text
