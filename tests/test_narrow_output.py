"""Every command that prints a table fits 80 columns when its output goes to a file or a pipe, with nothing left
out: a table too wide is drawn in parts that repeat the row's key columns (`critiquebench.reports.tables`).
Markdown's table rows and headings are one line each by its syntax (docs/reports.md): only its notes are folded.
Each command runs as a user runs it, its standard output a file: a process of its own, forked from a server that
imported the CLI once (tests/forked_cli.py; `forked_env` for the main job, `forked_light_env` for the reading
commands), not an interpreter importing it anew (1-2 s of CPU each, ~20 commands)."""

from __future__ import annotations

import json
import subprocess
from functools import partial
from pathlib import Path

from critiquebench.domains.datasets import DATA_ENV
from tests.conftest import DATASETS
from tests.scripted_server import ScriptedServer

REFERENCE = DATASETS / "planbench" / "reference"
# GPT-4's own colouring runs of the self-verification study (kstechly/gpt-and-i @ada66fc6)
COLORING = DATASETS / "self_verification/recorded/gpt-and-i@ada66fc6/llm-csp/responses/graph_coloring/gpt-4_chat"
WIDTH = 80


def run_to_file(tmp_path: Path, forked: dict[str, str], *args: str) -> list[str]:
    """The command's standard output, written to a file (no terminal: the piped width), as lines. It runs in
    `tmp_path`, so the store is named by a short relative path, as a user's usually is; `forked` is the
    environment of a fork server (`forked_env`, `forked_light_env`), whose `critiquebench` is first on PATH."""
    out = tmp_path / "out.txt"
    env = {k: v for k, v in forked.items() if k not in ("CRITIQUEBENCH_COLUMNS", "COLUMNS")}
    env[DATA_ENV] = str(DATASETS)  # (the recorded colouring runs read their graphs from the default datasets root)
    with out.open("w", encoding="utf-8") as fp:
        done = subprocess.run(["critiquebench", *args], stdout=fp, stderr=subprocess.PIPE, text=True, timeout=600,
                              env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, (args, done.stderr)
    return out.read_text(encoding="utf-8").splitlines()


def too_wide(lines: list[str], markdown: bool = False) -> list[str]:
    # Markdown's table rows and headings cannot be folded without breaking them
    return [line for line in lines if len(line) > WIDTH and not (markdown and line.startswith(("|", "#")))]


def test_the_main_job_reports_and_listings_fit_80_columns_with_every_column(
    tmp_path: Path, forked_env: dict[str, str], forked_light_env: dict[str, str]
) -> None:
    assert REFERENCE.is_dir(), f"needs the PlanBench reference files in {REFERENCE} (../shared/datasets)"
    read = partial(run_to_file, tmp_path, forked_light_env)  # the commands that read the store
    store = "store.sqlite"  # in tmp_path, where the commands run
    recorded = {"gpt4-backprompt": REFERENCE / "gpt-4_blocksworld_backprompting_first_error.json",
                "gpt4-coloring-first": COLORING / "backprompting-first/responses.json"}  # fmt: skip
    toml = tmp_path / "job.toml"
    with ScriptedServer(reply="[PLAN]\n[PLAN END]") as server:
        toml.write_text("\n".join([
            'domains = ["blocksworld"]',
            'schemes = ["standard", "sound-first:rounds=2", "llm-llm:rounds=2"]',
            'instances = "gen:2:1"', f'dataset = "{DATASETS}"', f'base_url = "{server.base_url}"',
            'model = "scripted"', "[recorded]", *(f'{name} = "{path}"' for name, path in recorded.items()),
        ]) + "\n")  # fmt: skip
        job = ("run", "main", "--config", str(toml), "--store", store, "--no-progress")
        summary = run_to_file(tmp_path, forked_env, *job)  # the main job, forked from the preloaded study CLI
    assert not too_wide(summary), "\n".join(too_wide(summary))
    text = "\n".join(summary)
    # the findings table is drawn in parts at 80 columns; each of its cells is still there, whole
    assert "Findings: recorded runs replayed offline, beside the live study (part 1 of" in text
    assert "gpt-4: 82.0% (41/50)" in text and "0 new, 286 cached" in text and "(sound-first:rounds=2)" in text
    assert "Figure 2: accuracy by round budget n" in text and "Table 2: the LLM as verifier" in text

    every = {"1", "2", "figure", "compare", "stops"}
    for table in sorted(every):
        shown = read("report", "main", "--table", table, "--store", store)
        assert not too_wide(shown), (table, "\n".join(too_wide(shown)))
        marked = read("report", "main", "--table", table, "--format", "md", "--store", store)
        assert not too_wide(marked, markdown=True), (table, "\n".join(too_wide(marked, markdown=True)))
    # nothing is left out of the text form: every column Markdown has is a header of a part, every cell a cell
    detail = "\n".join(read("report", "main", "--store", store))
    assert "Table 1 detail (part 1 of" in detail and "Left out" not in detail
    for header in ("mean rounds", "mean tokens", "LLM calls", "cache hits", "unfinished", "planned"):
        assert all(word in detail for word in header.split()), header
    rows = json.loads("\n".join(read("report", "main", "--format", "json", "--store", store)))
    for row in rows:
        assert f"{row['scheme']}" in detail and f"({row['correct']}/{row['total']})" in detail

    recorded_report = read("report", "gpt4-coloring-first", "--store", store)
    assert not too_wide(recorded_report), "\n".join(too_wide(recorded_report))
    for listing in (["studies"], ["schemes"], ["critics"], ["cache", "stats"]):
        shown = read(*listing, "--store", store) if listing[0] in ("studies", "cache") else read(*listing)
        assert shown and not too_wide(shown), (listing, "\n".join(too_wide(shown)))
    studies = "\n".join(read("studies", "--store", store))
    assert all(name in studies for name in ("main", *recorded))


def test_a_wider_width_is_the_users_to_choose() -> None:
    """$CRITIQUEBENCH_COLUMNS widens the piped tables: at 200 columns the same listing is one table."""
    from critiquebench.reports.tables import Grid, rich_text

    grid = Grid("t", ["domain", "scheme", *(f"column {i}" for i in range(12))],
                [["game24", "sound-first:rounds=2", *(f"{i}.00" for i in range(12))]])  # fmt: skip
    narrow, wide = rich_text([grid], 80), rich_text([grid], 200)
    assert "t (part 1 of 3)" in narrow and "(part " not in wide
    assert max(map(len, narrow.splitlines())) <= 80 < max(map(len, wide.splitlines()))
    for i in range(12):  # every column and its cell in both
        assert f"column {i}" in " ".join(wide.split()) and f"{i}.00" in narrow
