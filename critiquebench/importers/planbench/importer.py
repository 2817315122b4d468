"""`import planbench`: a results file's calls into the store's cache, and the study replaying them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from critiquebench.domains.planning import DATA_DIR, PlanningError
from critiquebench.domains.planning.replay import Replaying, TaskReplay, stored_options
from critiquebench.domains.planning.tasks import TASKS
from critiquebench.importers.planbench.checkout import (
    checkout_above,
    domains_folder,
    find_source,
    materialize,
    planbench_name,
    with_problems,
)
from critiquebench.importers.planbench.fallbacks import from_prompts
from critiquebench.importers.planbench.file import ImportError_
from critiquebench.importers.planbench.kinds import PlanBenchRun, first_queries, read_planbench
from critiquebench.importers.planbench.readers import plan_generation_options, state_reading
from critiquebench.importers.planbench.recorded import stated_twice
from critiquebench.importers.recording import (
    BadRecord,
    Recording,
    RecordingError,
    content_source,
    source_kind,
    write_recording,
)
from critiquebench.store.cache import sampling_params
from critiquebench.studies.config import StudyConfig
from critiquebench.studies.provenance import SAMPLING

RECORDED_ENDPOINT = "recorded:planbench"  # every import's endpoint before answers were keyed by their file


def dataset_folder(path: Path, domain: str, planbench: str | None = None, instances: Path | None = None) -> Path:
    """The folder of `domain`'s problems (DOMAIN/instances/) nearest above the results file, else the
    default dataset of the domain. `planbench` is the file's PlanBench domain name where it is not `domain`
    ("blocksworld_3", whose 3-block problems do not ship): its problems are `instances` (--instances DIR), the
    dataset only the shipped one's."""
    variant = planbench is not None and planbench != domain
    for parent in Path(path).resolve().parents:
        if (parent / domain / "instances").is_dir() and not variant:
            return parent / domain
    if variant and instances is None:
        raise ImportError_(
            f"{path}: PlanBench's {planbench!r} problems do not ship with critiquebench (its {domain!r} ones are "
            "another set): pass --instances DIR (the checkout's instances/ folder of that set) or --planbench ROOT"
        )
    from critiquebench.domains.datasets import DatasetNotFound, resolve_data_path

    try:
        return resolve_data_path(domain, None)
    except DatasetNotFound as exc:
        ask = "pass --dataset DIR" if instances is not None else "pass --instances DIR"
        raise ImportError_(f"{path}: no dataset folder for domain {domain!r}: {ask} ({exc})") from None


def domain_under(dataset: Path, names: tuple[str, ...]) -> Path | None:
    """The domain folder `--dataset` names: itself when it holds problems, else `NAME/` or `planbench/NAME/` under
    it for the first of `names` found (the datasets root, or PlanBench's folder of domains); None when none is."""
    if (dataset / "instances").is_dir() or any(dataset.glob("*.pddl")):
        return dataset
    for name in names:
        for folder in (dataset / name, dataset / "planbench" / name):
            if (folder / "instances").is_dir():
                return folder
    return None


def _shipped(path: Path, run: PlanBenchRun) -> bool:
    """Whether the file's problems are found without a checkout (above the file, or in the datasets root)."""
    assert run.source is not None
    try:
        dataset_folder(path, run.domain, planbench_name(run.source.domain))
    except ImportError_:
        return False
    return True


@dataclass(frozen=True)
class Imported:
    """What `import_file` did: the study, calls newly recorded, instances skipped for want of an answer, the
    domain options stored, and the prompt style and replay record recognised (t1 and backprompting files)."""

    config: StudyConfig
    added: int
    unanswered: tuple[int, ...]
    options: Mapping[str, Any]  # as the study's definition stores them
    rebuilt: bool = False  # problems or domain text read back from the recorded PDDL prompts (`planbench.recorded`)
    replaying: Replaying | None = None  # a t1 file's prompt style and `Replay` record
    task: TaskReplay | None = None  # a task file's (t2-t7)
    # instances left out because their record breaks the run's protocol (id -> why), named, not the whole file
    left_out: Mapping[int, str] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.config, self.added))


