"""The re-count of papers 001 and 004's 83 elements (`critiquebench/reports/elements.py`; issue 41's acceptance):
every element is exact, ours with its reason, or missing with why, names a test file that exists, and is on its
paper's page; the prompt rows' texts are recomputed here word for word from the paper's appendix lines, not from
our output."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from critiquebench.reports.elements import ELEMENTS, elements, tally, verdict_word

ROOT = Path(__file__).resolve().parents[1]
PAPER_001 = ROOT.parent / "shared" / "papers" / "001_d090ca30e1edfbcb.txt"
PROMPTS = ROOT / "domains" / "prompts" / "intrinsic_self_critique.toml"


def words(text: str) -> list[str]:
    """`text`'s words, placeholders (`${x}` in our file, `{x}` in the paper) left out, the paper's ’ as '."""
    return re.sub(r"\$?\{\w+\}", " ", text.replace("\u2019", "'")).split()


def test_all_83_elements_each_exact_ours_because_or_missing_because() -> None:
    assert len(ELEMENTS) == 83 and len(elements("001")) == 55 and len(elements("004")) == 28
    assert all(verdict_word(e.verdict) == "exact" or e.verdict.startswith(("ours, because ", "missing, because "))
               for e in ELEMENTS), [e.element for e in ELEMENTS if verdict_word(e.verdict) not in ("exact",)]
    assert all((ROOT / e.test).is_file() for e in ELEMENTS), [e.test for e in ELEMENTS if not (ROOT / e.test).is_file()]
    # the audit's count at 9ea0256, and today's
    assert tally(audit=True) == {"exact": 55, "differs": 15, "ours": 10, "missing": 2, "n/a": 1}
    assert tally() == {"exact": 62, "ours": 21}


def test_the_prompt_rows_are_the_papers_words() -> None:
    lines = PAPER_001.read_text(encoding="utf-8").splitlines()
    prompts = tomllib.loads(PROMPTS.read_text(encoding="utf-8"))
    rows = [e for e in ELEMENTS if e.text]
    assert len(rows) == 6
    for row in rows:
        at, sections = row.text or ((), ())
        paper = words(" ".join(lines[n - 1] for n in at))
        ours = words("".join(prompts[s]["text"] for s in sections))
        # the appendix prints a title before each prompt ("A.1: Self-Critique Prompt ..."): ours is all the rest
        assert ours and paper[len(paper) - len(ours) :] == ours, (row.element, paper, ours)
        assert row.verdict == "exact"


def test_each_page_shows_its_elements_and_tally() -> None:
    for paper, page in (("001", "intrinsic-self-critique.md"), ("004", "validator-refinement.md")):
        text = (ROOT / "docs" / "papers" / page).read_text(encoding="utf-8")
        block = text.split(f"<!-- generated: elements:{paper} -->")[1].split("<!-- end generated -->")[0]
        assert all(" ".join(e.element.split()) in block for e in elements(paper))
        counts = tally(elements(paper))
        assert f"{counts['exact']} exact" in block
