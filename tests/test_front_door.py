"""What a newcomer reads first holds (issue 43's audit): every link of the README lands on a file that exists and,
with a `#section`, on a heading of that page (MkDocs checks the site's own links, but README.md is outside the
site); the API's settings are every one documented where the API page shows them, and each is a setting
`critiquebench run` takes (the audit found the page omitting settings `run` accepts and linking a README section
that no longer existed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer
from markdown.extensions.toc import slugify

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)


def anchors(page: Path) -> set[str]:
    """The ids MkDocs gives the page's headings (Python-Markdown's toc slugify, as mkdocs.yml leaves it)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)  # no code's comments
    return {slugify(re.sub(r"[`*]", "", h), "-") for h in HEADING.findall(text)}


def broken_links(page: Path) -> list[str]:
    bad = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # http(s), mailto: not followed offline
            continue
        path, _, section = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            bad.append(f"{target}: no such file")
        elif section and section not in anchors(file):
            bad.append(f"{target}: no such heading")
    return bad


def test_every_readme_link_lands_on_a_file_and_heading() -> None:
    assert len(LINK.findall((ROOT / "README.md").read_text(encoding="utf-8"))) > 10
    assert broken_links(ROOT / "README.md") == []


def test_the_link_check_finds_a_missing_file_and_section(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\n## What differs, still\n\n```\n# not a heading\n```\n")
    (tmp_path / "b.md").write_text("[x](a.md#what-differs-still) [y](a.md#not-a-heading) [z](c.md) [w](#q)\n# Q\n")
    assert broken_links(tmp_path / "b.md") == ["a.md#not-a-heading: no such heading", "c.md: no such file"]


def test_every_api_setting_is_documented_and_is_a_run_option() -> None:
    from critiquebench.api import Settings
    from critiquebench.cli import app

    keys = list(Settings.__annotations__)
    doc = Settings.__doc__ or ""
    assert [k for k in keys if f"`{k}`" not in doc] == []  # the API page renders this docstring
    (run,) = [c for n, c in typer.main.get_command(app).commands.items() if n == "run"]  # type: ignore[attr-defined]
    options = {p.name for p in run.params}
    # config is run's --config; domain_options its repeated --domain-option
    assert [k for k in keys if {"domain_options": "domain_option"}.get(k, k) not in options] == []


def test_the_score_example_shows_a_valid_and_an_invalid_answer(tmp_path: Path) -> None:
    """Audit: docs/samples.md's `score` example gave instance 901 (4 5 6 10) "(4 + 4) * (10 - 7)", so both lines
    came out invalid where a reader expects one of each; the page's own lines, scored, are one valid, one not."""
    from tests.test_study_cli import DATASETS, invoke

    page = (ROOT / "docs" / "samples.md").read_text(encoding="utf-8")
    (lines,) = re.findall(r"cat > answers.jsonl <<'EOF'\n(.*?)^EOF$", page, flags=re.S | re.M)
    (tmp_path / "answers.jsonl").write_text(lines, encoding="utf-8")
    done = invoke("score", "--domain", "game24", str(tmp_path / "answers.jsonl"), "--dataset", str(DATASETS))
    assert [json.loads(line)["verdict"] for line in done.stdout.splitlines()] == ["valid", "invalid"]
