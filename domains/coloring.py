"""Graph coloring as in "GPT-4 doesn't know it's wrong" and the self-verification study (Stechly et al.).

Prompts, feedback sentences and candidate kinds follow the studies' code (kstechly/gpt-and-i,
`domain_utils/graph_coloring.py`, `color_verification.py`); reading files, exact coloring and generation live
in `coloring_graphs`. Instance.data = {"n", "edges", "k"} (+ "stated_n": the vertex count the study's prompt
states when it differs from n).

The study's code changed between the runs behind 000's colouring numbers and the version the repository holds
today; `protocol` picks which one the domain follows (`PROTOCOLS`): "2024", the January 2024 code
(`graph_coloring.py@b583c3c9`, `@d883df86`: "[ANSWER END]" requested, "Feedback: " before sound feedback), or
"2023", the October 2023 code (`graph_coloring.py@ada66fc6`, `response_generation.py@ada66fc6`) that made GPT-4's
recorded colouring runs and the prompts 000 prints (A.4.3, A.4.4). Their texts are the prompt set's
`coloring.*` and `coloring.2023.*` keys.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from critiquebench.domains.backprompt import (
    FORMS,
    Backprompt,
    StudyForm,
    only_sentences,
    sentence_pattern,
    study_answer,
)
from critiquebench.domains.base import leveled_feedback
from critiquebench.domains.coloring_graphs import (
    DEFAULT_VERTICES,
    MAX_VERTICES,
    MIN_VERTICES,
    VERTICES_WHY,
    col_files,
    color_graph,
    generate_planar,
    read_col,
)
from critiquebench.domains.contract import (
    PURPOSES,
    FeedbackLevel,
    Instance,
    Judgement,
    LLMVerdict,
    Messages,
    Unsupported,
    Verdict,
    VerifyVariant,
    verify_variant,
)
from critiquebench.domains.datasets import Generated, parse_selection, pick, resolve_data_path
from critiquebench.domains.prompts import DEFAULT, Prompts, PromptSet, Template
from critiquebench.domains.study_verdicts import VERDICTS, coloring_verdict, with_study_handling

SET = "self_verification"  # this domain's prompts: domains/prompts/self_verification.toml, keys "coloring.*"
# The study's sentence fields as its verifier writes them, for telling them from an LLM's critique.
_SENTENCE_FIELDS = {"vertex": r"\d+", "u": r"\d+", "v": r"\d+", "used": r"\d+", "k": r"\d+"}
_FEEDBACK_KEYS = ("coloring.feedback.missing", "coloring.feedback.conflict", "coloring.feedback.not-optimal")
CANDIDATE_KINDS = ("correct", "ablated", "non_optimal", "random")
# The study code's versions (module docstring): "2024" (gpt-and-i @b583c3c9 / @d883df86), "2023" (@ada66fc6).
PROTOCOLS = ("2024", "2023")
_UNFINISHED_KEYS = ("coloring.feedback.missing", "coloring.feedback.not-optimal")

_MARKUP = " \t>#*_`"
_LIST_MARK = re.compile(r"(?:[-+•]|\d+[.)])[ \t]+")
_VERTEX = re.compile(r"(?:vertex|node|v)?[ \t]*(\d+)", re.IGNORECASE)
_SEPARATORS = (":", "=", "->", "→")
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


@functools.lru_cache(maxsize=1024)  # a replay compares the same few colour names on every edge of every answer
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


def check_coloring(instance: Instance, coloring: dict[int, str] | None, texts: PromptSet | None = None) -> Verdict:
    """Missing vertices (those on an edge, as in the study), conflicting edges, then too many colors; colors
    compare ignoring case and spaces ("Color 1" == "color1"), and vertices outside the graph are ignored. The
    error sentences are the study's (`texts`)."""
    texts = texts or DEFAULT[SET]
    n, k = instance.data["n"], instance.data["k"]
    edges = [tuple(e) for e in instance.data["edges"]]
    given = {v: c for v, c in (coloring or {}).items() if 0 <= v < n}
    on_edges = list(dict.fromkeys(v for e in edges for v in e))
    errors = [texts.render("coloring.feedback.missing", vertex=v) for v in on_edges if v not in given]
    answer = {str(v): c for v, c in sorted(given.items())} if coloring else None
    if coloring is None:
        return Verdict("malformed", tuple(errors), None)
    errors += [
        texts.render("coloring.feedback.conflict", u=u, v=v, color=given[u])
        for u, v in edges
        if u in given and v in given and _key(given[u]) == _key(given[v])
    ]
    used = len({_key(c) for c in given.values()})
    if used > k:
        errors.append(texts.render("coloring.feedback.not-optimal", used=used, k=k))
    return Verdict("invalid" if errors else "valid", tuple(errors), answer)


