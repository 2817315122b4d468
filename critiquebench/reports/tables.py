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
        lines += [_md_note(grid.note), ""]
    lines += [_md_row(grid.headers), "|" + "|".join("---" for _ in grid.headers) + "|"]
    lines += [_md_row(row) for row in grid.rows]
    return "\n".join(lines) + "\n"


MD_WIDTH = 80  # a Markdown note's lines; its table rows and heading are one line each, however long (docs/reports.md)


def _md_note(note: str) -> str:
    """A note as Markdown paragraph lines of at most `MD_WIDTH` columns; a line that would start with a block
    marker (a list item's "- " or "1. ", a heading's "#", a quote's ">") has it escaped, so it stays text."""
    import re

    lines = wrapped(note, MD_WIDTH).splitlines()
    marker = re.compile(r"^(\d*)([-+*#>.)])(\s)")  # "- ", "# ", "1. ", "2) " (a lone digit+space is text)
    return "\n".join(marker.sub(lambda m: f"{m[1]}\\{m[2]}{m[3]}" if m[1] == "" or m[2] in ".)" else m[0], line)
                     if i else line for i, line in enumerate(lines))  # fmt: skip


def _md_text(text: str) -> str:
    """Stored text (a domain or folder name, an answer) as literal Markdown: no raw HTML, no line break."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("\r", " ").replace("\n", " ")


def _md_row(cells: Sequence[str]) -> str:
    """One table row; a `|` inside a cell is escaped so it cannot split the cell."""
    return "| " + " | ".join(_md_text(c).replace("|", "\\|") for c in cells) + " |"


def _numeric(cells: list[str]) -> bool:
    return bool(cells) and all(c == "" or c[0].isdigit() or c[0] in "-[" for c in cells)


PIPED_WIDTH = 80  # output that is not a terminal: one fixed width, so it can be compared and diffed; 80 columns,
# the width the project's text output promises to fit (tests/test_narrow_output.py)


def output_width() -> int:
    """The width tables are drawn at: standard output's terminal's, as rich measures it, else
    `$CRITIQUEBENCH_COLUMNS` where the user set it (`CRITIQUEBENCH_COLUMNS=250 critiquebench report ... | less`;
    not $COLUMNS, which shells export), else `PIPED_WIDTH`."""
    probe = Console()
    if probe.is_terminal:
        return probe.width
    columns = os.environ.get("CRITIQUEBENCH_COLUMNS", "")
    return int(columns) if columns.isdigit() and 40 <= int(columns) <= 10_000 else PIPED_WIDTH


def wrapped(text: str, width: int | None = None, indent: str = "") -> str:
    """Plain text (a note, a help line) folded between words, or after a `|` of a list of choices, to `width`
    columns (default `output_width()`); continuation lines start with `indent`; a word longer than a line is cut."""
    import re
    import textwrap

    class Wrapper(textwrap.TextWrapper):
        wordsep_simple_re = re.compile(r"(\s+|(?<=\|))")

    wrapper = Wrapper(width or output_width(), subsequent_indent=indent, break_on_hyphens=False)
    return "\n".join(wrapper.fill(line) if line else "" for line in text.splitlines())


def command_text(command: str, width: int | None = None) -> str:
    """A shell command for the user to copy, folded between words to `width` columns (default `output_width()`)
    with the shell's line continuations, so it still runs pasted whole; a word (a path) is never cut."""
    import textwrap

    lines = textwrap.wrap(command, (width or output_width()) - 2, subsequent_indent="    ", break_long_words=False,
                          break_on_hyphens=False)  # fmt: skip
    return " \\\n".join(lines)


def rich_text(grids: list[Grid], width: int | None = None) -> str:
    """Grids as rich tables (plain text, no colour codes, so output can be piped and compared), `width` columns
    wide (default `output_width()`), no line longer. A table that fits is drawn whole: rich lays the columns out,
    wrapping headers and cells between words; the leading label columns (domain, scheme, ...) never wrap, so a
    scheme spec stays whole on its row. A wider one is drawn in parts (`_parts`), each repeating the row's key
    columns, so no column is left out at any width."""
    width = width or output_width()
    console = Console(file=io.StringIO(), width=width, force_terminal=False, color_system=None)
    for grid in grids:
        key, parts = _parts(grid, width)
        for number, (columns, labels, whole) in enumerate(parts, 1):
            title = grid.title if len(parts) == 1 else f"{grid.title} (part {number} of {len(parts)})"
            # the title is a line of its own: as the table's title it would wrap at the table's width, however narrow
            console.print(title, soft_wrap=False, markup=False, highlight=False)
            console.print(_table(grid, columns, labels, width if whole else None))
        note = grid.note
        if len(parts) > 1:
            keys = ", ".join("# (the row number)" if i == ROW else grid.headers[i] for i in key)
            note = (f"{note}\n" if note else "") + (
                f"Drawn in {len(parts)} parts to fit {width} columns, each with the rows in the same order"
                + (f" and repeating {keys}" if keys else "")
                + " (a wider terminal or $CRITIQUEBENCH_COLUMNS draws it whole; --format md or csv has every "
                "column on one line)."
            )
        if note:
            console.print(note, soft_wrap=False, width=min(width, 110))
        console.print()
    return console.file.getvalue()  # type: ignore[attr-defined]


