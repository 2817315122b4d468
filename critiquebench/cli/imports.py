"""`critiquebench import planbench | samples | self-verification | refinement`: recorded studies as cache entries
plus a replayable study."""

from pathlib import Path
from typing import Annotated

import typer

from critiquebench.cli.domain_options import DomainOptionOpt, domain_options

import_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help=__doc__)

ReplayNowOpt = Annotated[
    bool,
    typer.Option("--replay", help="Replay the study once imported, in this process: what `critiquebench resume "
                 "STUDY --replay` does after it, without a second start (its table, summary and exit code)."),
]
ProgressNowOpt = Annotated[bool, typer.Option(help="With --replay: live progress bars on stderr (on a terminal).")]


def replay_now(store: Path | str, study: str, progress: bool) -> None:
    """`critiquebench resume STUDY --replay`, run by the command that imported the study."""
    from critiquebench.api import resumable
    from critiquebench.cli.study import _execution, _fail, execute_study
    from critiquebench.studies.session import StudyError

    try:
        config = resumable(store, study)
    except StudyError as exc:
        raise _fail(str(exc)) from exc
    execute_study(store, config, progress, True, None, _execution("local", 2, None))


@import_app.command("planbench")
def planbench(
    file: Annotated[Path, typer.Argument(help="A PlanBench results JSON (plan generation or backprompting).")],
    study: Annotated[str, typer.Option("--study", help="Name of the study to define.")],
    store: Annotated[str | None, typer.Option("--store", help="Store file or URL (default: $CRITIQUEBENCH_STORE).")] = None,  # noqa: E501
    dataset: Annotated[
        Path | None,
        typer.Option(help="PlanBench domain folder with instances/ (default: DOMAIN/ found above the file)."),
    ] = None,
    instances: Annotated[
        Path | None,
        typer.Option(help="Folder of the problems the file's instance ids refer to (default: the task's folder "
                     "in the dataset; generated/ for t5)."),
    ] = None,
    planbench: Annotated[
        Path | None,
        typer.Option(help="A PlanBench checkout (karthikv792/LLMs-Planning, either layout): the file's domain "
                     "config, instances and example plans are taken from it."),
    ] = None,
    reading: Annotated[
        str | None,
        typer.Option(help="How answers are read: one of PlanBench's readers (planbench, planbench-whole, "
                     "planbench-head, planbench-whole-nostar, planbench-translation, planbench-pddl; t7 states: "
                     "planbench-state, planbench-state-commas) or 'sound' for ours (default: the reader that "
                     "produced the file's labels)."),
    ] = None,
    replay: ReplayNowOpt = False,
    progress: ProgressNowOpt = True,
) -> None:
    """Import a PlanBench results file (any task, model, domain); `critiquebench resume NAME --replay` replays it
    (or `--replay` here, in the same process).

    Importing another task file into the same study adds that task, and `report NAME` lays the tasks out as
    PlanBench's results table."""
    from critiquebench.domains.planning.replay import Replaying
    from critiquebench.domains.planning.strips import PlanningError
    from critiquebench.importers.planbench import ImportError_, import_planbench
    from critiquebench.store.db import resolve_store
    from critiquebench.studies.config import ConfigError

    try:
        done = import_planbench(
            file, resolve_store(store), study, dataset, instances=instances, planbench=planbench, reading=reading
        )
    except (ImportError_, ConfigError, PlanningError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    from critiquebench.reports.metrics import shown_domain

    config, last = done.config, done.config.domains[-1]
    shown = done.replaying or Replaying()
    style, record = shown.prompt_style, shown.replay
    reader = record.reading
    how = f" (PlanBench's {style} prompt" + (f", reading {reader}" if reader else "")
    typer.echo(
        f"imported {done.added} recorded call(s) as model {config.model!r}; study {study!r}: "
        f"{config.schemes[0]} on {len(config.instances[last].split(','))} {shown_domain(last)} "
        f"instance(s){how + ')' if style else ''}. "
        + ("Replaying it:" if replay else f"Replay it with: critiquebench resume {study} --replay")
    )
    if done.task is not None and done.task.state_reading is not None:
        typer.echo(f"t7 answers are read as PlanBench's code read them ({done.task.state_reading}); where our "
                   "own reading judges otherwise, its verdict is the last sentence of the run's sound_reason")
    if record.example is not None:
        typer.echo(
            f"every recorded prompt shows instance {record.example} as its one-shot example (whatever the "
            "file's example_instance_ids say): replayed as sent"
        )
    if record.recorded_feedback is not None:
        typer.echo(
            "PlanBench's PDDL backprompting protocol: each query sent the first prompt"
            + (" after its system message" if record.system else "")
            + " and only the last answer and its feedback (a window of one exchange); the feedback is replayed as "
            "recorded, since its wording (full_validator) is not published: the study replays these answers only"
        )
    if done.unanswered:
        shown = ", ".join(map(str, done.unanswered[:5])) + (", ..." if len(done.unanswered) > 5 else "")
        typer.echo(f"skipped {len(done.unanswered)} instance(s) with no recorded answer, as PlanBench does: {shown}")
    for ident, why in done.left_out.items():
        typer.echo(f"left out instance {ident}: {why}")
    if replay:
        replay_now(resolve_store(store), study, progress)


@import_app.command("self-verification")
def self_verification(
    paths: Annotated[list[Path], typer.Argument(help="gpt-and-i responses.json files, or folders holding them.")],
    study: Annotated[str, typer.Option("--study", help="Study name (several files: STUDY-VARIANT each).")],
    store: Annotated[str | None, typer.Option("--store", help="Store file or URL (default: $CRITIQUEBENCH_STORE).")] = None,  # noqa: E501
    domain: Annotated[str | None, typer.Option(help="coloring or game24 (default: from the path).")] = None,
    scheme: Annotated[str | None, typer.Option(help="The scheme replaying the file (default: from the path).")] = None,
    protocol: Annotated[str | None, typer.Option(help="Colouring protocol 2023 or 2024 (default: the file's format's).")] = None,  # noqa: E501
    dataset: Annotated[Path | None, typer.Option(help="Datasets root (default: the shipped data).")] = None,
    check: Annotated[bool, typer.Option(help="Refuse a file whose requests are not ours (--no-check: store it "
                                        "as recorded and say where it departs; a replay then asks the rest anew).")
                     ] = True,
    replay: ReplayNowOpt = False,
    progress: ProgressNowOpt = True,
) -> None:
    """Import gpt-and-i's recorded runs of the self-verification study (both file formats); every request our
    graph will send is checked against the recorded one first (the first that differs is an error)."""
    from critiquebench.importers.self_verification import SelfVerificationError, import_files
    from critiquebench.store.db import resolve_store
    from critiquebench.studies.config import ConfigError

    try:
        done = import_files(paths, resolve_store(store), study, domain=domain, scheme=scheme, protocol=protocol,
                            dataset=dataset, check=check)  # fmt: skip
    except (SelfVerificationError, ConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for item in done:
        config = item.config
        [name] = config.domains
        what = ", ".join(config.schemes) or "verification of " + ", ".join(config.kinds_for(name))
        typer.echo(f"study {config.name}: {what} on {len(config.instances[name].split(','))} "
                   f"{name} instance(s), {item.added} recorded call(s) of {config.model!r}")  # fmt: skip
        for note in item.notes:
            typer.echo(f"  {note}")
        for bad in item.bad:
            typer.echo(f"  skipped {bad.describe()}")
    for item in done:
        if item.config.kind == "verify":
            again = ["verify-study", item.config.name, *(["--store", store] if store else [])]
            if replay:
                from critiquebench.cli import app

                app(again, standalone_mode=False)
            else:
                typer.echo(f"Replay it with: critiquebench {' '.join(again)}")
        elif replay:
            replay_now(resolve_store(store), item.config.name, progress)
        else:
            typer.echo(f"Replay it with: critiquebench resume {item.config.name} --replay")


@import_app.command("samples")
def samples(
    file: Annotated[Path, typer.Argument(help="Samples as JSON lines, CSV or Parquet (by suffix): instance and "
                                              "response per row; optional sample, messages or prompt, label, "
                                              "model, temperature.")],
    domain: Annotated[str, typer.Option("--domain", "-d", help="game24, coloring, blocksworld, ... or a folder.")],
    study: Annotated[str, typer.Option("--study", help="Name of the study to define.")],
    k: Annotated[
        str | None,
        typer.Option("--k", help="The k of sampling:k=K and self-consistency:k=K, e.g. 1,5,15,100 (default: "
                                 "every k up to the most samples an instance has)."),
    ] = None,
    dataset: Annotated[Path | None, typer.Option(help="Datasets root or the domain's own data.")] = None,
    schemes: Annotated[
        str | None, typer.Option(help="More schemes (e.g. llm-llm): they need new LLM calls, so --base-url.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="An endpoint for the calls the recorded samples do not answer.")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="The study's model, over the file's `model` (the endpoint's name for it).")
    ] = None,
    vote: Annotated[
        str, typer.Option(help="What self-consistency counts: answer (canonical answers) or text (reply texts).")
    ] = "answer",
    store: Annotated[str | None, typer.Option("--store", help="Store file or URL (default: $CRITIQUEBENCH_STORE).")] = None,  # noqa: E501
    domain_option: DomainOptionOpt = None,
    source_format: Annotated[
        str, typer.Option("--from", help="The file's format: samples (ours, by suffix), lm-eval (a --log_samples "
                                         "JSONL) or inspect (an inspect_ai eval log).")
    ] = "samples",
    field: Annotated[
        list[str] | None,
        typer.Option("--field", help="NAME=PATH (repeatable): where each line holds a field, e.g. "
                                     "response=resps.0, instance=doc.id; dotted, list items by index."),
    ] = None,
) -> None:
    """Import anyone's recorded samples (k answers per instance) as a study: standard, sampling:k=K and
    self-consistency:k=K replay them with 0 LLM calls; `report NAME --table pass-at-k` and `--table labels`."""
    from critiquebench.importers.sample_formats import FORMATS, FormatError, parse_fields
    from critiquebench.importers.samples import SamplesError, import_samples
    from critiquebench.store.db import resolve_store
    from critiquebench.studies.config import ConfigError, split_list, split_schemes

    options = domain_options(domain, domain_option)
    try:
        if source_format not in FORMATS:
            raise FormatError(f"--from {source_format}: one of {', '.join(FORMATS)}")
        fields = parse_fields(field)
    except FormatError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        ks = [int(v) for v in split_list(k)] if k else None
    except ValueError:
        typer.echo(f"error: --k {k}: a comma-separated list of integers, e.g. 1,5,15,100", err=True)
        raise typer.Exit(2) from None
    try:
        done = import_samples(file, resolve_store(store), study, domain, options=options, dataset=dataset, ks=ks,
                              schemes=split_schemes(schemes or ""), base_url=base_url, model=model,
                              vote=vote, fmt=source_format, fields=fields)  # fmt: skip
    except (SamplesError, ConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for bad in done.bad[:20]:
        typer.echo(f"skipped {bad.describe()}", err=True)
    if len(done.bad) > 20:
        typer.echo(f"skipped {len(done.bad) - 20} more line(s)", err=True)
    for line in (*done.notes, *done.left_out):
        typer.echo(line, err=True)
    labelled = f", {done.labelled} with the source's label" if done.labelled else ""
    typer.echo(
        f"imported {done.samples} sample(s) of {done.instances} instance(s) as model {done.config.model!r} "
        f"({done.valid} valid by our sound verifier{labelled}); study {study!r}: {len(done.config.schemes)} "
        f"scheme(s), {', '.join(done.config.schemes[:3])}{', ...' if len(done.config.schemes) > 3 else ''}.\n"
        f"Report it (no LLM calls): critiquebench report {study} --table pass-at-k"
        + (" (--table labels: the source's verdicts beside ours)" if done.labelled else "")
        + (f"\nReplay its schemes through the graphs: critiquebench resume {study} --replay" if done.config.replay
           else f"\nRun it (the schemes the samples do not answer call {base_url}): critiquebench resume {study}")
    )
    if done.bad:
        raise typer.Exit(1)


@import_app.command("refinement")
def refinement(
    replies: Annotated[Path, typer.Argument(help="The refinement study's replies: an output folder of pddl_N_K_temp"
                                                 "{0..3}.txt and pddl_N_K_plan.txt, or a folder of them.")],
    problems: Annotated[Path, typer.Option("--problems", help="Its problems: NAME_domain.pddl and pddl_N_K.pddl "
                                                              "(or a folder of such folders).")],
    model: Annotated[str, typer.Option("--model", help="The model that wrote the replies (the study's name for it).")],
    study: Annotated[str, typer.Option("--study", help="Name of the study to define.")],
    store: Annotated[str | None, typer.Option("--store", help="Store file or URL (default: $CRITIQUEBENCH_STORE).")] = None,  # noqa: E501
    replay: ReplayNowOpt = False,
    progress: ProgressNowOpt = True,
) -> None:
    """Import the validator-guided refinement study's recorded runs (paper 004) as a `refine` study that replays
    them round by round with 0 LLM calls; `critiquebench confidence train|eval NAME` reads it once replayed."""
    from critiquebench.importers.refinement import RefinementError, import_refinement
    from critiquebench.store.db import resolve_store

    try:
        done = import_refinement(replies, problems, resolve_store(store), study, model=model)
    except RefinementError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for bad in done.bad:
        typer.echo(f"skipped {bad.describe()}", err=True)
    rounds = ", ".join(f"{n} in {r} round(s)" for r, n in done.by_rounds.items())
    typer.echo(f"imported {done.runs} run(s) ({rounds}; {done.added} new recorded call(s)) as model "
               f"{done.config.model!r}; study {study!r}: {done.config.schemes[0]}. "
               + ("Replaying it:" if replay else f"Replay it with: critiquebench resume {study} --replay"))  # fmt: skip
    if replay:
        replay_now(resolve_store(store), study, progress)
    if done.bad:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
