"""The domain contract: a small core every scheme needs, and capabilities a domain opts into.

A domain implements `Domain` (seven members). What some schemes need beyond it is a capability, a
runtime-checkable protocol the domain implements or not, checked with `isinstance` (as unified-planning's
engines declare `supports(...)` through mixins):

- `Judged`: an LLM can judge its answers. `purposes` says, for each purpose a scheme or study may ask
  (`PURPOSES`), None when the domain has the prompt, or why not; `judge_prompt` / `judge_reply` build the
  prompt and read the reply.
- `SelfCritiqued`: intrinsic self-critique's critic prompt and verdict reader (planning domains); a domain
  that has it is handed its critique back as it is, with no wrapper of its own.
- `Candidates`: answers of known kinds, for verification-only studies.
- `Prompted`: its texts come from prompt sets (`domains/prompts/`), which a study may override.
- `FromFolder`: it is read from a folder of files (PDDL domains), part of a run's identity.
- `Transcribed`: a generation with history goes out in the domain's own form (the self-verification study's
  one-message transcript) instead of as chat turns.
- `PaperLevels`: feedback levels its paper did not have (`unsupported_levels`, with why), left out of studies.
- `ValidatorAdvice`: a validator's repair advice as a critique (intrinsic self-critique's oracle, planning).
- `CallOptions`: options every LLM call made for it carries (a study's stop sequences, `get_domain(stop=...)`).
- `ValRead`: the verdict and request VAL gives on the raw reply as a plan file (the refinement study's loop).

A scheme says what it needs as `Need`s (`graphs.unsupported` compares them with the domain), so a study leaves
a scheme out of a domain with the domain's own reason before anything runs.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from critiquebench.domains.prompts import Prompts

Messages = list[dict[str, str]]
# "request": the first error reformulated into a request to correct it (Merola et al.'s refinement loop; planning
# domains word it per error class, the others hand back their first error).
FeedbackLevel = Literal["binary", "first", "all", "request"]
FEEDBACK_LEVELS: tuple[FeedbackLevel, ...] = ("binary", "first", "all", "request")
# Prompt styles a scheme may ask for (`style=`); planning domains have all four, the others one prompt.
PROMPT_STYLES: tuple[str, ...] = (
    "nl",
    "nl_legacy",
    "pddl",
    "refine",
    # PlanBench's other plan-generation prompts (`domains/planning/planbench_prompts.py`)
    "nl_zero_shot",
    "pddl_planbench",
    "pddl_zero_shot",
    "pddl_zero_shot_2023",
    "state_tracking",
)
# The plan critic's instructions (`domains.planning.critique`, the intrinsic scheme's `instructions=`), here so
# that the scheme table loads without the planning package (its PDDL parser was a third of a command's start-up).
CRITIC_INSTRUCTIONS: tuple[str, ...] = ("three-step", "verify-each", "chain-of-thought", "formatted", "cot-formatted")
Status = Literal["valid", "invalid", "malformed"]

# What an LLM judge may be asked: the verifier inside the llm-llm loops ("critique", with chain of thought
# "critique-cot") and the verification-only study's prompts ("verify", "verify-cot", "verify-no-info": Game of
# 24's "just evaluate this expression").
PURPOSES = ("critique", "critique-cot", "verify", "verify-cot", "verify-no-info", "verify-swap")
# "swap" (planning): the self-verification paper's "-S" prompt, the verdict asked for after the reasons.
VerifyVariant = Literal["default", "cot", "no-info", "swap"]
VERIFY_VARIANTS: tuple[VerifyVariant, ...] = ("default", "cot", "no-info", "swap")


@dataclass(frozen=True)
class Instance:
    """One problem. `data` is JSON-serialisable so instances can live in checkpoints and the store."""

    domain: str
    id: str
    data: dict[str, Any] = field(hash=False, compare=False)


@dataclass(frozen=True)
class Verdict:
    """A sound verifier's judgement of one answer.

    `errors` are the domain's own error sentences in the order the verifier found them, so `first` feedback is
    `errors[0]` and `all` feedback joins them. `answer` is the parsed answer as JSON-serialisable data (None
    when nothing could be parsed). `unread` lists (position, line) of answer lines that looked like part of the
    answer but could not be read (planning: an action the problem does not have), for feedback that names them.
    `final` ends a feedback loop at this answer whatever its rounds left (PlanBench's replay protocol stops
    where its reader failed). `sent` is the feedback handed back after this answer as it is instead of the
    domain's own by level: a recorded run's (a replayed run whose feedback wording is not published), or the
    request VAL's reading gives (`ValRead`).
    """

    status: Status
    errors: tuple[str, ...] = ()
    answer: Any = None
    unread: tuple[tuple[int, str], ...] = ()
    final: bool = False
    sent: str | None = None

    @property
    def valid(self) -> bool:
        return self.status == "valid"


@dataclass(frozen=True)
class LLMVerdict:
    """What an LLM verifier said about an answer: its verdict (False when it gave none) and its critique.

    `fails_run`: the study's own code failed on this reply in its loop (marked the instance failed, or crashed),
    so the study sent nothing after it: a loop ends there with the answer it judged, as the study's record did
    (kstechly/gpt-and-i `response_generation.py@b583c3c9:92-96`; see `domains.study_verdicts`)."""

    says_valid: bool
    critique: str
    parsed: bool = True
    fails_run: bool = False


@dataclass(frozen=True)
class Judgement:
    """An LLM's reply to a judge prompt: its verdict and, where the prompt asked for the answer's value (Game of
    24's verification study), whether it computed that value right (None when it was not asked or not given)."""

    verdict: LLMVerdict
    evaluation_correct: bool | None = None


class Unsupported(ValueError):
    """The domain has no published prompt for what was asked (e.g. chain-of-thought verification of plans).

    Never a made-up substitute: asking is an error, and a study leaves the combination out and says so."""


@runtime_checkable
class Domain(Protocol):
    """What every scheme needs of a problem domain."""

    name: str

    def load(self, selection: str | None = None, path: Path | None = None) -> list[Instance]:
        """Instances from a dataset. `selection` is e.g. "901-1000", "1,5,9" or None for all;
        `path` is a user dataset (file or folder) or None for the default data."""
        ...

    def generate(self, n: int, seed: int) -> list[Instance]:
        """`n` fresh, solvable instances, the same for the same seed."""
        ...

    def prompt(self, instance: Instance, style: str | None = None, shots: int | None = None) -> Messages:
        """The generation prompt as chat messages. `shots`: how many solved examples it shows, for domains
        whose prompt shows examples (others ignore it)."""
        ...

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        """The sound verdict on a free-text answer, and the answer's canonical form (equal answers compare
        equal: self-consistency's vote), from one parse. Never raises on bad text."""
        ...

    def feedback(self, instance: Instance, verdict: Verdict, level: FeedbackLevel) -> str:
        """What goes back for `verdict` at `level` (binary, first, all, request), in the studies' wording."""
        ...

    def backprompt(self, instance: Instance, critique: str) -> str:
        """The user turn that hands a critique (sound feedback or an LLM's critique) back to the generator."""
        ...


@runtime_checkable
class Judged(Protocol):
    """Capability: an LLM can judge this domain's answers (the llm-llm critic, verification-only studies)."""

    # purpose -> None when the domain has its prompt, else why not (shown where a study leaves it out)
    purposes: Mapping[str, str | None]

    def judge_prompt(self, instance: Instance, purpose: str, answer: str) -> Messages:
        """The prompt asking an LLM to judge `answer` for `purpose` (`Unsupported` when the domain has none)."""
        ...

    def judge_reply(self, instance: Instance, purpose: str, answer: str, reply: str) -> Judgement:
        """The judge's reply read robustly; no verdict at all counts as "wrong" (`parsed=False`)."""
        ...


@runtime_checkable
class SelfCritiqued(Protocol):
    """Capability: intrinsic self-critique's critic (Bohnet et al.): its prompt (A.1-A.5 by `shots`,
    `domain_definition` and `instructions`), its verdict phrases, and the paper's Revise-Prompt (`revise`: what
    one step appends to the planner's prompt: the plan, the critique, the request). `style` is the planner's prompt
    style, which the critic's frame and the revised plan's names follow (None: the domain's own)."""

    def critic_messages(self, instance: Instance, answer: str, shots: int = 0, domain_definition: bool = True,
                        instructions: str = "three-step", style: str | None = None) -> Messages:  # fmt: skip
        ...

    def revise(self, instance: Instance, answer: str, critique: str, style: str | None = None) -> str:
        ...

    def read_critique(self, reply: str, instructions: str = "three-step") -> LLMVerdict:
        ...


@runtime_checkable
class Candidates(Protocol):
    """Capability: answers of known kinds (correct, ablated, random, ...) for verification-only studies."""

    candidate_kinds: tuple[str, ...]

    def candidate(self, instance: Instance, kind: str, rng: random.Random) -> str:
        ...


@runtime_checkable
class Prompted(Protocol):
    """Capability: the domain's texts come from prompt sets (domains/prompts/) a study may override."""

    prompts: Prompts


@runtime_checkable
class FromFolder(Protocol):
    """Capability: the domain is read from a folder of files (a PDDL domain), which are part of what it
    computes (a run's identity includes them) and may hold its own instances."""

    folder: Path


@runtime_checkable
class Transcribed(Protocol):
    """Capability: what goes out for a generation with history is the domain's own form of the chat (e.g. the
    self-verification study's one-message transcript); a domain whose form is plain chat returns it as it is."""

    def conversation(self, messages: Messages) -> Messages:
        ...


@runtime_checkable
class PaperLevels(Protocol):
    """Capability: the feedback levels the domain's paper did not have, each with why (Game of 24's all-errors
    feedback, 000:238); a scheme asking one is left out with that reason."""

    unsupported_levels: Mapping[str, str]


@runtime_checkable
class ValidatorAdvice(Protocol):
    """Capability: a validator's repair advice for an answer's first failure ("" when valid), the oracle critique
    of intrinsic self-critique (001:142)."""

    def val_advice(self, instance: Instance, answer: str) -> str:
        ...


@runtime_checkable
class CallOptions(Protocol):
    """Capability: options every LLM call made for this domain carries (its stop sequences, which
    `domains.get_domain` gives a domain a study names them for)."""

    call_options: Mapping[str, Any]


@runtime_checkable
class ValRead(Protocol):
    """Capability: the sound verdict on a raw reply read as VAL reads a plan file, the refinement study's
    (Merola et al.) verifier; its `sent` is the request the study's code sends after it. A domain without it
    is judged by `assess` (`refine` asks it)."""

    def assess_val(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        ...


@runtime_checkable
class ValBinary(Protocol):
    """Capability: verdicts of the real VAL (KCL-Planning/VAL's `Validate`, `planning.val_binary`): on the raw reply
    as a plan file (`raw`, the refinement study's) or on the plan read from it (the intrinsic self-critique paper's
    accuracy), and `Validate -v`'s feedback as the Oracle's critique."""

    def assess_binary(self, instance: Instance, text: str, raw: bool) -> tuple[Verdict, str | None]:
        ...

    def binary_advice(self, instance: Instance, text: str) -> str:
        ...


@dataclass(frozen=True)
class Need:
    """What a scheme needs of a domain: a capability, and for `Judged` the purpose it asks."""

    capability: type
    purpose: str | None = None

    def missing(self, domain: Any) -> str | None:
        """Why `domain` cannot serve this need (the domain's own reason for a purpose it lacks), or None."""
        if not isinstance(domain, self.capability):
            return f"{domain.name} does not implement {self.capability.__name__} ({_WHAT[self.capability]})"
        if self.purpose is not None:
            return dict(domain.purposes).get(self.purpose, f"{domain.name} has no {self.purpose!r} prompt")
        return None


_WHAT = {
    Judged: "an LLM judge's prompts",
    SelfCritiqued: "intrinsic self-critique's critic prompt",
    Candidates: "answers of known kinds",
    Prompted: "prompt sets",
    FromFolder: "a folder of files",
    Transcribed: "its own form of a conversation",
    PaperLevels: "feedback levels left out by its paper",
    ValidatorAdvice: "a validator's repair advice",
    CallOptions: "options for every call",
    ValRead: "VAL's reading of a reply",
}


def unmet(domain: Any, alternatives: Sequence[Need]) -> str | None:
    """None when `domain` serves one of `alternatives` (or there are none), else the first one's reason."""
    reasons = [need.missing(domain) for need in alternatives]
    return None if not reasons or None in reasons else reasons[0]


def verify_variant(purpose: str) -> VerifyVariant:
    """A "verify*" purpose as the verification-only study's prompt variant: "verify-cot" -> "cot"."""
    return "default" if purpose == "verify" else purpose.removeprefix("verify-")  # type: ignore[return-value]


def verify_purpose(variant: VerifyVariant) -> str:
    """The verification-only study's prompt variant as a judge purpose: "default" -> "verify"."""
    return "verify" if variant == "default" else f"verify-{variant}"
