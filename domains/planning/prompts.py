"""Generation and verification prompts for planning domains.

Styles (`PROMPT_STYLES`):

- ``nl``: PlanBench's one-shot natural-language prompt, byte-identical to the prompts of its backprompting
  runs: ``domain_intro``, then the example ``[STATEMENT]`` with its ``[PLAN]...[PLAN END]``, then the
  problem's ``[STATEMENT]`` ending in ``[PLAN]``.
- ``nl_legacy``: as PlanBench's published GPT-4 one-shot results: the config's ``domain_intro_legacy`` (the
  Blocksworld intro without its last line) when present, and a newline after the final ``[PLAN]``.
- ``pddl``: the intrinsic self-critique paper's many-shot PDDL planner prompt B.1 (001:249; `planner` and
  `planner-example` in domains/prompts/intrinsic_self_critique.toml), laid out as its traces D.1/E.1 show it: "The
  domain definition:", the domain, solved example problems ("Example of a problem and its solution (plan):" ...
  "The plan without formatting:" and the plan as PDDL action lines), then the problem and the paper's two
  instruction lines, ending "Your plan as plain text without formatting:". No system message (the paper shows
  none). Answers are PDDL action lines.
- ``refine``: the zero-shot PDDL prompt of the refinement paper (Merola et al., from the study's code): its
  system prompt, then the full domain and problem PDDL with the "Can you BUILD A PLAN?" request
  (domains/prompts/validator_refinement.toml, `refine_messages`). Answers are PDDL action lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from critiquebench.domains.contract import PROMPT_STYLES as PROMPT_STYLES
from critiquebench.domains.planning.strips import PlanningError, Task
from critiquebench.domains.planning.templates import NLConfig
from critiquebench.domains.prompts import DEFAULT, Prompts, PromptSet

Step = tuple[str, tuple[str, ...]]

# The texts live in the prompt sets (domains/prompts/): PlanBench's in planbench.toml, the intrinsic
# self-critique planner's in intrinsic_self_critique.toml, the refinement paper's in validator_refinement.toml.
PLANBENCH, INTRINSIC, REFINE = "planbench", "intrinsic_self_critique", "validator_refinement"
SYSTEM_PROMPT = DEFAULT[PLANBENCH].text("system")  # the built-in texts, for readers of this module
REFINE_SYSTEM = DEFAULT[REFINE].text("system")

SELF_VERIFICATION, SELF_CRITIQUE = "self_verification", "plan_self_critique"
# Which verification instruction goes after the plan (`verification_prompt`'s `form`), and its prompt set:
# PlanBench's open-ended one (the llm-llm critic, 000 A.5.4), the self-verification paper's format-based JSON,
# chain-of-thought and swapped-order ones (000 A.5.2/A.5.6), and the plan self-critique study's 2023 code's.
FORMS = {
    "open": (PLANBENCH, ""),
    "format": (SELF_VERIFICATION, "planning.verify.format"),
    "cot": (SELF_VERIFICATION, "planning.verify.cot"),
    "swap": (SELF_VERIFICATION, "planning.verify.swap"),
    "val_form": (SELF_CRITIQUE, "planning.verify.val-form"),
    # the intrinsic self-critique paper's Table 6 critic: 000's templates, kept in 001's prompt file (001:274)
    "formatted": ("intrinsic_self_critique", "critic-formatted"),
    "cot-formatted": ("intrinsic_self_critique", "critic-cot-formatted"),
}
# PDDL prompts have no chain-of-thought verification prompt in any source.
NO_COT_VERIFICATION = (
    "no published chain-of-thought verification prompt for plans in PDDL; use a natural-language prompt style "
    "(nl), or the default verification prompt"
)


def plan_text(cfg: NLConfig, steps: Sequence[Step]) -> str:
    """The English plan lines, one action per line, each followed by a newline."""
    return "".join(cfg.action_text(name, args) + "\n" for name, args in steps)


def pddl_plan_text(steps: Sequence[Step]) -> str:
    return "\n".join("(" + " ".join((name, *args)) + ")" for name, args in steps)


def statement(cfg: NLConfig, task: Task, plan: Sequence[Step] | None, tail: str = "",
              prompts: Prompts = DEFAULT) -> str:  # fmt: skip
    """PlanBench's `fill_template` for one problem: with its plan (an example), or open after `[PLAN]`."""
    texts = prompts[PLANBENCH]
    body = texts.render("plan-block", steps=plan_text(cfg, plan)) if plan is not None else tail
    return fill_template(cfg, cfg.prompt_facts(task.init), cfg.prompt_facts(task.stated_goal), body, texts)


def fill_template(cfg: NLConfig, init: str, goal: str, plan: str, texts: PromptSet | None = None) -> str:
    """PlanBench's `fill_template` (its `statement` template) on fact texts, `plan` after ``[PLAN]``."""
    texts = DEFAULT[PLANBENCH] if texts is None else texts
    text = texts.render("statement", init=init.strip(), goal=goal, plan=plan)
    if "blocksworld" in cfg.domain_name:
        # PlanBench's own post-processing for (mystery) blocksworld, reproduced for byte-identity.
        text = text.replace("-", " ").replace("ontable", "on the table")
    return text


