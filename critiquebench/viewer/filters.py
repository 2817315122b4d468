"""The run list's filter expressions: the fields and operators they may use.

The page parses a filter (`scheme == "llm-llm" and not correct and rounds > 1`) with its own small parser
(static/app.js, `parseFilter`): a tokenizer and a recursive descent over the grammar below, never `eval` or
`Function`, since a filter may quote LLM text and a shared URL carries it. The fields and operators are these
tables, sent with every study's runs (`data.runs`), so the page accepts exactly what this page documents
(docs/viewer.md is generated from them).

    expr    := and ("or" and)*
    and     := unary ("and" unary)*
    unary   := "not" unary | "(" expr ")" | compare
    compare := FIELD [OP literal] | STRING          (a field alone: is it set; a string alone: text contains it)
    literal := STRING ("..." or '...', \\ escapes) | NUMBER | true | false

A filter longer than `MAX_CHARS` or nested (parentheses, `not`) deeper than `MAX_DEPTH` is refused with a message
(a crafted link of 20,000 parentheses overflowed the page's stack and left the list at "loading…"); a chain of
`or`s or `and`s is one node, so its length costs no recursion.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_CHARS = 100_000  # 3,000 `or`ed strings fit; a filter is typed or linked, never a document
MAX_DEPTH = 100  # nested parentheses and `not`s: no one writes a tenth of it


@dataclass(frozen=True)
class Field:
    name: str  # as typed in a filter
    column: str  # the run row's column (`data.RUN_COLUMNS`), or "" for the searched texts
    type: str  # "text", "number", "bool" or "texts" (the run's round texts: `contains` only)
    doc: str


@dataclass(frozen=True)
class Operator:
    op: str
    types: str  # the field types it applies to
    doc: str


FIELDS: tuple[Field, ...] = (
    Field("scheme", "scheme_name", "text", "the scheme's name: `standard`, `llm-llm`, `sound-first`, ..."),
    Field("spec", "scheme", "text", "the scheme as the study lists it, with its options: `llm-llm:rounds=3`"),
    Field("domain", "domain", "text", "the domain: `game24`, `blocksworld`, ..."),
    Field("instance", "instance", "text", "the instance's id"),
    Field("trial", "trial", "number", "the trial (0 for the first)"),
    Field("status", "status", "text", "`done`, `failed`, `running` or `pending`"),
    Field(
        "correct",
        "correct",
        "bool",
        "the final answer is sound-verified (plan verification: the model's verdict is right); neither true nor "
        "false for a run without a final answer, so `not correct` includes failed runs and `correct == false` "
        "does not",
    ),  # fmt: skip
    Field("rounds", "rounds", "number", "rounds the run made"),
    Field("tokens", "tokens", "number", "prompt + completion tokens of all its calls (cache hits included)"),
    Field("calls", "calls", "number", "LLM calls it made"),
    Field("hits", "hits", "number", "of those, answered from the call cache"),
    Field(
        "seconds",
        "seconds",
        "number",
        "seconds its recorded calls took when they were made (a cache hit counts the call it reuses); "
        "unset where no call was timed (calls imported from others' records, stores older than `round_calls`)",
    ),  # fmt: skip
    Field(
        "fp",
        "fp",
        "bool",
        "a false positive: some round the LLM verifier called valid was sound-invalid (plan verification: "
        "the model called an invalid plan valid)",
    ),
    Field(
        "fn",
        "fn",
        "bool",
        "a false negative: some round the LLM verifier called invalid was sound-valid (plan verification: "
        "the model did not call a valid plan valid)",
    ),
    Field("worse", "worse", "bool", "made worse: a sound-valid answer was followed by a sound-invalid one"),
    Field("critic", "critic", "bool", "stopped by the critic: it stopped on a round the LLM verifier called valid"),
    Field("answer", "answer", "text", "the start (160 characters) of its final answer, or of its error if it failed"),
    Field(
        "text",
        "",
        "texts",
        "every round's answer, parsed answer, critique and feedback, and the run's error (the first 4,000 "
        "characters of each)",
    ),  # fmt: skip
)

OPERATORS: tuple[Operator, ...] = (
    Operator("==", "text, number, bool", "equal (text: exactly, case counts)"),
    Operator("!=", "text, number, bool", "not equal"),
    Operator("<", "number", "less than"),
    Operator("<=", "number", "at most"),
    Operator(">", "number", "more than"),
    Operator(">=", "number", "at least"),
    Operator("contains", "text, texts", "holds the string, ignoring case; the transcript highlights what matched"),
    Operator("~", "text, texts", "the same as `contains`"),
    Operator("not", "", "negation; binds tighter than `and`, which binds tighter than `or`"),
    Operator("and", "", "both"),
    Operator("or", "", "either"),
    Operator("( )", "", "grouping"),
)
