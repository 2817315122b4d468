"""Pictures of a scheme's graph: LangGraph's own Mermaid and ASCII drawings, and a PNG rendered locally.

LangGraph's PNG paths need the network (mermaid.ink) or Graphviz, so the PNG here is drawn with networkx and
matplotlib (Agg) from the same `get_graph()` nodes and edges: solid arrows are fixed edges, dashed ones are
decisions; edges back to an earlier node (the backprompt loop) are drawn as arcs.
"""

from __future__ import annotations

import io
from typing import Any

from critiquebench.graphs import compiled, normalize_spec

FORMATS = ("mermaid", "ascii", "png")


def scheme_graph(spec: str) -> Any:
    """LangGraph's drawable graph of a scheme spec (the graph needs no domain, LLM or store to be drawn)."""
    return compiled(normalize_spec(spec)).get_graph()


def draw(spec: str, fmt: str = "mermaid") -> str | bytes:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    graph = scheme_graph(spec)
    if fmt == "mermaid":
        return graph.draw_mermaid()
    if fmt == "ascii":
        return graph.draw_ascii()
    return _png(graph, title=spec)


def svg(spec: str) -> str:
    """The PNG's drawing as SVG text, the same for the same graph (text kept as text, no date, fixed ids): what
    the docs site shows, with nothing to fetch."""
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "critiquebench"}):
        return _png(scheme_graph(spec), title=spec, fmt="svg").decode("utf-8")


def _png(graph: Any, title: str, fmt: str = "png") -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import networkx as nx

    order = list(graph.nodes)  # LangGraph lists __start__, the nodes as added, then __end__
    pos = {node: (0.0, -float(i)) for i, node in enumerate(order)}
    labels = {node: node.strip("_") for node in order}
    drawn = nx.MultiDiGraph()
    drawn.add_nodes_from(order)
    fig, ax = plt.subplots(figsize=(4.5, 1.2 * len(order) + 0.5), dpi=120)
    for edge in graph.edges:
        back = order.index(edge.target) < order.index(edge.source)
        skip = abs(order.index(edge.target) - order.index(edge.source)) > 1
        nx.draw_networkx_edges(
            drawn, pos, edgelist=[(edge.source, edge.target)], ax=ax, arrows=True, arrowsize=16,
            style="dashed" if edge.conditional else "solid", node_size=2600,
            connectionstyle=f"arc3,rad={0.9 if back else 0.5 if skip else 0.0}",
        )  # fmt: skip
    nx.draw_networkx_nodes(drawn, pos, ax=ax, node_shape="s", node_size=2600, node_color="#f2f0ff",
                           edgecolors="#5b4fc7")  # fmt: skip
    nx.draw_networkx_labels(drawn, pos, labels=labels, ax=ax, font_size=8)
    ax.set_title(title, fontsize=10)
    ax.set_xlim(-1.5, 1.5)
    ax.set_ylim(-len(order) + 0.4, 0.6)
    ax.axis("off")
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
    plt.close(fig)
    return buf.getvalue()
