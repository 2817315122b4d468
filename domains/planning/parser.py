"""Free-text LLM answers -> the sequence of ground actions the model committed to.

Reading order:

1. Markdown is flattened (fences, bold, backticks) and text is lower-cased.
2. The answer region is chosen (see `assembly`).
3. Each line yields actions: PDDL atoms such as ``(unstack a c)``, else English clauses, one per verb of the
   config's action templates ("unstack ... from on top of ..."), whose objects are the object names in the
   clause in order of first appearance (PlanBench's rule). A verb whose objects do not fit any action is
   skipped, as PlanBench's extraction does; `ParsedPlan.skipped` keeps those lines.
4. The lines assemble into the committed plan (see `assembly`); "X is not correct" on a line retracts X.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from critiquebench.domains.memo import ObjectMemo
from critiquebench.domains.planning.assembly import Line, assemble, flatten, region
from critiquebench.domains.planning.strips import Task
from critiquebench.domains.planning.templates import NLConfig

Step = tuple[str, tuple[str, ...]]

READS_KEPT = 64  # answers whose reading a task's reader keeps (`ActionReader.read`)
LINES_KEPT = 256  # answer lines whose reading a task's reader keeps (`ActionReader._read_text`)
_UNREAD = object()
_ARTICLES = {"the", "a", "an"}
_NUMBER = re.compile(r"^\s*(?:[-*+\u2022]\s*)?(?:step\s*)?\(?(\d{1,3})\s*[.):\]]\s*")
_BULLET = re.compile(r"^\s*[-*+\u2022]\s+")
# "- Step 2: ..." in an explanation refers to a step; it is no list item of the plan
_STEP_REFERENCE = re.compile(r"^\s*[-*+\u2022]\s*step\s*\d")
# words of prose before an action in such a line that make it commentary, not the step itself
_PROSE_WORDS = 2
_PDDL_ATOM = re.compile(r"\(\s*([a-z][\w-]*)((?:\s+[\w-]+)*)\s*\)")
# quote marks around a verb alone (`the "feast" action requires ...`): the verb is named, not done
_QUOTES = "\"'\u201c\u201d\u2018\u2019"
_RETRACT = re.compile(
    r"\b(?:is|was|would be|seems)\s+(?:not\s+(?:correct|valid|possible|allowed|right|executable)|wrong|"
    r"incorrect|invalid|a mistake|impossible)\b|\b(?:can(?:no|')t|cannot) be (?:done|executed|performed)\b"
)


@dataclass(frozen=True)
class ParsedPlan:
    steps: tuple[Step, ...]
    skipped: tuple[str, ...] = ()
    # Lines that look like an action (a verb of the domain, or a PDDL atom) but read as none, each with the step
    # it stands at (1 + the actions read before it), as VAL would number the step it cannot match.
    unread: tuple[tuple[int, str], ...] = ()


# what a reader's patterns are: verbs, their pattern, object names, short names, their pattern, whole templates
_Patterns = tuple[
    dict[str, list[str]], re.Pattern[str], dict[str, str], frozenset[str], re.Pattern[str] | None,
    list[tuple[str, re.Pattern[str], tuple[int, ...]]],
]  # fmt: skip
_PATTERNS = ObjectMemo(4096)


@dataclass
class ActionReader:
    """Reads plans for one task: its verbs, object names and PDDL action names."""

    cfg: NLConfig
    task: Task
    _verb_re: re.Pattern[str] = field(init=False)
    _verbs: dict[str, list[str]] = field(init=False)
    _obj_re: re.Pattern[str] | None = field(init=False)
    _objects: dict[str, str] = field(init=False)
    _short: frozenset[str] = field(init=False)
    _templates: list[tuple[str, re.Pattern[str], tuple[int, ...]]] = field(init=False)
    # texts read lately and what they gave: a verification study judges each answer under up to three prompts
    # and verifies it too, each reading it again (a dry run's main cost); a ParsedPlan is immutable, so shared
    _read: dict[str, ParsedPlan | None] = field(init=False, default_factory=dict, repr=False)
    # lines read lately: answers to one problem repeat each other's lines ("unstack the red block from on top of
    # the blue block"), and a replay of PlanBench's t2-t8 files reads each of those lines ~2 times (a Line is
    # immutable, so shared)
    _lines: dict[str, Line] = field(init=False, default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # The patterns depend on the config, the domain and the objects' names only: tasks over the same objects
        # (most of a PlanBench set) share them, built once (0.4 ms a task, a replay's whole reading otherwise)
        patterns = _PATTERNS.get((self.cfg, self.task.domain), frozenset(self.task.objects), self._patterns)
        self._verbs, self._verb_re, self._objects, self._short, self._obj_re, self._templates = patterns

    def _patterns(self) -> _Patterns:
        verbs: dict[str, list[str]] = {}
        for name in self.task.domain.schemas:
            for phrase in {
                _verb_words(self.cfg.actions.get(name, "")),
                name.replace("-", " ").replace("_", " "),
            }:
                if phrase:
                    verbs.setdefault(phrase, []).append(name)
        alternatives = sorted(verbs, key=len, reverse=True)
        verb_re = re.compile(
            r"(?<![\w-])(" + "|".join(r"[\s_-]*".join(map(re.escape, v.split())) for v in alternatives) + r")(?![\w-])"
        )
        objects, short = _object_names(self.cfg, self.task)
        names = sorted(objects, key=len, reverse=True)
        obj_re = (
            re.compile(
                r"(?<![\w])(" + "|".join(r"[\s_]+".join(map(re.escape, n.split())) for n in names) + r")(?![\w])"
            )
            if names
            else None
        )
        return verbs, verb_re, objects, short, obj_re, self._template_patterns(names)

    def _template_patterns(self, names: list[str]) -> list[tuple[str, re.Pattern[str], tuple[int, ...]]]:
        """Each action's whole English template as a pattern, its slots matching object names: templates
        such as "lift hoist {0} to lift crate {1}" repeat verbs and name actions ("up") that the verb rule
        would split on, so a line written exactly as a template is read by the template first."""
        obj = "|".join(r"[\s_]+".join(map(re.escape, n.split())) for n in names) or r"(?!x)x"
        out = []
        for name in self.task.domain.schemas:
            template = self.cfg.actions.get(name, "").lower()
            order = self.cfg.slot_order(name) or ()
            parts = re.split(r"\{[^{}]*\}", template)
            if len(parts) - 1 != len(self.task.domain.schemas[name].params) or not template.strip():
                continue
            literal = [r"\s+".join(map(re.escape, part.split())) for part in parts]
            body = ""
            for i, text in enumerate(literal):
                body += text
                if i < len(literal) - 1:
                    body += (r"\s+" if parts[i][-1:].isspace() or not parts[i] else "") + f"({obj})"
                    body += r"\s+" if parts[i + 1][:1].isspace() else ""
            out.append((name, re.compile(r"(?<![\w-])" + body + r"(?![\w-])"), order or tuple(range(len(parts) - 1))))
        return out

    def read(self, text: str) -> ParsedPlan | None:
        """The committed plan, or None when the text holds no action at all."""
        kept = self._read.get(text, _UNREAD)  # one lookup: another thread may clear the dict between two
        if kept is not _UNREAD:
            return kept  # type: ignore[return-value]
        if len(self._read) >= READS_KEPT:
            self._read.clear()
        parsed = self._read[text] = self._read_text(text)
        return parsed

    def _read_text(self, text: str) -> ParsedPlan | None:
        seen = self._lines  # the region's lines were read while finding it, or for another answer: each once

        def line(raw: str) -> Line:
            found = seen.get(raw)
            if found is None:
                if len(seen) >= LINES_KEPT:
                    seen.clear()
                found = seen[raw] = self._line(raw)
            return found

        region_text = region(flatten(text), lambda part: any(line(r).actions for r in part.splitlines() if r.strip()))
        lines = [line(raw) for raw in region_text.splitlines() if raw.strip()]
        if not any(line.actions for line in lines):
            return None
        skipped = tuple(line.text.strip() for line in lines if line.has_verb and not line.actions)
        unread, position = [], 1
        for line in lines:
            if line.actions:
                position += len(line.actions)
            elif line.has_verb or _PDDL_ATOM.search(line.text.lower()):
                unread.append((position, line.text.strip()))
        return ParsedPlan(assemble(lines), skipped, tuple(unread))

    def _line(self, raw: str) -> Line:
        number_match = _NUMBER.match(raw)
        number = int(number_match.group(1)) if number_match else None
        listed = number is not None or bool(_BULLET.match(raw))
        body = raw[number_match.end() :] if number_match else raw
        pddl = self._pddl_clauses(body)
        found = pddl if any(step for _s, _e, step in pddl) else self._english_or_template(body)
        has_verb = bool(found) or bool(self._verbs_in(body))
        if number is not None and _STEP_REFERENCE.match(raw):
            # "- **Step 2:** With ..., you perform the Overcome action to have c overcome d": a bullet of an
            # explanation naming a step; its action, deep in prose, restates the plan and must not replace item 2
            if found and len(body[: found[0][0]].split()) > _PROSE_WORDS:
                return Line(raw, (), None, True, True)
            number = None
        actions: list[tuple[Step, bool]] = []
        for i, (_start, end, step) in enumerate(found):
            if step is None:
                continue
            tail_end = found[i + 1][0] if i + 1 < len(found) else len(body)
            actions.append((step, bool(_RETRACT.search(body, end, tail_end))))
        return Line(raw, tuple(actions), number, listed, has_verb)

    def _pddl_clauses(self, body: str) -> list[tuple[int, int, Step | None]]:
        out: list[tuple[int, int, Step | None]] = []
        for m in _PDDL_ATOM.finditer(body):
            name, args = m.group(1), tuple(m.group(2).split())
            schema = self.task.domain.schemas.get(name)
            if schema is not None:
                out.append((m.start(), m.end(), (name, args) if len(args) == len(schema.params) else None))
        return out

    def _english_or_template(self, body: str) -> list[tuple[int, int, Step | None]]:
        """The verb rule's clauses (PlanBench's reading), unless whole templates read the line better: they
        account for every object and verb on it, and find more actions or as many while the verb rule left a
        verb it could not read."""
        english = self._english_clauses(body)
        template = self._template_clauses(body) if self._templates else []
        if not template:
            return english
        rest = body
        for start, end, _step in template:
            rest = rest[:start] + " " * (end - start) + rest[end:]
        if (self._obj_re and self._obj_re.search(rest)) or self._verb_re.search(rest):
            return english
        read = sum(step is not None for _s, _e, step in english)
        if len(template) > read or (len(template) == read and read < len(english)):
            return template
        return english

    def _template_clauses(self, body: str) -> list[tuple[int, int, Step | None]]:
        hits: list[tuple[int, int, bool, Step]] = []
        for name, pattern, order in self._templates:
            for m in pattern.finditer(body):
                args = [""] * len(order)
                for slot, text in zip(order, m.groups(), strict=True):
                    args[slot] = self._objects[" ".join(text.replace("_", " ").split())]
                hits.append((m.start(), m.end(), not self._fits(name, tuple(args)), (name, tuple(args))))
        # Leftmost-longest without overlaps; where two actions share a template (Logistics' "load {} into
        # {} at {}"), the one whose types and static preconditions fit the objects wins.
        hits.sort(key=lambda h: h[:3])
        out: list[tuple[int, int, Step | None]] = []
        for start, end, _misfit, step in hits:
            if not out or start >= out[-1][1]:
                out.append((start, end, step))
        return out

    def _verbs_in(self, body: str) -> list[re.Match[str]]:
        """The verbs of `body` that may start an action: a verb quoted alone names the action in an explanation
        (GPT-4's Mystery answer: `the "feast" action require both ...`), which PlanBench's reader, splitting on
        spaces, never takes for its verb either."""
        return [m for m in self._verb_re.finditer(body) if not _quoted(body, m.start(), m.end())]

    def _english_clauses(self, body: str) -> list[tuple[int, int, Step | None]]:
        verbs = self._verbs_in(body)
        out: list[tuple[int, int, Step | None]] = []
        for i, m in enumerate(verbs):
            end = verbs[i + 1].start() if i + 1 < len(verbs) else len(body)
            mentions = self._mentions(body, m.end(), end)
            key = " ".join(m.group(1).replace("-", " ").replace("_", " ").split())
            names = self._verbs.get(key) or _verb_lookup(self._verbs, key)
            step = self._choose(names, _distinct(o for o, _full, _end in mentions))
            if step is None:
                # A stray short name in commentary ("leaving blue clear") must not spoil
                # "put down the red block".
                step = self._choose(names, _distinct(o for o, full, _end in mentions if full))
            out.append((m.start(), mentions[-1][2] if mentions else m.end(), step))
        return out

    def _mentions(self, body: str, start: int, end: int) -> list[tuple[str, bool, int]]:
        """(object, written in full, end offset) for each object name in body[start:end]."""
        if self._obj_re is None:
            return []
        found = []
        for om in self._obj_re.finditer(body, start, end):
            text = " ".join(om.group(1).replace("_", " ").split())
            found.append((self._objects[text], text not in self._short, om.end()))
        return found

    def _choose(self, names: list[str], mentioned: list[str]) -> Step | None:
        fitting = [n for n in names if len(self.task.domain.schemas[n].params) == len(mentioned)]
        if not fitting:
            return None
        candidates = [(name, self._arguments(name, mentioned)) for name in fitting]
        return next((c for c in candidates if self._fits(*c)), candidates[0])

    def _fits(self, name: str, args: tuple[str, ...]) -> bool:
        """Whether `name(args)` is an action of the task whose static preconditions hold."""
        action = self.task.ground(name, args)
        static = self.task.domain.static_predicates
        return action is not None and all(f in self.task.init for f in action.pre if f[0] in static)

    def _arguments(self, name: str, mentioned: list[str]) -> tuple[str, ...]:
        """Objects in the order they were written -> the action's parameter order (its template's slots)."""
        order = self.cfg.slot_order(name)
        if order is None or sorted(order) != list(range(len(mentioned))):
            return tuple(mentioned)
        args = [""] * len(mentioned)
        for obj, slot in zip(mentioned, order, strict=True):
            args[slot] = obj
        return tuple(args)


def _quoted(text: str, start: int, end: int) -> bool:
    return 0 < start and end < len(text) and text[start - 1] in _QUOTES and text[end] in _QUOTES


def _verb_words(template: str) -> str:
    words = template.split("{")[0].split() if "{" in template else []
    while words and words[-1].lower() in _ARTICLES:
        words.pop()
    return " ".join(w.lower() for w in words)


def _verb_lookup(verbs: dict[str, list[str]], key: str) -> list[str]:
    # "pickup" / "pick-up" spellings collapse to the same letters as the canonical "pick up".
    squashed = key.replace(" ", "")
    return next((names for phrase, names in verbs.items() if phrase.replace(" ", "") == squashed), [])


def _distinct(objs: Iterable[str]) -> list[str]:
    out: list[str] = []
    for obj in objs:
        if obj not in out:
            out.append(obj)
    return out


def _object_names(cfg: NLConfig, task: Task) -> tuple[dict[str, str], frozenset[str]]:
    """English name (lower case, single-spaced) -> object, and which names are short forms.

    Whole-name configs also name objects the problem lacks, so a plan using such a block is read (and then
    rejected by the validator), as PlanBench does."""
    names: dict[str, str] = {}
    candidates = set(task.objects) | {k for k, v in cfg.encoded_objects.items() if "{" not in v}
    for obj in sorted(candidates):
        text = " ".join(cfg.object_text(obj).lower().replace("_", " ").split())
        names.setdefault(text, obj)
    short: set[str] = set()
    suffixes = {n.split()[-1] for n in names}
    if len(suffixes) == 1 and all(len(n.split()) > 1 for n in names):
        # Blocksworld's "red block" may be written "red": accept the shared trailing noun as optional.
        for text, obj in list(names.items()):
            compact = " ".join(text.split()[:-1])
            if len(compact) > 1 and compact not in _ARTICLES and compact not in names:
                names[compact] = obj
                short.add(compact)
    return names, frozenset(short)