def import_file(
    path: Path,
    store: Path,
    study: str,
    dataset: Path | None = None,
    temperature: float = 0.0,
    max_tokens: int = 512,
    instances: Path | None = None,
    planbench: Path | None = None,
    reading: str | None = None,
) -> Imported:
    """Record the file's calls in the store's cache and define (or extend) `study` over the same instances.

    Newly recorded calls are 0 on a repeated import. `planbench` is a
    PlanBench checkout: the file's domain config, instances and example plans are taken from it
    (`planbench.checkout`), laid out as a PDDL domain folder beside the store. Without it, `dataset` is the
    PlanBench domain folder with instances/ (default: found above the file, else the shipped dataset);
    `instances` the folder of the problems a task file's ids refer to (default: the task's folder in the
    dataset, `generated/` for t5). `reading` overrides the plan reader. Nothing is stored unless the whole file
    imports.
    """
    run = read_planbench(path)
    assert run.source is not None
    rebuilt = False
    laid_out: Path | None = None  # the checkout's domain folder, once laid out
    shown: Replaying | None = None  # a t1 file's options (from the checkout's prompts, or read back from its own)
    task: TaskReplay | None = None
    if planbench is None and dataset is None and instances is None and not _shipped(path, run):
        planbench = checkout_above(Path(path))  # a file in a checkout, whose problems do not ship: its checkout's
    try:
        if planbench is not None:
            opening = [i.query or next((m.get("content", "") for m in i.messages if m.get("role") == "user"), "")
                       for i in run.source.instances[:20]]  # fmt: skip
            source = find_source(Path(planbench), Path(path), run.source.domain, opening)
            dataset = laid_out = materialize(source, domains_folder(store))
            base = str(dataset)
        else:
            # a t1 file's problems are its dataset, as are a set's that does not ship (blocksworld_3):
            # --instances DIR names them as it does for the other tasks
            variant = planbench_name(run.source.domain) != run.domain
            base = run.domain
            if instances is not None and (run.task == "t1" or variant):
                dataset = Path(instances)
                if variant:
                    # the PDDL and English the shipped domain is built from, as before (`--dataset` gives problems)
                    shipped = DATA_DIR / run.domain
                    name = planbench_name(run.source.domain)
                    folder = with_problems(shipped, name, dataset, domains_folder(store))
                    if folder is not None:  # its own domain, named as PlanBench names the set
                        dataset, base = folder, str(folder)
            elif dataset is None and run.task == "t5" and instances is None:
                # t5 asks the config's `generalized_instance_dir`, which every PlanBench set shares with its full
                # set (`blocksworld_3.yaml:2`, `mystery_blocksworld_3.yaml:2`: `.../generated`): those ship
                dataset = dataset_folder(path, run.domain)
            elif dataset is None:
                dataset = dataset_folder(path, run.domain, planbench_name(run.source.domain), instances)
            else:  # a datasets root or PlanBench's folder of domains names the domain's folder under it
                names = (planbench_name(run.source.domain),) + (() if variant and run.task != "t5" else (run.domain,))
                found = domain_under(Path(dataset), names)
                if found is None and variant:
                    raise ImportError_(
                        f"{path}: {dataset} holds no folder of PlanBench's {names[0]!r} problems (its {run.domain!r} "
                        "ones are another set): pass --instances DIR (the checkout's instances/ folder of that set) "
                        "or --planbench ROOT"
                    )
                dataset = found or Path(dataset)
        if run.task == "t1":
            shown = plan_generation_options(run, Path(path), base, Path(dataset), reading)
    except ImportError_ as exc:
        queries = dict(zip(run.instance_ids, first_queries(run), strict=True))
        if run.task != "t1":
            raise
        twice = stated_twice(queries) if laid_out is not None and run.kind == "one_shot" else {}
        if twice and len(twice) < len(queries):  # those prompts cannot be rebuilt: left out and named
            run = run.without(twice)
            queries = {k: v for k, v in queries.items() if k not in twice}
        dataset, base, shown = from_prompts(run, Path(path), queries, laid_out, store, reading, exc)
        rebuilt = True
    if shown is not None:
        if run.windowed is not None:
            sent = {k: dict(v) for k, v in run.windowed.sent.items()}
            ends = dict(run.windowed.ends) or None
            shown = shown.with_replay(recorded_feedback=sent, system=run.windowed.system, ends=ends)
        options = shown.options()
    else:
        folder = Path(instances) if instances else Path(dataset) / TASKS[run.task].folder
        if not folder.is_dir():
            folder = Path(dataset)
        chosen = state_reading(Path(path), base, reading) if run.task == "t7" else None
        task = TaskReplay(str(Path(path).resolve()), str(folder.resolve()), chosen)
        options = task.options()
    key = base if run.task == "t1" else f"{base}:{run.task}"
    config = StudyConfig(
        name=study,
        domains=(key,),
        instances={key: ",".join(str(i) for i in run.instance_ids)},
        schemes=(run.scheme,),
        dataset=str(Path(dataset).resolve()),
        model=run.model,
        temperature=temperature,
        max_tokens=max_tokens,
        domain_options={key: options},
        replay=True,
        unrecorded=SAMPLING,  # the file records neither: `temperature` and `max_tokens` only label the cache keys
    )
    params = sampling_params(temperature=temperature, max_tokens=max_tokens)
    skipped = [BadRecord(f"instance {i}", "no recorded answer (PlanBench skipped it too)") for i in run.unanswered]
    if run.windowed is not None:  # conversations recorded otherwise than PlanBench's protocol: left out, named
        skipped += [BadRecord(f"instance {i}", why) for i, why in run.windowed.broken.items()]
    recording = Recording(content_source("planbench", run.model, run.calls), config, run.calls, params, skipped)
    try:
        written = write_recording(store, recording, _merged)
    except RecordingError as exc:
        raise ImportError_(str(exc)) from None
    left_out = {**(run.windowed.broken if run.windowed is not None else {}), **run.left_out}
    skipped += [BadRecord(f"instance {i}", why) for i, why in run.left_out.items()]
    return Imported(written.config, written.added, run.unanswered, options, rebuilt, shown, task, left_out)


