"""Game of 24 as in "On the self-verification limitations of LLMs" (Stechly, Valmeekam, Kambhampati 2024).

Prompts, feedback sentences and candidate kinds follow the study's code (kstechly/gpt-and-i,
`domain_utils/game24.py` and `game24_verification.py`); verification is exact and never evaluates text as code
(see `arith`). Instance ids are the puzzle's rank in 24.csv ("901"), or "gen-SEED-i" (i from 1) when
generated.
"""

from __future__ import annotations

import csv
import functools
import random
import re
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from critiquebench.domains import arith
from critiquebench.domains.backprompt import FORMS, Backprompt, StudyForm, study_answer
from critiquebench.domains.base import leveled_feedback
from critiquebench.domains.contract import (
    PURPOSES,
    FeedbackLevel,
    Instance,
    Judgement,
    LLMVerdict,
    Messages,
    Verdict,
    VerifyVariant,
    verify_variant,
)
from critiquebench.domains.datasets import Generated, parse_selection, pick, resolve_data_path
from critiquebench.domains.llm_json import json_objects
from critiquebench.domains.prompts import DEFAULT, Prompts, PromptSet
from critiquebench.domains.study_verdicts import VERDICTS, game24_verdict, with_study_handling

END_TAG = "[ANSWER END]"
SET = "self_verification"  # this domain's prompts: domains/prompts/self_verification.toml, keys "game24.*"
# The study's number and value fields as its sentences write them, for telling them from an LLM's critique.
_SENTENCE_FIELDS = {"used": r"[\d, ]*", "expected": r"\[[\d', ]*\]", "value": r"(?:-?\d+(?:/\d+)?|zoo|nan)"}
_FEEDBACK_KEYS = ("game24.feedback.numbers", "game24.feedback.value", "game24.feedback.malformed")
OPERATIONS = "*+-/"
CANDIDATE_KINDS = ("correct", "ablated_op", "ablated_number", "random")
SOLVABLE_PUZZLES = 1362  # distinct solvable multisets of four numbers in 1..13 (all of them are in 24.csv)
UNSOLVABLE = Path(__file__).resolve().parent / "data" / "game24_unsolvable.txt"


READERS = ("study", "lenient")
# Which version of the study's Game of 24 code the domain follows: "2024" (January 2024, @b583c3c9, what 000
# prints) or "2023", the code of 2023-10-30 (@c9a5d349) that made GPT-4's 2023 Game of 24 recordings: its own
# generation prompt (`game24.2023.generate`), and the trace joined by "\n" (`response_generation.py@c9a5d349:132`).
PROTOCOLS = ("2024", "2023")
ALL_ERRORS_NOTE = ("no all-errors feedback for Game of 24 in the self-verification study (\"due to the simplicity of "
                   "game of 24, we do not implement a third feedback level\", 000:238)")
# The study's `fix_expression`: hand-made repairs it applied before sympy (kstechly/gpt-and-i `game24.py`).
_STUDY_FIXES = (("x", "*"), ("\u00f7", "/"), ("\u00d7", "*"), ("[", "("), ("]", ")"))


def study_expression(text: str, protocol: str = "2024") -> str:
    """The expression the study read from an answer (`check_answer`): the first line of the stripped text,
    lower-cased, before any "=" (@b583c3c9); the 2023 code (@c9a5d349:20) read the last line instead, without
    "answer: ". Nothing else of the answer counts."""
    if protocol == "2023":
        return (text or "").strip().split("\n")[-1].lower().replace("answer: ", "").split("=")[0]
    return (text or "").strip().split("\n")[0].lower().split("=")[0]


def study_check(numbers: list[int], text: str, texts: PromptSet | None = None, protocol: str = "2024") -> Verdict:
    """The study's verdict on an answer, in its order (kstechly/gpt-and-i `game24.check_answer`): the numbers
    (every digit run of the expression, as a multiset) first, then the value of the expression, repaired by the
    2024 code's `fix_expression` (the 2023 code, `protocol` "2023", had none). Our exact arithmetic replaces
    sympy: what sympy could not simplify is malformed here too; a division by zero gives sympy's value and name
    for it, "zoo" or "nan" (`arith.study_value`); unary signs and powers, which sympy would evaluate, are
    malformed here (never seen in the study's answers)."""
    texts = texts or DEFAULT[SET]
    expression = study_expression(text, protocol).strip()
    found = re.findall(r"\d+", expression)
    if sorted(found) != sorted(str(n) for n in numbers):
        sentence = texts.render("game24.feedback.numbers", used=", ".join(found),
                                expected=str([str(n) for n in numbers]))  # fmt: skip
        return Verdict("invalid", (sentence,), expression)
    for old, new in _STUDY_FIXES if protocol != "2023" else ():
        expression = expression.replace(old, new)
    try:
        value = arith.study_value(arith.parse_expression(expression))
    except arith.MalformedExpression:
        return Verdict("malformed", (texts.text("game24.feedback.malformed"),), expression)
    if value != 24:
        return Verdict("invalid", (texts.render("game24.feedback.value", value=value),), expression)
    return Verdict("valid", (), expression)


