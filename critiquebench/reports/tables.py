"""Rendering report rows as rich terminal tables, Markdown, CSV or JSON.

JSON and CSV are long format: one object/line per row with every field (Table 1 rows carry at least domain,
scheme, correct, total, accuracy, ci_low, ci_high, mean_rounds, prompt_tokens, completion_tokens, llm_calls,
cache_hits; every row has a `table` key: "1", "2", "figure", "compare", "stops" or "side-by-side"). The terminal
and Markdown forms use the papers' layout: schemes as rows, domains as columns, cells like "23.0% (23/100)".
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from critiquebench.outputs import json_text, spreadsheet_row
from critiquebench.reports.metrics import (
    BudgetPoint,
    CompareRow,
    Table1Row,
    Table2Row,
    row_dict,
)

FORMATS = ("table", "md", "csv", "json")

NOTES = {
    "1": "Accuracy = sound-verified final answers / finished runs; 95% Wilson interval; rounds and tokens "
    "are means per run (instance x trial). ± Wald = 1.96 sqrt(p(1-p)/n), the form of most of paper 001's ± "
    "(Tables 1, 2, 4-6; not Table 3: report --published).",
    "2": "Over every attempt judged by an LLM verifier and the sound verifier. Accuracy: LLM agrees with "
    "the sound verdict. FPR: LLM said valid among sound-invalid answers. FNR: LLM said invalid among "
    "sound-valid answers.",
    "figure": "Budget n: a run's answer is the one it stopped at if that round is <= n, else the answer of "
    "round n.",
}


@dataclass(frozen=True)
class Grid:
    """One rendered table: a title, column headers and string cells."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    note: str = ""


def pct(num: int | None, den: int | None) -> str:
    """The papers' cell format: "23.0% (23/100)"; "-" when there is nothing to count."""
    if num is None or not den:
        return "-"
    return f"{100 * num / den:.1f}% ({num}/{den})"


