"""The validator-guided refinement study's recorded runs (paper 004; Singh8899/LLM-Planning-Leonardo) as a study
that replays them through `refine`.

The study's layout (its `pddl_processor.py` and `model_manager.py` `generate_with_validation`): an output folder
per domain (`MODEL_OUTPUT/<domain>/`, e.g. `model_outputs_llama_blocksword/blocksworld/`) holding, for problem
`pddl_N_K`, the reply of round i+1 in `pddl_N_K_temp{i}.txt` (i = 0..3: "temp" is the round) and
`pddl_N_K_plan.txt`, the last reply followed by "\\n\\nGenerated in N iterations."; its problems folder
(`problems_blocksworlds/blocksworld/`) holds `<domain>_domain.pddl` beside the problems `pddl_N_K.pddl`, which
planning folders of ours read as they are (`domains.planning.instances.domain_file`).

The files hold the replies only, not what was sent. What was sent is rebuilt as the study's code built it, and
that is what our `refine` graph sends: the system prompt and `ppdl_problem_prompt(domain, problem)` on the files
as read (`PlanningDomain.prompt(..., "refine")`), then per failed round the reply as an assistant turn and the
request around VAL's reason as the next user turn (`assess_val`, `feedback(..., "request")`). VAL's output was
not recorded, so the reason is our VAL reading's; each reply is stored under the request our graph sends in its
round, at the study's greedy decoding and `max_new_tokens=5000` (what the replay keys on).

A run is the study's VAL verdicts: every round before the last was rejected, and the last accepted where the run
stopped before round 4 (`MAX_ITERATIONS = 4`). A run whose replies our VAL reading judges otherwise would stop
elsewhere on replay (or ask for a round the study never made): it is left out as a bad record naming the round,
so every replayed run stops at its recorded round. Unreadable runs (no "Generated in N iterations." line, a
missing or non-UTF-8 reply file, a last reply that is not the plan file's, no problem file) are bad records too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critiquebench.domains import call_options, get_domain, load_instances
from critiquebench.domains.contract import Instance
from critiquebench.domains.planning.instances import DOMAIN_SUFFIX, domain_file
from critiquebench.importers.recording import (
    BadRecord,
    RecordedCall,
    Recording,
    RecordingError,
    content_source,
    write_recording,
)
from critiquebench.store.cache import sampling_params
from critiquebench.studies.config import StudyConfig, canonical_schemes

KIND = "refinement"
ROUNDS = 4  # the study's MAX_ITERATIONS (model_manager.py)
REPLY_CAP = 5000  # its max_new_tokens (pddl_processor.py, model_manager.py)
TEMPERATURE = 0.0  # its default decoding: do_sample=False (`--sampling` unset)
SCHEME = f"refine:rounds={ROUNDS}"
PLAN_SUFFIX, ROUND_FILE = "_plan.txt", "{problem}_temp{index}.txt"
_GENERATED = re.compile(r"\n\nGenerated in (\d+) iterations\.\s*\Z")


class RefinementError(ValueError):
    """The import cannot go ahead; the message is one line."""


@dataclass(frozen=True)
class RecordedRun:
    """One problem's run as the study's files record it."""

    domain: str  # the output folder's name, the study's domain name ("blocksworld")
    problem: str  # "pddl_N_K": its problem file's stem, our instance id
    replies: tuple[str, ...]  # round 1, 2, ...: `pddl_N_K_temp{0..}.txt`
    rounds: int  # "Generated in N iterations."

    @property
    def solved(self) -> bool | None:
        """The study's VAL verdict on the last reply: accepted when the loop stopped early; unknown after round 4
        (the loop ends there whatever VAL says)."""
        return True if self.rounds < ROUNDS else None


@dataclass(frozen=True)
class Imported:
    """What an import stored."""

    config: StudyConfig
    runs: int  # runs stored
    added: int  # recorded calls newly stored
    bad: tuple[BadRecord, ...]
    by_rounds: Mapping[int, int]  # stored runs by their recorded number of rounds


def output_folders(replies: Path) -> list[Path]:
    """The study's output folders under `replies`: itself when it holds plan files, else its subfolders that do."""
    if not replies.is_dir():
        raise RefinementError(f"{replies}: not a folder of the study's replies")
    if any(replies.glob("*" + PLAN_SUFFIX)):
        return [replies]
    found = sorted(p for p in replies.iterdir() if p.is_dir() and any(p.glob("*" + PLAN_SUFFIX)))
    if not found:
        raise RefinementError(f"{replies}: no *{PLAN_SUFFIX} files (the study's pddl_N_K_plan.txt) nor folders of them")
    return found


