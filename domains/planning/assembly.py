"""Which part of an answer is the plan, and how its lines add up to the plan the model committed to.

- Region: the last ``[PLAN] ... [PLAN END]`` block that holds actions; without ``[PLAN]`` markers (the prompt
  already ended with ``[PLAN]``) the text before the first ``[PLAN END]``. A hallucinated next
  ``[STATEMENT]`` (PlanBench's prompts) or "The problem to solve:" (the PDDL prompt's) ends the region.
- Assembly: a repeated item number replaces the steps from that item on (a "- Step N:" bullet of prose is
  no item); an item's action written again on the unnumbered line right after it (its "Action:" line) is
  one step; in numbered or bulleted answers,
  unlisted lines are commentary; after prose that signals a correction or restatement ("wait", "corrected
  plan", "to summarize", ...), or when a new run of steps repeats the plan's first action, the plan restarts;
  an action its own line calls wrong ("X is not correct") is retracted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Step = tuple[str, tuple[str, ...]]

_FENCE = re.compile(r"^\s*(```|~~~).*$", re.MULTILINE)
_MARKUP = re.compile(r"\*\*|__|`|^\s*#+\s*", re.MULTILINE)
# single-underscore italics around a word ("object _d_"); "location_0_0" and "package_1" are names, kept
_ITALICS = re.compile(r"(?<![\w])_([^_\s][^_\n]*?)_(?![\w])")
# Prose that announces a corrected or restated plan; commentary between steps must not match.
_RESTART = re.compile(
    r"\b(wait|oops|wrong|mistake|incorrect|invalid|not (?:correct|valid|right|possible)|revis\w*|"
    r"correct(?:ed|ion)|updated?|final|here is|here's|summar\w*|restat\w*|as follows|the plan is|plan:)"
)


@dataclass(frozen=True)
class Line:
    """One non-blank answer line as the reader saw it."""

    text: str
    actions: tuple[tuple[Step, bool], ...]  # (action, retracted-by-this-line)
    number: int | None
    listed: bool
    has_verb: bool


def flatten(text: str) -> str:
    """Lower-cased text without markdown fences, bold, italics, backticks and heading marks."""
    return _ITALICS.sub(r"\1", _MARKUP.sub("", _FENCE.sub("", text))).lower()


def region(text: str, check: Callable[[str], bool]) -> str:
    """The part of `text` holding the plan; `check` tells whether a part holds any action."""
    parts = re.split(r"\[statement\]|the problem to solve:", text)
    text = next((part for part in parts if check(part)), text)
    if "[plan]" in text:
        blocks = [b.split("[plan end]")[0] for b in text.split("[plan]")[1:]]
        return next((b for b in reversed(blocks) if check(b)), text)
    return next((part for part in text.split("[plan end]") if check(part)), text)


def assemble(lines: list[Line]) -> tuple[Step, ...]:
    """The committed plan from the answer's lines (rules in the module docstring)."""
    list_mode = any(line.listed and line.actions for line in lines)
    plan: list[Step] = []
    starts: dict[int, int] = {}
    restart = False
    after_prose = False
    previous: Line | None = None
    for line in lines:
        if line.actions and line.number is None and previous is not None and previous.number is not None and (
            [s for s, _ in line.actions] == [s for s, _ in previous.actions]
        ):
            # "1. **Unstack the red block ...:**" then "- Action: `unstack the red block ...`": one step written
            # as the item's heading and again as its action line
            previous = None
            continue
        if line.actions:
            previous = line
        if not line.actions:
            if not line.has_verb:
                restart = restart or bool(_RESTART.search(line.text))
                after_prose = True
            continue
        if list_mode and not line.listed:
            continue
        if line.number is not None:
            if line.number in starts:
                del plan[starts[line.number] :]
                starts = {n: i for n, i in starts.items() if i < len(plan)}
            elif restart and line.number == 1:
                plan, starts = [], {}
            starts[line.number] = len(plan)
        elif plan and (restart or (after_prose and line.actions[0][0] == plan[0])):
            plan, starts = [], {}
        restart = after_prose = False
        for step, retracted in line.actions:
            if not retracted:
                plan.append(step)
            elif step in plan:
                del plan[len(plan) - 1 - plan[::-1].index(step) :]
    return tuple(plan)
