"""`critiquebench confidence train | eval | predict`: meta-networks that predict whether a planning run succeeds.

A SOURCE is a stored study (planning runs), a PlanBench backprompting results file (.json), or a features file
written by `critiquebench export NAME --features` (.jsonl or .csv).
"""

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from critiquebench.cli.terminal import StderrConsole
from critiquebench.outputs import json_text

err = StderrConsole()
confidence_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help=__doc__)

EXTRA_HINT = (
    "the confidence meta-networks need the optional extra: pip install '.[confidence]' in the critiquebench checkout"
)
SourceArg = Annotated[str, typer.Argument(help="Study name, PlanBench backprompting .json, or features .jsonl/.csv.")]
StoreOpt = Annotated[Path | None, typer.Option("--store", help="Store file (default: $CRITIQUEBENCH_STORE).")]
KOpt = Annotated[int, typer.Option("--k", help="Leakage-free protocol: attempts seen before predicting.")]
EncoderOpt = Annotated[
    str | None,
    typer.Option(help="Text encoder of MN-2/MN-3: wordllama (default when installed), hashing, or module:attr."),
]
FormatOpt = Annotated[str, typer.Option("--format", help="table or json.")]


def _fail(message: str) -> typer.Exit:
    err.print(f"error: {message}", markup=False)
    return typer.Exit(2)


def _models_module() -> Any:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise _fail(EXTRA_HINT) from None
    from critiquebench.confidence import models

    return models


def _rows(source: str, store: Path | None) -> list[dict[str, Any]]:
    from critiquebench.confidence.features import FeatureError, load_rows

    try:
        return load_rows(source, store)
    except FeatureError as exc:
        raise _fail(str(exc)) from None


def _check_format(fmt: str) -> None:
    if fmt not in ("table", "json"):
        raise _fail(f"--format must be table or json, not {fmt!r}")


def _cell(row: dict[str, Any], name: str) -> str:
    value, low, high = row[name], row[f"{name}_low"], row[f"{name}_high"]
    if math.isnan(value):
        return "-"
    return f"{value:.2f} [{low:.2f}, {high:.2f}]" if not math.isnan(low) else f"{value:.2f}"


def eval_table(results: list[dict[str, Any]], title: str) -> str:
    from critiquebench.reports.tables import Grid, rich_text

    headers = ["protocol", "model", "runs (succ.)", "settled", "F1", "precision", "recall", "AUC"]
    rows = [
        [
            r["protocol"] if r["protocol"] == "paper" else f"{r['protocol']} k={r['k']}",
            r["model"] + (f" ({r['encoder']})" if r["encoder"] else ""),
            f"{r['n']} ({r['positives']})",
            str(r["settled"]),
            *(_cell(r, m) for m in ("f1", "precision", "recall", "auc")),
        ]
        for r in results
    ]
    note = (
        "paper: every attempt of a run is seen (the last one for MN-1/2/3), random splits. leakage-free: "
        "attempts 1..k only, runs settled by a valid plan within them left out (settled), folds grouped by "
        "problem. F1/precision/recall at p >= 0.5; 95% bootstrap intervals over runs."
    )
    return rich_text([Grid(title, headers, rows, note)])


@confidence_app.command("eval")
def eval_cmd(
    source: SourceArg,
    test: Annotated[str | None, typer.Option(help="External test SOURCE (e.g. another domain); else CV.")] = None,
    test_domain: Annotated[
        str | None, typer.Option(help="Hold this domain of SOURCE out as the external test set.")
    ] = None,
    k: KOpt = 1,
    models: Annotated[str, typer.Option(help="Comma-separated: base,mn1,mn2,mn3,mn4.")] = "base,mn1,mn2,mn3,mn4",
    folds: Annotated[int, typer.Option(help="Cross-validation folds when there is no --test.")] = 5,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples for the intervals.")] = 1000,
    seed: Annotated[int, typer.Option()] = 0,
    encoder: EncoderOpt = None,
    fmt: FormatOpt = "table",
    store: StoreOpt = None,
) -> None:
    """Both protocols, every model, in one table: the paper's (leaky) and the leakage-free one."""
    _check_format(fmt)
    mod = _models_module()
    chosen = [m.strip() for m in models.split(",") if m.strip()]
    unknown = sorted(set(chosen) - set(mod.MODELS))
    if unknown or not chosen:
        raise _fail(f"unknown model(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(mod.MODELS)}")
    if folds < 2 or bootstrap < 0:
        raise _fail("--folds must be >= 2 and --bootstrap >= 0")
    if test and test_domain:
        raise _fail("give --test or --test-domain, not both")
    train_rows = _rows(source, store)
    test_rows = _rows(test, store) if test else None
    if test_domain:
        test_rows = [r for r in train_rows if r["domain"] == test_domain]
        train_rows = [r for r in train_rows if r["domain"] != test_domain]
        if not test_rows or not train_rows:
            domains = ", ".join(sorted({r["domain"] for r in test_rows + train_rows}))
            raise _fail(f"--test-domain {test_domain!r} must be one of several domains in {source} ({domains})")
        test = f"its {test_domain} runs"
    try:
        results = mod.evaluate(train_rows, test_rows, models=chosen, k=k, folds=folds, seed=seed, boot=bootstrap,
                               encoder=encoder)  # fmt: skip
    except (mod.ConfidenceError, ValueError) as exc:
        raise _fail(str(exc)) from None
    if fmt == "json":
        typer.echo(json_text(results, indent=2))
        return
    split = f"train {source}, test {test}" if test else f"{folds}-fold cross-validation on {source}"
    typer.echo(eval_table(results, f"Will the run succeed? ({split})"))


