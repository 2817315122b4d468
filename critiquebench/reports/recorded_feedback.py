"""Where our first-error feedback and a recorded PlanBench backprompting run's part, turn by turn, and why.

A recorded conversation (PlanBench's `task_1_plan_generation_backprompting.json`) holds every answer and the
feedback VAL's message gave it (`get_validation_message`). Each answer is read and judged by a planning domain
(our reader by default, or a `reading` of PlanBench's) and its first-error feedback compared with the recorded
turn. Disagreements fall in three classes, told apart by reading the answer both ways:

- "no answer": the recorded answer is empty and its feedback is not an empty plan's (the unmet goals).
  PlanBench's 2023 loop appended "" as the assistant's turn when the call failed on a rate limit
  (`llm_utils.py` @27b0c44 `send_query_with_feedback`) and sent the same feedback again (`back_prompting.py`
  @27b0c44 `self_critique`: `continue` with the query unchanged): that feedback belongs to the answer before.
- "PlanBench reads prose": PlanBench's reader (`text_to_plan_blocksworld`, `planbench-whole`) takes an action
  from any line holding a verb and as many objects as it takes, so an explanation ("prevents the execution of
  the attack action on object d") becomes a one-step plan; ours reads no plan there.
- "ours reads prose": our reader takes an action PlanBench's does not (a verb quoted in an explanation).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

NO_ANSWER = "no answer"
PLANBENCH_READS_PROSE = "PlanBench reads prose"
OURS_READS_PROSE = "ours reads prose"


@dataclass(frozen=True)
class Disagreement:
    """One instance's turns whose feedback differs from the recorded run's."""

    instance: str
    turns: tuple[int, ...]  # the answer's index in the conversation's messages
    why: str
    answer: str  # the first differing answer
    recorded: str  # the feedback PlanBench sent after it
    ours: str  # ours after it


def feedback_disagreements(path: Path, domain: str, dataset: Path, reading: str | None = None
                           ) -> tuple[int, list[Disagreement]]:  # fmt: skip
    """The number of feedback turns of the recorded run at `path` and, per instance, those where `domain` (with
    `reading`) sends another first-error feedback than the recorded one."""
    from critiquebench.domains import get_domain, load_instances

    ours = get_domain(domain, **({"reading": reading} if reading else {}))
    planbench = get_domain(domain, reading="planbench-whole")
    records = json.loads(path.read_text(encoding="utf-8"))["instances"]
    instances = {i.id: i for i in load_instances(ours, ",".join(str(r["instance_id"]) for r in records), dataset)}
    turns = 0
    found: list[Disagreement] = []
    for record in records:
        instance = instances[str(record["instance_id"])]
        differing: list[tuple[int, str, str, str]] = []
        for (at, answer), reply in _pairs(record["messages"]):
            turns += 1
            sent = ours.feedback(instance, ours.verify(instance, answer), "first")
            if sent != reply:
                differing.append((at, answer, reply, sent))
        if differing:
            first = differing[0]
            why = _why(first[1], ours, planbench, instance)
            found.append(Disagreement(instance.id, tuple(d[0] for d in differing), why, first[1], first[2], first[3]))
    return turns, found


def _pairs(messages: list[dict[str, str]]) -> Iterable[tuple[tuple[int, str], str]]:
    """(index, answer) and the feedback that followed it, for every answer the run gave feedback on."""
    for k in range(len(messages) - 1):
        if messages[k]["role"] == "assistant" and messages[k + 1]["role"] == "user":
            yield (k, messages[k]["content"]), messages[k + 1]["content"]


def _why(answer: str, ours: object, planbench: object, instance: object) -> str:
    if not answer.strip():
        return NO_ANSWER
    read_ours = ours.parse(instance, answer)  # type: ignore[attr-defined]
    _, read_planbench = planbench.assess(instance, answer)  # type: ignore[attr-defined]
    if read_planbench and not read_ours:
        return PLANBENCH_READS_PROSE
    return OURS_READS_PROSE if read_ours and not read_planbench else "the readers read different plans"
