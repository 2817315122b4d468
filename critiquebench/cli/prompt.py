"""`critiquebench prompt`: print the exact chat messages a study would send for one instance.

Purposes: `generate` (the generation prompt), `verify` / `verify-cot` / `verify-no-info` (the verification-only
study's prompts, as `verify-study` sends them), `critique` / `critique-cot` (the verifier prompt inside the
llm-llm loops). The answer under review is `--answer`, else a candidate of `--kind` (default: correct).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Annotated, Any

import typer

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.base import verification_messages
from critiquebench.domains.contract import Domain, Instance, Judged, Need, Unsupported, unmet

PURPOSES = ("generate", "verify", "verify-cot", "verify-no-info", "critique", "critique-cot")


def messages_for(domain: Domain, instance: Instance, purpose: str, answer: str) -> list[dict[str, str]]:
    """The chat messages of `purpose` for `instance` (a ValueError for a purpose the domain cannot ask)."""
    if purpose == "generate":
        return domain.prompt(instance)
    if purpose.startswith("verify"):
        variant = purpose.removeprefix("verify").removeprefix("-") or "default"
        return verification_messages(domain, instance, answer, variant)  # type: ignore[arg-type]
    if purpose.startswith("critique"):
        if why := unmet(domain, (Need(Judged, purpose),)):
            raise Unsupported(why)
        return domain.judge_prompt(instance, purpose, answer)  # type: ignore[attr-defined]
    raise ValueError(f"--purpose must be one of {', '.join(PURPOSES)}")


def _as_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(f"--- {m['role']} ---\n{m['content']}" for m in messages)


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def register(app: typer.Typer) -> None:
    @app.command("prompt")
    def prompt_cmd(
        domain: Annotated[str, typer.Option(help="game24, coloring, blocksworld, ... or a PDDL domain folder.")],
        instance: Annotated[str, typer.Option(help="Instance id (e.g. 901), or gen:1:SEED.")],
        purpose: Annotated[str, typer.Option(help=" | ".join(PURPOSES))] = "generate",
        answer: Annotated[
            str | None, typer.Option(help="The answer a verifier judges (default: a candidate of --kind).")
        ] = None,
        kind: Annotated[str, typer.Option(help="Candidate kind when --answer is not given.")] = "correct",
        fmt: Annotated[str, typer.Option("--format", help="text | json (a list of {role, content}).")] = "text",
        style: Annotated[str | None, typer.Option(help="Planning prompt style: nl | nl_legacy | pddl.")] = None,
        dataset: Annotated[Path | None, typer.Option(help="Datasets root, or the domain's own file/folder.")] = None,
    ) -> None:
        """Print the exact chat messages that would be sent: nothing is called."""
        if fmt not in ("text", "json"):
            raise _fail("--format must be text or json")
        if purpose not in PURPOSES:
            raise _fail(f"--purpose must be one of {', '.join(PURPOSES)}")
        try:
            dom = get_domain(domain, prompt_style=style)
            found = load_instances(dom, instance, dataset)
            if len(found) != 1:
                raise ValueError(f"--instance must name one instance, {instance!r} names {len(found)}")
            target = found[0]
            text = answer
            if text is None and purpose != "generate":
                text = dom.candidate(target, kind, random.Random(0))
            messages = messages_for(dom, target, purpose, text or "")
        except (ValueError, OSError, LookupError) as exc:
            raise _fail(str(exc)) from exc
        typer.echo(json.dumps(messages, indent=2, ensure_ascii=False) if fmt == "json" else _as_text(messages))
