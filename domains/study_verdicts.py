"""The self-verification study's own reading of its LLM verifier's replies (kstechly/gpt-and-i), for Game of 24
and colouring: the `verdict = "study"` domain option, beside our readers (`verdict = "lenient"`, the default).

Each function does what the study's code did with the reply, and where that code raised (a reply it could not
parse, a key missing from its JSON) the verdict is "unreadable": invalid with `parsed=False`, recorded like any
other verdict, never an exception. Nothing here evaluates the reply: `json.loads` reads it, as the study did.
Where the raise was in a loop's critic turn, the verdict also says `fails_run`: the study's loop sent nothing
more for that instance (`response_generation.py@b583c3c9:92-96` marks it failed; @d883df86:99-100 has no `try`
around `backprompt`, so the run crashed) and its record ends with the last generated answer, which its `evaluate`
scores (`game24.py@b583c3c9:82-84`: `responses[::2]`, the last one). `with_study_handling` gives our reader
the same ending.

- Game of 24 loop critic (`critique`): `json.loads` of the whole reply, its "correct" key taken by truth value,
  its "feedback" handed back (`domain_utils/game24.py` @b583c3c9 l.128-133: the January code whose loops the
  paper reports).
- Game of 24 chain-of-thought critic (`critique-cot`): the first `{...}` of the reply, lower-cased, through
  `json.loads`; a reply without one is "not correct" with the whole reply as feedback, as that code chose
  (`game24.py` @d883df86 l.192-205, the only commit with this prompt).
- Game of 24 verification-only (`verify`, `verify-cot`, `verify-no-info`): `json.loads` of the whole reply
  (`game24_verification.py` @d883df86 `evaluate`: the `[Answer]` split is commented out, so a chain-of-thought
  reply with its thoughts is unreadable); no-info: the stated "evaluation" equals 24.0 (`float(...)`, l.131),
  the verdict that function scores, given only when the reply also has a "correct" key: l.134-137 index
  `claim['correct']` for every purpose, so a reply that follows the no-info prompt (it asks for "evaluation"
  only) made `evaluate` raise, and the study scored no verdict for it.
- Colouring (`verify`, `critique`): valid iff the reply contains "Verifier confirmed success." as written
  (`color_verification.py` @d883df86 l.56, `graph_coloring.py` @d883df86 l.174); it reads every reply.
- Colouring chain of thought (`verify-cot`, `critique-cot`): `parse_messy_json` (`color_verification.py`
  @d883df86 l.68-80): the text after "[Answer]" (else after "final answer is:"), lower-cased; its "Wrong Edges",
  "All Vertices Colored", "Optimal Or Less" and "Correct" lines rebuilt into one JSON object; its "correct".
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from critiquebench.domains.contract import LLMVerdict

VERDICTS = ("lenient", "study")
COLORING_SUCCESS = "Verifier confirmed success."  # graph_coloring.STOP_PHRASE @d883df86


class _Unreadable(Exception):
    """Where the study's code raised on the reply."""


def _unreadable(reply: str, fails_run: bool = False) -> LLMVerdict:
    return LLMVerdict(False, reply, parsed=False, fails_run=fails_run)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise _Unreadable from None


def _key(data: Any, key: str) -> Any:
    """`data[key]`, raising where the study's subscript raised (a missing key, a list, a number)."""
    try:
        return data[key]
    except (KeyError, TypeError, IndexError):
        raise _Unreadable from None


