"""`critiquebench prompt`: print the exact chat messages a study would send for one instance.

Purposes: `generate` (the generation prompt), `verify` / `verify-cot` / `verify-no-info` / `verify-swap` (the
verification-only study's prompts, as `verify-study` sends them; `verify-format` is `verify`, the planning
domains' format-based JSON prompt), `critique` / `critique-cot` (the verifier prompt inside the llm-llm loops).
The answer under review is `--answer`, else a candidate of `--kind` (default: correct).

Every message the call carries is printed, the system message first (text: each under a `--- role ---` header;
`--format json`: the list of {role, content} exactly as sent). What a domain sends depends on its options: a study
file's (`--config studies/X.toml`: its `[domain_options.DOMAIN]`, prompt files and dataset) or
`--domain-option KEY=VALUE` (also `--option`).
So the self-verification study's Game of 24 and colouring calls (`form = "transcript"`) carry their system message,
and `--option verifier=val_form --purpose critique` (or `--config studies/plan_critique.toml`) is paper 002's
plan verifier, with its own system message.

`--scheme SPEC` instead shows what that scheme sends: its graph runs with a stand-in model (`graphs.preview`)
that answers with `--replies` (a JSON list of texts, in the order the scheme calls) and stops at call `--call`,
whose messages are printed: `intrinsic:shots=16` call 1 is its 16-shot planner prompt, call 2 its critic's,
`llm-llm --call 3` the second generation with the first answer and its critique in the history.
"""

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from critiquebench.cli.domain_options import domain_options

if TYPE_CHECKING:
    from critiquebench.domains.contract import Domain, Instance

PURPOSES = ("generate", "verify", "verify-format", "verify-cot", "verify-swap", "verify-no-info", "critique",
            "critique-cot")


def messages_for(domain: "Domain", instance: "Instance", purpose: str, answer: str) -> list[dict[str, str]]:
    """The chat messages of `purpose` for `instance` (a ValueError for a purpose the domain cannot ask)."""
    from critiquebench.domains.base import verification_messages
    from critiquebench.domains.contract import Judged, Need, Unsupported, unmet

    if purpose == "generate":
        return domain.prompt(instance)
    if purpose.startswith("verify"):
        variant = purpose.removeprefix("verify").removeprefix("-").removeprefix("format") or "default"
        return verification_messages(domain, instance, answer, variant)  # type: ignore[arg-type]
    if purpose.startswith("critique"):
        if why := unmet(domain, (Need(Judged, purpose),)):
            raise Unsupported(why)
        return domain.judge_prompt(instance, purpose, answer)  # type: ignore[attr-defined]
    raise ValueError(f"--purpose must be one of {', '.join(PURPOSES)}")


def scheme_messages(spec: str, domain: "Domain", instance: "Instance", replies: list[str], call: int
                    ) -> list[dict[str, str]]:  # fmt: skip
    """The messages of call `call` of scheme `spec` on `instance` (ValueError when the run makes fewer)."""
    from critiquebench.graphs import unsupported
    from critiquebench.graphs.preview import scheme_calls

    if why := unsupported(spec, domain):
        raise ValueError(f"{spec} is left out of {domain.name}: {why}")
    made = scheme_calls(spec, domain, instance, replies, call)
    if len(made) < call:
        raise ValueError(f"{spec} makes {len(made)} call(s) with these replies, not {call}")
    return made[call - 1].messages


def _replies(path: Path | None) -> list[str]:
    if path is None:
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise ValueError(f"{path}: --replies must be a JSON list of strings")
    return data


def study_options(domain: str, config: Path | None, prompts: str | None) -> tuple[dict[str, Any], Path | None]:
    """The options `domain` is built with, and the study's dataset: the study file's `[domain_options.DOMAIN]`
    and prompt files (every domain's, then the domain's own), then `--prompts` (`--domain-option` comes last)."""
    found: dict[str, Any] = {}
    specs: list[str] = []
    dataset = None
    if config is not None:
        from critiquebench.studies.config import read_toml

        study = read_toml(config)
        listed = study.get("domains") or []
        if listed and domain not in listed:
            raise ValueError(f"{config} runs no domain {domain!r} (its domains: {', '.join(map(str, listed))})")
        found = dict((study.get("domain_options") or {}).get(domain) or {})
        specs = [*(study.get("prompts") or []), *found.pop("prompts", [])]
        dataset = Path(study["dataset"]) if isinstance(study.get("dataset"), str) else None
    specs += [p.strip() for p in (prompts or "").split(",") if p.strip()]
    if specs:
        found["prompts"] = specs
    return found, dataset


def show(messages: list[dict[str, Any]], fmt: str) -> str:
    """Every message as sent: JSON, or each under a `--- role ---` header."""
    if fmt == "json":
        return json.dumps(messages, indent=2, ensure_ascii=False)
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
        scheme: Annotated[
            str | None, typer.Option(help="Show what this scheme sends (e.g. intrinsic:shots=16), not --purpose.")
        ] = None,
        call: Annotated[int, typer.Option(min=1, help="--scheme: which call of the run to show (1: the first).")] = 1,
        replies: Annotated[
            Path | None, typer.Option(help="--scheme: a JSON list of the model's replies to the calls before --call.")
        ] = None,
        prompts: Annotated[
            str | None, typer.Option(help="Prompt files (TOML/YAML) over the built-in sets, comma-separated.")
        ] = None,
        config: Annotated[
            Path | None,
            typer.Option(help="A study file: print what that study sends (its domain options, prompts, dataset)."),
        ] = None,
        among: Annotated[
            str | None,
            typer.Option(help="Load this selection and show --instance (an id) of it, e.g. --among gen:17:1 "
                         "--instance gen-1-1: generated instances take their examples from their batch."),
        ] = None,
        domain_option: Annotated[
            list[str] | None,
            typer.Option("--domain-option", "--option", help="A domain option as in a study file's [domain_options] "
                         "(repeatable): KEY=VALUE, e.g. form=transcript, verifier=val_form, reader=lenient."),
        ] = None,
    ) -> None:
        """Print the exact chat messages that would be sent: nothing is called."""
        from critiquebench.domains import get_domain, load_instances

        if fmt not in ("text", "json"):
            raise _fail("--format must be text or json")
        if purpose not in PURPOSES:
            raise _fail(f"--purpose must be one of {', '.join(PURPOSES)}")
        flagged = domain_options(domain, domain_option)
        try:
            options, study_data = study_options(domain, config, prompts)
            options.update(flagged)
            if style is not None:
                options["prompt_style"] = style
            dom = get_domain(domain, **options)
            found = load_instances(dom, among or instance, dataset or study_data)
            if among is not None:
                found = [i for i in found if i.id == instance]
            if len(found) != 1:
                raise ValueError(f"--instance must name one instance, {instance!r} names {len(found)}")
            target = found[0]
            if scheme is not None:
                messages = scheme_messages(scheme, dom, target, _replies(replies), call)
                typer.echo(show(messages, fmt))
                return
            text = answer
            if text is None and purpose != "generate":
                text = dom.candidate(target, kind, random.Random(0))
            messages = messages_for(dom, target, purpose, text or "")
        except (ValueError, OSError, LookupError) as exc:
            raise _fail(str(exc)) from exc
        typer.echo(show(messages, fmt))