def check(numbers: list[int], expression: str | None, texts: PromptSet | None = None) -> Verdict:
    """Soundly judge an extracted expression: exactly `numbers` as a multiset, only `+ - * /`, value 24."""
    return _judge(numbers, expression, texts or DEFAULT[SET])[0]


def _judge(numbers: list[int], expression: str | None, texts: PromptSet) -> tuple[Verdict, str | None]:
    """The verdict on an extracted expression and its canonical form, from one parse; its error sentences
    are the study's (`texts`)."""
    malformed = texts.text("game24.feedback.malformed")
    if expression is None:
        return Verdict("malformed", (malformed,), None), None
    try:
        tree = arith.parse_expression(expression)
    except arith.MalformedExpression:
        return Verdict("malformed", (malformed,), expression), None
    canonical = arith.canonical_form(tree)
    used = arith.numbers_in(tree)
    errors = []
    if sorted(used) != sorted(numbers):
        expected = str([str(n) for n in numbers])
        errors.append(texts.render("game24.feedback.numbers", used=", ".join(map(str, used)), expected=expected))
    try:
        value = arith.evaluate(tree)
    except arith.MalformedExpression:
        return Verdict("malformed", (*errors, malformed), expression), canonical
    if value != 24:
        errors.append(texts.render("game24.feedback.value", value=value))
    return Verdict("invalid" if errors else "valid", tuple(errors), expression), canonical


@functools.cache
def unsolvable() -> frozenset[tuple[int, ...]]:
    """The sorted multisets of four numbers in 1..13 with no solution, from domains/data/game24_unsolvable.txt
    (what `arith.solve` finds for each: a search that cost every generated study's command ~10 ms a draw)."""
    lines = UNSOLVABLE.read_text(encoding="utf-8").splitlines()
    return frozenset(tuple(int(n) for n in line.split()) for line in lines if line and not line.startswith("#"))


def read_puzzles(path: Path) -> dict[str, Instance]:
    """Puzzles of a 24.csv (`Rank,Puzzles,...`) by rank; a bad row is a ValueError naming file and line."""
    puzzles: dict[str, Instance] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        rows = csv.reader(handle)
        header = next(rows, [])
        if header[:2] != ["Rank", "Puzzles"]:
            raise ValueError(f"{path}:1: expected a 'Rank,Puzzles,...' header, got {header[:2]}")
        for line, row in enumerate(rows, start=2):
            try:
                rank, numbers = str(int(row[0])), [int(n) for n in row[1].split()]
            except (IndexError, ValueError):
                raise ValueError(f"{path}:{line}: expected 'rank,n n n n,...', got {row[:2]}") from None
            if not numbers:
                raise ValueError(f"{path}:{line}: puzzle has no numbers")
            puzzles[rank] = Instance("game24", rank, {"numbers": numbers})
    return puzzles


