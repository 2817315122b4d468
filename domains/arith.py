"""Safe arithmetic for Game of 24: parse, evaluate, canonicalise and extract `+ - * /` expressions.

LLM text is never evaluated as code. `parse_expression` first checks the characters (digits, whitespace,
`( ) + - * /` only, at most `MAX_CHARS`), then parses with `ast` in "eval" mode (parsing builds a tree and
runs nothing) and walks a whitelist: binary `+ - * /` and int literals. Everything else (names, calls,
attributes, `**`, `//`, floats, strings, unary signs, unbalanced parentheses) is `MalformedExpression`. Values
are exact `Fraction`s, so `8/(3-8/3)` is exactly 24.

The parse holds a process-wide lock: CPython 3.11's AST constructor keeps its recursion count in interpreter
state shared by all threads, and parses in concurrent run threads (a Python finaliser run by the garbage
collector mid-parse switches threads) corrupt it: `SystemError: AST constructor recursion depth mismatch`
(python/cpython#106905, tests/test_arith_threads.py forces it). A parse of at most `MAX_CHARS` takes
microseconds, so the lock costs nothing measurable.

Unary minus/plus is rejected: the game's operators combine two numbers, and accepting `-` as a sign would let
an answer negate a number for free.
"""

from __future__ import annotations

import ast
import re
import threading
from fractions import Fraction

MAX_CHARS = 200
MAX_NODES = 100

_ALLOWED_CHARS = re.compile(r"[\d\s()+\-*/]*")
_PARSE_LOCK = threading.Lock()  # see the module's docstring (python/cpython#106905)
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


class MalformedExpression(ValueError):
    """The text is not a well-formed `+ - * /` expression over integers (or divides by zero)."""


def parse_expression(text: str) -> ast.expr:
    """The validated syntax tree of `text`; raises `MalformedExpression` for anything off the whitelist."""
    text = text.strip()
    if not text or len(text) > MAX_CHARS or not _ALLOWED_CHARS.fullmatch(text):
        raise MalformedExpression(f"not an arithmetic expression: {text[:40]!r}")
    try:
        with _PARSE_LOCK:
            tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise MalformedExpression(f"cannot parse {text[:40]!r}") from exc
    if _check(tree) > MAX_NODES:
        raise MalformedExpression("expression too long")
    return tree


def _check(node: ast.expr) -> int:
    """The node count of a whitelisted tree (the character bound keeps the recursion shallow)."""
    if type(node) is ast.BinOp and type(node.op) in _OPS:
        return 1 + _check(node.left) + _check(node.right)
    if type(node) is ast.Constant and type(node.value) is int:
        return 1
    what = type(node.op).__name__ if isinstance(node, (ast.BinOp, ast.UnaryOp)) else type(node).__name__
    raise MalformedExpression(f"{what} is not allowed")


def evaluate(tree: ast.expr) -> Fraction:
    """The exact value of a validated tree; division by zero is `MalformedExpression`."""
    return Fraction(_value(tree))


def _value(tree: ast.expr) -> int | Fraction:
    # ints while the values stay whole: Fraction arithmetic costs ~10x more
    if type(tree) is ast.Constant:
        return tree.value
    left, right = _value(tree.left), _value(tree.right)
    op = type(tree.op)
    if op is ast.Add:
        return left + right
    if op is ast.Sub:
        return left - right
    if op is ast.Mult:
        return left * right
    if right == 0:
        raise MalformedExpression("division by zero")
    if type(left) is int and type(right) is int and left % right == 0:
        return left // right
    return Fraction(left) / right


# sympy's names for the values a division by zero leaves (`str(sympy.zoo)`, `str(sympy.nan)`): the self-verification
# study's feedback printed them ("This expression evaluates to zoo instead of 24.", gpt-and-i game24.py@c9a5d349:26).
ZOO = "zoo"
NAN = "nan"
StudyValue = Fraction | str  # a Fraction, ZOO or NAN


