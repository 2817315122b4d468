"""Graph coloring as in "GPT-4 doesn't know it's wrong" and the self-verification study (Stechly et al.).

Prompts, feedback sentences and candidate kinds follow the studies' code (kstechly/gpt-and-i,
`domain_utils/graph_coloring.py`, `color_verification.py`); reading files, exact coloring and generation live
in `coloring_graphs`. Instance.data = {"n", "edges", "k"} (+ "stated_n": the vertex count the study's prompt
states when it differs from n).
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from critiquebench.domains.base import (
    FeedbackLevel,
    Instance,
    LLMVerdict,
    Verdict,
    VerifyVariant,
    leveled_feedback,
)
from critiquebench.domains.coloring_graphs import (
    DEFAULT_VERTICES,
    col_files,
    color_graph,
    generate_planar,
    read_col,
)
from critiquebench.domains.datasets import Generated, parse_selection, pick, resolve_data_path
from critiquebench.domains.sentences import only_sentences

PROMPT_START = (
    "Color the following graph, described as a set of edges, such that no two vertices on the same edge "
    "share a color.\n"
)
PROMPT_END = (
    "Please provide each vertex's color. Do not skip any vertices. Each color must be provided on a new line "
    'in the response and should be formatted as "{VERTEX NUMBER}: {VERTEX COLOR ASSIGNMENT}". '
    "Please do not provide anything else in your response, and end your response with '[ANSWER END]'"
)
STOP_PHRASE = "Verifier confirmed success."
BINARY_FEEDBACK = (
    "This is not correct. Using the previously provided graph, please provide a correct coloring."
)
# The studies' LLM-verifier prompts (the loop's, and the CoT one); `{coloring}` is the answer under review.
VERIFIER_INTRO = (
    "The following graph, described as a set of edges, has an optimal coloring number of {k}:\n{graph}"
)
VERIFIER_PROMPT = (
    "{intro}Please check if this coloring is correct:{coloring}\nIf it is, say 'Verifier confirmed success.' "
    "Do not provide anything else in your response. If it is incorrect, please point out which same-color "
    "vertices share an edge."
)
VERIFIER_COT = (
    "\n[Instructions]\nWhen outputting your final answer, first print the [Answer] tag, then put your final "
    "answer after the [Answer] tag. Respond only in the following format:\nWrong Edges: a list of incorrect "
    "edges\nAll Vertices Colored: boolean representing if every vertex is colored\nOptimal Or Less: boolean "
    "representing if the number of colors is no more than the optimal\nCorrect: boolean\n\n[Graph]\n{intro}"
    "\n[Coloring]\nA coloring is correct if no adjacent vertices are the same color and the total number of "
    "colors used is no more than the optimal coloring number. Please check if this coloring is correct: "
    "{coloring}\n\nLet's think step by step. Remember to output your final answer in the format described in "
    "the instructions.\n[Thoughts]"
)
# The verification-only study's prompt (`color_verification.generate`). Its candidate files hold
# "c KIND <colouring>" lines and the prompt takes the text after KIND, so every colouring is sent after a
# space ("correct:  0: Color 0\n..."); `verification_prompt` keeps that byte for byte.
VERIFY_PROMPT = (
    "{intro}A coloring is correct if no adjacent vertices are the same color and the total number of colors "
    "used is no more than the optimal coloring number. Please check if this coloring is correct: {coloring}"
    f"\nIf it is, say '{STOP_PHRASE}' Do not provide anything else in your response. If it is incorrect, "
    "please point out which same-color vertices share an edge. If there are none, but it uses too many colors "
    "say 'This coloring is non-optimal.' Do not provide anything else in your response. If the color of a "
    "vertex is not given in the coloring, say 'Missing assignment.' Do not provide anything else in your "
    "response."
)
CANDIDATE_KINDS = ("correct", "ablated", "non_optimal", "random")

_MARKUP = " \t>#*_`"
_LIST_MARK = re.compile(r"(?:[-+•]|\d+[.)])[ \t]+")
_VERTEX = re.compile(r"(?:vertex|node|v)?[ \t]*(\d+)", re.IGNORECASE)
_SEPARATORS = (":", "=", "->", "→")
_SOUND_SENTENCE = re.compile(
    r"Vertex \d+ was not given a value in the coloring\.|"
    r"Vertex \d+ and vertex \d+ were both colored [^\n]+? despite being connected by an edge\.|"
    r"This coloring is not optimal\. It uses \d+ colors, when only \d+ are necessary\.\n Please recolor\."
)
_COT_CORRECT = re.compile(
    r"^[ \t*#>_-]*correct[ \t*_]*:[ \t*_]*(true|false|yes|no)\b", re.IGNORECASE | re.MULTILINE
)


def parse_coloring(text: str) -> dict[int, str] | None:
    """Vertex -> color from lines like "0: Color1", "Vertex 0: Color 1", "- **3** = red"; prose is ignored,
    text after "[ANSWER END]" too, and a vertex's last assignment wins. None when there is no assignment."""
    text = re.split(r"\[ANSWER END\]", text or "", maxsplit=1, flags=re.IGNORECASE)[0]
    coloring: dict[int, str] = {}
    for line in text.splitlines():
        found = _assignment(line)
        if found:
            coloring[found[0]] = found[1]
    return coloring or None