def _num(value: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if value is None else fmt.format(value)


def flagged(text: str, flag: bool, mark: str) -> str:
    """A cell with its guard mark (reports.guards) when the flag is set."""
    return f"{text} {mark}" if flag else text


def spread(trials: int, mean: float | None, sd: float | None) -> str:
    """Accuracy across trials as "41.0% ± 3.2 (3 trials)"; "-" with one trial."""
    if mean is None or sd is None:
        return "-"
    return f"{100 * mean:.1f}% ± {100 * sd:.1f} ({trials} trials)"


def interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"[{100 * low:.1f}, {100 * high:.1f}]"


TRIALS_NOTE = ("across trials: each trial's accuracy over its instances, mean ± sample standard deviation "
               "(several trials per instance only).")  # fmt: skip


STUDY_FAILED_NOTE = ("study code failed: finished runs that ended where the study's own code failed on a reply "
                     "(marked the instance failed, or crashed); in the accuracy, scored by their last answer as the "
                     "study scored them, and counted apart as it listed them.")  # fmt: skip


def _notes(note: str, *extra: tuple[bool, str]) -> str:
    return "\n".join([note, *(line for shown, line in extra if shown)])


def table1_grids(rows: Sequence[Table1Row]) -> list[Grid]:
    from critiquebench.reports.guards import SMALL_N_NOTE

    domains = list(dict.fromkeys(r.domain for r in rows))
    schemes = list(dict.fromkeys(r.scheme for r in rows))
    cell = {(r.domain, r.scheme): r for r in rows}
    several = any(r.trials > 1 for r in rows)
    failing = any(r.study_failed for r in rows)  # the column shows where a study's own code failed on a reply
    main = [
        [s, *(flagged(pct(c.correct, c.total), c.small_n, "*") if (c := cell.get((d, s))) else "" for d in domains)]
        for s in schemes
    ]
    detail = [
        [
            r.domain,
            r.scheme,
            pct(r.correct, r.total),
            "-" if r.ci_low is None else f"[{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]",
            "-" if r.wald is None else f"±{100 * r.wald:.1f}",
            _num(r.mean_rounds, "{:.2f}"),
            _num(r.mean_tokens, "{:.0f}"),
            str(r.llm_calls),
            str(r.cache_hits),
            str(r.failed),
            str(r.unfinished),
            "-" if r.planned is None else str(r.planned),
            *([spread(r.trials, r.trial_mean, r.trial_sd)] if several else []),
            *([str(r.study_failed)] if failing else []),
        ]
        for r in rows
    ]
    study = rows[0].study if rows else ""
    short = [r for r in rows if r.planned is not None and r.total < r.planned]
    progress = "unfinished study: finished runs of those planned per cell: " + "; ".join(
        f"{r.scheme} on {r.domain} {r.total}/{r.planned}" for r in short
    )
    return [
        Grid(f"Table 1: accuracy ({study})", ["scheme", *domains], main,
             _notes(NOTES["1"], (any(r.small_n for r in rows), SMALL_N_NOTE), (bool(short), progress))),
        Grid(
            "Table 1 detail",
            [
                "domain",
                "scheme",
                "accuracy",
                "95% CI (%)",
                "± Wald (%)",
                "mean rounds",
                "mean tokens",
                "LLM calls",
                "cache hits",
                "failed",
                "unfinished",
                "planned",
                *(["across trials"] if several else []),
                *(["study code failed"] if failing else []),
            ],
            detail,
            _notes(TRIALS_NOTE if several else "", (failing, STUDY_FAILED_NOTE)).strip(),
        ),
    ]


def table2_grids(rows: Sequence[Table2Row]) -> list[Grid]:
    from critiquebench.reports.guards import ONE_CLASS_NOTE

    body = [
        [
            r.domain,
            r.scheme,
            flagged(pct(r.agree, r.n), r.one_class, "†"),
            pct(r.false_pos, r.sound_invalid),
            pct(r.false_neg, r.sound_valid),
        ]
        for r in rows
    ]
    study = rows[0].study if rows else ""
    return [
        Grid(
            f"Table 2, verifier in the loop: LLM verifier vs sound verifier ({study})",
            ["domain", "scheme", "accuracy", "FPR", "FNR"],
            body,
            _notes(NOTES["2"], (any(r.one_class for r in rows), ONE_CLASS_NOTE)),
        )
    ]


def budget_grids(rows: Sequence[BudgetPoint]) -> list[Grid]:
    several = any(r.trials > 1 for r in rows)
    body = [[r.domain, r.scheme, str(r.budget), pct(r.correct, r.total), interval(r.ci_low, r.ci_high),
             *([spread(r.trials, r.trial_mean, r.trial_sd)] if several else [])] for r in rows]  # fmt: skip
    study = rows[0].study if rows else ""
    return [
        Grid(
            f"Figure 2 data: accuracy by round budget ({study})",
            ["domain", "scheme", "budget n", "accuracy", "95% CI (%)", *(["across trials"] if several else [])],
            body,
            _notes(NOTES["figure"] + " 95% Wilson interval (the band of the figure).", (several, TRIALS_NOTE)),
        )
    ]


def compare_grids(rows: Sequence[CompareRow]) -> list[Grid]:
    if not rows:
        return [Grid("Comparison", ["domain", "scheme"], [])]
    a, b = rows[0].study, rows[0].other_study
    body = [
        [
            r.domain,
            r.scheme,
            pct(r.correct, r.total),
            pct(r.other_correct, r.other_total),
            "-" if r.delta is None else f"{100 * r.delta:+.1f}",
        ]
        for r in rows
    ]
    return [
        Grid(
            f"{a} vs {b}",
            ["domain", "scheme", a, b, "delta (points)"],
            body,
            f"delta = accuracy of {a} minus accuracy of {b}.",
        )
    ]


# Row type -> renderer; other report modules (verification-only studies) add their row types here.
GRIDS: dict[type, Callable[[Any], list[Grid]]] = {
    Table1Row: table1_grids,
    Table2Row: table2_grids,
    BudgetPoint: budget_grids,
    CompareRow: compare_grids,
}


def grids_for(rows: Sequence[Any]) -> list[Grid]:
    if not rows:
        why = "no finished results for this table yet (--table compare needs two schemes of a domain)"
        return [Grid("(no rows)", ["result"], [[why]])]
    return GRIDS[type(rows[0])](rows)


def render(rows: Sequence[Any], fmt: str) -> str:
    """Rows of one report kind as text in `fmt` (table, md, csv, json)."""
    if fmt == "json":
        return json_text([row_dict(r) for r in rows], indent=2)
    if fmt == "csv":
        return _csv([row_dict(r) for r in rows])
    grids = grids_for(rows)
    return "\n".join(_md(g) for g in grids) if fmt == "md" else rich_text(grids)


def _csv(dicts: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    if dicts:
        writer = csv.DictWriter(buf, fieldnames=list(dicts[0]), lineterminator="\n")
        writer.writeheader()
        # a mapping or list (a stops row's lost_at) as JSON text, not Python's repr
        writer.writerows(spreadsheet_row({k: json_text(v) if isinstance(v, dict | list) else v for k, v in d.items()})
                         for d in dicts)
    return buf.getvalue()


def _md(grid: Grid) -> str:
    lines = [f"### {_md_text(grid.title)}", ""]
    if grid.note:
        lines += [grid.note, ""]
    lines += [_md_row(grid.headers), "|" + "|".join("---" for _ in grid.headers) + "|"]
    lines += [_md_row(row) for row in grid.rows]
    return "\n".join(lines) + "\n"


def _md_text(text: str) -> str:
    """Stored text (a domain or folder name, an answer) as literal Markdown: no raw HTML, no line break."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("\r", " ").replace("\n", " ")


def _md_row(cells: Sequence[str]) -> str:
    """One table row; a `|` inside a cell is escaped so it cannot split the cell."""
    return "| " + " | ".join(_md_text(c).replace("|", "\\|") for c in cells) + " |"


def _numeric(cells: list[str]) -> bool:
    return bool(cells) and all(c == "" or c[0].isdigit() or c[0] in "-[" for c in cells)


PIPED_WIDTH = 160  # output that is not a terminal: one fixed width, so it can be compared and diffed


def output_width() -> int:
    """The width tables are drawn at: standard output's terminal's, as rich measures it, else
    `$CRITIQUEBENCH_COLUMNS` where the user set it (`CRITIQUEBENCH_COLUMNS=250 critiquebench report ... | less`;
    not $COLUMNS, which shells export), else `PIPED_WIDTH`."""
    probe = Console()
    if probe.is_terminal:
        return probe.width
    columns = os.environ.get("CRITIQUEBENCH_COLUMNS", "")
    return int(columns) if columns.isdigit() and 40 <= int(columns) <= 10_000 else PIPED_WIDTH


def rich_text(grids: list[Grid], width: int | None = None) -> str:
    """Grids as rich tables (plain text, no colour codes, so output can be piped and compared), `width` columns
    wide (default `output_width()`): rich lays the columns out, wrapping headers and cells between words; the
    leading label columns (domain, scheme, ...) never wrap, so a scheme spec stays whole on its row."""
    width = width or output_width()
    console = Console(file=io.StringIO(), width=width, force_terminal=False, color_system=None)
    for grid in grids:
        # columns are in priority order: while the table cannot fit without cutting a word, the last one goes
        shown = len(grid.headers)
        while shown > 1 and _narrowest(grid, shown) > width:
            shown -= 1
        console.print(_table(grid, shown))
        note = grid.note
        if shown < len(grid.headers):
            left = ", ".join(grid.headers[shown:])
            note = f"{note}\n" if note else ""
            note += f"Left out at this width ({width} columns): {left}; widen the terminal or use --format md or csv."
        if note:
            console.print(note, soft_wrap=False, width=min(width, 110))
        console.print()
    return console.file.getvalue()  # type: ignore[attr-defined]


def _narrowest(grid: Grid, columns: int) -> int:
    """The width of the first `columns` columns of `grid` drawn with no word cut: each label column as wide as its
    longest cell, each other column as its longest word, plus the box's borders and padding."""
    total, labels = 1, True
    for i, header in enumerate(grid.headers[:columns]):
        cells = [row[i] for row in grid.rows]
        labels = labels and not _numeric(cells)
        texts = [header, *cells]
        words = texts if labels else [w for t in texts for w in t.split()]
        total += max((cell_len(w) for w in words), default=0) + 3
    return total


def _table(grid: Grid, columns: int) -> Table:
    """The first `columns` columns of `grid` as a rich table; the leading label columns (domain, scheme, ...)
    never wrap, the others wrap between words."""
    table = Table(title=grid.title, title_justify="left")
    labels = True
    for i, header in enumerate(grid.headers[:columns]):
        numeric = _numeric([row[i] for row in grid.rows])
        labels = labels and not numeric
        table.add_column(header, justify="right" if numeric else "left", overflow="fold", no_wrap=labels)
    for row in grid.rows:
        table.add_row(*row[:columns])
    return table
