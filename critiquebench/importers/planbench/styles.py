"""Which of PlanBench's prompts a results file recorded: the domain options that rebuild its queries exactly.

Every style PlanBench sent (`domains/planning/planbench_prompts.py`, `prompts.py`) is tried in turn, with the
intros the config offers and the trailing newline of PlanBench's older pipeline, on the file's first instances;
the first whose prompts equal the recorded ones is checked against every instance. A file whose prompts match
no style is refused with one line naming the nearest style and the first line that differs, so nothing is
imported that could not replay.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from critiquebench.domains.planning.replay import Replay, ReplayedPlanning, Replaying, view
from critiquebench.domains.planning.strips import PlanningError
from critiquebench.domains.planning.styles import HISTORY, ONE_SHOT_STYLES, recognised
from critiquebench.importers.planbench.file import ImportError_

PROBE = 3  # instances a candidate style must rebuild before it is checked on all of them


@lru_cache(maxsize=8)
def _built(base: str) -> Any:
    from critiquebench.domains import get_domain

    return get_domain(base)


def file_domain(base: str, shown: Replaying | None = None) -> Any:
    """The planning domain `base` under the options `shown`: built once (a file's domain is a shipped one or a
    folder laid out once per content, `planbench.checkout.write_folder`), each option set a view of it
    (`replay.view`) that shares its parsed problems, rather than a new domain per candidate style, reader or
    example."""
    try:
        domain = _built(base)
    except (PlanningError, ValueError, OSError):
        from critiquebench.domains import get_domain

        return get_domain(base, **(shown or Replaying()).options())
    return view(domain, shown)


def candidates(query: str, history: Sequence[str] = (), fixed: Replay | None = None) -> Iterator[Replaying]:
    """Domain options to try for a file whose first query is `query`, the likeliest first: the style rows
    (`styles.STYLES`) that recognise it, each with its intros (`history`: the domain's historical ones,
    `NLConfig.intros`) and, where the row allows it and the query ends in one, PlanBench's older trailing newline;
    the `fixed` replay record (e.g. a reading) kept as it is."""
    newlines = (False, True) if query.endswith("\n") else (False,)
    for row in recognised(query):
        intros = [name for intro in row.intros for name in (history if intro == HISTORY else (intro,))]
        for intro in dict.fromkeys(intros):
            for newline in newlines:
                if newline and not row.newline:
                    continue  # the style fixes its own ending (nl_legacy's newline is part of it)
                yield Replaying(row.name, intro, replace(fixed or Replay(), newline=newline))


def first_difference(recorded: str, ours: str) -> str:
    """The first line where `ours` departs from `recorded`, both shown (shortened)."""
    theirs, mine = recorded.split("\n"), ours.split("\n")
    for n, (a, b) in enumerate(zip(theirs, mine, strict=False), start=1):
        if a != b:
            cut = max(0, _common_prefix(a, b) - 30)  # show where the two lines part, not their shared start
            lead = "..." if cut else ""
            return f"line {n}: recorded {lead}{_short(a[cut:])}, ours {lead}{_short(b[cut:])}"
    n = min(len(theirs), len(mine)) + 1
    if len(theirs) > len(mine):
        return f"line {n}: recorded {_short(theirs[n - 1])}, ours ends before it"
    return f"line {n}: ours goes on with {_short(mine[n - 1])}, the recorded prompt ends before it"


def _short(text: str) -> str:
    return repr(text if len(text) <= 70 else text[:67] + "...")


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def recognise(
    path: Path,
    base: str,
    dataset: Path,
    queries: Mapping[int, str],
    example_plans: Mapping[str, str],
    fixed: Replay,
) -> Replaying:
    """The domain options (prompt style, intro, newline, example plans) whose prompts are the recorded
    `queries` (instance id -> the user message sent); ImportError_ naming the nearest style when none are.
    The `fixed` replay record (e.g. a reading) is kept as it is."""
    ids = sorted(queries)
    probe = ids[:PROBE]
    first = queries[probe[0]]
    best: tuple[int, str, str] | None = None  # (common prefix, style, difference)
    nearest: Replaying | None = None
    try:
        history = list(file_domain(base).cfg.intros)
    except (PlanningError, ValueError, OSError, AttributeError):
        history = []
    loaded: list[Any] | None = None  # the probe instances: the same under every candidate's options
    for options in candidates(first, history, fixed):
        try:
            domain = file_domain(base, options)
            loaded = loaded or domain.load(",".join(map(str, probe)), dataset)
            if example_plans:
                plans = recorded_example_plans(domain, loaded, example_plans)
                if plans:
                    options = options.with_replay(example_plans=plans)
                    domain = file_domain(base, options)
            mismatch = None
            for inst in loaded:
                ours = domain.prompt(inst)[-1]["content"]
                if ours != queries[int(inst.id)]:
                    mismatch = (inst, ours)
                    break
        except (PlanningError, ValueError, OSError) as exc:
            if best is None:
                best = (-1, options.describe(), f"cannot be built here ({exc})")
            continue
        if mismatch is None:
            return _checked(path, base, dataset, queries, ids, options, example_plans)
        inst, ours = mismatch
        recorded = queries[int(inst.id)]
        prefix = _common_prefix(recorded, ours)
        if best is None or prefix > best[0]:
            best = (prefix, options.describe(), f"instance {inst.id}, {first_difference(recorded, ours)}")
            nearest = options
    assert best is not None
    shown = None if nearest is None else _shown_example(base, dataset, queries[probe[0]], probe[0], nearest)
    if nearest is not None and shown is not None:
        plans = {shown: text} if (text := shown_plan(queries[probe[0]])) is not None else {}
        return _checked(path, base, dataset, queries, ids, nearest.with_replay(example=shown), plans)
    raise ImportError_(f"{path}: the recorded prompts match none of PlanBench's styles; nearest: {best[1]}, {best[2]}")


MAX_EXAMPLE_SEARCH = 1000  # PlanBench's sets hold at most a few hundred problems


def _shown_example(base: str, dataset: Path, query: str, ident: int, options: Replaying) -> str | None:
    """The instance a one-shot `query` (of instance `ident`) showed as its example, where it is not the one
    PlanBench's rule picks: the dataset's instance whose prompt in the nearest style is the query sent."""
    if options.prompt_style not in ONE_SHOT_STYLES:
        return None
    try:
        domain = file_domain(base, options)
        [inst] = domain.load(str(ident), dataset)
        others = domain.load(None, dataset)[:MAX_EXAMPLE_SEARCH]
    except (PlanningError, ValueError, OSError):
        return None
    plan = shown_plan(query)
    for candidate in others:
        other = candidate.id
        if other == inst.id:
            continue
        plans = {other: _lines(domain, candidate, plan)} if plan else options.replay.example_plans
        try:
            if (
                file_domain(base, options.with_replay(example=other, example_plans=plans)).prompt(inst)[-1]["content"]
                == query
            ):
                return other
        except (PlanningError, ValueError, OSError):
            continue
    return None


def _lines(domain: Any, inst: Any, plan: str) -> list[str]:
    """The PDDL lines of an example plan as the prompt showed it (English, or state-tracking Action lines)."""
    from critiquebench.domains import Instance

    if "\n   Action: " in plan:
        plan = "\n".join(ln.split("Action:", 1)[1] for ln in plan.split("\n") if "   Action: " in ln)
    return domain.parse(Instance(domain.name, "example", {"problem": inst.data["problem"]}), plan) or []


def shown_plan(query: str) -> str | None:
    """The plan a one-shot query's example shows: its first [PLAN] block (to [PLAN END], or [PLAN_END] in
    PlanBench's PDDL prompt)."""
    start = query.find("[PLAN]")
    ends = [e for e in (query.find("[PLAN END]"), query.find("[PLAN_END]")) if e > start >= 0]
    return query[start + len("[PLAN]") : min(ends)] if ends else None


