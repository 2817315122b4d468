"""Option values that need no Pydantic, typed without it.

Typer (0.29) turns every option's value into its type with a Pydantic `TypeAdapter` it builds on first use, so any
command imported Pydantic and built an adapter per option (26 for `run`, most of them None): a third of the CPU of a
study with nothing to do (benchmarks/bench_setup.py).

`install()` makes each Typer parameter first try the plain cases, which have one possible result: a `str`
option given a string, an `int` given digits or an int in range, a `float` given a plain decimal, a `Path`
given a non-empty string (Typer's own path checks then run on it), a `list[str]` of strings, a `parser=` that
accepts the value. Anything else (a bad value, an Enum, a date, a file, a range to clamp) goes to Typer's
adapter unchanged, so its results and its error messages stay Typer's (tests/test_cli_coercion.py compares the
two). On a Typer whose internals differ, `install()` does nothing and Typer does all the work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_origin

_DIGITS = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_UNDECIDED = object()  # the plain cases did not apply: Typer decides


def plain_value(annotation: Any, info: Any, value: Any) -> Any:
    """`value` as the option's type when that needs no Pydantic, else `_UNDECIDED`. `info` is Typer's
    ParameterInfo of the option (its parser, range and path flags)."""
    if get_origin(annotation) in (list, tuple):  # Typer applies a parser and the range to each item
        if annotation == list[str] and info.parser is None and isinstance(value, list | tuple):
            return list(value) if all(type(item) is str for item in value) else _UNDECIDED
        return _UNDECIDED
    if info.parser is not None:
        try:
            return info.parser(value)
        except (ValueError, AssertionError):  # Pydantic words these errors; Typer runs the parser again
            return _UNDECIDED
    if annotation is str:
        return value if type(value) is str else _UNDECIDED
    if annotation is int:
        if type(value) is str and _DIGITS.fullmatch(value):
            value = int(value)
        if type(value) is not int or info.clamp:
            return _UNDECIDED
        in_range = (info.min is None or value >= info.min) and (info.max is None or value <= info.max)
        return value if in_range else _UNDECIDED
    if annotation is float and info.min is None and info.max is None:
        if type(value) is str and _DECIMAL.fullmatch(value):
            return float(value)
        return value if type(value) is float else _UNDECIDED
    return _UNDECIDED


def _plain_path(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
    """A `Path` option given a non-empty string: Typer's own checks on `Path(value)`, which is what its adapter
    makes of such a string."""
    from typer._param_types import coerce_cli_path

    if annotation is not Path or info.path_type is not None or type(value) is not str or not value:
        return _UNDECIDED
    return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)


def installed() -> bool:
    """Whether Typer's parameters try the plain cases first (`install()` found the Typer it knows)."""
    from typer.core import _TyperParameter

    return bool(getattr(_TyperParameter, "_critiquebench_plain", False))


def install() -> None:
    """Give every Typer parameter the plain cases before its Pydantic adapter (see the module docstring)."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer.core import _TyperParameter
    except ImportError:  # a Typer without the adapters (or with other internals): nothing to skip
        return
    if getattr(_TyperParameter, "_critiquebench_plain", False) or not hasattr(_TyperParameter, "get_runtime_param"):
        return

    @dataclass(frozen=True)
    class PlainFirst(RuntimeParam):
        """Typer's runtime coercion of one parameter, trying the plain cases first."""

        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            found = plain_value(self.annotation, self.parameter_info, value)
            if found is _UNDECIDED:
                found = _plain_path(self.annotation, self.parameter_info, value, param, ctx)
            if found is _UNDECIDED:
                return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)
            return found

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            desc = self.type_descriptor
            if desc.file_annotation is not None:  # a file to open: Typer's own
                self._runtime_param = build_runtime_param(desc)
            else:
                self._runtime_param = PlainFirst(desc.parameter_info, desc.annotation, desc)
        return self._runtime_param

    _TyperParameter.get_runtime_param = get_runtime_param
    _TyperParameter._critiquebench_plain = True