class Game24(StudyForm):
    """The Game of 24 domain (see module docstring). `reader`: "study" (default) reads an answer as the study
    did (`study_check`), "lenient" finds the expression it commits to anywhere (`arith.extract_expression`).
    `verdict`: "lenient" (default, ours: `parse_json_verdict`) or "study" (the study's code: `study_verdicts`)
    reads an LLM verifier's reply."""

    name = "game24"
    candidate_kinds = CANDIDATE_KINDS
    # the study has every judge prompt but planning's swapped-order one
    purposes: Mapping[str, str | None] = {**dict.fromkeys(PURPOSES), "verify-swap": "no swapped-order prompt for "
                                          "Game of 24 (the self-verification paper's -S prompt is planning's)"}
    def __init__(self, prompts: Prompts = DEFAULT, reader: str = "study", form: str = "chat",
                 paper_levels: bool = False, verdict: str = "lenient", protocol: str = "2024") -> None:  # fmt: skip
        # `paper_levels`: only the feedback levels the study had (no all-errors feedback, 000:238); a scheme
        # asking for another is left out of this domain (`graphs.unsupported`). The shipped paper study sets it.
        self.unsupported_levels = {"all": ALL_ERRORS_NOTE} if paper_levels else {}
        if reader not in READERS:
            raise ValueError(f"game24 reader must be one of {', '.join(READERS)}, not {reader!r}")
        if form not in FORMS:
            raise ValueError(f"game24 form must be one of {', '.join(FORMS)}, not {form!r}")
        if verdict not in VERDICTS:
            raise ValueError(f"game24 verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}")
        if protocol not in PROTOCOLS:
            raise ValueError(f"game24 protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
        self.protocol = protocol
        self.reader = reader
        self.verdict = verdict
        self.form = form  # "transcript": every call as the study's code sent it (`study_transcript`)
        self.prompts = prompts
        self.texts = prompts[SET]
        self.handback = Backprompt.of(self.texts, "game24", _FEEDBACK_KEYS, _SENTENCE_FIELDS)
        # 2023: the loop ends at a reply holding one of these words, before any verifier or critic call
        self.give_up = tuple(self.texts.text("game24.2023.give-up").split()) if protocol == "2023" else ()

    def load(self, selection: str | None = None, path: Path | None = None) -> list[Instance]:
        ids = parse_selection(selection)
        if isinstance(ids, Generated):
            return self.generate(ids.n, ids.seed)
        source = resolve_data_path(self.name, path)
        if source.is_dir():
            source = source / "24.csv"
        return pick(read_puzzles(source), ids, source)

    def generate(self, n: int, seed: int) -> list[Instance]:
        """Distinct random solvable 4-number puzzles over 1..13; a prefix of a longer run with the same seed."""
        if n > SOLVABLE_PUZZLES:
            raise ValueError(f"there are only {SOLVABLE_PUZZLES} distinct solvable puzzles, not {n}")
        rng, seen, out, no_solution = random.Random(seed), set(), [], unsolvable()
        while len(out) < n:
            numbers = sorted(rng.randint(1, 13) for _ in range(4))
            if (key := tuple(numbers)) not in seen and key not in no_solution:
                seen.add(key)
                out.append(Instance(self.name, f"gen-{seed}-{len(out) + 1}", {"numbers": numbers}))
        return out

    def transcript_joins(self) -> tuple[str, str]:
        if self.protocol == "2023":  # "\n".join(response_trace.values()), c9a5d349:132
            return "", "\n"
        return END_TAG, ""

    def prompt(self, instance: Instance, style: str | None = None, shots: int | None = None) -> Messages:
        key = "game24.2023.generate" if self.protocol == "2023" else "game24.generate"
        return self._chat({"role": "user", "content": self.texts.render(key, numbers=_text(instance))})

    def parse(self, instance: Instance, text: str) -> str | None:
        if self.reader == "study":
            return study_expression(text, self.protocol).strip() or None
        return arith.extract_expression(text or "")

    def verify(self, instance: Instance, text: str) -> Verdict:
        return self.assess(instance, text)[0]

    def feedback(self, instance: Instance, verdict: Verdict, level: FeedbackLevel) -> str:
        """"" for a valid answer; the study's binary sentence; its first error sentence; all of them."""
        return leveled_feedback(verdict, level, self.texts.text("game24.feedback.binary"))

    def canonical(self, instance: Instance, text: str) -> str | None:
        return self.assess(instance, text)[1]

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        if self.reader == "study":
            verdict = study_check(instance.data["numbers"], text, self.texts, self.protocol)
            if any(word in (text or "") for word in self.give_up):  # response_generation.py@c9a5d349:109
                verdict = replace(verdict, final=True)
            try:
                canonical = arith.canonical_form(arith.parse_expression(verdict.answer or ""))
            except arith.MalformedExpression:
                canonical = None
            return verdict, canonical
        return _judge(instance.data["numbers"], self.parse(instance, text), self.texts)

    def candidate(self, instance: Instance, kind: str, rng: random.Random) -> str:
        """A candidate of the study's kinds: correct, ablated_op (one operator swapped), ablated_number (one
        number replaced by another in 1..12), random (shuffled numbers, random operators, left-nested)."""
        numbers = instance.data["numbers"]
        if kind == "random":
            order = rng.sample(numbers, len(numbers))
            text = str(order[0])
            for number in order[1:]:
                text = f"({text}{rng.choice(OPERATIONS)}{number})"
            return text
        correct = arith.solve(numbers)
        if correct is None:
            raise ValueError(f"game24 instance {instance.id} has no solution, so no {kind} candidate")
        if kind == "correct":
            return correct
        if kind == "ablated_number":
            old = rng.choice(numbers)
            new = rng.choice([n for n in range(1, 13) if n != old])
            return re.sub(rf"(?<!\d){old}(?!\d)", str(new), correct, count=1)
        if kind == "ablated_op":
            for _ in range(20):  # swapping e.g. (x*1) for (x/1) can stay correct; the study did not check
                old = rng.choice([op for op in OPERATIONS if op in correct])
                at = rng.choice([i for i, ch in enumerate(correct) if ch == old])
                text = correct[:at] + rng.choice([op for op in OPERATIONS if op != old]) + correct[at + 1:]
                if not check(numbers, text, self.texts).valid:
                    break
            return text
        raise ValueError(f"unknown game24 candidate kind {kind!r}: use one of {', '.join(CANDIDATE_KINDS)}")


    # ---- Judged: the study's LLM-verifier prompts (`domains.contract.Judged`) ----
    def judge_prompt(self, instance: Instance, purpose: str, answer: str) -> Messages:
        if purpose.startswith("verify"):
            return self._verification_prompt(instance, answer, verify_variant(purpose))
        # the loop's verifier ("critique", "critique-cot")
        if self.protocol == "2023" and purpose == "critique":
            return self._chat({"role": "user", "content": self._critique_2023(instance, answer)})
        key = "game24.critique-cot" if purpose == "critique-cot" else "game24.critique"
        if self.form == "transcript":  # the study's critic saw the answer as its loop kept it
            answer = study_answer(answer, END_TAG)
        return self._chat({"role": "user", "content": self.texts.render(key, numbers=_text(instance), answer=answer)})

    def _critique_2023(self, instance: Instance, answer: str) -> str:
        """The 2023 critic's query (`game24.2023.critique`), or for an answer the 2023 `check_answer` accepted
        its stop phrase, which `backprompt` returned first (c9a5d349:76-77) and the loop sent as the query."""
        answer = study_answer(answer, "")
        if study_check(instance.data["numbers"], answer, self.texts, "2023").valid:
            return self.texts.text("game24.2023.stop-phrase")
        return self.texts.render("game24.2023.critique", numbers=_text(instance), answer=answer)

    def judge_reply(self, instance: Instance, purpose: str, answer: str, reply: str) -> Judgement:
        if purpose.startswith("verify"):
            return self._read_verification(instance, answer, reply, verify_variant(purpose))
        if self.protocol == "2023" and purpose == "critique":  # the loop's own test (check_backprompt, l.162-164)
            reply = (reply or "").strip()
            found = self.texts.text("game24.2023.stop-phrase").rstrip(".").lower() in reply.lower()
            return Judgement(LLMVerdict(found, reply, parsed=bool(reply)))
        study = game24_verdict(purpose, reply)
        if self.verdict == "study":
            return Judgement(study)
        # our verdict; where the study's loop failed on the reply, or sent its own reading of it, the study's
        return Judgement(with_study_handling(parse_json_verdict(reply), study))

    def _verification_prompt(self, instance: Instance, text: str, variant: VerifyVariant = "default"
                            ) -> list[dict[str, str]]:  # fmt: skip
        """The verification-only study's prompts: default (value + verdict as JSON), "cot", "no-info" (the
        value only). Like the study, only the answer's first line is sent."""
        line = " " + (text or "").split("\n")[0]
        keys = {"default": "game24.verify", "cot": "game24.verify-cot", "no-info": "game24.verify-no-info"}
        if variant not in keys:
            raise ValueError(f"game24 has no {variant} verification prompt (planning domains do)")
        key = keys[variant]
        return self._chat({"role": "user", "content": self.texts.render(key, numbers=_text(instance), line=line)})

    def _read_verification(self, instance: Instance, text: str, reply: str, variant: VerifyVariant = "default"
                          ) -> Judgement:  # fmt: skip
        """The verdict (for "no-info": the stated value is 24, as the study scored it) and whether the stated
        "evaluation" is the expression's exact value (the appendix's "correct evaluation" column)."""
        claimed = claimed_evaluation(reply)
        value = expression_value((text or "").split("\n")[0])
        right = None if variant == "cot" else claimed is not None and value is not None and claimed == value
        if self.verdict == "study":
            verdict = game24_verdict("verify" if variant == "default" else f"verify-{variant}", reply)
        elif variant == "no-info":
            verdict = LLMVerdict(claimed == 24, (reply or "").strip(), parsed=claimed is not None)
        else:
            verdict = parse_json_verdict(reply)
        return Judgement(verdict, right)

    def backprompt(self, instance: Instance, critique: str) -> str:
        """The study's three wrappers (`backprompt.Backprompt`): pass/fail for the binary sentence (or no
        critique); its sound-feedback form when the critique is this domain's own error sentences; its
        LLM-critique form for any other critique. Each ends with the study's closing request."""
        end = self.texts.render("game24.backprompt.end", numbers=_text(instance))
        return self.handback(critique, end=end)


_FENCE = re.compile(r"```[a-zA-Z]*")
_CORRECT = re.compile(r"""(?<!\w)["']?correct["']?\s*[:=]\s*["']?(true|false|yes|no)\b""", re.IGNORECASE)
_FEEDBACK = re.compile(
    r"""["']feedback["']\s*:\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')""", re.IGNORECASE
)
_TRUTH = {"true": True, "yes": True, "false": False, "no": False}


def parse_json_verdict(text: str) -> LLMVerdict:
    """The `{"feedback": ..., "correct": bool}` verdict of the study's verifier prompts, read robustly.

    Reads the part after the last `[Answer]` tag (CoT prompt) when there is one, ignores markdown fences and
    surrounding prose, takes the last JSON object that has a "correct" key (tolerating single quotes, Python
    `True`/`False` and trailing commas), and falls back to a bare `correct: true|false`. No verdict at all
    counts as "wrong" with `parsed=False`. The critique is the "feedback" text when given, else the reply."""
    reply = (text or "").strip()
    body = _FENCE.sub("", reply.rsplit("[Answer]", 1)[-1])
    for data in json_objects(body):
        fields = {str(k).lower(): v for k, v in data.items()}
        verdict = fields.get("correct")
        if isinstance(verdict, str):
            verdict = _TRUTH.get(verdict.strip().lower())
        if isinstance(verdict, bool):
            feedback = fields.get("feedback")
            critique = feedback.strip() if isinstance(feedback, str) and feedback.strip() else reply
            return LLMVerdict(verdict, critique)
    if matches := _CORRECT.findall(body):
        found = _FEEDBACK.search(body)
        feedback = (found[1] or found[2] or "").strip() if found else ""
        return LLMVerdict(_TRUTH[matches[-1].lower()], feedback or reply)
    return LLMVerdict(False, reply, parsed=False)


def claimed_evaluation(reply: str) -> Fraction | None:
    """The "evaluation" value of the last JSON object in `reply` that states one ("24", 24, "8/3", 2.5)."""
    body = _FENCE.sub("", (reply or "").rsplit("[Answer]", 1)[-1])
    for data in json_objects(body):
        fields = {str(k).lower(): v for k, v in data.items()}
        value = fields.get("evaluation")
        if isinstance(value, bool) or value is None:
            continue
        try:
            return Fraction(str(value).strip())
        except (ValueError, ZeroDivisionError):
            return None
    return None


def expression_value(text: str) -> Fraction | None:
    """The exact value of an expression as the study read it (the text before any "="), None if it has none."""
    try:
        return arith.evaluate(arith.parse_expression(text.split("=")[0]))
    except arith.MalformedExpression:
        return None


def _text(instance: Instance) -> str:
    return " ".join(str(n) for n in instance.data["numbers"])


# The options `make_game24` takes beside `prompts` and `prompt_style` (`domains.options` types flags by it).
OPTIONS: dict[str, type] = {"reader": str, "form": str, "paper_levels": bool, "verdict": str, "protocol": str}


def make_game24(**options: Any) -> Game24:
    """The registry's factory: `reader` "study" (default: the study's first line before "=") or "lenient" (our
    reader, anywhere in the answer); `form` "chat" (default: chat turns) or "transcript" (the study's calls);
    `paper_levels` true leaves out the feedback levels the study did not have (all errors); `verdict` "lenient"
    (default, ours) or "study" (the study's code) reads the LLM verifier's replies; `protocol` "2024" (default)
    or "2023": which version of the study's code (`PROTOCOLS`);
    Game of 24 has one prompt style, so `prompt_style` is accepted and unused; `prompts` are the prompt sets to
    read (default: the built-in ones)."""
    options.pop("prompt_style", None)
    prompts = options.pop("prompts", None) or DEFAULT
    reader = options.pop("reader", "study")
    form = options.pop("form", "chat")
    paper_levels = options.pop("paper_levels", False)
    verdict = options.pop("verdict", "lenient")
    protocol = options.pop("protocol", "2024")
    if options:
        raise ValueError(
            f"game24 takes no options {sorted(options)} (only reader, form, paper_levels, verdict, protocol, prompts)"
        )
    return Game24(prompts, str(reader), str(form), bool(paper_levels), str(verdict), str(protocol))
