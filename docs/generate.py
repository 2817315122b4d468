"""The documentation's generated tables: every table that states a fact about the code is written from the code.

A page marks a generated block with two HTML comments, which Markdown renders as nothing:

    <!-- generated: schemes -->
    ... (written by this script: never edit by hand)
    <!-- end generated -->

`python docs/generate.py` rewrites every marked block of README.md and docs/**/*.md from its generator below;
`python docs/generate.py --check` rewrites nothing, lists each stale block and exits 1 (tests/test_docs.py runs
it, so a renamed option, a new scheme or a changed prompt file fails CI until the page is regenerated). A block
name may carry one argument after a colon (`graph:llm-llm`, `published:000`).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[\w.-]+(?::[\w.:-]+)?) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S
)


def cell(value: Any) -> str:
    """A Markdown table cell: one line, `|` escaped."""
    text = "" if value is None else str(value)
    return " ".join(text.split()).replace("|", "\\|")


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def code(text: str) -> str:
    return f"`{text}`" if text else ""


# --- generators -------------------------------------------------------------------------------------------------


def capabilities(_: str | None = None) -> str:
    """The domain contract's core and capabilities (domains/contract.py), with the schemes that need each."""
    from critiquebench.domains import contract
    from critiquebench.graphs import SCHEMES, needs

    needed_by: dict[type, list[str]] = {}
    for name in SCHEMES:
        alternatives = needs(name)
        for need in alternatives:
            label = name + (f" (`{need.purpose}`)" if need.purpose else "")
            others = [n.capability.__name__ for n in alternatives if n is not need]
            needed_by.setdefault(need.capability, []).append(label + (f" or {', '.join(others)}" if others else ""))
    rows = [("`Domain` (core)", _members(contract.Domain), _doc(contract.Domain), "every scheme")]
    for protocol in contract._WHAT:  # the contract's own list of capabilities
        rows.append(
            (
                f"`{protocol.__name__}`",
                _members(protocol),
                _doc(protocol),
                "; ".join(needed_by.get(protocol, [])) or "-",
            )
        )
    return table(("protocol", "members", "what it is, and who uses it", "schemes that need it"), rows)


def _members(protocol: type) -> str:
    names = [n for n in getattr(protocol, "__annotations__", {}) if not n.startswith("_")]
    names += [n for n, v in vars(protocol).items() if inspect.isfunction(v) and not n.startswith("_")]
    return ", ".join(f"`{n}`" for n in dict.fromkeys(names))


def _doc(obj: Any) -> str:
    return " ".join((inspect.getdoc(obj) or "").split()).removeprefix("Capability: ")


def schemes(_: str | None = None) -> str:
    """Every scheme of the registry (graphs.SCHEMES): its module's first docstring paragraph, or for a named
    variant of another scheme the defaults it changes, and its parameters."""
    from critiquebench.graphs import SCHEMES

    rows, first_of = [], {}
    for scheme in SCHEMES.values():
        base = first_of.setdefault(scheme.builder, scheme)
        if base is scheme:
            what = re.sub(r"^[\w ,()-]+: ", "", scheme.doc, count=1)  # the docstring opens with its scheme names
        else:
            changed = [f"`{k}={_value(v)}`" for k, v in scheme.defaults.items() if base.defaults.get(k) != v]
            what = f"`{base.name}` with " + ", ".join(changed)
        params = ", ".join(f"`{p.name}={_value(p.default)}`" for p in scheme.declared)
        rows.append((f"`{scheme.name}`", what, params))
    return table(("scheme", "what it does", "parameters (defaults)"), rows)


def scheme_params(_: str | None = None) -> str:
    """Every scheme parameter: type, default, allowed values or range, meaning (graphs/params.py)."""
    from critiquebench.graphs import SCHEMES

    seen: dict[tuple[str, str, str, str], list[str]] = {}
    for scheme in SCHEMES.values():
        for p in scheme.declared:
            d = p.describe()
            allowed = ", ".join(map(_value, d["choices"])) if d["choices"] else _range(d)
            if d["nullable"]:
                allowed = (allowed + ", none").lstrip(", ")
            key = (d["name"], d["type"], allowed, d["help"])
            seen.setdefault(key, []).append(f"{scheme.name}={_value(d['default'])}")
    rows = [(f"`{n}`", t, a, h, ", ".join(s)) for (n, t, a, h), s in sorted(seen.items())]
    return table(("parameter", "type", "allowed", "meaning", "schemes (their default)"), rows)


def _value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _range(d: dict[str, Any]) -> str:
    if d["minimum"] is None and d["maximum"] is None:
        return ""
    return f"{_value(d['minimum'])} .. {_value(d['maximum'])}"


def graph(spec: str | None) -> str:
    """A scheme's graph as inline SVG (`critiquebench graph SPEC --format png`'s drawing): drawn here, when the
    docs are generated, so the site fetches no diagram script and shows it offline."""
    from critiquebench.graphs.draw import svg

    drawing = svg(spec or "llm-llm")
    body = drawing[drawing.index("<svg") :].strip()  # no XML declaration or DOCTYPE inside a page
    return f'<div class="scheme-graph" markdown="0">\n{body}\n</div>\n'


def domains(_: str | None = None) -> str:
    """The built-in domains (domains/registry.py BUILTIN): factory, data under the datasets root, PDDL folder."""
    from critiquebench.domains.registry import BUILTIN

    rows = []
    for name, d in BUILTIN.items():
        data = "generated only (`gen:N:SEED`)" if d.generated else code(d.data or "")
        rows.append((f"`{name}`", code(d.factory.rsplit(":", 1)[-1]), data, code(d.folder or "")))
    return table(("domain", "factory", "instances", "PDDL folder (domains/data/)"), rows)


