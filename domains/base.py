"""The domain contract's names for plug-ins written against the older `domains.base`, and helpers over it.

The contract itself is `domains/contract.py`: the core `Domain` protocol and the capabilities a domain opts
into. The helpers here turn a verification-only study's prompt variant into a judge purpose and read feedback
levels the way every built-in domain does.
"""

from __future__ import annotations

from critiquebench.domains.contract import (
    FEEDBACK_LEVELS,
    PROMPT_STYLES,
    PURPOSES,
    VERIFY_VARIANTS,
    Candidates,
    Domain,
    FeedbackLevel,
    FromFolder,
    Instance,
    Judged,
    Judgement,
    LLMVerdict,
    Messages,
    Prompted,
    SelfCritiqued,
    Status,
    Unsupported,
    Verdict,
    VerifyVariant,
    verify_purpose,
)

__all__ = [
    "FEEDBACK_LEVELS",
    "PROMPT_STYLES",
    "PURPOSES",
    "VERIFY_VARIANTS",
    "Candidates",
    "Domain",
    "FeedbackLevel",
    "FromFolder",
    "Instance",
    "Judged",
    "Judgement",
    "LLMVerdict",
    "Messages",
    "Prompted",
    "SelfCritiqued",
    "Status",
    "Unsupported",
    "Verdict",
    "VerifyVariant",
    "leveled_feedback",
    "read_judgement",
    "split_kind",
    "judging",
    "verification_messages",
]


def leveled_feedback(verdict: Verdict, level: FeedbackLevel, binary: str, joiner: str = " ") -> str:
    """Feedback from a verdict's error sentences: "" when valid, `binary` at the binary level (or when the
    verifier named no error), the first error at `first` (and `request`), every error joined at `all`."""
    if verdict.valid:
        return ""
    if level == "binary" or not verdict.errors:
        return binary
    return verdict.errors[0] if level in ("first", "request") else joiner.join(verdict.errors)


def split_kind(kind: str) -> tuple[str, VerifyVariant]:
    """A verification study's kind as (candidate kind, prompt variant): "ablated_op-cot" ->
    ("ablated_op", "cot"), "correct-no-info" -> ("correct", "no-info"), "random" -> ("random", "default")."""
    for variant in ("cot", "no-info", "swap"):
        if kind.endswith(f"-{variant}"):
            return kind[: -len(variant) - 1], variant  # type: ignore[return-value]
    return kind, "default"


def verification_messages(domain: Domain, instance: Instance, text: str,
                          variant: VerifyVariant = "default") -> Messages:  # fmt: skip
    """The verification-only study's prompt for `text`; a domain that cannot ask it is a ValueError (Unsupported)
    with the domain's reason."""
    return judging(domain, variant).judge_prompt(instance, verify_purpose(variant), text)


def judging(domain: Domain, variant: VerifyVariant = "default") -> Judged:
    """`domain` as a judge of answers under `variant`'s prompt; a domain that cannot ask it is a ValueError
    (Unsupported) with the domain's reason. (The `isinstance` on the Judged Protocol costs ~60 us: a caller
    judging many answers asks once per domain and variant.)"""
    purpose = verify_purpose(variant)
    if not isinstance(domain, Judged):
        raise Unsupported(f"{domain.name} has no LLM-verifier prompts (it does not implement Judged)")
    if why := dict(domain.purposes).get(purpose, f"{domain.name} has no {purpose!r} prompt"):
        raise Unsupported(why)
    return domain


def read_judgement(domain: Domain, instance: Instance, text: str, reply: str,
                   variant: VerifyVariant = "default") -> Judgement:  # fmt: skip
    """Read the reply to `verification_messages`."""
    assert isinstance(domain, Judged)  # verification_messages asked it
    return domain.judge_reply(instance, verify_purpose(variant), text, reply)
