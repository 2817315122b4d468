"""Handing a critique back to the generator: one mechanism over three templates of a prompt set.

Every study we reproduce wraps what goes back in one of three forms: its pass/fail form for the bare binary
sentence, its sound-feedback form when the critique is the domain's own error sentences, and its LLM-critique
form for anything else (an LLM's critique). `Backprompt` chooses the form and renders it; `sentence_pattern`
recognises a domain's own sentences from the very templates that write them, so a user's prompt file that
rewords them is still recognised.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from critiquebench.domains.prompts import PromptSet, Template

ANY_FIELD = r"[^\n]+?"


def only_sentences(sentence: re.Pattern[str], text: str) -> bool:
    """Whether non-empty `text` is nothing but matches of `sentence`, separated by whitespace.

    Scanned sentence by sentence from left to right, so a long hostile critique costs linear time.
    """
    pos = 0
    while pos < len(text):
        match = sentence.match(text, pos)
        if not match or match.end() == pos:
            return False
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return bool(text)


def sentence_pattern(templates: Iterable[Template], fields: Mapping[str, str] | None = None) -> re.Pattern[str]:
    """A regex matching any one sentence the `templates` write: their literal text escaped, each field as its
    pattern in `fields` (default: any text on one line)."""
    fields = fields or {}
    alternatives = []
    for template in templates:
        parts, pos = [], 0
        for match in string.Template.pattern.finditer(template.text):
            parts.append(re.escape(template.text[pos : match.start()]))
            name = match.group("named") or match.group("braced")
            parts.append(re.escape("$") if match.group("escaped") is not None else fields.get(name, ANY_FIELD))
            pos = match.end()
        parts.append(re.escape(template.text[pos:]))
        alternatives.append("".join(parts))
    return re.compile("|".join(alternatives))


@dataclass(frozen=True)
class Backprompt:
    """The user turn that hands a critique back, in a study's three forms (`binary`, `sound`, `critique`
    templates, each with a `critique` field plus the domain's own `fields`).

    `binary_sentence` is the domain's pass/fail feedback; `own` tells the domain's own error sentences from an
    LLM's critique. An empty critique takes the `empty` form (the critique form then receives the binary
    sentence as its critique).
    """

    binary: Template
    sound: Template
    critique: Template
    binary_sentence: str
    own: Callable[[str], bool]
    empty: Literal["binary", "critique"] = "binary"

    @classmethod
    def of(cls, texts: PromptSet, prefix: str, sentences: Iterable[str], fields: Mapping[str, str]) -> Backprompt:
        """The study's usual layout: `{prefix}.backprompt.{binary,sound,critique}`, the binary sentence
        `{prefix}.feedback.binary`, and its own error sentences the templates `sentences` write (each field
        matched by its pattern in `fields`)."""
        pattern = sentence_pattern((texts[key] for key in sentences), fields)
        return cls(
            texts[f"{prefix}.backprompt.binary"],
            texts[f"{prefix}.backprompt.sound"],
            texts[f"{prefix}.backprompt.critique"],
            binary_sentence=texts.text(f"{prefix}.feedback.binary"),
            own=lambda text: only_sentences(pattern, text),
        )

    def form(self, critique: str) -> Literal["binary", "sound", "critique"]:
        text = (critique or "").strip()
        if text == self.binary_sentence or (not text and self.empty == "binary"):
            return "binary"
        if text and self.own(text):
            return "sound"
        return "critique"

    def __call__(self, critique: str, **fields: Any) -> str:
        text = (critique or "").strip()
        form = self.form(text)
        return getattr(self, form).render(critique=text or self.binary_sentence, **fields)


FORMS = ("chat", "transcript")


def study_answer(text: str, end: str = "[ANSWER END]") -> str:
    """An answer as the self-verification study's code kept it: cut at the stop sequence the call carried and
    stripped (`send_query`, `response_generation.py` @b583c3c9 l.133, l.138), for one recorded without the stop;
    `end` "" (the 2023 code, which sent none): stripped only (`response_generation.py@ada66fc6:215`)."""
    return (text.split(end)[0] if end else text).strip()


class StudyForm:
    """The self-verification study's two forms of a call, shared by its domains (Game of 24, colouring): "chat"
    (turns as they are) or "transcript" (every call as the study's code sent it, `study_transcript`). A domain
    sets `form` and `texts` (its prompt set, with the study's system message) and says how its trace joins an
    answer (`transcript_joins`)."""

    form: str
    texts: PromptSet

    def transcript_joins(self) -> tuple[str, str]:
        """`study_transcript`'s `end` and `before_answer` for this domain's trace."""
        raise NotImplementedError

    def _chat(self, message: dict[str, str]) -> list[dict[str, str]]:
        """A prompt's messages: with the study's system message in the transcript form."""
        system = [{"role": "system", "content": self.texts.text("system")}] if self.form == "transcript" else []
        return [*system, message]

    def conversation(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """What goes out for a generation with history: chat turns, or the study's one-message transcript."""
        if self.form != "transcript":
            return messages
        end, before_answer = self.transcript_joins()
        return study_transcript(messages, self.texts.text("system"), end, before_answer=before_answer)


def study_transcript(messages: list[dict[str, str]], system: str, end: str = "[ANSWER END]",
                     before_answer: str = "") -> list[dict[str, str]]:  # fmt: skip
    """A conversation as the self-verification study's code sent every call (kstechly/gpt-and-i
    `response_generation.py` @b583c3c9 `send_query`): its system message, then one user message holding the
    whole transcript: the first prompt, then for each answer `before_answer`, the answer as its `[ANSWER END]`
    stop cut it (stripped), "[ANSWER END]\\n" and the feedback that followed it.

    `end` "" is the colouring code of October 2023, which joined the trace's values with "\\n" and sent no stop
    (`response_generation.py@ada66fc6:132`): `before_answer="\\n"`, and "\\n" alone after each answer.

    `before_answer` is where the domains' `concat_trace` differ: Game of 24's joins prompt and answer directly
    (`game24.py@b583c3c9:31`), colouring's puts "\\n" between them (`graph_coloring.py@b583c3c9:124`)."""
    turns = [m for m in messages if m["role"] != "system"]
    text = turns[0]["content"] if turns else ""
    for answer, feedback in zip(turns[1::2], turns[2::2], strict=False):
        text += before_answer + study_answer(answer["content"], end) + end + "\n" + feedback["content"]
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]
