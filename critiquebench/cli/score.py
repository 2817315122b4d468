"""`critiquebench score`: judge saved LLM answers with a domain's sound verifier.

Input: JSON lines `{"id": ..., "instance": <instance id or path to an instance file>, "response": "<text>"}`.
Output: one JSON line per input line, `{"id", "instance", "valid", "verdict", "answer", "feedback"}` where
verdict is valid | invalid | malformed, or "error" with an "error" message when the line cannot be scored
(bad JSON, unknown instance, unreadable file). A bad line never stops the run. Each distinct instance is
loaded once. Only the first `--max-answer-chars` characters of a response are parsed (a runaway answer must not
take gigabytes); such lines say `"truncated": true` and the response's full length. The exit code is 1 when any
line was an error, with the counts on stderr.
"""

import json
import logging
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from critiquebench.cli.domain_options import DomainOptionOpt, domain_options
from critiquebench.outputs import json_text

if TYPE_CHECKING:
    from critiquebench.domains import Domain

log = logging.getLogger(__name__)


class Level(StrEnum):
    binary = "binary"
    first = "first"
    all = "all"


MAX_ANSWER_CHARS = 100_000  # far beyond any answer the domains expect (a 100-step plan is ~5,000 characters)


def score_lines(
    domain: "Domain", lines: Iterable[str], level: str, dataset: Path | None, max_chars: int = MAX_ANSWER_CHARS
) -> Iterator[dict[str, Any]]:
    """One result per non-blank input line (see module docstring)."""
    from critiquebench.domains.references import InstanceCache

    cache = InstanceCache(domain, dataset)
    rows = [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]
    parsed = [_parse_line(line) for _, line in rows]
    cache.preload(item["instance"] for item in parsed if "error" not in item)
    for (number, _), item in zip(rows, parsed, strict=True):
        result: dict[str, Any] = {"id": item.get("id", number), "instance": item.get("instance")}
        if "error" in item:
            yield {**result, **_error(item["error"])}
            continue
        instance = cache.get(item["instance"])
        if isinstance(instance, str):
            yield {**result, **_error(instance)}
            continue
        response = item["response"]
        if len(response) > max_chars:
            result.update(truncated=True, response_chars=len(response))
            response = response[:max_chars]
        try:
            verdict = domain.assess(instance, response)[0]
            feedback = domain.feedback(instance, verdict, level)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - a verifier bug must not lose the other lines
            log.exception("verifying line %d failed", number)
            yield {**result, **_error(f"verifier failed: {exc}")}
            continue
        yield {**result, "valid": verdict.valid, "verdict": verdict.status, "answer": verdict.answer,
               "feedback": feedback}


def _parse_line(line: str) -> dict[str, Any]:
    try:
        item = json.loads(line)
    except ValueError as exc:
        return {"error": f"bad JSON: {exc}"}
    if not isinstance(item, dict):
        return {"error": "a line must be a JSON object"}
    out: dict[str, Any] = {"id": item["id"]} if "id" in item else {}
    instance, response = item.get("instance"), item.get("response")
    if isinstance(instance, int) and not isinstance(instance, bool):
        instance = str(instance)
    if not isinstance(instance, str) or not instance.strip():
        return {**out, "error": "missing 'instance' (an instance id or a path to an instance file)"}
    out["instance"] = instance.strip()
    if not isinstance(response, str):
        return {**out, "error": "missing 'response' (the raw answer text)"}
    return {**out, "response": response}


def _error(message: str) -> dict[str, Any]:
    return {"valid": False, "verdict": "error", "answer": None, "feedback": None, "error": message}


def score(
    file: Annotated[Path, typer.Argument(help="JSONL of {id, instance, response} lines; - for stdin.")],
    domain: Annotated[str, typer.Option("--domain", "-d", help="game24, coloring, ... or a folder.")],
    feedback: Annotated[Level, typer.Option("--feedback", "-f", help="Feedback level.")] = Level.first,
    dataset: Annotated[Path | None, typer.Option(help="Datasets root or the domain's own data.")] = None,
    prompt_style: Annotated[str | None, typer.Option(help="Planning prompt style: nl or pddl.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here, not to stdout.")] = None,
    max_answer_chars: Annotated[
        int, typer.Option(min=1, help="Parse at most this many characters of a response (the rest: truncated).")
    ] = MAX_ANSWER_CHARS,
    domain_option: DomainOptionOpt = None,
) -> None:
    """Score saved LLM answers with the domain's sound verifier; writes one JSON line per answer."""
    from critiquebench.domains import get_domain

    options = {"prompt_style": prompt_style, **domain_options(domain, domain_option)}
    try:
        chosen = get_domain(domain, **options)
    except Exception as exc:  # noqa: BLE001 - unknown names and broken PDDL folders alike
        _fail(f"--domain {domain}: {exc}")
    if dataset is not None and not dataset.exists():
        _fail(f"--dataset {dataset} does not exist")
    from critiquebench.outputs import OutputError, check_output, open_output

    try:
        lines = (sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8", errors="replace"))
        if output:
            check_output(output)  # before any answer is scored
    except OSError as exc:
        _fail(f"{exc.filename or file}: {exc.strerror or exc}")
    except OutputError as exc:
        _fail(str(exc))
    counts: Counter[str] = Counter()
    truncated = 0
    try:
        with open_output(output) if output else nullcontext(sys.stdout) as sink:
            for result in score_lines(chosen, lines.splitlines(), feedback.value, dataset, max_answer_chars):
                counts[result["verdict"]] += 1
                truncated += bool(result.get("truncated"))
                sink.write(json_text(result, ensure_ascii=False, default=str) + "\n")
    except OutputError as exc:
        _fail(str(exc))
    summary = ", ".join(f"{counts[v]} {v}" for v in ("valid", "invalid", "malformed", "error"))
    cut = f"; {truncated} truncated to {max_answer_chars} characters" if truncated else ""
    typer.echo(f"scored {sum(counts.values())} answers: {summary}{cut}", err=True)
    if counts["error"]:
        raise typer.Exit(1)


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command("score")(score)