def study_value(tree: ast.expr) -> StudyValue:
    """The value the study's `sympy.simplify` gave a validated tree, from exact arithmetic: a Fraction, or where a
    division by zero enters, sympy's complex infinity ZOO or NAN, combined by sympy's rules (x/0 is ZOO for
    x != 0, 0/0 NAN; ZOO + x and ZOO * x (x != 0) stay ZOO; ZOO + ZOO, ZOO - ZOO, ZOO * 0 and ZOO / ZOO are NAN;
    x / ZOO is 0). The text is never evaluated as code."""
    if type(tree) is ast.Constant:
        return Fraction(tree.value)
    left, right = study_value(tree.left), study_value(tree.right)
    if NAN in (left, right):
        return NAN
    op = type(tree.op)
    if isinstance(left, Fraction) and isinstance(right, Fraction):
        if op is ast.Div and right == 0:
            return NAN if left == 0 else ZOO
        return left + right if op is ast.Add else left - right if op is ast.Sub else left * right if op is ast.Mult \
            else left / right  # fmt: skip
    if op in (ast.Add, ast.Sub):  # at least one is ZOO
        return NAN if left == right == ZOO else ZOO
    if op is ast.Mult:
        return NAN if 0 in (left, right) else ZOO
    if left == right == ZOO:  # ZOO / ZOO
        return NAN
    return ZOO if left == ZOO else Fraction(0)  # ZOO / x (ZOO / 0 too), x / ZOO


def numbers_in(tree: ast.expr) -> list[int]:
    """The integer literals of a validated tree, left to right."""
    if isinstance(tree, ast.Constant):
        return [tree.value]
    assert isinstance(tree, ast.BinOp)
    return numbers_in(tree.left) + numbers_in(tree.right)


def canonical_form(tree: ast.expr) -> str:
    """A string equal for expressions equal up to commutativity and associativity of `+`/`*` (with `-`/`/`
    folded in as signs): `(6-1)*4+4`, `4+4*(6-1)` and `4 + (4*(6-1))` all give `4+4*(6-1)`."""
    if isinstance(tree, ast.Constant):
        return str(tree.value)
    assert isinstance(tree, ast.BinOp)
    if isinstance(tree.op, (ast.Add, ast.Sub)):
        terms: list[tuple[bool, str]] = []
        _flatten(tree, True, (ast.Add, ast.Sub), terms, parens=False)
        return _join(terms, "+", "-")
    factors: list[tuple[bool, str]] = []
    _flatten(tree, True, (ast.Mult, ast.Div), factors, parens=True)
    return _join(factors, "*", "/")


def _flatten(node: ast.expr, positive: bool, ops: tuple[type, type], out: list[tuple[bool, str]],
             parens: bool) -> None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ops):
        _flatten(node.left, positive, ops, out, parens)
        _flatten(node.right, positive if isinstance(node.op, ops[0]) else not positive, ops, out, parens)
        return
    text = canonical_form(node)
    is_sum = isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))
    out.append((positive, f"({text})" if parens and is_sum else text))


def _join(items: list[tuple[bool, str]], plus: str, minus: str) -> str:
    positive = sorted(text for sign, text in items if sign) or ["0" if plus == "+" else "1"]
    negative = sorted(text for sign, text in items if not sign)
    return plus.join(positive) + "".join(minus + text for text in negative)


def solve(numbers: list[int], target: int = 24) -> str | None:
    """An expression using each number exactly once that equals `target`, or None (exhaustive).

    The search runs on floats for speed (remembering value multisets that failed) and every hit is confirmed
    with exact `Fraction` arithmetic, so a rounding coincidence is never returned; with values this small no
    exact solution is missed."""
    found = _search([float(n) for n in numbers], list(numbers), target, set())
    return _render(found) if found is not None else None


_Tree = int | tuple  # an int, or (op, left, right)


def _search(values: list[float], trees: list[_Tree], target: int, failed: set[tuple[float, ...]]
            ) -> _Tree | None:
    if len(values) == 1:
        if abs(values[0] - target) < 1e-6 and _exact(trees[0]) == target:
            return trees[0]
        return None
    key = tuple(sorted(round(v, 9) for v in values))
    if key in failed:
        return None
    for i in range(len(values)):
        for j in range(i + 1, len(values)):
            a, b, x, y = values[i], values[j], trees[i], trees[j]
            rest = [k for k in range(len(values)) if k not in (i, j)]
            options = [(a + b, ("+", x, y)), (a * b, ("*", x, y)), (a - b, ("-", x, y)), (b - a, ("-", y, x))]
            if b:
                options.append((a / b, ("/", x, y)))
            if a:
                options.append((b / a, ("/", y, x)))
            for value, tree in options:
                found = _search([*(values[k] for k in rest), value], [*(trees[k] for k in rest), tree],
                                target, failed)
                if found is not None:
                    return found
    failed.add(key)
    return None


def _exact(tree: _Tree) -> Fraction | None:
    if isinstance(tree, int):
        return Fraction(tree)
    op, left, right = tree
    a, b = _exact(left), _exact(right)
    if a is None or b is None or (op == "/" and b == 0):
        return None
    return a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else a / b


