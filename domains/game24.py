"""Game of 24 as in "On the self-verification limitations of LLMs" (Stechly, Valmeekam, Kambhampati 2024).

Prompts, feedback sentences and candidate kinds follow the study's code (kstechly/gpt-and-i,
`domain_utils/game24.py` and `game24_verification.py`); verification is exact and never evaluates text as code
(see `arith`). Instance ids are the puzzle's rank in 24.csv ("901"), or "gen-SEED-i" (i from 1) when
generated.
"""

from __future__ import annotations

import csv
import random
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

from critiquebench.domains import arith
from critiquebench.domains.base import (
    FeedbackLevel,
    Instance,
    Judgement,
    LLMVerdict,
    Verdict,
    VerifyVariant,
    leveled_feedback,
)
from critiquebench.domains.datasets import Generated, parse_selection, pick, resolve_data_path
from critiquebench.domains.llm_json import json_objects
from critiquebench.domains.sentences import only_sentences

END_TAG = "[ANSWER END]"
PROMPT_START = (
    "Use numbers and basic arithmetic operations (+ - * /) to obtain 24. You must write your response. "
    f"Write your answer first, followed by {END_TAG}\n"
)
BINARY_FEEDBACK = "This is not correct."
MALFORMED = "This expression is malformed."
VERIFIER_INTRO = (
    "Using each of the numbers {numbers} exactly as many times as they appear in the list and the basic "
    "arithmetic operations (+ - * /), it is possible to write an expression that evaluates to 24. Please "
    "check if the following expression uses only the correct numbers (and no others) and evaluates to 24: "
    "{answer}"
    "\nIf it is not correct, please give feedback on what is wrong and how to correct it."
)
VERIFIER_JSON = (
    '\nRespond only in JSON format as described below:\n{\n   "feedback": "feedback",\n   "correct": boolean}'
    "\nEnsure that Python's json.loads can parse this."
)
VERIFIER_COT = (
    "\nFirst, think step by step. Check that the expression uses only the correct numbers, has exactly the "
    "right number of instances each number, and evaluates to 24. Then decide what your final answer is."
    "\nWhen outputting your final answer, first print the [Answer] tag, then put your final answer after the "
    "[Answer] tag and respond only in JSON format as described below:"
    '\n{\n   "feedback": "feedback",\n   "correct": boolean}'
    "\nEnsure that Python's json.loads can parse this.\n\nLet's think step by step.\n[Thoughts]"
)
# The verification-only study's prompts (`game24_verification.generate`). Its default prompt asks for the
# expression's value and a verdict without naming the numbers: the code builds the "Using each of the numbers"
# sentence and then overwrites it, so the numbers were never sent (the paper's appendix shows them). The
# study's candidate files hold "KIND EXPR" lines and the prompt takes the text after KIND, so every expression
# is sent after a space ("24:  (1+2)*8"); `verification_prompt` keeps that byte for byte.
VERIFY_EVALUATE = (
    "Please check if the following expression uses only the given numbers (and no others) and evaluates to "
    "24: {line}\n"
    '\nRespond only in JSON format as described below:\n{{\n   "evaluation": "number the expression evaluated '
    'to",\n   "correct": boolean}}\nEnsure that Python\'s json.loads can parse this.'
    "Do not provide anything else in your response."
)
VERIFY_NO_INFO = (
    "Please evaluate the following expression: {line}\n"
    '\nRespond only in JSON format as described below:\n{{\n   "evaluation": "number the expression evaluated '
    'to"}}\nEnsure that Python\'s json.loads can parse this.'
    "Do not provide anything else in your response."
)
VERIFY_COT = (
    "Using each of the numbers {numbers} exactly as many times as they appear in the list and the basic "
    "arithmetic operations (+ - * /), it is possible to write an expression that evaluates to 24. Please "
    "check if the following expression uses only the correct numbers (and no others) and evaluates to 24: "
    "{line}\n\nIf it is not correct, please give feedback on what is wrong and how to correct it."
    + VERIFIER_COT.replace("{", "{{").replace("}", "}}")
)
OPERATIONS = "*+-/"
_SOUND_SENTENCE = re.compile(
    r"This expression consists of the numbers [\d, ]*, but it has to consist of only and exactly "
    r"\[[\d', ]*\]\.|"
    r"This expression evaluates to -?\d+(?:/\d+)? instead of 24\.|This expression is malformed\."
)
CANDIDATE_KINDS = ("correct", "ablated_op", "ablated_number", "random")
SOLVABLE_PUZZLES = 1362  # distinct solvable multisets of four numbers in 1..13 (all of them are in 24.csv)


def backprompt_end(numbers: str) -> str:
    """The study's closing request of every backprompt."""
    return (
        f"Using the numbers {numbers} please provide a correct expression that evaluates to 24. "
        f"Write your answer first. At the end of your answer, write {END_TAG}\nAnswer: "
    )


def check(numbers: list[int], expression: str | None) -> Verdict:
    """Soundly judge an extracted expression: exactly `numbers` as a multiset, only `+ - * /`, value 24."""
    return _judge(numbers, expression)[0]