def _checked(
    path: Path,
    base: str,
    dataset: Path,
    queries: Mapping[int, str],
    ids: Sequence[int],
    options: Replaying,
    example_plans: Mapping[str, str],
) -> Replaying:
    """`options` checked on every instance (example plans gathered from all of them first)."""
    domain = file_domain(base, options)
    try:
        loaded = domain.load(",".join(map(str, ids)), dataset)
    except (PlanningError, ValueError, OSError) as exc:
        raise ImportError_(f"{path}: {exc}") from None
    if example_plans:
        plans = recorded_example_plans(domain, loaded, example_plans)
        if plans:
            options = options.with_replay(example_plans=plans)
            domain = file_domain(base, options)
    for inst in loaded:
        try:
            ours = domain.prompt(inst)[-1]["content"]
        except PlanningError as exc:
            raise ImportError_(f"{path}: instance {inst.id}: {exc}") from None
        recorded = queries[int(inst.id)]
        if ours != recorded:
            raise ImportError_(
                f"{path}: instance {inst.id}: the recorded prompt is not PlanBench's {options.describe()} prompt "
                f"the other instances were sent: {first_difference(recorded, ours)}"
            )
    return options


def recorded_example_plans(
    domain: Any, loaded: Sequence[Any], example_plans: Mapping[str, str]
) -> dict[str, list[str]]:
    """PlanBench's own plans of the example instances the run showed, as PDDL lines, for the examples the
    dataset knows no plan of (Logistics ships none; our planner may pick another plan as short). Stored with the
    study, they make the replayed prompts the recorded ones."""
    from critiquebench.domains import Instance

    plans: dict[str, list[str]] = {}
    for inst in loaded:
        for example in inst.data.get("examples", [])[:1]:
            ident = str(example["id"])
            text = example_plans.get(ident)
            if text is None or example.get("plan") or ident in plans:
                continue
            if "\n   Action: " in text:  # a state-tracking example: its plan is its Action lines
                text = "\n".join(ln.split("Action:", 1)[1] for ln in text.split("\n") if "   Action: " in ln)
            example_inst = Instance(domain.name, ident, {"problem": example["problem"], "source": ident})
            parsed = domain.parse(example_inst, text)
            if parsed:
                plans[ident] = parsed
    return plans


