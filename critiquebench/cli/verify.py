"""`critiquebench verify-study`: the LLM judges candidate answers of known correctness (Tables A2-A4)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from critiquebench.reports.tables import render
from critiquebench.store.db import connect, default_store_path
from critiquebench.studies.config import NAME_RE, ConfigError, split_list
from critiquebench.studies.runner import stop_on_ctrl_c
from critiquebench.studies.verification import (
    VerifyConfig,
    ensure_verify_schema,
    instances_from,
    resolve_config,
    run_verify,
    verify_report,
)

err = Console(stderr=True, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("verify-study")(verify_study_cmd)


def verify_study_cmd(
    name: Annotated[str, typer.Argument(help="Study name; running it again resumes it.")],
    domains: Annotated[str | None, typer.Option(help="e.g. game24,coloring.")] = None,
    instances: Annotated[
        str | None, typer.Option(help="1-10 | gen:N:SEED | game24=1-5,coloring=1-5.")
    ] = None,
    kinds: Annotated[
        str | None,
        typer.Option(help="Candidate kinds (default: all the domain makes); a -cot or -no-info suffix picks "
                          "that prompt: correct,correct-no-info,random-cot."),
    ] = None,
    per_kind: Annotated[int, typer.Option(help="Candidates of each kind per instance.")] = 1,
    from_study: Annotated[str | None, typer.Option(help="Also judge this study's LLM answers.")] = None,
    cot: Annotated[bool, typer.Option(help="Use the chain-of-thought verifier prompt.")] = False,
    seed: Annotated[int, typer.Option(help="Seed of the candidate generators.")] = 0,
    dataset: Annotated[Path | None, typer.Option(help="Datasets root or a domain's file/folder.")] = None,
    model: Annotated[str | None, typer.Option()] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint (default: embedded).")
    ] = None,
    temperature: Annotated[float, typer.Option()] = 0.0,
    max_tokens: Annotated[int, typer.Option()] = 512,
    concurrency: Annotated[int, typer.Option()] = 4,
    timeout: Annotated[float, typer.Option()] = 120.0,
    replay: Annotated[bool, typer.Option(help="Answer every call from the cache.")] = False,
    store: Annotated[Path | None, typer.Option(help="Store file.")] = None,
) -> None:
    """Verification only: the LLM judges candidate answers of known correctness (Tables A2-A4)."""
    from critiquebench.llm.client import LLMSettings, open_llm
    from critiquebench.store.cache import CallCache

    path = Path(store) if store else default_store_path()
    db = connect(path)
    try:
        ensure_verify_schema(db)
        if not NAME_RE.match(name):
            raise ConfigError(f"study name {name!r}: use letters, digits, '_', '-', '.'")
        doms, sels, source_dataset = instances_from(db, domains, instances, from_study)
        config = VerifyConfig(
            name=name, domains=doms, instances=sels, kinds=tuple(split_list(kinds or "")),
            per_kind=per_kind, from_study=from_study, cot=cot, seed=seed,
            dataset=str(dataset.resolve()) if dataset else source_dataset,
            model=model or VerifyConfig.model, base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
            temperature=temperature, max_tokens=max_tokens, concurrency=concurrency, timeout=timeout,
        )  # fmt: skip
        resolve_config(db, config)
        settings = LLMSettings(
            model=config.model, base_url=config.base_url, temperature=config.temperature,
            max_tokens=config.max_tokens, timeout=config.timeout, concurrency=config.concurrency,
            replay=replay,
        )  # fmt: skip
        with stop_on_ctrl_c(err.print) as stop, open_llm(settings, CallCache(path)) as llm:
            counts = run_verify(path, config, llm, stop)
            usage = llm.usage()
    except (ConfigError, ValueError, OSError) as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from exc
    err.print(
        f"verify-study {name}: {counts['judged']} judged now, {counts['skipped']} before, "
        f"{counts['failed']} failed, {counts['not_started']} not started; "
        f"LLM calls {usage.get('calls', 0)} new, {usage.get('hits', 0)} from the cache"
    )
    typer.echo(render(verify_report(db, name, "2"), "table"))
    typer.echo(render(verify_report(db, name, "1"), "table"))
    critiques = verify_report(db, name, "critique")
    if critiques:
        typer.echo(render(critiques, "table"))
    if counts["failed"] or counts["not_started"]:
        raise typer.Exit(1 if counts["failed"] else 130)
