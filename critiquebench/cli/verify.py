"""`critiquebench verify-study`: the LLM judges candidate answers of known correctness (Tables A2-A4)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import sqlite_utils
import typer
from rich.console import Console

from critiquebench.cli.study import DryRunOpt, PriceInOpt, PriceOutOpt, print_estimate
from critiquebench.reports.tables import render
from critiquebench.store.db import StoreError, connect, is_readonly, resolve_store, store_exists
from critiquebench.studies.config import NAME_RE, ConfigError, read_toml, split_list
from critiquebench.studies.runner import stop_on_ctrl_c
from critiquebench.studies.verification import (
    VerifyConfig,
    ensure_verify_schema,
    estimate_verify,
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
    cot: Annotated[bool | None, typer.Option(help="Use the chain-of-thought verifier prompt.")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the candidate generators (0).")] = None,
    dataset: Annotated[Path | None, typer.Option(help="Datasets root or a domain's file/folder.")] = None,
    model: Annotated[str | None, typer.Option()] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint (default: embedded).")
    ] = None,
    temperature: Annotated[float | None, typer.Option(help="(0.0)")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="(512)")] = None,
    concurrency: Annotated[int | None, typer.Option(help="(4)")] = None,
    timeout: Annotated[float | None, typer.Option(help="(120)")] = None,
    replay: Annotated[bool, typer.Option(help="Answer every call from the cache.")] = False,
    store: Annotated[str | None, typer.Option(help="Store file or postgresql:// URL.")] = None,
    dry_run: DryRunOpt = False,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
) -> None:
    """Verification only: the LLM judges candidate answers of known correctness (Table 2, Tables A2-A4)."""
    from critiquebench.llm.client import LLMSettings, open_llm
    from critiquebench.store.cache import CallCache

    path = resolve_store(store)
    try:
        if dry_run:  # reads the store (its cache and judged answers); never creates or changes it
            db = connect(path, readonly=True) if store_exists(path) else sqlite_utils.Database(memory=True)
        else:
            db = connect(path)
        if not is_readonly(db):
            ensure_verify_schema(db)
        if not NAME_RE.match(name):
            raise ConfigError(f"study name {name!r}: use letters, digits, '_', '-', '.'")
        file = read_toml(config_file) if config_file else {}
        unknown = sorted(set(file) - set(VerifyConfig.__dataclass_fields__) - {"name", "kind"})
        if unknown:
            raise ConfigError(f"unknown verification study setting(s): {', '.join(unknown)}")

        def pick(key: str, flag: Any) -> Any:
            return flag if flag is not None else file.get(key, getattr(VerifyConfig, key, None))

        given_domains = domains or (",".join(file["domains"]) if "domains" in file else None)
        doms, sels, source_dataset = instances_from(db, given_domains, instances or file.get("instances"),
                                                    from_study or file.get("from_study"))  # fmt: skip
        kind_list = split_list(kinds) if kinds is not None else list(file.get("kinds", ()))
        config = VerifyConfig(
            name=name, domains=doms, instances=sels, kinds=tuple(kind_list), per_kind=pick("per_kind", per_kind),
            from_study=from_study or file.get("from_study"), cot=pick("cot", cot), seed=pick("seed", seed),
            dataset=str(dataset.resolve()) if dataset else file.get("dataset", source_dataset),
            model=pick("model", model), base_url=pick("base_url", base_url) or os.environ.get("OPENAI_BASE_URL"),
            temperature=pick("temperature", temperature), max_tokens=pick("max_tokens", max_tokens),
            concurrency=pick("concurrency", concurrency), timeout=pick("timeout", timeout),
        )  # fmt: skip
        if dry_run:
            print_estimate(estimate_verify(db, config, path), price_in, price_out)
            return
        resolve_config(db, config)
        settings = LLMSettings(
            model=config.model, base_url=config.base_url, temperature=config.temperature,
            max_tokens=config.max_tokens, timeout=config.timeout, concurrency=config.concurrency,
            replay=replay,
        )  # fmt: skip
        with stop_on_ctrl_c(err.print) as stop, open_llm(settings, CallCache(path)) as llm:
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
    typer.echo(render(verify_report(db, name, "2"), "table"))
    typer.echo(render(verify_report(db, name, "1"), "table"))
    critiques = verify_report(db, name, "critique")
    if critiques:
        typer.echo(render(critiques, "table"))
    if counts["failed"] or counts["not_started"]:
        raise typer.Exit(1 if counts["failed"] else 130)