# the name the command and the main job know it by; its result also unpacks as (study, calls newly recorded)
import_planbench = import_file


def _merged(existing: StudyConfig, new: StudyConfig) -> StudyConfig:
    """`existing` with `new`'s domain added (another task of a recorded study), or an error saying why not. A
    definition stored before the replay record had its own table is the same study as its re-import."""
    if not existing.differences(new) or not _current(existing).differences(new):
        return existing
    [key] = new.domains
    clash = "already exists with another definition; choose another name"
    same_run = {k: v for k, v in existing.identity().items() if k not in ("domains", "instances", "domain_options")}
    theirs = {k: v for k, v in new.identity().items() if k not in ("domains", "instances", "domain_options")}
    if same_run != theirs or key in existing.domains or source_kind(existing.endpoint_id) != "planbench":
        raise ImportError_(f"study {existing.name!r} {clash}")
    return replace(
        existing,
        domains=(*existing.domains, key),
        instances={**existing.instances, **new.instances},
        domain_options={**existing.domain_options, **new.domain_options},
    )


def _current(config: StudyConfig) -> StudyConfig:
    """`config` with each planning domain's options as `Replaying.options` writes them (`replay.stored_options`)."""
    try:
        options = {k: v if ":" in k else stored_options(v) for k, v in config.domain_options.items()}
    except PlanningError:
        return config  # a definition no replay reads: its differences are reported as they are
    return replace(config, domain_options=options)
