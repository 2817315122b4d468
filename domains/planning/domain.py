"""`PlanningDomain`: the `Domain` protocol for any STRIPS domain folder (domain.pddl + config.yaml).

Problems are parsed once per problem text and memoised (instances are verified many times), together with
their answer reader and, on demand, a planner plan for examples and candidates. Live planning only: a recorded
PlanBench run replays through `replay.ReplayedPlanning`; each prompt style is a row of `styles.STYLES`.
"""

from __future__ import annotations

import logging
import random
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from critiquebench.domains.backprompt import Backprompt
from critiquebench.domains.contract import (
    FeedbackLevel,
    Instance,
    Judgement,
    LLMVerdict,
    Messages,
    Unsupported,
    Verdict,
)
from critiquebench.domains.memo import ObjectMemo
from critiquebench.domains.planning import prompts as plan_prompts
from critiquebench.domains.planning.candidates import CANDIDATE_KINDS, make_candidate
from critiquebench.domains.planning.critique import FORMATTED, critic_prompt, make_examples, parse_critic_verdict
from critiquebench.domains.planning.generators import GENERATORS, generate_problems, set_size, training_problems
from critiquebench.domains.planning.instances import (
    TRAIN_POOL,
    domain_file,
    generated_instances,
    load_instances,
    problem_folder,
    training_pool,
)
from critiquebench.domains.planning.parser import ActionReader, ParsedPlan
from critiquebench.domains.planning.pddl_io import shared_domain_model, shared_task
from critiquebench.domains.planning.planner import find_plan, optimal_plan
from critiquebench.domains.planning.requests import SET as REFINE_SET
from critiquebench.domains.planning.requests import refinement_request, run_request
from critiquebench.domains.planning.strips import DomainModel, PlanningError, Task
from critiquebench.domains.planning.styles import LIVE, NL_STYLES, PDDL_STYLES, STYLES
from critiquebench.domains.planning.templates import NL_SOURCES, NLConfig, find_nl_config
from critiquebench.domains.planning.val_words import read_val, repair_advice
from critiquebench.domains.planning.validator import (
    check_plan,
    error_sentences,
    is_sound_feedback,
    render,
)
from critiquebench.domains.planning.verdicts import (
    parse_json_plan_verdict,
    parse_llm_verdict,
    study_plan_verdict,
)
from critiquebench.domains.prompts import DEFAULT, Prompts, PromptSet

log = logging.getLogger(__name__)

Step = tuple[str, tuple[str, ...]]
# An LLM critique goes back in the plan self-critique study's form (plan_self_critique.toml: the critique, then
# its request for the next plan, for natural-language or PDDL prompts); our own sound feedback is handed back
# verbatim instead, as PlanBench's recorded backprompting runs did (planbench.toml).
SELF_CRITIQUE = "plan_self_critique"
# PlanBench's verdict on an unsolvable problem: right iff the answer says so in these words
# (`llm_planning_analysis/utils/__init__.py:249-252`, `validate_plan_unsolvable`; matched here in any case).
NO_PLAN_POSSIBLE = "no plan possible"
DOMAIN_HEADER = re.compile(r"\(define\s*\(domain\s+([^\s()]+)")


@dataclass
class _Problem:
    task: Task
    cfg: NLConfig
    plan: list[Step] | None = None
    unsolvable: bool | None = None  # proven by exhausting the state space; None: not asked yet

    @cached_property
    def reader(self) -> ActionReader:
        # built when an answer is first read by our reader: a replay or score read by PlanBench's reader never
        # builds one. Shared by every domain over the same config and problem (their tasks are shared), with the
        # lines it has read: each PlanBench task file replayed builds its domain anew, and the t2-t8 files'
        # answers to one problem repeat each other's lines
        return _READERS.get((self.cfg, self.task), None, lambda: ActionReader(self.cfg, self.task))


_READERS = ObjectMemo(2048)  # a PlanBench domain's 500 problems, under a few configs


# The `intro` option's values and the config key each selects (None: the config's `domain_intro`).
INTROS: dict[str | None, str] = {
    None: "domain_intro",
    "zero_shot": "domain_intro_zero_shot",
    "state_tracking": "domain_intro_state_tracking",
    "legacy": "domain_intro_legacy",
}