ROW = -1  # the index of the row-number column a table drawn in parts gets when its key columns repeat


def _header(grid: Grid, column: int) -> str:
    return "#" if column == ROW else grid.headers[column]


def _cell(grid: Grid, row: int, column: int) -> str:
    return str(row + 1) if column == ROW else grid.rows[row][column]


def _labels(grid: Grid) -> list[int]:
    """The leading label columns (domain, scheme, ...): those before the first numeric one."""
    labels = []
    for i in range(len(grid.headers)):
        if _numeric([row[i] for row in grid.rows]):
            break
        labels.append(i)
    return labels


def _whole(grid: Grid, column: int) -> int:
    """The width of `column` drawn with no cell wrapped (its header may wrap between words), plus its border and
    padding."""
    cells = [cell_len(_cell(grid, r, column)) for r in range(len(grid.rows))]
    words = [cell_len(w) for w in _header(grid, column).split()]
    return max([*cells, *words, 1]) + 3


def _parts(grid: Grid, width: int) -> tuple[list[int], list[tuple[list[int], set[int], bool]]]:
    """The key columns every part repeats, and the tables `grid` is drawn as at `width`: (columns, the label
    columns among them, whether each column is as wide as its widest cell) of each. One, the grid whole, when its
    columns fit with no cell wrapped but between words (`_narrowest`); else parts that each fit with every cell
    whole where a column can: the key (the leading label columns that take at most half the width; if those do
    not tell the rows apart, the fewest that do, up to two thirds of it and if they make no more parts, else the
    row number before them), then as many of the other columns as fit, in order."""
    everything = list(range(len(grid.headers)))
    labels = set(_labels(grid))
    if _narrowest(grid, everything, labels) <= width:
        return [], [(everything, labels, False)]
    def unique(key: list[int]) -> bool:
        return len({tuple(row[k] for k in key) for row in grid.rows}) == len(grid.rows)

    def within(key: list[int], share: float) -> bool:
        return 1 + sum(_whole(grid, k) for k in key) <= width * share

    def chunked(key: list[int]) -> list[list[int]]:
        chunks: list[list[int]] = [[]]
        for i in (i for i in everything if i not in key):
            alone = 1 + sum(_whole(grid, c) for c in [*key, i]) <= width  # (else it wraps wherever it is drawn)
            if chunks[-1] and alone and 1 + sum(_whole(grid, c) for c in [*key, *chunks[-1], i]) > width:
                chunks.append([])
            chunks[-1].append(i)
        return chunks

    ordered = sorted(labels)
    key = [i for n, i in enumerate(ordered) if within(ordered[: n + 1], 1 / 2)]
    if not unique(key):  # the labels that tell the rows apart if they leave room (and make no more parts), else
        numbered = [ROW, *key]  # the row number
        fewest = next((ordered[:n] for n in range(1, len(ordered) + 1) if unique(ordered[:n])), None)
        good = fewest is not None and within(fewest, 2 / 3) and len(chunked(fewest)) <= len(chunked(numbered))
        key = fewest if good and fewest is not None else numbered
    parts = []
    for chunk in chunked(key):
        columns = [*key, *chunk]
        # a part wider than the width even so (one column alone too wide): every column folds, labels too
        fits = 1 + sum(_whole(grid, c) for c in columns) <= width
        parts.append((columns, (set(key) | (labels & set(chunk))) if fits else set(), fits))
    return key, parts


def _narrowest(grid: Grid, columns: list[int], labels: set[int]) -> int:
    """The width of `columns` of `grid` drawn with no word cut: each label column as wide as its longest cell,
    each other column as its longest word, plus the box's borders and padding."""
    total = 1
    for i in columns:
        texts = [_header(grid, i), *(_cell(grid, r, i) for r in range(len(grid.rows)))]
        words = texts if i in labels else [w for t in texts for w in t.split()]
        total += max((cell_len(w) for w in words), default=0) + 3
    return total


def _table(grid: Grid, columns: list[int], labels: set[int], whole: int | None) -> Table:
    """`columns` of `grid` as a rich table; the `labels` columns never wrap, the others wrap between words (and
    fold a word longer than the column). `whole`: the width the columns fit in with every cell whole: each
    column is then as wide as its widest cell, widened in turn while room is left for its header to stand on one
    line (else rich would narrow a column with a long header and wrap its cells)."""
    table = Table()
    room = 0 if whole is None else whole - 1 - sum(_whole(grid, i) for i in columns)
    for i in columns:
        numeric = i == ROW or _numeric([_cell(grid, r, i) for r in range(len(grid.rows))])
        wide = None
        if whole is not None:
            wide = _whole(grid, i) - 3
            more = min(room, max(0, cell_len(_header(grid, i)) - wide))
            wide, room = wide + more, room - more
        table.add_column(_header(grid, i), justify="right" if numeric else "left", overflow="fold",
                         no_wrap=i in labels, width=wide)  # fmt: skip
    for r in range(len(grid.rows)):
        table.add_row(*(_cell(grid, r, i) for i in columns))
    return table
