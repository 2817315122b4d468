"""What one run of a scheme costs in LLM calls, as the scheme itself declares it.

Each scheme module has `calls(params) -> Calls` (params with the defaults filled in); `Scheme.calls` asks it, and
the dry-run estimate (`critiquebench.studies.estimate`) and the guard against runaway studies build on it, so
the app layer never re-models a scheme by its name. A run makes up to `rounds` generation rounds, each followed
by `critic` LLM critic calls, `repeats` times over (independent repetitions inside one run); it can end after
any round when `stops`. Closed forms only: a scheme with 10^9 rounds costs nothing to estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from critiquebench.nodes.critics import makes_llm_calls


@dataclass(frozen=True)
class Calls:
    """The LLM calls one run makes (see the module docstring)."""

    rounds: int
    critic: int = 0  # LLM critic calls after each generation round (its votes); 0 for a sound critic
    stops: bool = True  # a run may end after any round (an answer its verifier or critic accepts)
    repeats: int = 1  # independent repetitions in one run (intrinsic's `runs`)
    samples: bool = False  # round r re-asks the first prompt as sample r: every prompt is known before the run
    shared_first: bool = True  # round 1 is the domain's prompt at sample 0, the call other schemes make too

    @property
    def most(self) -> int:
        """The most calls a run can make."""
        return self.repeats * self.rounds * (1 + self.critic)

    def reach(self, stop_rate: float) -> float:
        """The expected number of rounds of one repetition when each round ends it with probability
        `stop_rate`: round r + 1 is reached with probability (1 - stop_rate)^r."""
        go = 1.0 - stop_rate if self.stops else 1.0
        if go >= 1.0:
            return float(self.rounds)
        return (1.0 - go**self.rounds) / (1.0 - go)

    def expected(self, stop_rate: float) -> float:
        """The expected calls of a run (see `reach`)."""
        return self.repeats * (1 + self.critic) * self.reach(stop_rate)


def critic_calls(params: Mapping[str, Any]) -> int:
    """LLM calls a scheme's critic makes per round: its votes, none for a sound critic."""
    critic = params.get("critic")
    return int(params.get("votes", 1)) if critic is None or makes_llm_calls(str(critic)) else 0