def graph_text(instance: Instance, texts: PromptSet | None = None) -> str:
    return _graph_text((texts or DEFAULT[SET])["coloring.graph.edge"], tuple(map(tuple, instance.data["edges"])))


@functools.lru_cache(maxsize=256)  # every prompt and verification prompt of a graph states its edges again
def _graph_text(edge: Template, edges: tuple[tuple[int, int], ...]) -> str:
    return "".join(edge.render(u=u, v=v) for u, v in edges)


class Coloring(StudyForm):
    """The graph coloring domain (see module docstring)."""

    name = "coloring"
    candidate_kinds = CANDIDATE_KINDS
    purposes: Mapping[str, str | None] = {
        **dict.fromkeys(PURPOSES),
        "verify-no-info": "coloring has no no-info verification prompt (only game24 does)",
        "verify-swap": "coloring has no swapped-order verification prompt (the -S prompt is planning's)",
    }

    def __init__(self, vertices: tuple[int, int] = DEFAULT_VERTICES, prompts: Prompts = DEFAULT,
                 form: str = "chat", verdict: str = "lenient", protocol: str = "2024") -> None:  # fmt: skip
        if protocol not in PROTOCOLS:
            raise ValueError(f"coloring protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
        if form not in FORMS:
            raise ValueError(f"coloring form must be one of {', '.join(FORMS)}, not {form!r}")
        if verdict not in VERDICTS:
            raise ValueError(f"coloring verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}")
        self.verdict = verdict  # "study": the study's code reads the LLM verifier's replies (`study_verdicts`)
        self.form = form  # "transcript": every call as the study's code sent it (`study_transcript`)
        self.vertices = vertices
        self.prompts = prompts
        self.texts = prompts[SET]
        self.handback = Backprompt.of(self.texts, "coloring", _FEEDBACK_KEYS, _SENTENCE_FIELDS)
        self.protocol = protocol
        self.old = protocol == "2023"
        self.answer_format = self.texts.text("coloring.2023.answer-format" if self.old else "coloring.answer-format")
        # what the study's loop cut each answer at: its stop sequence; none in 2023 (`study_transcript`)
        self.answer_end = "" if self.old else "[ANSWER END]"
        self.give_up = tuple(self.texts.text("coloring.2023.give-up").split()) if self.old else ()
        if self.old:
            self._conflict = sentence_pattern([self.texts["coloring.feedback.conflict"]], _SENTENCE_FIELDS)
            self._unfinished = sentence_pattern([self.texts[k] for k in _UNFINISHED_KEYS], _SENTENCE_FIELDS)

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

    def transcript_joins(self) -> tuple[str, str]:
        # the study's colouring trace puts the answer on a line of its own (graph_coloring.py@b583c3c9:124); in
        # 2023, "\n".join of the trace's values (response_generation.py@ada66fc6:132)
        return self.answer_end, "\n"

    def prompt(self, instance: Instance, style: str | None = None, shots: int | None = None) -> Messages:
        content = self.texts.render(
            "coloring.generate",
            k=instance.data["k"],
            graph=graph_text(instance, self.texts),
            count=instance.data.get("stated_n", instance.data["n"]),
            answer_format=self.answer_format,
        )
        return self._chat({"role": "user", "content": content})

    def parse(self, instance: Instance, text: str) -> dict[str, str] | None:
        coloring = parse_coloring(text)
        return {str(v): c for v, c in sorted(coloring.items())} if coloring else None

    def verify(self, instance: Instance, text: str) -> Verdict:
        return self._gave_up(text, check_coloring(instance, parse_coloring(text), self.texts))

    def _gave_up(self, text: str, verdict: Verdict) -> Verdict:
        """In 2023, a reply containing "sorry" or "constraints" ends the loop there, before any verifier or critic
        call (`response_generation.py@ada66fc6:109`): a final verdict (`Verdict.final`)."""
        if any(word in (text or "") for word in self.give_up):
            return replace(verdict, final=True)
        return verdict

    def feedback(self, instance: Instance, verdict: Verdict, level: FeedbackLevel) -> str:
        """"" for a valid answer; the study's pass/fail sentence; its first error sentence; all of them. In 2023
        the study stopped at its first missing vertex and, with conflicts, named only those, each followed by a
        space (`graph_coloring.py@ada66fc6:55-63, 289-290`)."""
        if self.old and level == "all" and verdict.errors and not verdict.valid:
            conflicts = [e for e in verdict.errors if self._conflict.fullmatch(e)]
            if conflicts and verdict.errors[0] == conflicts[0]:
                return "".join(f"{e} " for e in conflicts)
            level = "first"
        return leveled_feedback(verdict, level, self.texts.text("coloring.feedback.binary"))

    def canonical(self, instance: Instance, text: str) -> str | None:
        """Vertices in order with colors renamed by first appearance, so "0: red, 1: blue" and "0: Color 2,
        1: Color 1" both give "0:1,1:2"; vertices outside the graph are left out."""
        return canonical_coloring(instance, parse_coloring(text))

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        coloring = parse_coloring(text)
        verdict = self._gave_up(text, check_coloring(instance, coloring, self.texts))
        return verdict, canonical_coloring(instance, coloring)

    def candidate(self, instance: Instance, kind: str, rng: random.Random) -> str:
        """A coloring of the study's kinds: correct (optimal), ablated (a random vertex takes the color of a
        random neighbour, as the study's script did: at least one edge breaks, often more),
        non_optimal (half of one color class moved to a new color: proper, k+1 colors), random (k colors)."""
        n, k = instance.data["n"], instance.data["k"]
        edges = [tuple(e) for e in instance.data["edges"]]
        colors = color_graph(n, edges, k)
        if colors is None:
            raise ValueError(f"coloring instance {instance.id} has no {k}-coloring")
        if kind == "ablated":
            vertex, neighbour = _study_ablation(edges, rng)
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


    # ---- Judged: the study's LLM-verifier prompts (`domains.contract.Judged`) ----
    def judge_prompt(self, instance: Instance, purpose: str, answer: str) -> Messages:
        if why := self.purposes.get(purpose, f"no {purpose!r} prompt"):
            raise Unsupported(why)
        if purpose.startswith("verify"):
            return self._verification_prompt(instance, answer, verify_variant(purpose))
        # the loop's verifier ("critique", "critique-cot")
        key = "coloring.critique-cot" if purpose == "critique-cot" else "coloring.critique"
        if self.form == "transcript":  # the study's critic saw the answer as its loop kept it
            answer = study_answer(answer, self.answer_end)
        content = self.texts.render(key, intro=self._intro(instance), coloring=answer)
        return self._chat({"role": "user", "content": content})

    def judge_reply(self, instance: Instance, purpose: str, answer: str, reply: str) -> Judgement:
        """A "Correct: true|false" line (the last one, after the last [Answer] tag: CoT prompt) decides; else
        the study's success phrase does. An [Answer] without a Correct line, or an empty reply, is no verdict
        (wrong, parsed=False). The critique is the whole reply, as the study handed it back. With `verdict =
        "study"`, the study's code reads it (`study_verdicts.coloring_verdict`)."""
        if self.old and purpose == "critique":  # the loop's own test of the wrapped reply (@ada66fc6:162-164)
            reply = (reply or "").strip()
            found = self.texts.text("coloring.2023.stop-phrase").lower() in reply.lower()
            return Judgement(LLMVerdict(found, reply, parsed=bool(reply)))
        study = coloring_verdict(purpose, reply)
        if self.verdict == "study":
            return Judgement(study)
        reply = (reply or "").strip()
        found = _COT_CORRECT.findall(reply.rsplit("[Answer]", 1)[-1])
        if found:
            ours = LLMVerdict(found[-1].lower() in ("true", "yes"), reply)
        elif self.texts.text("coloring.stop-phrase").lower() in reply.lower():
            ours = LLMVerdict(True, reply)
        else:
            ours = LLMVerdict(False, reply, parsed=bool(reply) and "[Answer]" not in reply)
        # where the study's CoT loop crashed on the reply, the run ends there whichever reader judges
        return Judgement(with_study_handling(ours, study) if purpose.startswith("critique") else ours)

    def _intro(self, instance: Instance) -> str:
        return self.texts.render("coloring.graph.intro", k=instance.data["k"], graph=graph_text(instance, self.texts))

    def _verification_prompt(self, instance: Instance, text: str, variant: VerifyVariant = "default"
                            ) -> list[dict[str, str]]:  # fmt: skip
        """The verification-only study's prompts: default (`color_verification.generate`) and "cot" (its
        `generate_cot_prompt`, which the study's `generate` calls without the colouring: a bug we do not
        copy). The study has no no-info prompt for colouring."""
        if variant in ("no-info", "swap"):
            raise Unsupported(str(self.purposes[f"verify-{variant}"]))
        key = "coloring.critique-cot" if variant == "cot" else "coloring.verify"
        content = self.texts.render(key, intro=self._intro(instance), coloring=" " + (text or ""))
        return self._chat({"role": "user", "content": content})

    def backprompt(self, instance: Instance, critique: str) -> str:
        """The study's three wrappers (`backprompt.Backprompt`): pass/fail for the binary sentence (or no
        critique); "Feedback: <errors>\\nThis is wrong. Please recolor." when the critique is this domain's
        own error sentences; "This is incorrect. Feedback:\\n<critique>\\n\\nUsing this feedback, please try
        again." for any other critique. Each ends with the study's answer format request. In 2023 (`_handback_2023`)
        the forms are `backprompt@ada66fc6`'s."""
        if self.old:
            return self._handback_2023(critique)
        return self.handback(critique, answer_format=self.answer_format)

    def _handback_2023(self, critique: str) -> str:
        """`graph_coloring.backprompt@ada66fc6:261-304`: pass/fail; check_coloring's own string for a missing
        vertex or too many colours (sentence, space, prompt end); conflict sentences before "\\nThis is wrong.
        Please recolor." (as given: "full" leaves a space after each); any other text in the LLM wrapper."""
        text = critique or ""
        bare = text.strip()
        if bare == self.handback.binary_sentence or not bare:
            key = "coloring.2023.backprompt.binary"
        elif self._unfinished.fullmatch(bare):
            key, text = "coloring.2023.backprompt.unfinished", bare
        elif only_sentences(self._conflict, bare):
            key = "coloring.2023.backprompt.sound"
        else:
            key, text = "coloring.2023.backprompt.critique", bare
        return self.texts.render(key, critique=text, answer_format=self.answer_format)


def _study_ablation(edges: list[tuple[int, int]], rng: random.Random) -> tuple[int, int]:
    """The study's ablation (kstechly/gpt-and-i `color_verification.py`): a random vertex of the graph and a
    random neighbour of it; the vertex takes the neighbour's colour, so every edge from it to a vertex of that
    colour breaks (1.87 edges a colouring over the study's graphs 1-100: Table A4's 187 errors)."""
    neighbours: dict[int, list[int]] = {}
    for u, v in edges:
        neighbours.setdefault(u, []).append(v)
        neighbours.setdefault(v, []).append(u)
    vertex = rng.choice(sorted(neighbours))
    return vertex, rng.choice(sorted(neighbours[vertex]))


# The options `make_coloring` takes beside `prompts` and `prompt_style` (`domains.options` types flags by it).
OPTIONS: dict[str, type] = {"vertices": list, "form": str, "verdict": str, "protocol": str}


def make_coloring(**options: Any) -> Coloring:
    """The registry's factory: `vertices=(low, high)` for generated graphs; `form` "chat" (default) or
    "transcript" (the study's calls, `study_transcript`); `verdict` "lenient" (default, ours) or "study" (the
    study's code) reads the LLM verifier's replies; `protocol` "2024" (default) or "2023": which version of the
    study's code the prompts and loop follow (module docstring); `prompt_style` is accepted and unused."""
    options.pop("prompt_style", None)
    prompts = options.pop("prompts", None) or DEFAULT
    vertices = tuple(options.pop("vertices", DEFAULT_VERTICES))
    form = str(options.pop("form", "chat"))
    verdict = str(options.pop("verdict", "lenient"))
    protocol = str(options.pop("protocol", "2024"))
    if options:
        raise ValueError(
            f"coloring takes no options {sorted(options)} (only vertices, form, verdict, protocol, prompts)"
        )
    whole = len(vertices) == 2 and all(type(v) is int for v in vertices)  # not 1.5, not true
    if not whole or not MIN_VERTICES <= vertices[0] <= vertices[1] <= MAX_VERTICES:
        raise ValueError(f"vertices must be two whole numbers (low, high) with {MIN_VERTICES} <= low <= high <= "
                         f"{MAX_VERTICES}, got {str(list(vertices))[:60]}: {VERTICES_WHY}")  # fmt: skip
    return Coloring((vertices[0], vertices[1]), prompts, form, verdict, protocol)