def prompt_files(_: str | None = None) -> str:
    """Each prompt file of domains/prompts/: its version, its templates and where their texts come from."""
    rows = []
    for path in sorted((ROOT / "domains" / "prompts").glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        templates = list(_templates(data))
        kinds = {"paper": 0, "code": 0, "ours": 0}
        for t in templates:
            kinds[_source_kind(str(t.get("source", "")))] += 1
        rows.append(
            (f"`{path.name}`", data.get("version", ""), cell(data.get("title", "")), len(templates),
             kinds["paper"], kinds["code"], kinds["ours"])
        )  # fmt: skip
    return table(("file", "version", "what", "templates", "from a paper's text", "from a study's code", "ours"), rows)


def _templates(data: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for value in data.values():
        if isinstance(value, dict):
            if "text" in value:
                yield value
            else:
                yield from _templates(value)


def _source_kind(source: str) -> str:
    if source.startswith("ours"):
        return "ours"
    if re.match(r"\d{3}:\d", source):
        return "paper"
    return "code"


def report_tables(_: str | None = None) -> str:
    """Every `report --table` (critiquebench/reports/catalog.py)."""
    from critiquebench.reports.catalog import TABLES

    rows = []
    for t in TABLES.values():
        kinds = " and ".join(k for k, f in (("loop", t.loop), ("verification", t.verify)) if f is not None)
        rows.append((f"`{t.name}`", t.help, kinds, "001's Figures 2-4" if t.intrinsic_figure else ""))
    return table(("--table", "what", "studies", "--figure draws"), rows)


def export_columns(which: str | None) -> str:
    """The columns of `export --table runs|rounds|calls` (critiquebench/reports/records.py), name, type and
    meaning."""
    from critiquebench.reports.records import COLUMNS

    return table(("column", "type", "meaning"), ((f"`{c.name}`", c.type, c.doc) for c in COLUMNS[which or "runs"]))


def report_columns(which: str | None) -> str:
    """The JSON / CSV fields of `report --table compare|stops` (critiquebench/reports/paired.py, stops.py)."""
    import importlib

    module = importlib.import_module(f"critiquebench.reports.{'paired' if which == 'compare' else 'stops'}")
    return table(("field", "type", "meaning"), ((f"`{c.name}`", c.type, c.doc) for c in module.COLUMNS))


def paired_settings(_: str | None = None) -> str:
    """The fixed settings of the paired statistics (critiquebench/reports/stats.py)."""
    from critiquebench.reports import stats

    return table(("setting", "value", "where"), (
        ("bootstrap resamples B", f"{stats.RESAMPLES:,}", "`stats.RESAMPLES`; `cb.compare(resamples=...)`"),
        ("bootstrap seed", str(stats.SEED), "`stats.SEED`; `cb.compare(seed=...)`"),
        ("interval level", "95% (2.5th and 97.5th percentiles)", "`stats.paired_bootstrap(level=...)`"),
        ("significance", f"Holm-adjusted p < {stats.ALPHA}", "`stats.ALPHA`"),
    ))  # fmt: skip


def viewer_filters(which: str | None) -> str:
    """The viewer's filter fields or operators (critiquebench/viewer/filters.py), which the page's parser uses."""
    from critiquebench.viewer.filters import FIELDS, OPERATORS

    if which == "operators":
        return table(("operator", "applies to", "meaning"), ((f"`{o.op}`", o.types, o.doc) for o in OPERATORS))
    kinds = {"text": "text", "number": "number", "bool": "true / false", "texts": "searched texts"}
    return table(("field", "type", "meaning"), ((f"`{f.name}`", kinds[f.type], f.doc) for f in FIELDS))


def limits(which: str | None) -> str:
    """The bounds on what a user or an endpoint gives, from the constants the code checks (`area` picks one
    area's rows: coloring, prices, usage, samples, viewer, study, planning, game24)."""
    from critiquebench.cli.score import MAX_ANSWER_CHARS as SCORE_CHARS
    from critiquebench.importers.sample_rows import MAX_CSV_CELL_CHARS
    from critiquebench.importers.samples import MAX_ANSWER_CHARS
    from critiquebench.llm.client import MAX_USAGE_TOKENS
    from critiquebench.llm.prices import MAX_PRICE
    from critiquebench.studies.config import MAX_TEMPERATURE, MAX_TIMEOUT_S, RANGES
    from critiquebench.studies.session import CONFIRM_CALLS, CONFIRM_ENV
    from critiquebench.viewer import filters
    from domains import MAX_STOP_SEQUENCES, arith
    from domains.coloring_graphs import MAX_DRAWS, MAX_VERTICES, MIN_VERTICES, SEARCH_BUDGET
    from domains.datasets import MAX_SELECTED
    from domains.planning.strips import MAX_GROUND_ACTIONS, MESSAGE_LIMIT
    from graphs import params

    one_line = "one line, exit 2, nothing run or stored"
    rows = [
        ("coloring", "`vertices` option (generated graphs: low, high)",
         f"whole numbers, {MIN_VERTICES} <= low <= high <= {MAX_VERTICES}",
         f"{one_line} (1 vertex has no edge; a planar G(v, 0.4) almost never comes above {MAX_VERTICES})",
         "`domains/coloring_graphs.py`: `MIN_VERTICES`, `MAX_VERTICES`"),
        ("coloring", "draws per generated graph", f"{MAX_DRAWS:,}", "one line naming the size",
         "`MAX_DRAWS`"),
        ("coloring", "colours of a graph", f"its chromatic number, searched exactly in at most {SEARCH_BUDGET:,} steps",
         "one line: state the chromatic number in the file's comment", "`SEARCH_BUDGET`"),
        ("prices", "`input`, `output` of a price file (USD per million tokens)", f"0 to {MAX_PRICE:,}",
         "one line naming the file and `$CRITIQUEBENCH_PRICES` (dry run and exports); no cost is ever infinite",
         "`critiquebench/llm/prices.py`: `MAX_PRICE`"),
        ("usage", "token counts an endpoint reports", f"whole numbers 0 to {MAX_USAGE_TOKENS - 1:,}",
         "one warning; the call's tokens are estimated from its text (4 characters a token) for budgets",
         "`critiquebench/llm/client.py`: `MAX_USAGE_TOKENS`"),
        ("samples", "a CSV cell of `import samples`", f"{MAX_CSV_CELL_CHARS:,} characters",
         "one line naming the line; the file is refused, nothing imported",
         "`critiquebench/importers/sample_rows.py`: `MAX_CSV_CELL_CHARS`"),
        ("samples", "an imported answer judged by the sound verifier", f"its first {MAX_ANSWER_CHARS:,} characters",
         "the rest is stored, not judged", "`critiquebench/importers/samples.py`: `MAX_ANSWER_CHARS`"),
        ("samples", "an answer given to `score`", f"its first {SCORE_CHARS:,} characters", "the rest is not judged",
         "`critiquebench/cli/score.py`: `MAX_ANSWER_CHARS`"),
        ("viewer", "a filter's length", f"{filters.MAX_CHARS:,} characters",
         "a `filter: …` message under the box; the list stays empty", "`critiquebench/viewer/filters.py`: `MAX_CHARS`"),
        ("viewer", "a filter's nesting (parentheses and `not`s)", f"{filters.MAX_DEPTH:,} levels",
         "a `filter: …` message naming the character", "`MAX_DEPTH`"),
        *(("study", f"study setting `{key}`", f"{low:,} to {high:,}" + (" or `\"none\"` (no cap)" if key == "max_tokens"
            else ""), one_line, "`critiquebench/studies/config.py`: `RANGES`") for key, (low, high) in RANGES.items()),
        ("study", "study setting `temperature`", f"0 to {MAX_TEMPERATURE:g}", one_line, "`MAX_TEMPERATURE`"),
        ("study", "study setting `timeout` (seconds per LLM call)", f"more than 0, at most {MAX_TIMEOUT_S:,g}",
         one_line, "`MAX_TIMEOUT_S`"),
        ("study", "new LLM calls without `--yes` or `--budget-tokens`", f"{CONFIRM_CALLS:,} (`${CONFIRM_ENV}`)",
         "one line: confirm with `--yes` or cap with `--budget-tokens`", "`critiquebench/studies/session.py`: "
         "`CONFIRM_CALLS`"),
        ("study", "scheme `rounds` / `k` / `votes` / `shots`",
         f"{params.MAX_ROUNDS:,} / {params.MAX_SAMPLES:,} / {params.MAX_VOTES:,} / {params.MAX_SHOTS:,}",
         one_line, "`graphs/params.py`"),
        ("study", "scheme `temperature` / `max_tokens`",
         f"0 to {params.MAX_TEMPERATURE:g} / 1 to {params.MAX_TOKENS:,}", one_line, "`graphs/params.py`"),
        ("study", "an instance range (`901-1000`)", f"at most {MAX_SELECTED:,} ids", one_line,
         "`domains/datasets.py`: `MAX_SELECTED`"),
        ("study", "`stop` sequences", f"{MAX_STOP_SEQUENCES}", one_line, "`domains/__init__.py`: "
         "`MAX_STOP_SEQUENCES`"),
        ("planning", "ground actions of a PDDL problem (built-in planner)", f"{MAX_GROUND_ACTIONS:,}",
         "one line naming the action; give the problems' plans instead", "`domains/planning/strips.py`: "
         "`MAX_GROUND_ACTIONS`"),
        ("planning", "an error message quoting a PDDL input", f"{MESSAGE_LIMIT:,} characters",
         "cut, keeping its end (where the cause is) and counting what was left out", "`MESSAGE_LIMIT`"),
        ("game24", "an arithmetic answer", f"{arith.MAX_CHARS} characters, {arith.MAX_NODES} numbers and operators",
         "judged malformed", "`domains/arith.py`: `MAX_CHARS`, `MAX_NODES`"),
    ]  # fmt: skip
    chosen = [r for r in rows if which in (None, r[0])]
    if not chosen:
        raise SystemExit(f"error: limits: no area {which!r}; areas: {', '.join(dict.fromkeys(r[0] for r in rows))}")
    return table(("input", "limit", "beyond it", "constant"), (r[1:] for r in chosen))


def cli(_: str | None = None) -> str:
    """The command-line reference, from the Typer app itself: every command, its arguments and options."""
    import typer

    from critiquebench.cli import app

    out: list[str] = []
    for path, command in _walk(typer.main.get_command(app), ()):
        if not path:
            continue
        out.append(f"### `critiquebench {' '.join(path)}`\n")
        if command.help:
            out.append(" ".join(command.help.split()) + "\n")
        if hasattr(command, "commands"):  # a group (Typer's click may be its own copy: duck-typed)
            out.append("Subcommands: " + ", ".join(f"`{n}`" for n in sorted(command.commands)) + ".\n")
            continue
        rows = [_param_row(p) for p in command.params if p.name != "help"]
        if rows:
            out.append(table(("argument / option", "type", "default", "meaning"), rows))
    return "\n".join(out)


def _param_row(param: Any) -> tuple[str, str, str, str]:
    is_option = param.param_type_name == "option"
    if is_option:
        name = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
    else:
        name = f"`{param.name.upper()}`"
    default = None if callable(param.default) else param.default
    if is_option and param.is_flag and not param.secondary_opts:
        default = None
    shown = "" if default in (None, ()) or isinstance(default, list) and not default else _value(default)
    # the CLI prints its help as plain text (rich_markup_mode=None): the page shows it as --help prints it
    return name, _param_type(param), shown, getattr(param, "help", None) or ""


def _walk(command: Any, path: tuple[str, ...]) -> Iterable[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name in sorted(getattr(command, "commands", {})):
        if not command.commands[name].hidden:
            yield from _walk(command.commands[name], (*path, name))


def _param_type(param: Any) -> str:
    if param.param_type_name == "option" and param.is_flag:
        return "flag"
    if hasattr(param, "bare_type"):  # Typer >= 0.20 keeps its own copy of click, with the type by name
        name = str(param.bare_type())
    else:
        name = str(getattr(param.type, "choices", None) and " | ".join(param.type.choices) or param.type.name)
    return {"str": "text", "Path": "path"}.get(name, name.lower()).replace("|", "\\|")


@functools.cache
def _published_rows() -> list[Any]:
    """`report --published`'s rows, computed once per run: five blocks show parts of them."""
    from critiquebench.domains.datasets import default_root
    from critiquebench.reports.published import published_rows

    return list(published_rows(default_root()))


def published(paper: str | None) -> str:
    """`critiquebench report --published` as Markdown (the papers' numbers beside what the recorded data gives)."""
    from critiquebench.reports.tables import render as render_rows

    rows = [r for r in _published_rows() if paper is None or r.paper == paper]
    return render_rows(rows, "md")


def differences(paper: str | None) -> str:
    """A paper page's "what is exact and what differs" table: its findings (`reports.differences`), then every
    number of it that `report --published` finds not reproduced by the recorded data (computed afresh)."""
    from critiquebench.reports.differences import findings, mismatches

    paper = paper or "000"
    rows = [*findings(paper), *mismatches(_published_rows(), paper)]
    return table(("finding", "source", "verdict", "evidence"), [(r.finding, r.source, r.verdict, r.evidence)
                                                                for r in rows])  # fmt: skip


def prompt_pieces(_: str | None = None) -> str:
    """The 36 prompt pieces of papers 000 and 002, each against the code that made the number, with its test."""
    from critiquebench.reports.prompt_pieces import PIECES, tally

    counts = tally()
    head = f"{sum(counts.values())} pieces: " + ", ".join(f"{n} {word}" for word, n in sorted(counts.items())) + "\n\n"
    return head + table(("piece", "pieces", "source", "verdict", "test"),
                        [(p.piece, p.count, p.source, p.verdict, code(p.test)) for p in PIECES])  # fmt: skip


def paper_elements(paper: str | None) -> str:
    """Papers 001 and 004's elements (the audit's 83), each exact, ours with its reason or missing with why."""
    from critiquebench.reports.elements import elements, tally

    rows = elements(paper)
    now, then = tally(rows), tally(rows, audit=True)
    head = (f"{len(rows)} elements: " + ", ".join(f"{n} {w}" for w, n in sorted(now.items()))
            + " (the audit at 9ea0256: " + ", ".join(f"{n} {w}" for w, n in sorted(then.items())) + ")\n\n")
    return head + table(("§", "element", "source", "verdict", "audit", "test"),
                        [(e.section, e.element, e.source, e.verdict, e.audit, code(e.test)) for e in rows])  # fmt: skip


MYSTERY_RUN = "planbench/reference/gpt-4_mystery_backprompting_first_error.json"
_CLASS_VERDICT = {  # each class of disagreement (critiquebench/reports/recorded_feedback.py) and our verdict on it
    "no answer": 'not an answer: a call that failed on a rate limit, recorded as "" before the same feedback '
    "was sent again (LLMs-Planning `llm_utils.py` @27b0c44 `send_query_with_feedback`, `back_prompting.py` "
    "@27b0c44 `self_critique`); no reader can give that turn's feedback",
    "PlanBench reads prose": "ours, because an explanation is no plan: our reader takes the plan an answer "
    'commits to, PlanBench\'s takes any line with a verb and as many objects; `reading = "planbench-whole"` '
    "sends PlanBench's feedback",
    "ours reads prose": "our bug: a verb in an explanation read as an action (a verb quoted alone, "
    '`the "feast" action require ...`, no longer is: see below)',
}


def recorded_feedback(_: str | None = None) -> str:
    """GPT-4's recorded Mystery first-error run: every answer whose first-error feedback from our reader differs
    from the recorded one, by instance, with why (critiquebench/reports/recorded_feedback.py)."""
    from critiquebench.domains.datasets import default_root
    from critiquebench.reports.recorded_feedback import feedback_disagreements

    root = default_root()
    turns, rows = feedback_disagreements(root / MYSTERY_RUN, "mystery_blocksworld", root)
    _, whole = feedback_disagreements(root / MYSTERY_RUN, "mystery_blocksworld", root, "planbench-whole")
    differ = sum(len(r.turns) for r in rows)
    whole_turns = sum(len(r.turns) for r in whole)
    head = (f"{turns} feedback turns in 50 conversations: ours sends another feedback on {differ}, in "
            f"{len(rows)} conversations; with `reading = \"planbench-whole\"` on {whole_turns}.\n\n")  # fmt: skip
    body = table(
        ("instance", "answers (message index)", "the first of them", "recorded feedback", "ours", "why", "verdict"),
        ((r.instance, ", ".join(map(str, r.turns)), _clip(r.answer) or '""', _clip(r.recorded), _clip(r.ours),
          r.why, _CLASS_VERDICT.get(r.why, r.why)) for r in rows),
    )  # fmt: skip
    return head + body


def _clip(text: str, width: int = 110) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


SHIPPED = (  # study file, the command that runs it, its name
    ("self_verification_loops.toml", "run", "paper-loops"),
    ("self_verification_verify.toml", "verify-study", "paper-verify"),
    ("plan_critique.toml", "run", "plan-critique"),
    ("plan_critique_feedback.toml", "run", "plan-feedback"),
    ("blocksworld_llm_llm_open.toml", "run", "bw-llm-llm-open"),
    ("blocksworld_llm_llm_val_form.toml", "run", "bw-llm-llm-val-form"),
)


def shipped_studies(_: str | None = None) -> str:
    """What each shipped paper study would cost: its `--dry-run` at $30 / $60 per million tokens, as printed."""
    rows = []
    for file, command, name in SHIPPED:
        path = ROOT / "studies" / file
        argv = [
            command,
            name,
            "--config",
            str(path),
            "--dry-run",
            "--price-in",
            "30",
            "--price-out",
            "60",
            "--store",
            str(ROOT / "docs" / "no-such-store.sqlite"),
        ]
        printed = _cli_output(argv)
        n = [float(x) for x in re.findall(r"[\d.]+", " ".join(printed.split("\n")[:4]))]
        # runs (done, to go); calls max, expected, cached; tokens max in, out, expected in, out; $ in, out, max, exp
        runs, calls_max, calls_exp, exp_in, exp_out, cost_max, cost_exp = n[0], n[3], n[4], n[8], n[9], n[12], n[13]
        tokens, cost = f"{exp_in / 1e6:.1f}M + {exp_out / 1e6:.1f}M", f"${cost_max:,.0f} / ${cost_exp:,.0f}"
        rows.append((f"`{file}`", _header(path), f"`{command} {name} --config studies/{file}`",
                     f"{runs:,.0f}", f"{calls_max:,.0f} / {calls_exp:,.0f}", tokens, cost))  # fmt: skip
    return table(("study file", "experiment", "command", "runs or answers", "new calls: max / expected",
                  "tokens in + out (expected)", "cost at $30 / $60 per M (max / expected)"), rows)  # fmt: skip


def _cli_output(argv: list[str]) -> str:
    """What `critiquebench ARGV` prints on stdout, run in this process (the --check runs in the test suite: five
    interpreters importing the CLI cost more than the dry runs themselves); a failing command stops the generator."""
    from typer.testing import CliRunner

    from critiquebench.cli import app

    done = CliRunner().invoke(app, argv)
    if done.exit_code != 0:
        raise SystemExit(f"error: critiquebench {' '.join(argv)} exited {done.exit_code}:\n{done.stderr}")
    return done.stdout


def _header(path: Path) -> str:
    """A study file's opening comment, up to its first empty comment line."""
    lines = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.startswith("#") or not line.strip("# "):
            break
        lines.append(line.lstrip("# "))
    return " ".join(lines)


def benchmarks(_: str | None = None) -> str:
    """The benchmark page's tables, from benchmarks/results/*.json (benchmarks/render.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_render", ROOT / "benchmarks" / "render.py")
    if spec is None or spec.loader is None or not (ROOT / "benchmarks" / "render.py").exists():
        return "No benchmark has written its figures yet.\n"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.render_markdown(ROOT / "benchmarks" / "results")


def reliability_probes(_: str | None = None) -> str:
    """The re-run of the reliability audit's probes, from docs/reliability_probes.json: counts, then one row each."""
    import json
    from collections import Counter

    data = json.loads((ROOT / "docs" / "reliability_probes.json").read_text(encoding="utf-8"))
    probes = data["probes"]
    counts = Counter(p["verdict"] for p in probes)
    head = (
        f"{len(probes)} probes: {counts['pass']} pass, {counts['fail']} fail, {counts['note']} note"
        + "".join(f", {n} {v}" for v, n in sorted(counts.items()) if v not in ("pass", "fail", "note"))
        + ".\n\n"
    )

    def figure(value: Any) -> str:
        return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

    rows = [
        (f"{p['section']}: {p['id']}", p["ran"], " ".join(map(str, p["rc"])), figure(p["cpu_s"]), figure(p["wall_s"]),
         " ".join(map(str, p["lines"])), figure(p["tracebacks"]), p["lost"], p["verdict"], p["note"],
         ", ".join(code(t.strip()) for t in p["test"].split(", ") if t.strip()))
        for p in probes
    ]  # fmt: skip
    header = ("probe", "what ran", "rc", "CPU s", "wall s", "lines", "tracebacks", "lost", "verdict", "result",
              "test")  # fmt: skip
    return head + table(header, rows)


def paper_sets(_: str | None = None) -> str:
    """The intrinsic self-critique paper's generated test sets at seed 1 (`gen:N:1`, N the paper's size): distinct
    problems, problems shared with the shot pool, and how many problems of each size."""
    import re
    from collections import Counter

    from critiquebench.domains.planning.generators import (
        PAPER_SIZES,
        generate_problems,
        problem_key,
        set_size,
        training_problems,
    )
    from critiquebench.domains.planning.instances import TRAIN_POOL

    def label(kind: str, size: tuple[int, ...]) -> str:
        if kind == "blocksworld_3_7":
            return f"{size[0]} blocks"
        if kind.startswith("logistics"):
            return f"{size[0]} cities x {size[1]} places, {size[2]} pkg"
        return f"{size[0]} rooms {size[1]}x{size[2]}"

    rows = []
    for kind, sizes in PAPER_SIZES.items():
        n = set_size(kind)
        problems = generate_problems(kind, n + 1, 1)
        tests = problems[1:]  # problem 0 is the set's example (the nl style's one shot), not a test instance
        keys = {problem_key(p) for p in tests}
        shots = training_problems(kind, TRAIN_POOL, 1, problems)
        pool = {problem_key(p) for p in shots}

        def sizes_of(texts: list[str]) -> Counter[tuple[int, ...]]:
            return Counter(tuple(int(x) for x in re.findall(r"\d+", re.search(r"\(problem (\S+)\)", p).group(1)))
                           for p in texts)  # fmt: skip

        found, drawn = sizes_of(tests), sizes_of(shots)
        by_size = ", ".join(f"{label(kind, s)}: {found[s]}" for s in sizes)
        pool_sizes = ", ".join(f"{label(kind, s)}: {drawn[s]}" for s in sizes if drawn[s])
        rows.append((f"`{kind}`", f"`gen:{n}:1`", f"{len(keys)} of {len(tests)}", len(keys & pool), by_size,
                     pool_sizes))  # fmt: skip
    return table(("set", "selection", "distinct", "in the shot pool", "problems of each size",
                  f"the {TRAIN_POOL}-problem shot pool by size"), rows)  # fmt: skip
def planbench_styles(_: str | None = None) -> str:
    """The planning prompt styles (domains/planning/styles.py STYLES), one row each, as the importer reads them."""
    from critiquebench.domains.planning.styles import HISTORY, STYLES

    def intros(row: Any) -> str:
        return ", ".join("config's" if i is None else "historical" if i == HISTORY else f"`{i}`" for i in row.intros)

    rows = [
        (
            f"`{row.name}`",
            row.source,
            row.recorded_in or "-",
            "PDDL" if row.pddl_answer else "English",
            "yes" if row.one_shot else "no",
            "yes" if row.english else "no",
            row.recognised_by or "- (not a recorded PlanBench style)",
            intros(row) if row.recognised else "-",
            "yes" if row.newline else "no",
        )
        for row in STYLES.values()
    ]
    header = ("style", "source", "recorded in", "answer", "one-shot", "English templates", "recognised when the "
              "query", "intros tried", "2023 newline")  # fmt: skip
    return table(header, rows)


def planbench_kinds(_: str | None = None) -> str:
    """The shapes of PlanBench results file the importer reads (critiquebench/importers/planbench/kinds.py KINDS)."""
    from critiquebench.importers.planbench import KINDS

    return table(("kind", "the file", "replayed by"), [(k.name, k.description, f"`{k.scheme(None)}`") for k in KINDS])


def planbench_readers(_: str | None = None) -> str:
    """PlanBench's plan readers a replay offers (domains/planning/planbench_reading.py READERS)."""
    from critiquebench.domains.planning.planbench_reading import READERS

    ours = ("(none: ours)", "-", "our sound reader: the last `[PLAN]` block with actions, a plan stated twice "
            "read once")
    rows = [ours, *((f"`{r.name}`", r.code, r.reads) for r in READERS)]
    return table(("reading", "PlanBench's code", "what it reads"), rows)


def planbench_state_readers(_: str | None = None) -> str:
    """PlanBench's t7 state readers a replay offers (domains/planning/planbench_reading.py STATE_READERS)."""
    from critiquebench.domains.planning.planbench_reading import STATE_READERS

    ours = ("(none: ours)", "-", "`tasks/states.py`: each clause (split at commas, semicolons, lines and \" and \") "
            "read as a fact's English, else by PlanBench's keywords; a fact stated twice counts once")
    rows = [ours, *((f"`{r.name}`", r.code, r.reads) for r in STATE_READERS)]
    return table(("state_reading", "PlanBench's code", "what it reads"), rows)


TASK_FILES = "planbench/tasks/blocksworld/gpt-4"


def planbench_task_disagreements(_: str | None = None) -> str:
    """Every instance of the shipped GPT-4 Blocksworld task files (t2-t8) where PlanBench's label, the replay's
    verdict and our own reading's part, with why (critiquebench/reports/task_disagreements.py)."""
    from critiquebench.domains.datasets import default_root
    from critiquebench.reports.task_disagreements import task_disagreements

    root = default_root()
    counts, rows = [], []
    for path in sorted((root / TASK_FILES).glob("task_*.json")):
        if path.name.startswith("task_1_"):
            continue  # t1 replays as plan generation (the planning domain), measured by the breadth benchmark
        labelled, found = task_disagreements(path, "blocksworld", root / "planbench")
        replay = sum(d.replay == d.label for d in found) + labelled - len(found)
        ours = sum(d.ours == d.label for d in found) + labelled - len(found)
        counts.append(f"{path.stem}: replay {replay}/{labelled}, ours {ours}/{labelled}")
        rows += [(d.task, d.instance, _yes(d.label), _yes(d.replay), _yes(d.ours), d.why,
                  _clip(d.planbench_read, 90), _clip(d.ours_read, 90), _tail(d.answer, 120))
                 for d in found]  # fmt: skip
    head = "Agreement with PlanBench's labels: " + "; ".join(counts) + ".\n\n"
    return head + table(("task", "instance", "PlanBench's label", "replay", "ours", "why", "PlanBench read",
                         "we read", "the answer (its end)"), rows)  # fmt: skip


BREADTH = ROOT / "benchmarks" / "results" / "bench_planbench_breadth.json"
AGREEMENT = 0.99  # issue 41: every file at >= 99% of PlanBench's labels, or each disagreement accounted for


def planbench_breadth_agreement(_: str | None = None) -> str:
    """Per PlanBench task, then per file below 99%, then per instance, every final verdict of the breadth
    benchmark's replays that parts from PlanBench's label, with why (the `files` section of its results file,
    benchmarks/bench_planbench_breadth.py; the classes are critiquebench/reports/task_disagreements.py's)."""
    import json

    # the whole pass's results file, else a run on a selection of files (`--files`, its results file's variant)
    docs = [json.loads(p.read_text(encoding="utf-8"))
            for p in (BREADTH, *sorted(BREADTH.parent.glob(BREADTH.stem + "-*.json")))]  # fmt: skip
    doc = next((d for d in docs if d.get("files")), None)
    if doc is None:
        return "Not measured: the breadth benchmark's results file has no per-file section yet.\n"
    files = doc["files"]
    tasks: dict[str, list[dict[str, Any]]] = {}
    for f in files:
        tasks.setdefault(f["task"], []).append(f)

    def ok(f: dict[str, Any]) -> bool:
        return f["offline"] and f["labelled"] > 0 and f["agree"] >= AGREEMENT * f["labelled"]

    def share(agree: int, labelled: int) -> str:
        return f"{100 * agree / labelled:.1f}% ({agree}/{labelled})" if labelled else "-"

    per_task = [
        (task, len(fs), sum(f["offline"] for f in fs), sum(ok(f) for f in fs),
         share(sum(f["agree"] for f in fs), sum(f["labelled"] for f in fs)))
        for task, fs in sorted(tasks.items(), key=lambda kv: [int(x) for x in kv[0][1:].split("_") if x.isdigit()])
    ]  # fmt: skip
    command = " ".join(_run_args(doc["command"]))
    head = (
        f"Measured at `{doc['commit'][:7]}` ({doc['date'][:10]}) on {len(files)} files (`{command}`"
        + (f"; {doc['files_note']}" if doc.get("files_note") else "")
        + ("; a selection of the checkout's files" if doc.get("notes") else "") + ").\n\n"
    )
    out = head + table(("task", "files", "replayed offline", ">= 99% agreement", "instances agreeing"), per_task)
    below = [f for f in files if not ok(f)]
    rows = []
    for f in below:
        if not f["imported"]:
            why = "not imported: " + f["error"]
        elif not f["offline"]:
            why = "replay incomplete"
        else:
            counts: dict[str, int] = {}
            for d in f["disagreements"]:
                counts[d["why"]] = counts.get(d["why"], 0) + 1
            why = "; ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
        rows.append((f["n"], f"`{_short(f['file'])}`", f["task"], f["reading"] if f["imported"] else "",
                     share(f["agree"], f["labelled"]), why))  # fmt: skip
    if below:
        out += f"\nThe {len(below)} files below 99% (or not replayed), and why:\n\n"
        out += table(("#", "file", "task", "reading", "agreement", "why (instances)"), rows)
    else:
        out += f"\nEach of the {len(files)} files imports, replays offline and agrees on >= 99% of its instances.\n"
    parted = [(f, d) for f in files for d in f["disagreements"]]
    out += f"\nEvery instance whose replayed verdict parts from PlanBench's label ({len(parted)}):\n\n"
    return out + table(
        ("#", "instance", "PlanBench's label", "replay", "why", "PlanBench read", "we read", "the answer (its end)"),
        ((f["n"], d["instance"], _yes(d["label"]), _yes(d["replay"]), d["why"], _clip(d["planbench_read"], 80),
          _clip(d["we_read"], 80), _tail(d["answer"], 100)) for f, d in parted),
    )  # fmt: skip


def _run_args(argv: list[str]) -> list[str]:
    """A benchmark's recorded command without where it wrote (`--json`, `--markdown`, `--keep`) and with the
    checkout's path as ROOT."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in ("--json", "--markdown", "--keep"):
            skip = True
        else:
            kept.append("ROOT" if arg.startswith("/") else arg)
    return kept


def _short(path: str) -> str:
    return path.removeprefix("llm_planning_analysis/")


def _tail(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else "..." + flat[3 - width :]


def _yes(flag: bool) -> str:
    return "right" if flag else "wrong"


def planbench_reader_rules(_: str | None = None) -> str:
    """How the importer picks a file's reader (critiquebench/importers/planbench/readers.py READER_RULES)."""
    from critiquebench.importers.planbench.readers import READER_RULES

    return table(("rule", "applies to, and the reader"), [(r.name, r.description) for r in READER_RULES])


def refinement_layout(_: str | None = None) -> str:
    """The refinement study's recorded files and what `import refinement` reads each as."""
    from critiquebench.importers.refinement import layout

    rows = [(f if f.startswith("(") else code(f), wrote, read) for f, wrote, read in layout()]
    return table(("file", "what the study wrote", "what the import reads"), rows)
def self_verification_formats(_: str | None = None) -> str:
    """gpt-and-i's response-file formats (critiquebench/importers/self_verification/reader.py FORMATS)."""
    from critiquebench.importers.self_verification import FORMATS

    return table(("format", "one instance's record", "the code that wrote it; how it replays"),
                 [(name, f"`{shape}`", code) for name, shape, code in FORMATS])  # fmt: skip


def self_verification_paths(_: str | None = None) -> str:
    """What a gpt-and-i response file's path says (critiquebench/importers/self_verification/reader.py PATH_RULES)."""
    from critiquebench.importers.self_verification import PATH_RULES

    return table(("path part", "what it gives"), [(f"`{part}`", what) for part, what in PATH_RULES])


# --- the architecture page (docs/architecture.md): folders, modules and the layer rule, read from the source ---

# where each layer's source lives (pyproject's package-dir), in the order imports may go
LAYER_FOLDERS = {"domains": "domains", "nodes": "nodes", "graphs": "graphs", "store": "store", "app": "critiquebench"}


@functools.cache
def _test_module(name: str) -> Any:
    """tests/NAME.py, whose rules the page states as the tests check them (loaded from its file: tests/ is no
    installed package), loaded once per run."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_docs_{name}", ROOT / "tests" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@functools.cache
def _modules() -> dict[Path, tuple[str, list[str]]]:
    """Every module of the layer folders: its docstring and the critiquebench modules it imports (module level or
    in a function), each module parsed once per run (nothing is imported): the three architecture tables read
    the same modules, and parsing them was most of their cost. The trees themselves are not kept (held, the
    collector walked their ~250,000 nodes at every full collection, costing more than the parse saved)."""
    import ast

    layers = _test_module("test_layers")
    found: dict[Path, tuple[str, list[str]]] = {}
    for layer, folder in LAYER_FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            dotted = "critiquebench." + ".".join(parts) if layer != "app" else ".".join(parts)
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            imported = [name for _, name in layers.imports_in(tree, dotted.rpartition(".")[0])]
            found[path] = (ast.get_docstring(tree) or "", imported)
    return found


def _summary(path: Path) -> str:
    """A module's first docstring sentence, read with `ast` (nothing is imported)."""
    import ast

    known = _modules().get(path)
    doc = known[0] if known else ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), str(path))) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    return re.split(r"(?<=\.)\s+(?=[A-Z`(])", first, maxsplit=1)[0]


