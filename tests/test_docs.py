"""Documentation is code: the site builds strictly, its generated tables match the code, and every shell and Python
block of README.md and docs/ runs.

Blocks run page by page, in order, in one fresh folder per page (a later block may use what an earlier one made),
against a scripted OpenAI-compatible server on loopback: `MODEL` and `http://localhost:8000/v1` in a block are
pointed at it, and so is `OPENAI_BASE_URL` for commands that name no endpoint. The folder holds links to the
project's `studies/` and, one level up, to `../shared`, as a checkout has them. A block that cannot run here is
preceded by `<!-- no-run: why, and which test covers it instead -->`. The blocks' `critiquebench` commands are
forked from one process that imported the CLI (tests/forked_cli.py), and so are the Python blocks: each is still
a process with the block's pipes. The README's two set-up commands (indented, not fenced) are CI's own command
and tests/test_main_job.py + tests/test_embedded.py's job.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import DATASETS
from tests.forked_cli import forked_cli
from tests.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[1]
RUNNABLE = {"bash": "bash", "sh": "bash", "python": "python"}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
NO_RUN = re.compile(r"<!-- no-run: (.+?) -->\n$")
SCRIPTED_REPLY = "(4 + 4) * (10 - 7) = 24\n[ANSWER END]"
# what `critiquebench confidence` imports when it runs (scikit-learn, ~2.3 s of CPU): imported once by the fork
# server instead of by each of the validator-refinement page's five confidence commands
CONFIDENCE_LIBRARIES = ("sklearn.preprocessing", "sklearn.model_selection", "critiquebench.confidence.models")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    text: str
    skip_reason: str | None


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        before = text[: match.start()]
        mark = NO_RUN.search(before[-1000:])
        out.append(Block(str(page.relative_to(ROOT)), before.count("\n") + 1, match[1], match[2],
                         mark[1] if mark else None))  # fmt: skip
    return out


def runnable(block: Block) -> bool:
    """A block to run here: a shell or Python block not marked no-run, and, in README.md, not a copy of a block
    the site runs (the README repeats the get-started page's examples; running each once keeps the suite short)."""
    if block.language not in RUNNABLE or block.skip_reason:
        return False
    if block.page == "README.md":
        return not any(block.text in page.read_text(encoding="utf-8") for page in pages()[1:])
    return True


def runnable_pages() -> list[str]:
    return [str(p.relative_to(ROOT)) for p in pages() if any(runnable(b) for b in blocks(p))]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def docs_server() -> ScriptedServer:
    with ScriptedServer(reply=SCRIPTED_REPLY) as server:
        yield server


@pytest.fixture(scope="module")
def docs_env(docs_server: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The pages' environment, with `critiquebench` on PATH forked from one process that imported it (each
    command is a process of its own, with the block's descriptors; tests/forked_cli.py): ~100 commands no longer
    import the CLI and its libraries one by one. The commands' CPU reaches the test process only when the server
    ends (it waits for them), so --cpu-report puts it on the module's last test."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "OPENAI_BASE_URL": docs_server.base_url, "OPENAI_API_KEY": "sk-docs", "PYTHONPATH": str(ROOT),
           "NO_COLOR": "1", "TERM": "dumb"}  # fmt: skip
    env.pop("CRITIQUEBENCH_DATA", None)
    # finalize=False: each command ends as the interpreter ends it up to the finalization's module teardown, which
    # would copy the server's whole preloaded heap into each of the ~100 commands (~0.28 s of CPU each, ~28 s)
    with forked_cli(tmp_path_factory.mktemp("cli"), env, also=CONFIDENCE_LIBRARIES, finalize=False) as forked:
        yield forked


# one worker runs every page (~1 min of wall): under xdist each worker running some would start a fork server of
# its own, importing everything again (~10 s of CPU)
@pytest.mark.xdist_group("docs-examples")
@pytest.mark.parametrize("page", runnable_pages())
def test_every_example_on_the_page_runs(
    page: str, docs_server: ScriptedServer, docs_env: dict[str, str], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "studies").symlink_to(ROOT / "studies")
    (tmp_path / "shared").symlink_to(DATASETS.parent)
    env = {**docs_env, "CRITIQUEBENCH_STORE": str(work / "critiquebench.sqlite")}
    for block in blocks(ROOT / page):
        if not runnable(block):
            continue
        source = re.sub(r"\bMODEL\b", "scripted", block.text).replace("http://localhost:8000/v1", docs_server.base_url)
        command = ["bash", "-e", "-o", "pipefail", "-c", source] if RUNNABLE[block.language] == "bash" else [
            "forked-python", "-c", source]  # fmt: skip
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (
            f"{page}:{block.line}: the {block.language} block exited {done.returncode}\n{block.text}\n"
            f"--- stdout ---\n{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr[-3000:]}"
        )


def test_a_block_left_out_says_why_and_every_page_has_its_language() -> None:
    for page in pages():
        for block in blocks(page):
            assert block.language, f"{block.page}:{block.line}: a fenced block names its language"
            if block.skip_reason is not None:
                assert len(block.skip_reason.split()) >= 4, f"{block.page}:{block.line}: say why it cannot run"


def test_generated_tables_match_the_code() -> None:
    generator = _generator()
    assert generator.stale(generator.pages()) == [], "run: python docs/generate.py"


@pytest.mark.xdist_group("browser")  # beside tests/test_docs_offline.py, which opens the same build (`built_site`)
def test_the_site_builds_strictly_with_every_page_and_the_api(built_site: Path) -> None:
    site = built_site  # conftest's fixture asserts that `mkdocs build --strict` exits 0 (its stderr if not)
    for page in (
        "get-started",
        "papers/self-verification",
        "papers/intrinsic-self-critique",
        "papers/plan-self-critique",
        "planbench",
        "papers/validator-refinement",
        "schemes",
        "domains",
        "prompts",
        "reports",
        "store",
        "viewer",
        "api",
        "cli",
        "reliability",
        "benchmarks",
        "changelog",
    ):
        assert (site / page / "index.html").is_file(), page
    import critiquebench.api as api

    html = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in api.__all__:
        assert f'id="critiquebench.api.{name}"' in html, f"the API page lacks {name}"
        first_line = (getattr(api, name).__doc__ or "").strip().split("\n")[0]
        words = re.findall(r"[A-Za-z]{4,}", first_line)[:4]
        assert all(w in html for w in words), f"the API page lacks {name}'s docstring"
    changelog = (site / "changelog" / "index.html").read_text(encoding="utf-8")
    assert "Keep a Changelog" in changelog


def test_readme_is_a_short_front_door_that_starts_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").split("\n")
    assert len(lines) <= 150
    assert lines[0] == "    bash scripts/setup.sh && .venv/bin/critiquebench run main --config studies/main.toml"
    assert lines[1] == (
        "    bash scripts/setup.sh && .venv/bin/python -m pytest -q -n auto --dist loadgroup --durations=25"
    )
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert lines[1].strip() in ci
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")
    assert "## [Unreleased]" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_every_test_the_reliability_page_names_exists() -> None:
    """Each promise names the test that shows it: a renamed or deleted test fails here, not silently in the docs."""
    page = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    named = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", page)
    assert len(named) >= 10
    for path, test in named:
        source = (ROOT / path).read_text(encoding="utf-8")
        assert not test or re.search(rf"^def {test}\(", source, re.M), f"{path}::{test} does not exist"
