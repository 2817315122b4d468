"""Where a t1 file's problems come from when the checkout cannot rebuild its prompts: `FALLBACKS`, in order."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from critiquebench.domains.planning.replay import Replay, Replaying
from critiquebench.importers.planbench.checkout import (
    domains_folder,
    planbench_name,
)
from critiquebench.importers.planbench.file import ImportError_
from critiquebench.importers.planbench.intro import stated_domain
from critiquebench.importers.planbench.kinds import PlanBenchRun
from critiquebench.importers.planbench.readers import plan_generation_options
from critiquebench.importers.planbench.recorded import (
    pddl_queries,
    rebuild,
    recorded_domain,
    with_recorded_domain,
    with_stated_problems,
)


def from_prompts(
    run: PlanBenchRun,
    path: Path,
    queries: Mapping[int, str],
    laid_out: Path | None,
    store: Path,
    reading: str | None,
    failed: ImportError_,
) -> tuple[Path, str, Replaying]:
    """The folder, domain key and options of a t1 file whose prompts the checkout does not rebuild, from what its
    prompts show (`FALLBACKS`, the first that replays); `failed` (the checkout's error) with each attempt's reason
    when none does."""
    assert run.source is not None
    reasons: list[str] = []
    attempts: list[tuple[Path, Replay]] = []
    try:
        for fallback in FALLBACKS:  # every folder is laid out before any is tried, as one import step
            if (found := fallback(run, path, queries, laid_out, domains_folder(store))) is not None:
                attempts.append(found)
    except ImportError_ as exc:
        reasons.append(str(exc).removeprefix(f"{path}: "))
    for folder, fixed in attempts:
        try:
            return folder, str(folder), plan_generation_options(run, path, str(folder), folder, reading, fixed)
        except ImportError_ as exc:
            reasons.append(str(exc).removeprefix(f"{path}: "))
    if not reasons:
        raise failed
    raise ImportError_(f"{failed}; read back from its prompts: {'; '.join(reasons)}") from None


Fallback = Callable[[PlanBenchRun, Path, Mapping[int, str], "Path | None", Path], "tuple[Path, Replay] | None"]


def _shown_domain(
    run: PlanBenchRun, path: Path, queries: Mapping[int, str], laid_out: Path | None, into: Path
) -> tuple[Path, Replay] | None:
    """The checkout's problems with the domain text the prompts show (2023 GPT-4 Logistics)."""
    shown = recorded_domain(queries)
    folder = with_recorded_domain(laid_out, shown, into) if shown and laid_out else None
    return None if folder is None else (folder, Replay())


def _stated_problems(
    run: PlanBenchRun, path: Path, queries: Mapping[int, str], laid_out: Path | None, into: Path
) -> tuple[Path, Replay] | None:
    """The problems read back from English prompts, where the checkout lacks them."""
    if not laid_out or recorded_domain(queries):
        return None
    folder = with_stated_problems(path, laid_out, queries, into)
    return None if folder is None else (folder, Replay())


def _stated_domain(
    run: PlanBenchRun, path: Path, queries: Mapping[int, str], laid_out: Path | None, into: Path
) -> tuple[Path, Replay] | None:
    """The domain, its templates and the problems read back from English prompts no checkout config has
    templates for (the obfuscated Blocksworld English runs: `intro.stated_domain`)."""
    if laid_out is not None or recorded_domain(queries):
        return None
    assert run.source is not None
    folder = stated_domain(path, planbench_name(run.source.domain), queries, into)
    stated = with_stated_problems(path, folder, queries, into) if folder is not None else None
    return None if stated is None else (stated, Replay())


def _pddl_problems(
    run: PlanBenchRun, path: Path, queries: Mapping[int, str], laid_out: Path | None, into: Path
) -> tuple[Path, Replay] | None:
    """Every problem read back from its PDDL prompt (obfuscated runs drew a domain name per prompt)."""
    if not pddl_queries(queries):
        return None
    assert run.source is not None
    found = rebuild(path, planbench_name(run.source.domain), queries, into)
    return found.folder, Replay(domain_names=found.domain_names or None)


# Where a t1 file's problems come from when the checkout cannot rebuild its prompts, in the order tried.
FALLBACKS: tuple[Fallback, ...] = (_shown_domain, _stated_problems, _stated_domain, _pddl_problems)