def _place(module: str) -> str:
    """The layer or app-layer room a dotted critiquebench module is in: "domains", ..., "cli/", "api.py"."""
    parts = module.split(".")[1:]
    if not parts:
        return "__init__.py"
    if parts[0] in LAYER_FOLDERS:
        return parts[0]
    package = ROOT / "critiquebench" / parts[0]
    return f"{parts[0]}/" if package.is_dir() else f"{parts[0]}.py"


@functools.cache
def _imports_by_place() -> dict[str, dict[str, int]]:
    """place -> the other places it imports, with how many import statements (module level or in a function),
    read once per run: three blocks show parts of it."""
    from collections import Counter

    found: dict[str, Counter[str]] = {}
    for layer, folder in LAYER_FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            dotted = "critiquebench." + ".".join(parts) if layer != "app" else ".".join(parts)
            here = _place(dotted.removesuffix(".__init__"))
            for name in _modules()[path][1]:
                there = _place(name)
                if there != here:
                    found.setdefault(here, Counter())[there] += 1
    return {place: dict(sorted(counts.items())) for place, counts in found.items()}


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"`{place}` ({n})" for place, n in counts.items()) or "none"


def architecture(which: str | None) -> str:
    """docs/architecture.md's tables: `layers` (the layer rule as tests/test_layers.py checks it, beside what each
    layer imports now), `rooms` (the app layer's rooms and what each imports) or `modules` (every module with
    its docstring's first sentence)."""
    measured = _imports_by_place()
    if which == "layers":
        allowed = _test_module("test_layers").ALLOWED
        rows = []
        for layer, folder in LAYER_FOLDERS.items():
            name = "critiquebench" if layer == "app" else f"critiquebench.{layer}"
            may = "every layer" if layer == "app" else ", ".join(f"`{x}`" for x in sorted(allowed[layer])) or "none"
            imported = _counts({k: v for k, v in measured.get(layer, {}).items() if k in LAYER_FOLDERS}
                               if layer != "app" else _layer_totals(measured))  # fmt: skip
            rows.append((f"`{folder}/`", f"`{name}`", _summary(ROOT / folder / "__init__.py"), may, imported))
        return table(("folder", "imported as", "what it is", "may import", "imports now (statements)"), rows)
    if which == "rooms":
        rules = _room_rules()
        rows = []
        for path in sorted((ROOT / "critiquebench").iterdir()):
            if path.name.startswith(".") or not (path.suffix == ".py" or (path / "__init__.py").exists()):
                continue
            room = f"{path.name}/" if path.is_dir() else path.name
            doc = _summary(path / "__init__.py" if path.is_dir() else path)
            rows.append((f"`{room}`", doc, _counts(measured.get(room, {})), rules.get(room, "")))
        return table(("room", "what it is", "imports (statements)", "rule (checked by)"), rows)
    if which == "modules":
        rows = []
        for folder in LAYER_FOLDERS.values():
            for path in sorted((ROOT / folder).rglob("*.py"), key=lambda p: p.relative_to(ROOT).parts):
                if folder == "critiquebench" and path.relative_to(ROOT / folder).parts[0] in LAYER_FOLDERS:
                    continue
                rows.append((f"`{path.relative_to(ROOT)}`", _summary(path)))
        return table(("module", "what it is"), rows)
    raise SystemExit(f"error: architecture:{which}: expected layers, rooms or modules")