def _judge(numbers: list[int], expression: str | None) -> tuple[Verdict, str | None]:
    """The verdict on an extracted expression and its canonical form, from one parse."""
    if expression is None:
        return Verdict("malformed", (MALFORMED,), None), None
    try:
        tree = arith.parse_expression(expression)
    except arith.MalformedExpression:
        return Verdict("malformed", (MALFORMED,), expression), None
    canonical = arith.canonical_form(tree)
    used = arith.numbers_in(tree)
    errors = []
    if sorted(used) != sorted(numbers):
        errors.append(
            f"This expression consists of the numbers {', '.join(map(str, used))}, but it has to consist of "
            f"only and exactly {[str(n) for n in numbers]}."
        )
    try:
        value = arith.evaluate(tree)
    except arith.MalformedExpression:
        return Verdict("malformed", (*errors, MALFORMED), expression), canonical
    if value != 24:
        errors.append(f"This expression evaluates to {value} instead of 24.")
    return Verdict("invalid" if errors else "valid", tuple(errors), expression), canonical


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


class Game24:
    """The Game of 24 domain (see module docstring)."""

    name = "game24"
    candidate_kinds = CANDIDATE_KINDS

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
        rng, seen, out = random.Random(seed), set(), []
        while len(out) < n:
            numbers = sorted(rng.randint(1, 13) for _ in range(4))
            if tuple(numbers) not in seen and arith.solve(numbers):
                seen.add(tuple(numbers))
                out.append(Instance(self.name, f"gen-{seed}-{len(out) + 1}", {"numbers": numbers}))
        return out

    def prompt(self, instance: Instance, style: str | None = None) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"{PROMPT_START}Input: {_text(instance)}\nAnswer: "}]

    def parse(self, instance: Instance, text: str) -> str | None:
        return arith.extract_expression(text or "")

    def verify(self, instance: Instance, text: str) -> Verdict:
        return check(instance.data["numbers"], self.parse(instance, text))

    def feedback(self, instance: Instance, verdict: Verdict, level: FeedbackLevel) -> str:
        """"" for a valid answer; the study's binary sentence; its first error sentence; all of them."""
        return leveled_feedback(verdict, level, BINARY_FEEDBACK)

    def canonical(self, instance: Instance, text: str) -> str | None:
        return self.assess(instance, text)[1]

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        return _judge(instance.data["numbers"], self.parse(instance, text))

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
                if not check(numbers, text).valid:
                    break
            return text
        raise ValueError(f"unknown game24 candidate kind {kind!r}: use one of {', '.join(CANDIDATE_KINDS)}")

    def verifier_prompt(self, instance: Instance, text: str, cot: bool = False) -> list[dict[str, str]]:
        content = VERIFIER_INTRO.format(numbers=_text(instance), answer=text) + (VERIFIER_COT if cot else
                                                                                  VERIFIER_JSON)
        return [{"role": "user", "content": content}]

    def parse_llm_verdict(self, text: str) -> LLMVerdict:
        return parse_json_verdict(text)

    def verification_prompt(self, instance: Instance, text: str, variant: VerifyVariant = "default"
                            ) -> list[dict[str, str]]:  # fmt: skip
        """The verification-only study's prompts: default (value + verdict as JSON), "cot", "no-info" (the
        value only). Like the study, only the answer's first line is sent."""
        line = " " + (text or "").split("\n")[0]
        template = {"default": VERIFY_EVALUATE, "cot": VERIFY_COT, "no-info": VERIFY_NO_INFO}[variant]
        return [{"role": "user", "content": template.format(numbers=_text(instance), line=line)}]

    def read_verification(self, instance: Instance, text: str, reply: str, variant: VerifyVariant = "default"
                          ) -> Judgement:  # fmt: skip
        """The verdict (for "no-info": the stated value is 24, as the study scored it) and whether the stated
        "evaluation" is the expression's exact value (the appendix's "correct evaluation" column)."""
        claimed = claimed_evaluation(reply)
        value = expression_value((text or "").split("\n")[0])
        right = None if variant == "cot" else claimed is not None and value is not None and claimed == value
        if variant == "no-info":
            verdict = LLMVerdict(claimed == 24, (reply or "").strip(), parsed=claimed is not None)
        else:
            verdict = parse_json_verdict(reply)
        return Judgement(verdict, right)

    def backprompt(self, instance: Instance, critique: str) -> str:
        """The study's wrappers: pass/fail for the binary sentence (or no critique); its sound-feedback form
        "Feedback: This is not correct. <errors> ..." when the critique is this domain's own error sentences;
        its LLM-critique form "Feedback: This is not correct.\\n<critique>\\n\\nWith this feedback, please try
        again. ..." for any other critique."""
        critique = (critique or "").strip()
        if critique in ("", BINARY_FEEDBACK):
            return f"Feedback: {BINARY_FEEDBACK} {backprompt_end(_text(instance))}"
        if only_sentences(_SOUND_SENTENCE, critique):
            return f"Feedback: {BINARY_FEEDBACK} {critique} {backprompt_end(_text(instance))}"
        return (f"Feedback: {BINARY_FEEDBACK}\n{critique}\n\nWith this feedback, please try again. "
                f"{backprompt_end(_text(instance))}")


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


def make_game24(**options: Any) -> Game24:
    """The registry's factory; Game of 24 has one prompt style, so `prompt_style` is accepted and unused."""
    options.pop("prompt_style", None)
    if options:
        raise ValueError(f"game24 takes no options {sorted(options)}")
    return Game24()