def problems_folder(problems: Path, domain: str) -> Path:
    """The problems of the study's domain `domain`: `problems` itself when it holds a domain file, else
    `problems/<domain>` (the study's PROBLEMS_PATH, one folder per domain)."""
    for folder in (problems, problems / domain):
        if folder.is_dir() and domain_file(folder) is not None:
            return folder
    raise RefinementError(f"{problems}: no domain file (domain.pddl or one NAME_domain.pddl) here or in {domain}/")


def read_runs(folder: Path) -> tuple[list[RecordedRun], list[BadRecord]]:
    """Every run recorded in one output folder, in problem order, and the runs that cannot be read."""
    runs, bad = [], []
    for plan in sorted(folder.glob("*" + PLAN_SUFFIX), key=lambda p: _order(p.name)):
        problem = plan.name[: -len(PLAN_SUFFIX)]
        try:
            runs.append(_read_run(folder, problem, plan))
        except ValueError as exc:
            bad.append(BadRecord(f"{folder.name}/{problem}", str(exc)))
    return runs, bad


def _read_run(folder: Path, problem: str, plan: Path) -> RecordedRun:
    text = _text(plan)
    found = _GENERATED.search(text)
    if found is None:
        raise ValueError(f'{plan.name} does not end with "Generated in N iterations." (cut off?)')
    rounds = int(found[1])
    if not 1 <= rounds <= ROUNDS:
        raise ValueError(f"{plan.name} says {rounds} iterations; the study's loop makes 1 to {ROUNDS}")
    replies = []
    for index in range(rounds):
        path = folder / ROUND_FILE.format(problem=problem, index=index)
        if not path.is_file():
            raise ValueError(f"{path.name} is missing (the run made {rounds} round(s))")
        replies.append(_text(path))
    if text[: found.start()] != replies[-1]:
        last = ROUND_FILE.format(problem=problem, index=rounds - 1)
        raise ValueError(f"{plan.name}'s reply is not round {rounds}'s ({last})")
    return RecordedRun(folder.name, problem, tuple(replies), rounds)


def _text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path.name} is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ValueError(f"{path.name}: {exc.strerror}") from None