def _layer_totals(measured: dict[str, dict[str, int]]) -> dict[str, int]:
    """What the app layer's rooms import of the four architecture folders, summed."""
    totals: dict[str, int] = {}
    for place, counts in measured.items():
        if place in LAYER_FOLDERS:
            continue
        for there, n in counts.items():
            if there in LAYER_FOLDERS:
                totals[there] = totals.get(there, 0) + n
    return dict(sorted(totals.items(), key=lambda kv: list(LAYER_FOLDERS).index(kv[0])))


def _room_rules() -> dict[str, str]:
    """The app layer's own import rules, as tests/test_layers.py and tests/test_architecture.py check them."""
    layers, shape = _test_module("test_layers"), _test_module("test_architecture")
    rules = {f"{room}/": f"never imports `{other}/` (tests/test_layers.py)" for room, other in layers.ONE_WAY_ROOMS}
    cli_store = ", ".join(f"`{m.removeprefix('critiquebench.')}`" for m in sorted(shape.CLI_STORE))
    rules["cli/"] = (f"parses, calls and prints: of `store` only {cli_store}; never LangGraph "
                     "(tests/test_architecture.py)")  # fmt: skip
    return rules


def plugin_api(_: str | None = None) -> str:
    """The stable names of the public plug-in API (`critiquebench.plugins.__all__`) and what each is."""
    from critiquebench import plugins

    rows = []
    for name in plugins.__all__:
        value = getattr(plugins, name)
        if name == "ENTRY_POINTS":
            rows.append((f"`{name}`", "`critiquebench.plugins`",
                         "the entry-point groups: " + ", ".join(f"`{v}`" for v in value.values())))  # fmt: skip
            continue
        first = (inspect.getdoc(value) or "").split("\n\n")[0]
        rows.append((f"`{name}`", f"`{value.__module__}`", " ".join(first.split())))
    return table(("name", "defined in", "what it is"), rows)


