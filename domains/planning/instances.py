"""Instance files of a PDDL dataset folder -> `Instance`s (ids, problem text and one-shot examples).

A dataset is a folder with its problems in ``instances/``, ``orig_problems/`` (AutoPlanBench), ``problems/`` or
the folder itself, and optionally known plans: PlanBench's ``optimal_plans.json``, or one plan file per
problem (``orig_gold_plans/instance-N_gold_plan.txt``, ``gold_plans/``, ``plans/``, or ``instance-N.plan``
/ ``.soln`` beside the problem); a single ``.pddl`` file also works. Instance ``instance-N.pddl`` gets id
"N"; its examples are the instances before it in id order (PlanBench's one-shot example for N is N-1),
wrapping around for the first one.

Many-shot prompts (the intrinsic self-critique paper's planner, `pddl` style) draw their examples from a training
pool disjoint from the test instances instead (`train_pool`; 001:130: "randomly sampled from the respective training
set in a deterministic manner"): a folder's instances that the selection leaves out, or a generated set's own
training problems. A selection of a whole folder leaves nothing out: each instance then draws from every other
instance (leave-one-out, as the paper's 21-problem AutoPlanBench sets force, 001:177), which is not disjoint.
Each instance sees the pool in its own fixed random order (`training_pool`), so k shots are the first k, the
same in every ablation and nested across shot counts.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from critiquebench.domains.contract import Instance
from critiquebench.domains.datasets import Generated, parse_selection, pick
from critiquebench.domains.memo import read_once
from critiquebench.domains.planning.strips import PlanningError

MAX_EXAMPLES = 16  # neighbouring instances kept as `examples`; the nl style (PlanBench's one-shot) uses the first
# Generated sets draw their training pool (`train`) from a stream of their own: Figure 3's largest shot count.
TRAIN_POOL = 64
PROBLEM_FOLDERS = ("instances", "orig_problems", "problems")
PLAN_FOLDERS = ("orig_gold_plans", "gold_plans", "plans")
PLAN_SUFFIXES = ("_gold_plan.txt", ".plan", ".soln", ".txt")
NOT_PROBLEMS = ("domain.pddl", "domain_p.pddl")
# The refinement study's folders name their domain file `NAME_domain.pddl` beside the problems (Singh8899/
# LLM-Planning-Leonardo, `file_manager.py` `find_pddl_files`: the first file ending "_domain.pddl"; every other
# .pddl file is a problem).
DOMAIN_SUFFIX = "_domain.pddl"
_ID = re.compile(r"^instance-(.+)$")


def instance_id(path: Path) -> str:
    m = _ID.match(path.stem)
    return m.group(1) if m else path.stem


def _sort_key(ident: str) -> tuple[int, int | str]:
    return (0, int(ident)) if ident.isdigit() else (1, ident)


def problem_folder(path: Path) -> Path | None:
    """Where the problems of dataset folder `path` are, or None when it holds none."""
    for name in PROBLEM_FOLDERS:
        if (path / name).is_dir() and _problem_files(path / name):
            return path / name
    return path if _problem_files(path) else None


def _problem_files(folder: Path) -> list[Path]:
    return list(read_once(folder, _list_problems))


def _list_problems(folder: Path) -> list[Path]:
    return [p for p in folder.glob("*.pddl") if p.name.lower() not in NOT_PROBLEMS and not is_domain_file(p)]


def is_domain_file(path: Path) -> bool:
    return path.name.lower().endswith(DOMAIN_SUFFIX)


def domain_file(folder: Path) -> Path | None:
    """The domain file of a planning folder: domain.pddl, else its one `NAME_domain.pddl` (the refinement
    study's layout); None when it has neither, or several of the latter (which one is meant is not ours to guess)."""
    if (folder / "domain.pddl").is_file():
        return folder / "domain.pddl"
    found = sorted(p for p in folder.glob("*.pddl") if is_domain_file(p) and p.is_file())
    return found[0] if len(found) == 1 else None


def _files(path: Path) -> tuple[Path, list[Path]]:
    if path.is_file():
        return path.parent, [path]
    folder = problem_folder(path)
    if folder is None:
        raise PlanningError(f"{path}: no problem files (*.pddl in {', '.join(PROBLEM_FOLDERS)}/ or the folder) found")
    return folder, _problem_files(folder)


def read_plan_file(path: Path) -> list[str]:
    """PDDL action lines of a plan file (VAL / Fast Downward format: one ``(act a b)`` per line, ``;`` notes)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise PlanningError(f"{path}: cannot read plan: {err}") from None
    return [ln.split(";", 1)[0].strip() for ln in text.splitlines() if ln.split(";", 1)[0].strip()]


def _plan_files(path: Path, folder: Path, ids: list[str], by_id: dict[str, Path]) -> dict[str, list[str]]:
    places = [path / name for name in PLAN_FOLDERS if (path / name).is_dir()] + [folder]
    # each folder's names listed once: a folder of problems without plans (PlanBench's Logistics: 286) was asked
    # for 4 names per problem every time a domain loaded it
    listed = {place: _names(place) for place in places}
    out: dict[str, list[str]] = {}
    for ident in ids:
        stem = by_id[ident].stem
        for place in places:
            names = [stem + s for s in PLAN_SUFFIXES if stem + s in listed[place]]
            found = next((place / name for name in names if (place / name).is_file()), None)
            if found is not None:
                out[ident] = read_plan_file(found)
                break
    return out


def _names(folder: Path) -> frozenset[str]:
    """The names in `folder` (none if it cannot be listed)."""
    try:
        return frozenset(os.listdir(folder))
    except OSError:
        return frozenset()


def _known_plans(path: Path, folder: Path) -> dict[str, list[str]]:
    for candidate in (
        path / "optimal_plans.json",
        folder / "optimal_plans.json",
        folder.parent / "optimal_plans.json",
    ):
        if candidate.is_file():
            return read_once(candidate, _optimal_plans)
    return {}


def _optimal_plans(path: Path) -> dict[str, list[str]]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise PlanningError(f"{path}: malformed JSON: {err}") from None
    return {
        instance_id(Path(k)): [ln.strip() for ln in v["plan"].splitlines() if ln.strip()]
        for k, v in raw.items()
        if isinstance(v, dict) and isinstance(v.get("plan"), str)
    }


def _renamed_plans(domain: str, path: Path) -> dict[str, list[str]]:
    """A built-in domain's known plans taken from a sibling dataset folder with its actions renamed
    (`BuiltinDomain.plans_from`): Mystery Blocksworld's example plans are Blocksworld's optimal ones, as in
    every prompt of PlanBench's recorded Mystery runs."""
    from critiquebench.domains.registry import BUILTIN

    spec = BUILTIN.get(domain)
    if spec is None or spec.plans_from is None:
        return {}
    folder, renaming = spec.plans_from
    names = dict(renaming)
    for place in (path.parent / folder, path.parent.parent / folder):
        if (place / "optimal_plans.json").is_file():
            plans = _known_plans(place, place)
            return {i: [_rename(line, names) for line in plan] for i, plan in plans.items()}
    return {}


def _rename(line: str, names: dict[str, str]) -> str:
    words = line.strip().strip("()").split()
    return "(" + " ".join([names.get(words[0], words[0]), *words[1:]]) + ")" if words else line


def load_instances(domain: str, path: Path, selection: str | None) -> list[Instance]:
    """Instances of `domain` from a dataset folder or file; examples come from the same folder."""
    folder, files = _files(path)
    if path.is_file():
        siblings = _problem_files(folder)
        files = sorted(set(files) | set(siblings))
    by_id = {instance_id(p): p for p in files}
    ids = sorted(by_id, key=_sort_key)
    if path.is_file():
        chosen = [instance_id(path)]
    else:
        # The project-wide selection syntax and rules: ids in the order given, unknown ids are an error.
        wanted = parse_selection(selection)
        if isinstance(wanted, Generated):
            raise PlanningError(f"selection {selection!r} asks for generated instances: use generate()")
        chosen = pick({i: i for i in ids}, wanted, folder)
    plans = _known_plans(path if path.is_dir() else folder, folder)
    if not plans:
        plans = _plan_files(path if path.is_dir() else folder.parent, folder, ids, by_id)
    if not plans:
        plans = _renamed_plans(domain, path if path.is_dir() else folder.parent)
    texts: dict[str, str] = {}

    def text(ident: str) -> str:
        if ident not in texts:
            try:
                texts[ident] = read_once(by_id[ident], _problem_text)
            except OSError as err:
                raise PlanningError(f"{by_id[ident]}: cannot read: {err}") from None
        return texts[ident]

    picked = set(chosen)
    left_out = [e for e in ids if e not in picked]
    # one entry per problem, shared by every instance that shows it (read-only): one pool for every instance,
    # the selection's left-out instances, or with none left out all of them, each instance's own left out when
    # it is used (leave-one-out)
    entries: dict[str, dict[str, Any]] = {}

    def entry(ident: str) -> dict[str, Any]:
        if ident not in entries:
            entries[ident] = {"id": ident, "problem": text(ident), "plan": plans.get(ident)}
        return entries[ident]

    pool = [entry(e) for e in (left_out or ids)]
    position = {ident: i for i, ident in enumerate(ids)}
    out = []
    for ident in chosen:
        pos = position[ident]
        example_ids = [ids[(pos - k) % len(ids)] for k in range(1, min(MAX_EXAMPLES, len(ids) - 1) + 1)]
        data: dict[str, Any] = {
            "source": str(by_id[ident]),
            "problem": text(ident),
            "examples": [entry(e) for e in example_ids],
            "train_pool": pool,
        }
        out.append(Instance(domain, ident, data))
    return out


def _problem_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def training_order(pool: Sequence[dict[str, Any]], ident: str) -> list[dict[str, Any]]:
    """The training pool in instance `ident`'s own fixed random order."""
    order = list(pool)
    random.Random(f"train:{ident}").shuffle(order)
    return order


def training_pool(instance: Instance) -> list[dict[str, Any]]:
    """The instance's many-shot examples in its own fixed random order: its set's pool without itself, shuffled
    when asked for (a shuffle of every instance's pool at load time cost a replay of 500 answers half its CPU).
    Instances of older checkpoints carry the ordered `train` list itself; older still, their neighbours."""
    data = instance.data
    if "train_pool" in data:
        return training_order([e for e in data["train_pool"] if e["id"] != instance.id], instance.id)
    return list(data.get("train", data.get("examples", [])))


def generated_instances(domain: str, problems: list[str], seed: int, train: Sequence[str] = ()) -> list[Instance]:
    """Instances "gen-SEED-i" (i = 1..n) from n+1 generated problems; problem 0 only serves as an example.
    `train` are the set's training problems ("train-SEED-j"), the pool of many-shot examples."""
    pool = [{"id": f"train-{seed}-{j}", "problem": p, "plan": None} for j, p in enumerate(train)]
    out = []
    for i in range(1, len(problems)):
        example_ids = [(i - k) % len(problems) for k in range(1, min(MAX_EXAMPLES, len(problems) - 1) + 1)]
        data = {
            "source": f"generated (seed {seed})",
            "problem": problems[i],
            "examples": [{"id": f"gen-{seed}-{e}", "problem": problems[e], "plan": None} for e in example_ids],
            "train_pool": pool,
        }
        out.append(Instance(domain, f"gen-{seed}-{i}", data))
    return out
