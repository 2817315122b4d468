"""Graph coloring instances: reading `.col`/DIMACS files, exact coloring and chromatic number, generation.

The study's files (kstechly/gpt-and-i `data/instances/graph_coloring/`) have 0-indexed `e U V` lines and a
trailer `c OPTIMAL CHROMATIC NUMBER === K`; standard DIMACS (`p edge V E`, 1-indexed `e u v`) is converted to
0-indexed. Instance ids are "N" for `instance-N.col`, the file stem otherwise, "gen-SEED-i" when generated.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import networkx as nx

from critiquebench.domains.contract import Instance

CHROMATIC_KEY = "OPTIMAL CHROMATIC NUMBER ==="
EDGE_P = 0.4
# At p=0.4 a planar G(n, p) needs ~3,000 draws for n=14 and ~60,000 for n=17, so generation stops at 13.
DEFAULT_VERTICES = (10, 13)
SEARCH_BUDGET = 2_000_000
# The generated sizes `vertices` may ask for: a graph of 1 vertex has no edge, so the draw of one with an edge never
# ends; a planar draw comes once in ~330 at 14 vertices (measured: 18 of 6,000), once in ~6,000 at 15, and almost
# never from 20 on, where the rejection loop ran until memory ran out
MIN_VERTICES, MAX_VERTICES = 2, 14
VERTICES_WHY = (f"a generated graph needs an edge, and a planar G(v, {EDGE_P}) draw almost never comes for v above "
                f"{MAX_VERTICES}")  # fmt: skip
MAX_DRAWS = 50_000  # per graph; at 14 vertices all 50,000 fail with probability about e^-150


def read_col(path: Path) -> Instance:
    """One instance file; malformed content is a ValueError naming the file and line."""
    header: int | None = None
    k: int | None = None
    raw: list[tuple[int, int]] = []
    lines: list[tuple[int, str]] = []  # (line number, text) of each edge, to name it as written
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file") from None
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        try:
            if not parts:
                continue
            if parts[0] == "c":
                if CHROMATIC_KEY in line:
                    k = int(line.split(CHROMATIC_KEY, 1)[1])
                    if k < 1:
                        raise ValueError("the chromatic number must be at least 1")
            elif parts[0] == "p" and len(parts) == 4 and parts[1] in ("edge", "col") and header is None:
                header = int(parts[2])
            elif parts[0] == "e" and len(parts) == 3:
                raw.append((int(parts[1]), int(parts[2])))
                lines.append((number, line.strip()))
            else:
                raise ValueError("expected 'e U V', 'p edge V E' or a 'c' comment")
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}: {line.strip()[:60]!r}") from None
    edges = [(u - 1, v - 1) for u, v in raw] if header is not None else raw
    n = header if header is not None else max((max(e) for e in edges), default=-1) + 1
    if n <= 0:
        raise ValueError(f"{path}: no vertices (no edge lines and no 'p edge' header)")
    for (u, v), (w, x), (number, text) in zip(edges, raw, lines, strict=True):
        # the numbers as the file writes them: 1..n under a 'p edge' header, else 0-indexed
        if u == v:
            raise ValueError(f"{path}:{number}: {text!r} is a self-loop on vertex {w}")
        if not (0 <= u < n and 0 <= v < n):
            labels = f"1..{n} (the 'p edge {n} ...' header numbers vertices from 1)" if header else f"0..{n - 1}"
            outside = w if not 0 <= u < n else x
            raise ValueError(f"{path}:{number}: {text!r} names vertex {outside}, outside the vertices {labels}")
    return make_instance(file_id(path), n, edges, k, stated=header is None)


def make_instance(instance_id: str, n: int, edges: list[tuple[int, int]], k: int | None,
                  stated: bool = False) -> Instance:
    """An instance with duplicate edges dropped and `k` computed exactly when not given."""
    seen: set[frozenset[int]] = set()
    unique = []
    for u, v in edges:
        if frozenset((u, v)) not in seen:
            seen.add(frozenset((u, v)))
            unique.append((u, v))
    data: dict[str, Any] = {"n": n, "edges": [list(e) for e in unique], "k": k or chromatic_number(n, unique)}
    if stated and unique and _stated_count(unique) != n:
        data["stated_n"] = _stated_count(unique)
    return Instance("coloring", instance_id, data)


def _stated_count(edges: list[tuple[int, int]]) -> int:
    """The study's vertex count for its prompt: the largest label, plus one only when label 0 is on an edge
    (so its 6 files whose vertex 0 is isolated say one vertex fewer; kept for byte-identical prompts)."""
    labels = [v for e in edges for v in e]
    return max(labels) + (1 if min(labels) == 0 else 0)


def color_graph(n: int, edges: list[tuple[int, int]], k: int) -> list[int] | None:
    """A proper coloring with colors 0..k-1 by exact backtracking (largest degree first), or None."""
    adjacent: list[set[int]] = [set() for _ in range(n)]
    for u, v in edges:
        adjacent[u].add(v)
        adjacent[v].add(u)
    order = sorted(range(n), key=lambda v: -len(adjacent[v]))
    colors = [-1] * n
    steps = 0

    def place(index: int, used: int) -> bool:
        nonlocal steps
        if index == n:
            return True
        steps += 1
        if steps > SEARCH_BUDGET:
            raise ValueError(f"a graph with {n} vertices is too hard to color exactly: state its chromatic "
                             f"number in a '{CHROMATIC_KEY} K' comment")
        vertex = order[index]
        taken = {colors[w] for w in adjacent[vertex]}
        for color in range(min(k, used + 1)):  # a fresh color is only ever the next one: no symmetric retries
            if color not in taken:
                colors[vertex] = color
                if place(index + 1, max(used, color + 1)):
                    return True
        colors[vertex] = -1
        return False

    return colors if place(0, 0) else None


def chromatic_number(n: int, edges: list[tuple[int, int]]) -> int:
    """The exact chromatic number."""
    return next(k for k in range(1 if not edges else 2, n + 1) if color_graph(n, edges, k) is not None)


def file_id(path: Path) -> str:
    stem = path.stem
    return stem.removeprefix("instance-") if re.fullmatch(r"instance-\d+", stem) else stem


def generate_planar(n: int, seed: int, vertices: tuple[int, int] = DEFAULT_VERTICES) -> list[Instance]:
    """Planar Erdős–Rényi G(v, 0.4) graphs (rejection sampling as in the study), v uniform in `vertices`,
    chromatic number computed exactly; a prefix of a longer run with the same seed."""
    rng, out = random.Random(seed), []
    for i in range(1, n + 1):
        size = rng.randint(*vertices)
        for _draw in range(MAX_DRAWS):
            graph = nx.gnp_random_graph(size, EDGE_P, seed=rng.randrange(2**32))
            if graph.number_of_edges() and nx.check_planarity(graph)[0]:
                break
        else:  # only a size outside MIN_VERTICES..MAX_VERTICES gets here
            raise ValueError(f"no planar graph of {size} vertices with an edge in {MAX_DRAWS:,} draws: {VERTICES_WHY}")
        out.append(make_instance(f"gen-{seed}-{i}", size, sorted(graph.edges()), None))
    return out


def col_files(folder: Path) -> dict[str, Path]:
    """The folder's `.col` files by instance id, numeric ids first in numeric order."""
    files = {file_id(f): f for f in folder.glob("*.col")}
    order = sorted(files, key=lambda i: (not i.isdigit(), int(i) if i.isdigit() else 0, i))
    return {i: files[i] for i in order}