def game24_verdict(purpose: str, reply: str) -> LLMVerdict:
    """The study's verdict on a Game of 24 verifier's `reply` for `purpose` (see the module doc)."""
    text = reply or ""
    try:
        if purpose == "critique-cot":
            try:  # the study caught a failure of these two steps only: "not correct", the reply as feedback
                data = _loads(_first_braces(text).lower())
            except _Unreadable:  # `model_response`, as `send_query` stripped it
                return _unreadable(text.strip())
            return _with_feedback(bool(_key(data, "correct")), data, text)
        data = _loads(text)
        if purpose == "verify-no-info":
            try:
                said = float(_key(data, "evaluation"))
            except (TypeError, ValueError, OverflowError):
                raise _Unreadable from None
            _key(data, "correct")  # l.134: `claim['correct']` raised on a reply without it
            return LLMVerdict(said == 24.0, text.strip())
        valid = bool(_key(data, "correct"))
        if purpose.startswith("verify"):
            return LLMVerdict(valid, text.strip())
        return _with_feedback(valid, data, text)
    except _Unreadable:
        # in a loop (critique, critique-cot after its JSON was read) the raise ended the study's instance
        return _unreadable(text.strip(), fails_run=purpose.startswith("critique"))


def with_study_handling(ours: LLMVerdict, study: LLMVerdict) -> LLMVerdict:
    """Our reader's verdict `ours` (`verdict = "lenient"`) with what the study's loop did with the same reply
    (`study`, this module's reading): where the study's code failed on it, the run ends there (`fails_run`), as
    the study's did; where both readings say "not correct" and the study read it, the critique handed back is
    the study's (its CoT loop lower-cased it, or handed back the whole reply where it found no JSON:
    `game24.py@d883df86:192-205`), so the next prompt is the one it sent.
    Where the readings part (ours reads a verdict out of prose or a fence, the study's code did not), ours
    stands: that is the documented difference of the lenient reader."""
    if study.fails_run:
        return replace(ours, fails_run=True)
    if not study.says_valid and not ours.says_valid:
        return replace(ours, critique=study.critique)
    return ours


def _first_braces(text: str) -> str:
    """What `re.search("{([^}]*)}", text).group(0)` matched (game24.py @d883df86 l.194): the first "{" up to the
    first "}" after it, found in linear time; "" (no JSON) where the pattern found nothing."""
    start = text.find("{")
    end = text.find("}", start) if start >= 0 else -1
    return text[start : end + 1] if end >= 0 else ""


def _with_feedback(valid: bool, data: Any, reply: str) -> LLMVerdict:
    """The loop's verdict and the critique it handed back: the "feedback" text (a reply judged invalid without
    one made the study's `backprompt +=` raise: unreadable)."""
    if valid:
        return LLMVerdict(True, reply.strip())
    feedback = _key(data, "feedback")
    if not isinstance(feedback, str):
        raise _Unreadable
    return LLMVerdict(False, feedback)


def coloring_verdict(purpose: str, reply: str) -> LLMVerdict:
    """The study's verdict on a colouring verifier's `reply` for `purpose` (see the module doc)."""
    text = (reply or "").strip()
    if not purpose.endswith("-cot"):
        return LLMVerdict(COLORING_SUCCESS in text, text)
    try:
        return LLMVerdict(bool(_key(messy_json(text), "correct")), text)
    except _Unreadable:  # the loop's `parse_messy_json(...)['correct']` has no `try` (graph_coloring.py@d883df86:161)
        return _unreadable(text, fails_run=purpose == "critique-cot")


def messy_json(reply: str) -> Any:
    """`parse_messy_json` of `color_verification.py` @d883df86: the four answer lines as one JSON object."""
    for tag in ("[Answer]", "final answer is:"):
        if tag in reply:
            answer = reply.split(tag)[1].lower()
            break
    else:
        raise _Unreadable

    def line(label: str) -> str:
        if label not in answer:
            raise _Unreadable
        return answer.split(label)[1].split("\n")[0].strip()

    edges = line("wrong edges:").replace("(", "[").replace(")", "]")
    text = (f'{{"wrong_edges": {edges}, "all_verts":{line("all vertices colored:")}, '
            f'"opt":{line("optimal or less:")}, "correct":{line("correct:")}}}')  # fmt: skip
    return _loads(text)