def _assignment(line: str) -> tuple[int, str] | None:
    """`[markup] [list mark] [Vertex|Node|v] N [markup] (:|=|->|→) color [(comment...]`, step by step so that
    no regex backtracks over a long hostile line."""
    rest = line.lstrip(_MARKUP)
    if mark := _LIST_MARK.match(rest):
        rest = rest[mark.end():].lstrip(_MARKUP)
    vertex = _VERTEX.match(rest)
    if not vertex:
        return None
    rest = rest[vertex.end():].lstrip(_MARKUP)
    separator = next((s for s in _SEPARATORS if rest.startswith(s)), None)
    if separator is None:
        return None
    color = re.split(r"[(,;]", rest[len(separator):], maxsplit=1)[0].strip(_MARKUP + ".")
    return (int(vertex[1]), color) if color else None


def _key(color: str) -> str:
    return re.sub(r"\s+", "", color).lower()


def canonical_coloring(instance: Instance, coloring: dict[int, str] | None) -> str | None:
    """See `ColoringDomain.canonical`."""
    if coloring is None:
        return None
    names: dict[str, int] = {}
    parts = []
    for vertex in sorted(v for v in coloring if 0 <= v < instance.data["n"]):
        number = names.setdefault(_key(coloring[vertex]), len(names) + 1)
        parts.append(f"{vertex}:{number}")
    return ",".join(parts)


def check_coloring(instance: Instance, coloring: dict[int, str] | None) -> Verdict:
    """Missing vertices (those on an edge, as in the study), conflicting edges, then too many colors; colors
    compare ignoring case and spaces ("Color 1" == "color1"), and vertices outside the graph are ignored."""
    n, k = instance.data["n"], instance.data["k"]
    edges = [tuple(e) for e in instance.data["edges"]]
    given = {v: c for v, c in (coloring or {}).items() if 0 <= v < n}
    on_edges = list(dict.fromkeys(v for e in edges for v in e))
    errors = [f"Vertex {v} was not given a value in the coloring." for v in on_edges if v not in given]
    answer = {str(v): c for v, c in sorted(given.items())} if coloring else None
    if coloring is None:
        return Verdict("malformed", tuple(errors), None)
    errors += [
        f"Vertex {u} and vertex {v} were both colored {given[u]} despite being connected by an edge."
        for u, v in edges
        if u in given and v in given and _key(given[u]) == _key(given[v])
    ]
    used = len({_key(c) for c in given.values()})
    if used > k:
        errors.append(f"This coloring is not optimal. It uses {used} colors, when only {k} are necessary.\n"
                      " Please recolor.")
    return Verdict("invalid" if errors else "valid", tuple(errors), answer)


def graph_text(instance: Instance) -> str:
    return "".join(f"Vertex {u} is connected to vertex {v}.\n" for u, v in instance.data["edges"])


