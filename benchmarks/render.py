"""The benchmark page, rendered from the results files the benchmarks write (`benchmarks/results/*.json`).

    .venv/bin/python benchmarks/render.py [--results DIR] [--output FILE]

`render_markdown(results_dir)` returns the page's Markdown: a summary table, then per benchmark script its
description (the first paragraph of its docstring), one table of its rows (measure, value, baseline, ratio,
target, met) per results file with the file's commit, date, load, machine and command under it, and a
"not measured" row for a script that has no results file yet. Every figure comes from a file; none is written
here. docs/generate.py calls `render_markdown` for the site's benchmark page.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS.parent))
from benchmarks.results import RESULTS, validate  # noqa: E402


def render_markdown(results_dir: Path = RESULTS, scripts_dir: Path = BENCHMARKS) -> str:
    """The benchmark page's Markdown from every `*.json` of `results_dir` and every `bench_*.py` of `scripts_dir`."""
    docs: dict[str, list[tuple[Path, Any, list[str]]]] = {}
    for path in sorted(results_dir.glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            doc, problems = None, [f"unreadable: {exc}"]
        else:
            problems = validate(doc)
        script = doc["script"] if not problems else path.stem.partition("-")[0] + ".py"
        docs.setdefault(script, []).append((path, doc, problems))
    scripts = sorted({p.name for p in scripts_dir.glob("bench_*.py")} | set(docs))
    lines = [
        "Each table below is rendered from the JSON file its benchmark wrote (`benchmarks/results/`), never edited "
        "by hand. A baseline is measured in the same run as the figure; the ratio is the figure the target "
        "compares. The load average (1, 5 and 15 minutes) before and after each run is given, as the machine may "
        "have been shared. `+` after a commit: the tree had uncommitted changes.",
        "",
        "| benchmark | what it measures | measured | targets met |",
        "|---|---|---|---|",
    ]
    for script in scripts:
        found = docs.get(script, [])
        valid = [doc for _, doc, problems in found if not problems]
        when = ", ".join(f"`{d['commit'][:7]}`{'+' if d['commit'].endswith('-dirty') else ''} {d['date'][:10]}"
                         for d in valid) or "not measured"  # fmt: skip
        judged = [r["met"] for d in valid for r in d["rows"] if r["met"] is not None]
        met = f"{sum(judged)} of {len(judged)}" if judged else ""
        first = _summary(scripts_dir / script).split(". ")[0].removesuffix(".")
        lines.append(f"| [`{script}`](#{_anchor(script)}) | {_cell(first)} | {when} | {met} |")
    for script in scripts:
        lines += ["", f"### {script}", ""]
        summary = _summary(scripts_dir / script)
        if summary:
            lines += [summary, ""]
        found = docs.get(script, [])
        if not found:
            lines += [*_header(), f"| not measured: no results file yet (`python benchmarks/{script}`) | | | | | |"]
        for path, doc, problems in found:
            if problems:
                lines.append(f"`{path.name}`: not rendered, invalid results file: {_cell('; '.join(problems))}")
                continue
            lines += [*_header(), *(_row(r) for r in doc["rows"]), "", _provenance(doc)]
    return "\n".join(lines).rstrip() + "\n"


def _header() -> list[str]:
    return ["| measure | value | baseline | ratio | target | met |", "|---|---|---|---|---|---|"]


def _row(r: dict[str, Any]) -> str:
    measure = r["measure"] + (f" ({r['note']})" if r.get("note") else "")
    value = f"{_number(r['value'])} {r['unit']}"
    base = r["baseline"]
    baseline = f"{base['what']}: {_number(base['value'])} {r['unit']}" if base else ""
    ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x" if 0.01 <= r["ratio"] < 10 else f"{_number(r['ratio'])}x"
    met = {True: "met", False: "**missed**", None: ""}[r["met"]]
    cells = (measure, value, baseline, ratio, r["target"] or "", met)
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _provenance(doc: dict[str, Any]) -> str:
    commit = doc["commit"]
    dirty = commit.endswith("-dirty")
    commit_text = f"`{commit.removesuffix('-dirty')[:10]}`" + (" with uncommitted changes" if dirty else "")
    machine = doc["machine"]
    before, after = (" / ".join(f"{x:.2f}" for x in doc["load"][k]) for k in ("before", "after"))
    command = " ".join(_without_json(doc["command"]))
    text = (
        f"Measured at {commit_text} on {doc['date'].replace('T', ' ').removesuffix('Z')} UTC; load average "
        f"{before} before, {after} after; {machine['cores']} cores ({machine['cpu']}), Python {machine['python']}; "
        f"`python benchmarks/{command}`."
    )
    return text + (f" {doc['notes']}." if doc.get("notes") else "")


def _without_json(argv: list[str]) -> list[str]:
    """The command as run, without where its results were written (a temporary path means nothing later)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--json":
            skip = True
        elif not arg.startswith("--json="):
            out.append(arg)
    return out


def _summary(script: Path) -> str:
    """The first paragraph of the script's docstring, on one line (read without importing the script)."""
    try:
        doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError):
        return ""
    return " ".join(doc.split("\n\n")[0].split())


def _number(x: float) -> str:
    if isinstance(x, int):
        return f"{x:,}"
    size = abs(x)
    if size >= 100:
        return f"{x:,.0f}"
    if size >= 10:
        return f"{x:.1f}"
    if size >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _anchor(heading: str) -> str:
    """The id MkDocs gives a heading: lower case, punctuation dropped, spaces as dashes."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of the results files")
    parser.add_argument("--output", type=Path, help="write the page here instead of printing it")
    args = parser.parse_args()
    page = render_markdown(args.results)
    if args.output:
        args.output.write_text(page, encoding="utf-8")
    else:
        sys.stdout.write(page)


if __name__ == "__main__":
    main()
