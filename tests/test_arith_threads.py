"""Sound verification in worker threads: Game of 24's arithmetic parse under the race of python/cpython#106905.

CPython 3.11's AST constructor keeps its recursion count in interpreter state shared by all threads; a Python
finaliser run by the garbage collector in the middle of a parse switches threads, and another thread's parse
then corrupts the count (`SystemError: AST constructor recursion depth mismatch`). A 320-run sampling study at
32 in flight lost a run to it in 2 of 6 attempts. Each stress runs in its own process (it changes the
interpreter's switch interval and collector thresholds) and stops after a few seconds.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

# many threads parse while cyclic garbage with a finaliser that yields the GIL is collected mid-parse
STRESS = textwrap.dedent(
    """
    import gc, sys, threading, time
    from fractions import Fraction
    from domains import arith

    MODE, SECONDS = sys.argv[1], float(sys.argv[2])
    TEXT = "((1+2)*(3+4))/((5-6)*(7+8))+((1+2)*(3+4))/((5-6)*(7+8))+((1+2)*(3+4))/((5-6)*(7+8))+1"
    WANT = Fraction(1) + 3 * Fraction(21, -15)
    errors, parses = [], [0]
    stop = threading.Event()

    class Finaliser:
        def __init__(self):
            self.me = self  # a cycle: only the collector frees it, in whichever thread allocates at that moment

        def __del__(self):
            time.sleep(0)  # gives up the GIL inside the collection, so inside another thread's parse

    def parse(text):
        if MODE == "old":  # the code before the fix: ast.parse with no lock
            import ast
            return ast.parse(text, mode="eval").body
        return arith.parse_expression(text)

    def work(deadline):
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                tree = parse(TEXT)
                if arith.evaluate(tree) != WANT:
                    errors.append("wrong value")
            except SystemError as exc:
                errors.append(str(exc))
                stop.set()
                return
            parses[0] += 1
            Finaliser()

    gc.set_threshold(50, 1, 1)
    sys.setswitchinterval(1e-6)
    for _attempt in range(8):  # the mismatch comes mostly as threads end: several short rounds
        threads = [threading.Thread(target=work, args=(time.monotonic() + SECONDS / 8,)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if stop.is_set():
            break
    print(len(errors), parses[0], errors[:1])
    """
)


def _stress(mode: str, seconds: float) -> tuple[int, int, str]:
    out = subprocess.run([sys.executable, "-c", STRESS, mode, str(seconds)], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split(maxsplit=2)  # fmt: skip
    return int(out[0]), int(out[1]), out[2]


def test_parse_expression_is_safe_in_many_threads() -> None:
    errors, parses, first = _stress("new", 4.0)
    assert errors == 0, first
    assert parses > 1000


def test_the_stress_forces_the_race_on_an_unlocked_parse() -> None:
    """The same stress on a bare `ast.parse` fails on a Python with the bug (3.11: forced in under 1.5 s in 3 of 3
    tries), so the test above tests something; on a Python with the fix (3.12+) the bare parse is safe too."""
    if sys.version_info >= (3, 12):
        errors, parses, first = _stress("old", 2.0)
        assert errors == 0 and parses > 1000, first
        return
    for _attempt in range(5):  # the race is timing-bound: a few bounded stresses, never an unbounded wait
        errors, _parses, first = _stress("old", 4.0)
        if errors:
            break
    assert errors, "the race of python/cpython#106905 did not come in 5 stresses of 4 s on an unlocked parse"
    assert "AST constructor recursion depth mismatch" in first