class Coloring:
    """The graph coloring domain (see module docstring)."""

    name = "coloring"
    candidate_kinds = CANDIDATE_KINDS

    def __init__(self, vertices: tuple[int, int] = DEFAULT_VERTICES) -> None:
        self.vertices = vertices

    def load(self, selection: str | None = None, path: Path | None = None) -> list[Instance]:
        ids = parse_selection(selection)
        if isinstance(ids, Generated):
            return self.generate(ids.n, ids.seed)
        source = resolve_data_path(self.name, path)
        if source.is_file():
            instance = read_col(source)
            return pick({instance.id: instance}, ids, source)
        files = col_files(source)
        if not files:
            raise ValueError(f"no .col files in {source}")
        wanted = list(files) if ids is None else ids
        return pick({i: read_col(files[i]) for i in wanted if i in files}, wanted, source)

    def generate(self, n: int, seed: int) -> list[Instance]:
        return generate_planar(n, seed, self.vertices)

    def prompt(self, instance: Instance, style: str | None = None) -> list[dict[str, str]]:
        count = instance.data.get("stated_n", instance.data["n"])
        content = (
            f"{PROMPT_START}You may use at most {instance.data['k']} colors.\n{graph_text(instance)}"
            f"There are a total of {count} vertices. Please label every vertex, even if it is disconnected "
            f"from the rest of the graph.{PROMPT_END}"
        )
        return [{"role": "user", "content": content}]

    def parse(self, instance: Instance, text: str) -> dict[str, str] | None:
        coloring = parse_coloring(text)
        return {str(v): c for v, c in sorted(coloring.items())} if coloring else None

    def verify(self, instance: Instance, text: str) -> Verdict:
        return check_coloring(instance, parse_coloring(text))

    def feedback(self, instance: Instance, verdict: Verdict, level: FeedbackLevel) -> str:
        """"" for a valid answer; the study's pass/fail sentence; its first error sentence; all of them."""
        return leveled_feedback(verdict, level, BINARY_FEEDBACK)

    def canonical(self, instance: Instance, text: str) -> str | None:
        """Vertices in order with colors renamed by first appearance, so "0: red, 1: blue" and "0: Color 2,
        1: Color 1" both give "0:1,1:2"; vertices outside the graph are left out."""
        return canonical_coloring(instance, parse_coloring(text))

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        coloring = parse_coloring(text)
        return check_coloring(instance, coloring), canonical_coloring(instance, coloring)

    def candidate(self, instance: Instance, kind: str, rng: random.Random) -> str:
        """A coloring of the study's kinds: correct (optimal), ablated (one vertex takes the color of the one
        neighbour that has it, so exactly one edge breaks; the study's script did not check that),
        non_optimal (half of one color class moved to a new color: proper, k+1 colors), random (k colors)."""
        n, k = instance.data["n"], instance.data["k"]
        edges = [tuple(e) for e in instance.data["edges"]]
        colors = color_graph(n, edges, k)
        if colors is None:
            raise ValueError(f"coloring instance {instance.id} has no {k}-coloring")
        if kind == "ablated":
            vertex, neighbour = _one_edge_ablation(edges, colors, rng)
            colors[vertex] = colors[neighbour]
        elif kind == "non_optimal":
            classes = [[v for v in range(n) if colors[v] == c] for c in range(k)]
            classes = [members for members in classes if len(members) >= 2]
            if not classes:
                raise ValueError(f"coloring instance {instance.id}: no color class to split")
            members = rng.choice(classes)
            for vertex in rng.sample(members, len(members) // 2):
                colors[vertex] = k
        elif kind == "random":
            colors = [rng.randrange(k) for _ in range(n)]
        elif kind != "correct":
            raise ValueError(f"unknown coloring candidate kind {kind!r}: use {', '.join(CANDIDATE_KINDS)}")
        return "".join(f"{v}: Color {c}\n" for v, c in enumerate(colors))

    def verifier_prompt(self, instance: Instance, text: str, cot: bool = False) -> list[dict[str, str]]:
        intro = VERIFIER_INTRO.format(k=instance.data["k"], graph=graph_text(instance))
        content = (VERIFIER_COT if cot else VERIFIER_PROMPT).format(intro=intro, coloring=text)
        return [{"role": "user", "content": content}]

    def verification_prompt(self, instance: Instance, text: str, variant: VerifyVariant = "default"
                            ) -> list[dict[str, str]]:  # fmt: skip
        """The verification-only study's prompts: default (`color_verification.generate`) and "cot" (its
        `generate_cot_prompt`, which the study's `generate` calls without the colouring: a bug we do not
        copy). The study has no no-info prompt for colouring."""
        if variant == "no-info":
            raise ValueError("coloring has no no-info verification prompt (only game24 does)")
        intro = VERIFIER_INTRO.format(k=instance.data["k"], graph=graph_text(instance))
        template = VERIFIER_COT if variant == "cot" else VERIFY_PROMPT
        return [{"role": "user", "content": template.format(intro=intro, coloring=" " + (text or ""))}]

    def parse_llm_verdict(self, text: str) -> LLMVerdict:
        """A "Correct: true|false" line (the last one, after the last [Answer] tag: CoT prompt) decides; else
        the study's success phrase does. An [Answer] without a Correct line, or an empty reply, is no verdict
        (wrong, parsed=False). The critique is the whole reply, as the study handed it back."""
        reply = (text or "").strip()
        found = _COT_CORRECT.findall(reply.rsplit("[Answer]", 1)[-1])
        if found:
            return LLMVerdict(found[-1].lower() in ("true", "yes"), reply)
        if STOP_PHRASE.lower() in reply.lower():
            return LLMVerdict(True, reply)
        return LLMVerdict(False, reply, parsed=bool(reply) and "[Answer]" not in reply)

    def backprompt(self, instance: Instance, critique: str) -> str:
        """The study's wrappers: pass/fail for the binary sentence (or no critique); its sound-feedback form
        "Feedback: <errors>\\nThis is wrong. Please recolor." when the critique is this domain's own error
        sentences; its LLM-critique form "This is incorrect. Feedback:\\n<critique>\\n\\nUsing this feedback,
        please try again." for any other critique."""
        critique = (critique or "").strip()
        if critique in ("", BINARY_FEEDBACK):
            return f"Feedback: {BINARY_FEEDBACK} {PROMPT_END}"
        if only_sentences(_SOUND_SENTENCE, critique):
            return f"Feedback: {critique}\nThis is wrong. Please recolor. {PROMPT_END}"
        return (f"This is incorrect. Feedback:\n{critique}\n\nUsing this feedback, please try again. "
                f"{PROMPT_END}")


def _one_edge_ablation(edges: list[tuple[int, int]], colors: list[int], rng: random.Random
                       ) -> tuple[int, int]:  # fmt: skip
    """A (vertex, neighbour) pair such that giving `vertex` its neighbour's color conflicts with that
    neighbour only; any pair when the colouring has none (then more than one edge breaks)."""
    pairs = [(a, b) for u, v in edges for a, b in ((u, v), (v, u))]
    single = [
        (a, b) for a, b in pairs
        if sum(1 for u, v in edges for x, y in ((u, v), (v, u)) if x == a and colors[y] == colors[b]) == 1
    ]  # fmt: skip
    return rng.choice(sorted(single or pairs))


def make_coloring(**options: Any) -> Coloring:
    """The registry's factory: `vertices=(low, high)` for generated graphs; `prompt_style` is accepted and
    unused (one prompt style)."""
    options.pop("prompt_style", None)
    vertices = tuple(options.pop("vertices", DEFAULT_VERTICES))
    if options:
        raise ValueError(f"coloring takes no options {sorted(options)}")
    if len(vertices) != 2 or not 1 <= vertices[0] <= vertices[1]:
        raise ValueError(f"vertices must be (low, high) with 1 <= low <= high, got {vertices}")
    return Coloring((int(vertices[0]), int(vertices[1])))
