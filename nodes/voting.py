"""Voting: a critic's majority over N samples, and self-consistency's vote over the collected answers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from critiquebench.domains import call_options
from critiquebench.domains.contract import Instance, LLMVerdict
from critiquebench.nodes.context import END, RunContext, RunState, rounds_before
from critiquebench.nodes.sound_verifier import finish

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def majority(critic: Callable[..., LLMVerdict], instance: Instance, answer: str, n: int, first: int = 0
             ) -> LLMVerdict:  # fmt: skip
    """Ask `critic` with samples first..first+n-1; "valid" needs a strict majority (a tie counts as wrong).

    The critique is the first one on the winning side, so a "wrong" majority hands back a reason to fix. The
    vote fails the run (`LLMVerdict.fails_run`) only when every sample did (with one vote, as the studies asked:
    that sample).
    """
    if n < 1:
        raise ValueError(f"votes must be >= 1, not {n}")
    verdicts = [critic(instance, answer, sample=first + i) for i in range(n)]
    says_valid = 2 * sum(v.says_valid for v in verdicts) > n
    side = [v for v in verdicts if v.says_valid == says_valid]
    return LLMVerdict(says_valid, side[0].critique if side else "", parsed=any(v.parsed for v in verdicts),
                      fails_run=all(v.fails_run for v in verdicts))


# What self-consistency counts: "answer", the canonical parsed answer (ours: equal answers written differently
# are one vote), or "text", the reply text as the study's code compared it (kstechly/gpt-and-i
# `domain_utils/game24.py` and `graph_coloring.py` `evaluate_up_to` @d883df86: `max(set(responses),
# key=responses.count)` over the replies `send_query` returned, cut at the stop and stripped).
VOTE_ON = ("answer", "text")


def reply_text(answer: str | None, stop: tuple[str, ...] = ()) -> str:
    """A reply as the study's code held it: cut before its first stop sequence, stripped."""
    text = answer or ""
    for seq in stop:
        text = text.split(seq)[0]
    return text.strip()


def pick_consistent(rows: list[dict[str, Any]], on: str = "answer", stop: tuple[str, ...] = ()) -> int:
    """The round whose answer (`on` "answer": the canonical answer; "text": the reply text, `reply_text`) is the
    most common (ties: the earliest to appear; the study's code took whichever its set listed first, an order
    that changes from one Python process to the next); round 1 when no answer could be read at all."""
    if on not in VOTE_ON:
        raise ValueError(f"vote must be one of {', '.join(VOTE_ON)}, not {on!r}")
    if on == "text":
        keyed = [(r["round"], reply_text(r["answer"], stop)) for r in rows]
        keyed = [(round_, t) for round_, t in keyed if t]
    else:
        keyed = [(r["round"], r["canonical"]) for r in rows if r["canonical"] is not None]
    if not keyed:
        return rows[0]["round"] if rows else 1
    counts = Counter(c for _, c in keyed)
    best = max(counts.values())
    return next(round_ for round_, c in keyed if counts[c] == best)


def make_consistency_vote(on: str = "answer") -> Callable[[RunState, Runtime[RunContext]], dict[str, Any]]:
    """Self-consistency's final node: output the most common answer (`on`: see `VOTE_ON`) of the run's rounds."""

    def vote(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        rows = rounds_before(runtime.context, state, state["round"] + 1)
        stop = tuple(call_options(runtime.context.domain).get("stop") or ())
        chosen = pick_consistent(rows, on, stop)
        if chosen == state["round"]:
            return finish(chosen, state["attempt"])
        # an earlier round's row only gains its `stopped` mark: its other fields are recorded already
        return {"attempt": {"round": chosen, "stopped": 1}, "next": END, "done": True, "final_round": chosen}

    return vote