def _order(name: str) -> tuple[Any, ...]:
    """pddl_4_2 before pddl_4_10 (numbers by value)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name))


def replayed_calls(domain: Any, instance: Instance, run: RecordedRun) -> tuple[list[RecordedCall], str | None]:
    """The calls our `refine` graph makes replaying `run`, each with its recorded reply, or why the replay would
    not stop at the recorded round (our VAL reading against the study's VAL verdicts)."""
    messages = list(domain.prompt(instance, "refine"))
    calls = []
    for number, reply in enumerate(run.replies, start=1):
        calls.append(RecordedCall(tuple(messages), reply, 0, f"{run.domain}/{run.problem} round {number}"))
        verdict, _ = domain.assess_val(instance, reply)
        last = number == run.rounds
        if verdict.valid and not last:
            return calls, f"round {number}: our VAL reading accepts it, the study's VAL did not (its loop went on)"
        if last:
            if run.solved and not verdict.valid:
                reason = "; ".join(verdict.errors) or verdict.status
                return calls, f"round {number}: the study's VAL accepted it, our VAL reading does not ({reason})"
            break
        if verdict.final:
            return calls, f"round {number}: our reading ends the loop here ({verdict.status})"
        request = domain.feedback(instance, verdict, "request")
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": request}]
    return calls, None


def read_recording(
    replies: Path, problems: Path, *, model: str, study: str
) -> tuple[Recording, list[RecordedRun], list[BadRecord]]:
    """`replies` (an output folder of the study, or a folder of them) and `problems` as a `Recording` of the
    replayable `refine` study, the runs it holds, and the records left out (see the module docstring)."""
    domains: list[str] = []
    selections: dict[str, str] = {}
    calls: list[RecordedCall] = []
    kept: list[RecordedRun] = []
    bad: list[BadRecord] = []
    stop: tuple[str, ...] = ()
    for folder in output_folders(Path(replies)):
        runs, unread = read_runs(folder)
        bad += unread
        source = problems_folder(Path(problems), folder.name)
        name = str(source.resolve())
        try:
            domain = get_domain(name)
            instances = {i.id: i for i in load_instances(domain, "all", source)}
        except Exception as exc:  # noqa: BLE001 - a broken PDDL folder is one line, whatever broke
            raise RefinementError(f"{source}: {exc}") from None
        stop = tuple(call_options(domain).get("stop") or ())
        ids = []
        for run in runs:
            instance = instances.get(run.problem)
            if instance is None:
                bad.append(BadRecord(f"{run.domain}/{run.problem}", f"no problem file {run.problem}.pddl in {source}"))
                continue
            made, differs = replayed_calls(domain, instance, run)
            if differs is not None:
                bad.append(BadRecord(f"{run.domain}/{run.problem}", differs))
                continue
            calls += made
            kept.append(run)
            ids.append(run.problem)
        if ids:
            domains.append(name)
            selections[name] = ",".join(ids)
    bad.sort(key=lambda b: _order(b.position))
    if not kept:
        shown = "; ".join(b.describe() for b in bad[:3])
        raise RefinementError(f"{replies}: no run could be imported{': ' + shown if shown else ''}")
    config = StudyConfig(
        name=study, domains=tuple(domains), instances=selections, schemes=canonical_schemes((SCHEME,)), model=model,
        temperature=TEMPERATURE, max_tokens=REPLY_CAP, replay=True,
    )  # fmt: skip
    params = sampling_params(temperature=TEMPERATURE, max_tokens=REPLY_CAP, stop=stop)
    recording = Recording(content_source(KIND, model, calls), config, calls, params, tuple(bad))
    return recording, kept, bad


def import_refinement(replies: Path, problems: Path, store: Path | str, study: str, *, model: str) -> Imported:
    """Read the study's recorded runs and store them as study `study` (one transaction: every answer and the
    study, or nothing); `critiquebench resume STUDY --replay` then replays them with 0 LLM calls."""
    recording, runs, bad = read_recording(replies, problems, model=model, study=study)
    try:
        written = write_recording(store, recording)
    except RecordingError as exc:
        raise RefinementError(str(exc)) from None
    by_rounds: dict[int, int] = {}
    for run in runs:
        by_rounds[run.rounds] = by_rounds.get(run.rounds, 0) + 1
    return Imported(written.config, len(runs), written.added, tuple(bad), dict(sorted(by_rounds.items())))


def layout() -> tuple[tuple[str, str, str], ...]:
    """The study's files and what the import makes of each (the table of docs/papers/validator-refinement.md)."""
    problem = "pddl_N_K"
    return (
        (ROUND_FILE.format(problem=problem, index="{i}"), "round i+1's reply as decoded (`generate_with_validation`; "
         f"i = 0..{ROUNDS - 1})", "the reply of the run's call i+1, as read (not stripped)"),
        (problem + PLAN_SUFFIX, 'the last reply, then "\\n\\nGenerated in N iterations." (`pddl_processor.py`)',
         f"the run's rounds N (1-{ROUNDS}); its reply must be round N's; stopped before {ROUNDS}: the study's VAL "
         "accepted round N; every earlier round it rejected"),
        ("NAME" + DOMAIN_SUFFIX, "the domain, beside the problems (`find_pddl_files`)",
         "the domain file of the problems folder, read as it is"),
        (f"{problem}.pddl", "a problem (every other .pddl file)", f"instance `{problem}`"),
        ("(not recorded)", "the requests: system prompt, `ppdl_problem_prompt(domain, problem)`, then per failed "
         "round the reply and `The plan you provided is invalid. {reason}. ...`",
         f"rebuilt as our `{SCHEME}` sends them; each reply is stored under its round's request at temperature "
         f"{TEMPERATURE} and max_tokens {REPLY_CAP} (the study's greedy decoding, `max_new_tokens`), endpoint "
         f"`recorded:{KIND}:<sha12>`"),
    )  # fmt: skip