@dataclass
class PlanningDomain:
    """A PDDL planning domain. `folder` holds domain.pddl (or one `NAME_domain.pddl`), optionally
    natural-language templates (config.yaml or domain_description*.json) and problems. `prompt_style` None means
    nl when templates exist, else pddl."""

    name: str
    folder: Path
    prompt_style: str | None = None
    strict: bool = False
    shots: int = 3
    # `shots` is a folder's default, not the study's choice: a pool holding fewer problems (a folder of one
    # problem holds none) gives prompts with as many examples as it holds, said once, rather than no prompt.
    fewer_shots: bool = False
    generator: str | None = None
    optimal: bool = False  # example and candidate plans shortest (`planner.optimal_plan`) where that search fits
    candidate_kinds: tuple[str, ...] = CANDIDATE_KINDS
    # Which of the config's intros nl prompts start with: None for `domain_intro`, "zero_shot" for PlanBench's
    # intro that gives an example of each action (`domain_intro_zero_shot`).
    intro: str | None = None
    # The prompt sets this domain reads (domains/prompts/): the built-in ones unless a study overrides them.
    prompts: Prompts = DEFAULT
    # The llm-llm loop's verifier prompt (`plan_prompts.FORMS`): "open", PlanBench's open-ended one (the
    # self-verification paper's LLM+LLM critic, 000 A.5.4), or "val_form", the plan self-critique study's 2023
    # code's default; either after the validator's system message, as that code sent both. `llm-llm-cot` asks
    # the paper's chain-of-thought one (000:2328).
    verifier: str = "open"
    # How the open-ended verifier's reply is read: "study" as the studies' code did (LLMs-Planning
    # back_prompting.py @27b0c44: valid when any line contains "plan is valid"), "lenient" by our reader (a JSON
    # verdict, else the last verdict phrase). JSON replies ([JSON] ... [JSON_END]) are read by their "valid" key.
    verdict: str = "study"
    # Shipped with critiquebench: the comment lines of its PDDL files are our notes on them, so prompts that show
    # a whole file (`refine`) leave them out; a folder of yours is shown as read (the refinement study's
    # `read_file`).
    shipped: bool = False
    model: DomainModel = field(init=False, repr=False)
    cfg: NLConfig = field(init=False, repr=False)
    domain_pddl: str = field(init=False, repr=False)
    nl_source: Path | None = field(init=False, repr=False)
    texts: PromptSet = field(init=False, repr=False)  # PlanBench's set, which most of this domain's texts are in
    handback: Backprompt = field(init=False, repr=False)
    _problems: dict[str, _Problem] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _said_fewer: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self.cfg, self.nl_source = find_nl_config(self.folder, self.name)
        source = domain_file(self.folder) or self.folder / "domain.pddl"
        try:
            self.domain_pddl = source.read_text(encoding="utf-8")
        except OSError as err:
            raise PlanningError(f"{source}: cannot read domain: {err}") from None
        self.model = shared_domain_model(self.domain_pddl, str(source))
        self.configure()
        unknown = sorted(set(self.model.schemas) - set(self.cfg.actions))
        if unknown and self.nl_source is not None:
            raise PlanningError(f"{self.nl_source}: no English template for action(s) {unknown}")

    def configure(self) -> None:
        """Check the options and set what they select."""
        if self.prompt_style is None:
            self.prompt_style = "nl" if self.nl_source is not None else "pddl"
        if self.prompt_style not in plan_prompts.PROMPT_STYLES:
            raise PlanningError(f"unknown prompt style {self.prompt_style!r}; known: {plan_prompts.PROMPT_STYLES}")
        self.require_english(self.prompt_style)
        if self.intro not in INTROS and self.intro not in self.cfg.intros:
            known = [*(i for i in INTROS if i), *self.cfg.intros]
            raise PlanningError(f"unknown intro {self.intro!r}; known: {', '.join(known)}")
        if self.intro is not None and self.intro_text(self.intro) is None:
            raise PlanningError(f"{self.nl_source}: intro {self.intro!r} needs `{INTROS[self.intro]}` in the config")
        if self.verifier not in ("open", "val_form"):
            raise PlanningError(f"unknown verifier {self.verifier!r}; known: open, val_form")
        if self.verdict not in ("study", "lenient"):
            raise PlanningError(f"unknown verdict reader {self.verdict!r}; known: study, lenient")
        self.texts = self.prompts[plan_prompts.PLANBENCH]
        verbatim = self.texts["backprompt.verbatim"]
        # An LLM critique goes back verbatim after natural-language prompts (the studies' 2023 code and both
        # papers' examples); after PDDL prompts with the 2025 script's request for a PDDL plan.
        revise = "critique-pddl" if self.prompt_style in PDDL_STYLES else "critique-verbatim"
        self.handback = Backprompt(
            verbatim,
            verbatim,
            self.prompts[SELF_CRITIQUE][f"planning.backprompt.{revise}"],
            binary_sentence=self.texts.text("feedback.invalid"),
            own=is_sound_feedback,
            empty="critique",
        )

    def require_english(self, style: str) -> None:
        if style in NL_STYLES and self.nl_source is None:
            raise PlanningError(
                f"{self.folder}: natural-language prompts need {NL_SOURCES} in the folder; "
                "use prompt_style=pddl for PDDL prompts"
            )

    # ---- problems ----
    def _problem(self, text: str, source: str) -> _Problem:
        with self._lock:
            found = self._problems.get(text)
        if found is None:
            task = shared_task(text, self.model, source)
            found = _Problem(task, self.cfg)
            with self._lock:
                self._problems.setdefault(text, found)
        return found

    def task(self, instance: Instance) -> Task:
        return self._problem(instance.data["problem"], instance.data.get("source", instance.id)).task

    def _plan(self, text: str, source: str, known: list[str] | None = None) -> list[Step]:
        problem = self._problem(text, source)
        if known:
            return [step_of(line) for line in known]
        if problem.plan is None:
            found = optimal_plan(problem.task) if self.optimal else None
            problem.plan = [(a.name, a.args) for a in (found if found is not None else find_plan(problem.task))]
        return problem.plan

    # ---- Domain protocol ----
    def load(self, selection: str | None = None, path: Path | None = None) -> list[Instance]:
        if path is None:
            found = problem_folder(self.folder)
            if found is None:
                raise PlanningError(
                    f"domain {self.name!r} ships no instances: pass a dataset folder with "
                    "instances/instance-N.pddl "
                    "(e.g. ../shared/datasets/planbench/" + self.name + ") or generate instances"
                )
            path = self.folder
        instances = load_instances(self.name, Path(path), selection)
        for inst in instances:  # parse now so a malformed file fails here, naming the file
            self.task(inst)
        return instances

    def generate(self, n: int, seed: int) -> list[Instance]:
        kind = self.generator or (self.name if self.name in GENERATORS else None)
        if kind is None:
            raise PlanningError(f"domain {self.name!r} has no instance generator; load instances from a folder")
        problems = generate_problems(kind, n + 1, seed)
        # the pool never holds a problem of this seed's whole test set (the paper's 600 or 1000, 001:81-83),
        # whatever n is: every study of up to that many instances sees the same pool
        tests = problems if n >= set_size(kind) else generate_problems(kind, set_size(kind) + 1, seed)
        return generated_instances(self.name, problems, seed, training_problems(kind, TRAIN_POOL, seed, tests))

    def prompt(self, instance: Instance, style: str | None = None, shots: int | None = None) -> list[dict[str, str]]:
        """The generation prompt of `style` (`styles.STYLES`); `shots` overrides the domain's number of pddl-style
        examples."""
        row = STYLES.get(style or self.prompt_style or "")
        if row is None:
            raise PlanningError(f"unknown prompt style {style!r}; known: {plan_prompts.PROMPT_STYLES}")
        return row.build(self, instance, shots, LIVE)

    def intro_text(self, name: str) -> str | None:
        """The intro `name` selects: a config key (`INTROS`), else one of PlanBench's historical intros of
        this domain (`NLConfig.intros`, from domains/data/planbench_intros.yaml)."""
        if name in INTROS:
            return getattr(self.cfg, INTROS[name]) or (self.cfg.intros.get(name) if name == "legacy" else None)
        return self.cfg.intros.get(name)

    # ---- what a prompt shows (`styles.Shown`: the live rule, or a recorded run's) ----
    def plan_of(self, example: Mapping[str, Any], known: list[str] | None = None) -> list[Step]:
        """An example's plan: `known` (PDDL lines) when given, else our planner's."""
        return self._plan(example["problem"], example["id"], known)

    def solved(self, example: Mapping[str, Any], known: list[str] | None = None) -> tuple[Task, list[Step]]:
        """An example problem's task and plan (`known`, else our planner's), as a one-shot prompt shows them."""
        return self._problem(example["problem"], example["id"]).task, self.plan_of(example, known)

    def with_options(self, **options: Any) -> PlanningDomain:
        """This domain under other live options (prompt style, intro, ...), built through the constructor and
        sharing its parsed problems: the importer tries many option sets on one file's domain."""
        made = replace(self, **options)
        made._problems, made._lock = self._problems, self._lock
        return made

    def read(self, instance: Instance, text: str) -> ParsedPlan | None:
        """The plan committed to in `text`, or None when it holds none (a malformed answer, a verdict). The reader
        never raises on bad text, so an exception here is a bug of ours: it propagates and fails the run (shown
        as an error) instead of silently counting as a wrong answer."""
        reader = self._problem(instance.data["problem"], instance.data.get("source", instance.id)).reader
        return reader.read(text or "")

    def parse(self, instance: Instance, text: str) -> list[str] | None:
        parsed = self.read(instance, text)
        return None if parsed is None else [pddl_line(s) for s in parsed.steps]

    def verify(self, instance: Instance, text: str) -> Verdict:
        claim = self._no_plan_claim(instance, text)
        if claim is not None:
            return claim
        return self._verdict(instance, self.read(instance, text))

    def _no_plan_claim(self, instance: Instance, text: str) -> Verdict | None:
        """The verdict on an answer saying no plan is possible: right iff the problem is unsolvable (PlanBench's
        rule for its unsolvable sets); None for every other answer, which is judged as a plan."""
        if NO_PLAN_POSSIBLE not in (text or "").lower():
            return None
        problem = self._problem(instance.data["problem"], instance.data.get("source", instance.id))
        if problem.unsolvable is None:
            try:
                find_plan(problem.task)
                problem.unsolvable = False
            except PlanningError as exc:
                problem.unsolvable = "is unsolvable" in str(exc)  # the whole state space was searched
        if problem.unsolvable:
            return Verdict("valid", (), None)
        return None

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        claim = self._no_plan_claim(instance, text)
        if claim is not None:
            return claim, None
        parsed = self.read(instance, text)
        canonical = None if parsed is None else "\n".join(pddl_line(s) for s in parsed.steps)
        return self._verdict(instance, parsed), canonical

    def assess_val(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        """The verdict VAL gives on the raw reply `text` as a plan file (`val_words.read_val`), as the refinement
        study's code runs it: an undefined action anywhere fails the whole plan, an unknown object on an untyped
        domain fails its step, a reply cut off mid-action is no plan. Its `sent` is the study's request for it
        (`requests.run_request`). A reply with no PDDL line (English) is judged by `assess`."""
        task = self.task(instance)
        read = read_val(task, text, tuple(self.model.schemas))
        if read is None:
            return self.assess(instance, text)
        steps, run = read
        plan = [pddl_line(s) for s in steps]
        if run.valid:
            return Verdict("valid", (), plan), "\n".join(plan)
        status = "malformed" if not steps else "invalid"
        request = run_request(task, run, self.prompts)
        return Verdict(status, (repair_advice(run),), plan or None, sent=request), "\n".join(plan) or None

    def assess_binary(self, instance: Instance, text: str, raw: bool) -> tuple[Verdict, str | None]:
        """The verdict of the real VAL (`val_binary`, KCL-Planning/VAL's `Validate`): with `raw`, on the raw reply
        `text` as the plan file, as the refinement study ran it (its `sent` is the study's request around the reason
        its code cut from VAL's output); else on the plan our reader extracts from `text`, as PDDL lines (the
        intrinsic self-critique paper's "accuracy by VAL", 001:136; `_plan_file`). The answer lines are our
        reading's."""
        from critiquebench.domains.planning.val_binary import validate

        errors: tuple[str, ...] = ()
        if raw:
            read = read_val(self.task(instance), text, tuple(self.model.schemas))
            steps = read[0] if read is not None else getattr(self.read(instance, text), "steps", [])
            plan = [pddl_line(s) for s in steps] or None
            canonical, plan_text = ("\n".join(plan) if plan else None), text
        else:
            verdict, canonical = self.assess(instance, text)
            if verdict.valid and verdict.answer is None:  # "no plan is possible", right on an unsolvable problem
                return verdict, canonical
            plan, errors, plan_text = verdict.answer, verdict.errors, _plan_file(self.read(instance, text))
        val = validate(self.domain_pddl, instance.data["problem"], plan_text)
        if val.valid:
            return Verdict("valid", (), plan), canonical
        reason = val.reason or ""
        request = self.prompts[REFINE_SET].render("request", reason=reason) if raw else None
        return Verdict("invalid" if plan else "malformed", errors or (reason,), plan, sent=request), canonical

    def binary_advice(self, instance: Instance, text: str) -> str:
        """The real VAL's feedback on the plan our reader extracts from `text` (`_plan_file`; "" when valid):
        `Validate -v`'s repair advice, or where it gives none (a plan it cannot read, an undefined action) the line the
        refinement study's code cuts from its output (`val_binary.study_reason`): the intrinsic self-critique paper's
        Oracle with `validator=val` (001:142, "the validator's feedback")."""
        from critiquebench.domains.planning.val_binary import repair_advice as val_repair_advice
        from critiquebench.domains.planning.val_binary import study_reason, validate

        val = validate(self.domain_pddl, instance.data["problem"], _plan_file(self.read(instance, text)), verbose=True)
        if val.valid:
            return ""
        return val_repair_advice(val.stdout) or study_reason(val.stdout.strip())

    def _verdict(self, instance: Instance, parsed: ParsedPlan | None) -> Verdict:
        task = self.task(instance)
        if parsed is None:
            errors = error_sentences(self.cfg, task, check_plan(task, []), self.texts)
            return Verdict("malformed", errors or (self.texts.text("feedback.no-plan"),), None)
        answer = [pddl_line(s) for s in parsed.steps]
        check = check_plan(task, parsed.steps)
        errors = error_sentences(self.cfg, task, check, self.texts)
        if self.strict and parsed.skipped:
            unread = tuple(self.texts.render("feedback.unread-line", line=line) for line in parsed.skipped)
            return Verdict("invalid", unread + errors, answer, parsed.unread)
        return Verdict("valid" if check.valid else "invalid", errors, answer, parsed.unread)

    def feedback(self, instance: Instance, verdict: Verdict, level: FeedbackLevel) -> str:
        if verdict.sent is not None:  # a recorded run's feedback as it was sent, or VAL's request (`assess_val`)
            return verdict.sent
        if level == "request":  # the refinement paper's request, worded per error class (`requests`)
            if verdict.valid:
                return ""
            steps = None if verdict.answer is None else [step_of(line) for line in verdict.answer]
            return refinement_request(self.task(instance), steps, verdict.unread, self.prompts)
        return render(verdict.errors, level, verdict.valid, self.texts, self.prompts[plan_prompts.SELF_VERIFICATION])

    def canonical(self, instance: Instance, text: str) -> str | None:
        parsed = self.parse(instance, text)
        return None if parsed is None else "\n".join(parsed)

    def candidate(self, instance: Instance, kind: str, rng: random.Random) -> str:
        task = self.task(instance)
        plan = [task.ground(n, a) for n, a in self._plan(instance.data["problem"], instance.id)]
        steps = make_candidate(task, [a for a in plan if a is not None], kind, rng)
        return self.answer_text(steps)

    def answer_text(self, steps: list[Step], style: str | None = None) -> str:
        """`steps` written as a model in this prompt style would answer."""
        if (style or self.prompt_style) in PDDL_STYLES:  # these prompts show bare PDDL action lines
            return plan_prompts.pddl_plan_text(steps)
        return plan_prompts.plan_text(self.cfg, steps) + "[PLAN END]"

    # ---- Judged: the verification prompts (`domains.contract.Judged`) ----
    @property
    def purposes(self) -> Mapping[str, str | None]:
        """The judge prompts it has (None) and why it lacks the others: PDDL prompts have only their critic."""
        pddl = self.prompt_style in PDDL_STYLES
        why = plan_prompts.NO_COT_VERIFICATION
        return {
            "critique": None,
            "verify": None,
            "critique-cot": why if pddl else None,
            "verify-cot": why if pddl else None,
            "verify-swap": "no swapped-order verification prompt with PDDL prompts" if pddl else None,
            "verify-no-info": "planning domains have no no-info verification prompt (only game24 does)",
        }

    def judge_prompt(self, instance: Instance, purpose: str, answer: str) -> Messages:
        """"critique" / "critique-cot": the loop's verifier (`_critique_prompt`); "verify", "verify-cot",
        "verify-swap": the self-verification paper's verification-only prompts (000 A.5.2, A.5.6): the
        format-based JSON one (Table 2), its chain-of-thought form and the answer-last form (Table A2's -CoT
        and -S rows). PDDL prompt styles have only their critic prompt."""
        if why := self.purposes.get(purpose, f"no {purpose!r} prompt"):
            raise Unsupported(why)
        if purpose.startswith("critique") or self.prompt_style in PDDL_STYLES:
            return self._critique_prompt(instance, answer, cot=purpose.endswith("-cot"))
        forms = {"verify": "format", "verify-cot": "cot", "verify-swap": "swap"}
        return self._verification(instance, answer, forms[purpose])

    def judge_reply(self, instance: Instance, purpose: str, answer: str, reply: str) -> Judgement:
        """A verification-only reply by its JSON's "valid" key; the loop verifier's by `_critique_verdict`."""
        if purpose.startswith("verify") and self.prompt_style not in PDDL_STYLES:
            return Judgement(parse_json_plan_verdict(reply))
        return Judgement(self._critique_verdict(reply))

    def _critique_prompt(self, instance: Instance, text: str, cot: bool = False) -> Messages:
        """The llm-llm loop's verifier: the `verifier` form, or with `cot` the self-verification paper's
        chain-of-thought prompt (Table A1's LLM+LLM-C)."""
        if self.prompt_style in PDDL_STYLES:
            if cot:
                raise Unsupported(plan_prompts.NO_COT_VERIFICATION)
            # No study published a PDDL verification prompt in PlanBench's verdict form; the intrinsic
            # self-critique paper's critic prompt (A.2) is the published one for PDDL plans.
            return self.critic_messages(instance, text)
        # the loop's critic call sends the validator's system message whichever prompt `val_form` picks
        # (LLMs-Planning back_prompting.py@27b0c44:277-283, the only commit with this loop); the CoT critic is
        # 000's own (A1's LLM+LLM-C), whose code is unpublished: PlanBench's planner message, as its other prompts
        return self._verification(instance, text, "cot" if cot else self.verifier, validator=not cot)

    def _verification(self, instance: Instance, text: str, form: str, validator: bool = False) -> Messages:
        """A verification prompt of `form` (`plan_prompts.FORMS`) for the answer `text`: the plan as English
        lines when it can be read, else as written; after the validator's system message (`validator`, and
        always for `val_form`), else PlanBench's."""
        task = self.task(instance)
        parsed = self.read(instance, text)
        lines = plan_prompts.plan_text(self.cfg, parsed.steps) if parsed else (text or "").strip() + "\n"
        block = self.texts.render("plan-block", steps=lines)  # PlanBench's "\n" + lines + "[PLAN END]\n"
        prompt = plan_prompts.verification_prompt(self.cfg, task, block, self.prompts, form)
        system = self.prompts[SELF_CRITIQUE].text("planning.verify.system") if validator or form == "val_form" else None
        return plan_prompts.messages(prompt, self.prompts, system)

    def reference_plan(self, instance: Instance) -> list[Step]:
        """A valid plan for the instance: its known plan, else our planner's (shortest where `optimal`)."""
        return list(self._plan(instance.data["problem"], instance.data.get("source", instance.id)))

    def training_pool(self, instance: Instance) -> list[dict]:
        """The instance's many-shot examples in its own order: its set's training problems, none a test
        instance (`instances.training_pool`)."""
        return training_pool(instance)

    def critic_plan(self, instance: Instance, text: str) -> str:
        """The plan of answer `text` as the intrinsic self-critique critic sees it (E.1: "extract plan only as
        provided to the self-critique", 001:1271): PDDL action lines when it can be read, else as written."""
        parsed = self.read(instance, text)
        return plan_prompts.pddl_plan_text(parsed.steps) if parsed else (text or "").strip()

    def revise(self, instance: Instance, text: str, critique: str, style: str | None = None) -> str:
        """The intrinsic self-critique paper's Revise-Prompt addition for one step (`revise`): the plan of
        answer `text` in the names of the planner's prompt (`style`, default the domain's: PDDL lines, or
        PlanBench's English lines after an English prompt), the critique, the refinement request."""
        texts = self.prompts["intrinsic_self_critique"]
        plan = self.critic_plan(instance, text)
        if (style or self.prompt_style) not in PDDL_STYLES and (parsed := self.read(instance, text)):
            plan = plan_prompts.plan_text(self.cfg, parsed.steps).strip()
        return texts.render("revise", plan=plan, critique=critique.strip())

    def val_advice(self, instance: Instance, text: str) -> str:
        """VAL's repair advice for the first failure of answer `text` ("" when valid), in the PDDL names of the
        problem: the intrinsic self-critique paper's oracle critique (001:142: the validator's feedback)."""
        from critiquebench.domains.planning.requests import first_failure

        parsed = self.read(instance, text)
        steps = list(parsed.steps) if parsed is not None else []
        unread = parsed.unread if parsed is not None else ()
        return repair_advice(first_failure(self.task(instance), steps, unread, tuple(self.model.schemas)))

    def critic_messages(
        self,
        instance: Instance,
        text: str,
        shots: int = 0,
        domain_definition: bool = True,
        instructions: str = "three-step",
        style: str | None = None,
    ) -> list[dict[str, str]]:
        """The intrinsic self-critique paper's critic prompt for the answer `text` (see `critique`): A.2, A.1 with
        `shots` verified example plans, A.3 without the domain, A.4/A.5 by `instructions`; Table 6's templates
        ("formatted", "cot-formatted": paper 000's JSON prompts, 001:274) in 000's frame after natural-language
        prompts (with PlanBench's system message, as 000 sent them), in ours after PDDL ones: the planner's prompt
        `style` decides which (default the domain's)."""
        if instructions in FORMATTED and (style or self.prompt_style) not in PDDL_STYLES:
            return self._verification(instance, text, instructions)
        plan = self.critic_plan(instance, text)
        solved = (
            [
                (
                    e["problem"],
                    self._problem(e["problem"], e["id"]).task,
                    self._plan(e["problem"], e["id"], e.get("plan")),
                )
                for e in self.training_pool(instance)[: -(-shots // 3)]
            ]
            if shots
            else []
        )
        critic_texts = self.prompts["intrinsic_self_critique"]
        examples = [(x.problem, x.plan, x.trace) for x in make_examples(solved, shots, instance.id, critic_texts)]
        prompt = critic_prompt(
            self.domain_pddl, instance.data["problem"], plan, examples, domain_definition, self.prompts, instructions
        )
        return [{"role": "user", "content": prompt}]

    # ---- SelfCritiqued: the intrinsic self-critique paper's critic (`domains.contract.SelfCritiqued`) ----
    def read_critique(self, reply: str, instructions: str = "three-step") -> LLMVerdict:
        """The critic prompt's verdict phrases (the last one wins); Table 6's templates by their JSON's "valid"
        key, as 000's verification prompts are read."""
        return parse_json_plan_verdict(reply) if instructions in FORMATTED else parse_critic_verdict(reply)

    def _critique_verdict(self, text: str) -> LLMVerdict:
        """The loop verifier's verdict (`judge_reply` for "critique"): the critic prompt's phrases (PDDL
        styles), a `[JSON]` reply's "valid" key (the chain-of-thought prompt), else the open-ended reply read as
        `verdict` says."""
        if self.prompt_style in PDDL_STYLES:  # the critic prompt's verdict phrases (see `_critique_prompt`)
            return parse_critic_verdict(text)
        if "[json]" in (text or "").lower():
            return parse_json_plan_verdict(text)
        return study_plan_verdict(text) if self.verdict == "study" else parse_llm_verdict(text)

    def backprompt(self, instance: Instance, critique: str) -> str:
        """Our own feedback verbatim (PlanBench's backprompting); an LLM critique, or none (then the binary
        verdict) verbatim after natural-language prompts, followed by the 2025 script's request after PDDL ones. A
        recorded run's feedback goes back as it was sent (`replay.ReplayedPlanning`)."""
        return self.handback(critique)


def step_of(line: str) -> Step:
    words = line.strip().strip("()").lower().split()
    return words[0], tuple(words[1:])


def pddl_line(step: Step) -> str:
    return "(" + " ".join((step[0], *step[1])) + ")"


def _plan_file(parsed: ParsedPlan | None) -> str:
    """The plan file VAL gets for a plan our reader read: its actions as PDDL lines, with each line that looked like
    an action but read as none (`ParsedPlan.unread`: an undefined action, a step cut off) where it stood, so that
    VAL fails on it as on the reply (its "No matching action", "Bad plan description!")."""
    if parsed is None:
        return ""
    lines = [pddl_line(s) for s in parsed.steps]
    for k, (position, line) in enumerate(sorted(parsed.unread)):
        lines.insert(position - 1 + k, line)
    return "".join(f"{line}\n" for line in lines)