def _render(tree: _Tree, parent: str = "", right: bool = False) -> str:
    """Infix text with only the parentheses precedence needs."""
    if isinstance(tree, int):
        return str(tree)
    op, left, rhs = tree
    text = f"{_render(left, op)}{op}{_render(rhs, op, right=True)}"
    low = op in ("+", "-")
    needs = (parent in ("*", "/") and low) or (right and parent == "-" and low) or (right and parent == "/")
    return f"({text})" if needs else text


# --- answer extraction from free text -----------------------------------------------------------------------

_ANSWER_END = re.compile(r"\[ANSWER END\]", re.IGNORECASE)
_END_MARK = "\x00"
_ANSWER_LABEL = re.compile(r"answer\s*(?:is\b|:|=)", re.IGNORECASE)
# LaTeX delimiters and spacing go; × ÷ − (and kin) become * / -; square brackets become parentheses.
_SYMBOL = re.compile(r"\\times|\\cdot|\\div|\\left|\\right|\\[()\[\],!;]|[$`×∗·⋅✕✖÷∕−–\[\]]")
_SYMBOL_TEXT = {"\\times": "*", "\\cdot": "*", "\\div": "/", "×": "*", "∗": "*", "·": "*", "⋅": "*", "✕": "*",
                "✖": "*", "÷": "/", "∕": "/", "−": "-", "–": "-", "[": "(", "]": ")"}
_BOLD = re.compile(r"(?<![\w)])\*\*|\*\*(?![\w(])")  # markdown bold, but not `**` between operands
_TIMES_X = re.compile(r"(?<=[\d)])\s*[xX]\s*(?=[\d(])")  # "4 x 6"
_BULLET = re.compile(r"^[ \t]*(?:[-+*•]|\d+[.)])[ \t]+", re.MULTILINE)
_RUN = re.compile(r"(?:\d+(?:\.\d+)?|[ \t()+\-*/])+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_OPERATOR = re.compile(r"\d\s*\)*\s*[+\-*/]")


def extract_expression(text: str) -> str | None:
    """The arithmetic expression a free-text answer commits to, or None.

    The rule: symbols are normalised (× ÷ − LaTeX `\\times`/`\\div`, backticks, markdown bold, `x` between
    numbers, square brackets); candidates are maximal runs of digits, spaces, parentheses and `+ - * /` that
    hold at least two numbers and an operator (so `= 24`, `Input: 1 1 4 6` and prose are never candidates;
    an unmatched ")" ending a run closes prose and is dropped, an unmatched "(" stays and is malformed).
    Only text before `[ANSWER END]` is read when that holds a candidate; then, if a label such as "Answer:"
    or "the answer is" is followed by a candidate, only text after the last label. Of the remaining
    candidates the one with the most numbers wins (the full expression beats its own worked steps such as
    `5*4+4`), ties going to the last one (a model's later correction beats its earlier attempt).
    """
    text = _ANSWER_END.sub(_END_MARK, text)  # before "[" becomes "("
    text = _SYMBOL.sub(lambda m: _SYMBOL_TEXT.get(m[0], ""), text)
    text = _BULLET.sub("", _TIMES_X.sub("*", _BOLD.sub("", text)))
    found: list[tuple[int, str]] = []
    if _END_MARK in text:
        head = text.split(_END_MARK, 1)[0]
        found = _candidates(head)
        text = head if found else text.replace(_END_MARK, "\n")
    labels = list(_ANSWER_LABEL.finditer(text))
    labelled = _candidates(text[labels[-1].end():]) if labels else []
    found = labelled or found or _candidates(text)
    if not found:
        return None
    best = max(count for count, _ in found)
    return [run for count, run in found if count == best][-1]


def _candidates(text: str) -> list[tuple[int, str]]:
    """(number count, run) of the runs that can be an expression, in order."""
    out = []
    for run in _RUN.findall(text):
        run = _trim_parens(run.strip())
        count = len(_NUMBER.findall(run))
        if count >= 2 and _OPERATOR.search(run):
            out.append((count, run))
    return out


def _trim_parens(run: str) -> str:
    """Drop the closing prose parenthesis of e.g. "(answer: (6-1)*4+4)". An unmatched "(" is kept, so a
    forgotten closing parenthesis stays malformed rather than being guessed."""
    while run.endswith(")") and run.count(")") > run.count("("):
        run = run[:-1].strip()
    return run