GENERATORS: dict[str, Callable[[str | None], str]] = {
    "paper-sets": paper_sets,
    "capabilities": capabilities,
    "plugin-api": plugin_api,
    "architecture": architecture,
    "schemes": schemes,
    "scheme-params": scheme_params,
    "graph": graph,
    "domains": domains,
    "prompt-files": prompt_files,
    "report-tables": report_tables,
    "export-columns": export_columns,
    "viewer-filters": viewer_filters,
    "limits": limits,
    "cli": cli,
    "published": published,
    "differences": differences,
    "prompt-pieces": prompt_pieces,
    "elements": paper_elements,
    "shipped-studies": shipped_studies,
    "recorded-feedback": recorded_feedback,
    "benchmarks": benchmarks,
    "reliability-probes": reliability_probes,
    "planbench-styles": planbench_styles,
    "planbench-kinds": planbench_kinds,
    "planbench-readers": planbench_readers,
    "planbench-state-readers": planbench_state_readers,
    "planbench-task-disagreements": planbench_task_disagreements,
    "planbench-breadth-agreement": planbench_breadth_agreement,
    "planbench-reader-rules": planbench_reader_rules,
    "refinement-layout": refinement_layout,
    "self-verification-formats": self_verification_formats,
    "self-verification-paths": self_verification_paths,
    "report-columns": report_columns,
    "paired-settings": paired_settings,
}


# --- the marked blocks ------------------------------------------------------------------------------------------


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def render(text: str) -> str:
    """`text` with every marked block regenerated."""

    def fill(match: re.Match[str]) -> str:
        name, _, arg = match["name"].partition(":")
        if name not in GENERATORS:
            raise SystemExit(f"error: unknown generated block {name!r}; known: {', '.join(GENERATORS)}")
        body = GENERATORS[name](arg or None)
        return match.group(1) + body.rstrip("\n") + "\n" + match.group(4)

    return BLOCK.sub(fill, text)


def stale(paths: Iterable[Path]) -> list[str]:
    """The pages whose generated blocks differ from what the code gives now."""
    return [
        str(p.relative_to(ROOT))
        for p in paths
        if render(p.read_text(encoding="utf-8")) != p.read_text(encoding="utf-8")
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a generated block is stale")
    args = parser.parse_args(argv)
    if args.check:
        old = stale(pages())
        for path in old:
            print(f"stale generated block in {path}: run python docs/generate.py", file=sys.stderr)
        return 1 if old else 0
    for path in pages():
        text = path.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"regenerated {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