def producing_reader(
    base: str,
    options: Replaying,
    dataset: Path,
    answers: Mapping[int, tuple[str, Any]],
    conversation: bool = False,
) -> tuple[str | None, float]:
    """The plan reader that produced a file's labels: the one whose plans equal the plans PlanBench stored
    (`extracted_llm_plan`) on the most answers; with the share of stored plans the best reader reproduces.
    `answers` maps instance id -> (answer, stored plan). PlanBench's labels were made by several reader
    versions (`../shared/audits/planbench_breadth.md`, class 4); the stored plan says which.

    On a tie with our sound reader (None): a one-shot file keeps ours, as its replay reads only the answers whose
    plans were stored. A `conversation` (backprompting) file takes PlanBench's: its stored plan is the last
    answer's only, while every earlier answer's recorded feedback came from PlanBench's reader, so a tie on the
    last answers says nothing about the others, and only PlanBench's reader sends the recorded feedback there
    (GPT-4's Mystery run, instances 39 and 48: PlanBench read an action out of prose; see
    docs/papers/self-verification.md)."""
    from critiquebench.domains.planning.planbench_reading import BLOCKSWORLD_READINGS

    stored = {i: _plan_lines(plan) for i, (_, plan) in answers.items() if _plan_lines(plan) is not None}
    if not stored:
        return None, 1.0
    scores: dict[str | None, int] = {}
    # Each reader is scored only while it can still change the outcome: a later PlanBench reader must beat the
    # best so far (a tie keeps the earlier one), ours (the costliest, so last) must reach it (a tie keeps ours).
    # The choice and the share are those of scoring every answer with every reader.
    loaded: list[Any] | None = None  # the same instances under every reader
    for reading in (*BLOCKSWORLD_READINGS, None):
        try:
            domain = file_domain(base, options.with_replay(reading=reading))
            loaded = loaded or domain.load(",".join(map(str, sorted(stored))), dataset)
        except (PlanningError, ValueError, OSError):
            continue
        best_so_far = max(scores.values(), default=0)
        needed = best_so_far if reading is None else best_so_far + 1 if scores else 0
        score = 0
        for done, inst in enumerate(loaded):
            if score + len(loaded) - done < needed:
                break  # even every answer left would not change the outcome
            canonical = _plan_read(domain, inst, answers[int(inst.id)][0])
            score += _plan_lines(canonical or "") == stored[int(inst.id)]
        scores[reading] = score
    best = max(scores.items(), key=lambda kv: kv[1], default=(None, 0))
    share = best[1] / len(stored)
    if conversation:
        theirs = max(((r, n) for r, n in scores.items() if r is not None), key=lambda kv: kv[1], default=best)
        return (theirs[0] if theirs[1] >= scores.get(None, 0) else None), share
    return (best[0] if best[1] > scores.get(None, 0) else None), share


def _plan_read(domain: Any, inst: Any, answer: str) -> str | None:
    """The plan a reader takes from `answer`: a recorded run's reader reads it alone (`read_plan`); ours, a live
    domain's, by judging the answer."""
    return domain.read_plan(inst, answer) if isinstance(domain, ReplayedPlanning) else domain.assess(inst, answer)[1]


def _plan_lines(plan: Any) -> tuple[str, ...] | None:
    if isinstance(plan, list):
        plan = "\n".join(str(p) for p in plan)
    if not isinstance(plan, str):
        return None
    return tuple(" ".join(line.strip().lower().split()) for line in plan.splitlines() if line.strip())