def nl_prompt(
    cfg: NLConfig,
    task: Task,
    examples: Sequence[tuple[Task, Sequence[Step]]],
    legacy: bool = False,
    intro: str | None = None,
    prompts: Prompts = DEFAULT,
) -> str:
    """`intro` replaces the config's intro (e.g. its `domain_intro_zero_shot`, see `PlanningDomain.intro`)."""
    if intro is None:
        intro = (cfg.domain_intro_legacy or cfg.domain_intro) if legacy else cfg.domain_intro
    shots = "".join(statement(cfg, ex_task, ex_plan, prompts=prompts) for ex_task, ex_plan in examples)
    return intro + shots + statement(cfg, task, None, tail="\n" if legacy else "", prompts=prompts)


def pddl_prompt(domain_pddl: str, problem_pddl: str, examples: Sequence[tuple[str, Sequence[Step]]],
                prompts: Prompts = DEFAULT) -> str:  # fmt: skip
    texts = prompts[INTRINSIC]
    shots = "".join(
        texts.render("planner-example", problem=text.strip(), plan=pddl_plan_text(plan)) for text, plan in examples
    )
    return texts.render("planner", domain=strip_comments(domain_pddl), examples=shots, problem=problem_pddl.strip())


def refine_messages(domain_pddl: str, problem_pddl: str, prompts: Prompts = DEFAULT, as_read: bool = False
                    ) -> list[dict[str, str]]:  # fmt: skip
    """The refinement paper's chat: its system prompt, then the domain and problem in its frame (zero-shot).

    `as_read`: the files' texts exactly as read, as the study's code sends them (`ppdl_problem_prompt(domain_text,
    problem_text)` on `read_file`'s texts: comment lines and the final newline kept); else tidied (comment lines
    out, outer blank space trimmed), for the shipped domains, whose comments are our notes."""
    texts = prompts[REFINE]
    domain, problem = (domain_pddl, problem_pddl) if as_read else (strip_comments(domain_pddl), problem_pddl.strip())
    user = texts.render("user", description=texts.text("description"), domain=domain, problem=problem)
    return [{"role": "system", "content": texts.text("system")}, {"role": "user", "content": user}]


# refine's `system` choices: the refinement study's system prompts by their names in its prompts.py @315ac15 (the
# first the one its code sends, `[system]`; the others `[systems.NAME]`), and "none" (its add_system_prompt=False).
REFINE_SYSTEMS = ("system_prompt_pddl", "system_prompt", "system_prompt_pddl_updated", "system_prompt_pddl_predicates",
                  "system_prompt_pddl_predicates_complex", "none")  # fmt: skip


def refine_variant(messages: list[dict[str, str]], prompts: Prompts = DEFAULT, system: str = REFINE_SYSTEMS[0],
                   cot: bool = False) -> list[dict[str, str]]:  # fmt: skip
    """The refinement paper's chat (`refine_messages`) as one of its study's prompt variants (004:45-49): another
    of its system prompts (or none), and with `cot` its `cot_prompt` line after the user prompt, as its --cot
    (pddl_processor.py:49-52). The default variant is `messages` as they are. A PlanningError when `messages` are
    not the refinement paper's chat (another style, another domain), whose system prompt there is none to swap."""
    if system == REFINE_SYSTEMS[0] and not cot:
        return messages
    texts = prompts[REFINE]
    framed = [m.get("role") for m in messages] == ["system", "user"] and messages[0]["content"] == texts.text("system")
    if not framed:
        raise PlanningError("refine's system and cot variants change the refinement paper's own prompt (a planning "
                            "domain with style=refine), which this run does not send")  # fmt: skip
    user = texts.render("cot", prompt=messages[1]["content"]) if cot else messages[1]["content"]
    key = "system" if system == REFINE_SYSTEMS[0] else f"systems.{system}"
    head = [] if system == "none" else [{"role": "system", "content": texts.text(key)}]
    return [*head, {"role": "user", "content": user}]


def strip_comments(pddl: str) -> str:
    """PDDL without its comment lines (our shipped files document themselves; the model needs no notes)."""
    return "\n".join(ln for ln in pddl.strip().splitlines() if not ln.lstrip().startswith(";")).strip()


def verification_prompt(cfg: NLConfig, task: Task, plan_block: str, prompts: Prompts = DEFAULT,
                        form: str = "open") -> str:  # fmt: skip
    """A zero-shot plan-verification prompt for `plan_block`: PlanBench's frame (the domain intro, the problem,
    the plan) and the instruction of `form` (`FORMS`).

    `plan_block` is the text after ``[PLAN]``: normally "\\n" + English plan lines + "[PLAN END]\\n".
    """
    fields = dict(intro=cfg.domain_intro, init=cfg.state_facts(task.init).strip(), goal=cfg.state_facts(task.goal),
                  plan=plan_block)  # fmt: skip
    if form == "open":
        return prompts[PLANBENCH].render("verify", **fields)
    source, key = FORMS[form]
    return prompts[SELF_VERIFICATION].render("planning.verify.frame", **fields,
                                             instruction=prompts[source].text(key))  # fmt: skip


def messages(prompt: str, prompts: Prompts = DEFAULT, system: str | None = None) -> list[dict[str, str]]:
    """The chat of a planning prompt: PlanBench's system message (or `system`), then the prompt."""
    system = prompts[PLANBENCH].text("system") if system is None else system
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
