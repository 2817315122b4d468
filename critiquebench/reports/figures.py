"""Report figures: Figure 2 (accuracy against the round budget n, one panel per domain, one line per iterative
scheme) and the panels and file writing every report figure shares."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: no display is needed or wanted

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from critiquebench.reports.metrics import BudgetPoint  # noqa: E402


def budget_figure(points: Sequence[BudgetPoint], path: Path, title: str | None = None) -> Path:
    """Write the PNG (or any format matplotlib infers from the suffix) and return its path."""
    by_domain: dict[str, dict[str, list[BudgetPoint]]] = defaultdict(lambda: defaultdict(list))
    for p in points:
        by_domain[p.domain][p.scheme].append(p)
    domains = list(by_domain) or ["(no iterative runs)"]
    fig, panels = domain_panels(domains)
    for ax, domain in zip(panels, domains, strict=False):
        for scheme, series in by_domain.get(domain, {}).items():
            xs = [p.budget for p in series]
            ys = [100 * (p.accuracy or 0.0) for p in series]
            (line,) = ax.plot(xs, ys, marker="o", markersize=3, label=f"{scheme} (n={series[0].total})")
            if all(p.ci_low is not None and p.ci_high is not None for p in series):
                lows = [100 * p.ci_low for p in series]  # type: ignore[operator]
                highs = [100 * p.ci_high for p in series]  # type: ignore[operator]
                ax.fill_between(xs, lows, highs, color=line.get_color(), alpha=0.15, linewidth=0)
        ax.set_title(domain)
        ax.set_xlabel("round budget n (band: 95% Wilson interval)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
        if by_domain.get(domain):
            ax.legend(fontsize=7)
    for ax in panels:
        ax.set_ylabel("accuracy (%)")
    fig.suptitle(f"Figure 2: accuracy by round budget ({title})" if title else "Accuracy by round budget")
    return save_figure(fig, path)


def domain_panels(domains: Sequence[str]) -> tuple[Any, list[Any]]:
    """A figure with one panel per domain (at least one), as the papers lay theirs out: up to three a row."""
    count = max(len(domains), 1)
    cols = 2 if count == 4 else min(count, 3)
    rows = -(-count // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.4 * rows), squeeze=False)
    for ax in axes.flat[count:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:count])


def figure_format(path: Path | str) -> tuple[Path, str]:
    """The file a figure asked for at `path` is written to, and its format (PNG for a name without a suffix, as
    matplotlib does); OutputError (one line) for a suffix matplotlib cannot write, e.g. `--figure x.sqlite`."""
    from matplotlib.backend_bases import FigureCanvasBase

    from critiquebench.outputs import OutputError

    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if not fmt:
        return path.with_name(path.name + ".png"), "png"
    supported = FigureCanvasBase.get_supported_filetypes()
    if fmt not in supported:
        raise OutputError(f"cannot write {path}: a figure is written as {', '.join(sorted(supported))}, not .{fmt}")
    return path, fmt


def save_figure(fig: Any, path: Path | str) -> Path:
    """Write a report figure (PNG unless the suffix names another format matplotlib writes; its folder made) as
    every output is written (`critiquebench.outputs`), and free it: every report figure is saved this way.
    OutputError (one line) when it cannot be."""
    from critiquebench.outputs import OutputError, open_output

    try:
        path, fmt = figure_format(path)
        fig.tight_layout()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        with open_output(path, binary=True) as fp:
            fig.savefig(fp, dpi=120, format=fmt)
    finally:
        plt.close(fig)
    return path