@confidence_app.command("train")
def train_cmd(
    source: SourceArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="Model file to write.")],
    model: Annotated[str, typer.Option(help="mn1, mn2, mn3 or mn4.")] = "mn1",
    protocol: Annotated[str, typer.Option(help="leakage-free or paper.")] = "leakage-free",
    k: KOpt = 1,
    seed: Annotated[int, typer.Option()] = 0,
    encoder: EncoderOpt = None,
    store: StoreOpt = None,
) -> None:
    """Train one meta-network on every run of SOURCE and save it."""
    mod = _models_module()
    rows = _rows(source, store)
    try:
        exs, settled = mod.examples(rows, protocol, k)
        fitted = mod.fit(model, protocol, k, exs, seed, encoder)
    except (mod.ConfidenceError, ValueError) as exc:
        raise _fail(str(exc)) from None
    from critiquebench.outputs import OutputError

    try:
        fitted.save(output)
    except OutputError as exc:
        raise _fail(str(exc)) from None
    err.print(f"{model} ({protocol}) trained on {len(exs)} runs ({settled} settled left out); saved to {output}")


@confidence_app.command("predict")
def predict_cmd(
    model_file: Annotated[Path, typer.Argument(help="A model file from `confidence train`.")],
    source: SourceArg,
    fmt: FormatOpt = "table",
    store: StoreOpt = None,
    by_type: Annotated[
        bool,
        typer.Option(
            "--by-type",
            help="The refinement paper's Table 2: mean confidence per problem type (Blocksworld by block count, "
            "other domains by domain), not per run.",
        ),
    ] = False,
) -> None:
    """The probability that each run of SOURCE succeeds, from the attempts the model was trained to see."""
    from critiquebench.confidence.features import problem_type, runs

    _check_format(fmt)
    mod = _models_module()
    try:
        fitted = mod.Fitted.load(model_file)
    except mod.ConfidenceError as exc:
        raise _fail(str(exc)) from None
    rows = _rows(source, store)
    exs, _ = mod.examples(rows, fitted.protocol, fitted.k)
    probabilities = dict(zip((e.run for e in exs), fitted.predict(exs), strict=True))
    out = []
    for attempts in runs(rows):
        first, run = attempts[0], attempts[0]["run"]
        seen = attempts if fitted.protocol == "paper" else attempts[: fitted.k]
        settled = run not in probabilities
        p = 1.0 if settled else float(probabilities[run])
        out.append({"run": run, "domain": first["domain"], "type": problem_type(first), "problem": first["problem"],
                    "seen": len(seen), "p_success": round(p, 4), "settled": settled,
                    "run_success": first["run_success"]})  # fmt: skip
    if by_type:
        out = mean_confidence_by_type(out)
    if fmt == "json":
        typer.echo(json_text(out, indent=2))
        return
    from critiquebench.reports.tables import Grid, rich_text

    title = f"{fitted.model} ({fitted.protocol}{'' if fitted.protocol == 'paper' else f', k={fitted.k}'})"
    if by_type:
        headers = ["problem type", "runs", "mean confidence", "succeeded"]
        cells = [[o["type"], str(o["runs"]), f"{o['mean_confidence']:.4f}", f"{o['succeeded']}/{o['runs']}"]
                 for o in out]  # fmt: skip
        typer.echo(rich_text([Grid(f"{title}: mean confidence per problem type", headers, cells)]))
        return
    headers = ["run", "attempts seen", "p(success)", "actual"]
    cells = [[o["run"], str(o["seen"]), "settled" if o["settled"] else f"{o['p_success']:.2f}",
              "success" if o["run_success"] else "failure"] for o in out]  # fmt: skip
    typer.echo(rich_text([Grid(title, headers, cells)]))


def mean_confidence_by_type(predictions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The refinement paper's Table 2 (004:233-252): the mean predicted probability of success over the runs of
    each problem type (`features.problem_type`: Blocksworld by block count, other domains by domain), with how
    many runs succeeded. Settled runs count with p = 1."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in predictions:
        groups.setdefault(row["type"], []).append(row)
    return [
        {
            "type": kind,
            "runs": len(rows),
            "mean_confidence": round(sum(r["p_success"] for r in rows) / len(rows), 4),
            "succeeded": sum(1 for r in rows if r["run_success"]),
        }
        for kind, rows in sorted(groups.items(), key=lambda item: _type_order(item[0]))
    ]


def _type_order(kind: str) -> tuple[str, int]:
    """Table 2's order: by domain, then Blocksworld's rows by block count (4, 5, ..., 10, not 10, 4, 5)."""
    head, _, rest = kind.partition(" ")
    count = rest.split()[0] if rest.endswith(" blocks") else ""
    return (head, int(count)) if count.isdigit() else (kind, -1)


def register(app: typer.Typer) -> None:
    app.add_typer(confidence_app, name="confidence")
