"""`critiquebench verify-study`: the LLM judges candidate answers of known correctness (Tables A2-A4)."""

from contextlib import ExitStack, closing
from pathlib import Path
from typing import Annotated

import typer

from critiquebench.cli.domain_options import DomainOptionOpt
from critiquebench.cli.study import DryRunOpt, MaxTokensOpt, PriceInOpt, PriceOutOpt, print_estimate
from critiquebench.cli.terminal import StderrConsole

err = StderrConsole()


def register(app: typer.Typer) -> None:
    app.command("verify-study")(verify_study_cmd)


def verify_study_cmd(
    name: Annotated[str, typer.Argument(help="Study name; running it again resumes it.")],
    config_file: Annotated[
        Path | None, typer.Option("--config", help="Study TOML file (see studies/); flags override it.")
    ] = None,
    domains: Annotated[str | None, typer.Option(help="e.g. game24,coloring.")] = None,
    instances: Annotated[
        str | None, typer.Option(help="1-10 | gen:N:SEED | game24=1-5,coloring=1-5.")
    ] = None,
    kinds: Annotated[
        str | None,
        typer.Option(help="Candidate kinds (default: all the domain makes); a -cot or -no-info suffix picks "
                          "that prompt: correct,correct-no-info,random-cot. A kind a domain cannot make or "
                          "ask is left to the study's other domains."),
    ] = None,
    per_kind: Annotated[int | None, typer.Option(help="Candidates of each kind per instance (1).")] = None,
    from_study: Annotated[str | None, typer.Option(help="Also judge this study's LLM answers.")] = None,
    llm_instances: Annotated[
        str | None, typer.Option(help="Instances whose earlier answers are judged (default: the study's): "
                                      "1-100 | game24=1-100.")
    ] = None,
    llm_per_instance: Annotated[
        int | None, typer.Option(help="Earlier answers judged per instance, drawn at random from its answers of "
                                      "every round (0: every distinct answer).")
    ] = None,
    cot: Annotated[bool | None, typer.Option(help="Use the chain-of-thought verifier prompt.")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the candidate generators (0).")] = None,
    dataset: Annotated[Path | None, typer.Option(help="Datasets root or a domain's file/folder.")] = None,
    model: Annotated[str | None, typer.Option()] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint (default: embedded).")
    ] = None,
    temperature: Annotated[float | None, typer.Option(help="(0.0)")] = None,
    max_tokens: MaxTokensOpt = None,
    concurrency: Annotated[int | None, typer.Option(help="(4)")] = None,
    timeout: Annotated[float | None, typer.Option(help="(120)")] = None,
    replay: Annotated[bool, typer.Option(help="Answer every call from the cache.")] = False,
    store: Annotated[str | None, typer.Option(help="Store file or postgresql:// URL.")] = None,
    dry_run: DryRunOpt = False,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
    domain_option: DomainOptionOpt = None,
) -> None:
    """Verification only: the LLM judges candidate answers of known correctness (Table 2, Tables A2-A4)."""
    import sqlite_utils

    from critiquebench.cli.terminal import stop_on_ctrl_c
    from critiquebench.llm.client import LLMSettings, open_llm
    from critiquebench.reports.catalog import report_rows
    from critiquebench.reports.tables import render
    from critiquebench.store.cache import CallCache
    from critiquebench.store.db import StoreError, opened, resolve_store, store_exists
    from critiquebench.studies.config import VERIFY, ConfigError, build_config, read_toml
    from critiquebench.studies.verification import (
        estimate_verify,
        from_study_defaults,
        ready_store,
        resolve_config,
        run_verify,
        stored_verify_config,
    )

    path = resolve_store(store)
    with ExitStack() as held:  # the store's connections are closed when the command ends
        try:
            if dry_run:  # reads the store (its cache and judged answers); never creates or changes it
                db = held.enter_context(opened(path, readonly=True) if store_exists(path)
                                        else closing(sqlite_utils.Database(memory=True)))  # fmt: skip
            else:
                db = held.enter_context(opened(path))
            ready_store(db)
            file = read_toml(config_file) if config_file else {}
            flags = dict(domains=domains, instances=instances, kinds=kinds, per_kind=per_kind, from_study=from_study,
                         llm_instances=llm_instances, llm_per_instance=llm_per_instance, cot=cot, seed=seed,
                         dataset=str(dataset) if dataset else None, model=model, base_url=base_url,
                         temperature=temperature, max_tokens=max_tokens, concurrency=concurrency,
                         timeout=timeout, domain_option=domain_option or None)  # fmt: skip
            given = {**file, **{k: v for k, v in flags.items() if v is not None}}
            # a stored study (an imported recording) named alone resumes as it was defined
            stored = None if file or any(v is not None for v in flags.values()) else stored_verify_config(db, name)
            config = stored or build_config(name, file, flags, VERIFY, defaults=from_study_defaults(db, given, dry_run))
            if dry_run:
                print_estimate(estimate_verify(db, config, path), price_in, price_out, config.model)
                return
            resolve_config(db, config)
            settings = LLMSettings(
                model=config.model, base_url=config.base_url, temperature=config.temperature,
                max_tokens=config.max_tokens, timeout=config.timeout, concurrency=config.concurrency,
                replay=replay or config.replay, endpoint_id=config.endpoint_id,
            )  # fmt: skip
            with stop_on_ctrl_c(err.print) as stop, open_llm(settings, held.enter_context(CallCache(path))) as llm:
                counts = run_verify(path, config, llm, stop)
                usage = llm.usage()
        except (ConfigError, StoreError, ValueError, OSError) as exc:
            err.print(f"error: {exc}", markup=False)
            raise typer.Exit(2) from exc
        err.print(
            f"verify-study {name}: {counts['judged']} judged now, {counts['skipped']} before, "
            f"{counts['failed']} failed, {counts['not_started']} not started; "
            f"LLM calls {usage.get('calls', 0)} new, {usage.get('hits', 0)} from the cache"
        )
        typer.echo(render(report_rows(db, name, "2"), "table"))
        typer.echo(render(report_rows(db, name, "1"), "table"))
        critiques = report_rows(db, name, "critique")
        if critiques:
            typer.echo(render(critiques, "table"))
        if counts["failed"] or counts["not_started"]:
            raise typer.Exit(1 if counts["failed"] else 130)
