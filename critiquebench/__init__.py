"""critiquebench: run, resume and compare LLM generate -> verify -> critique loops on checkable problems.

The Python API (`critiquebench.api`, documented there and in README.md):

    import critiquebench as cb
    cb.run("demo", domains="game24", instances="gen:5:1", schemes="standard,sound-first:rounds=3",
           model="my-model", base_url="http://localhost:8000/v1", store="demo.sqlite")
    cb.runs("demo", store="demo.sqlite")     # a pandas DataFrame, one row per run

Its names load on first use, so `import critiquebench` (and the command line) stays fast.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

__all__ = ["Result", "StudyError", "__version__", "calls", "compare", "define", "import_samples", "list_studies",
           "report", "resume", "rounds", "run", "runs", "stops"]  # fmt: skip
_API = frozenset(__all__) - {"__version__"}

if TYPE_CHECKING:
    from critiquebench.api import (
        Result,
        StudyError,
        calls,
        compare,
        define,
        import_samples,
        list_studies,
        report,
        resume,
        rounds,
        run,
        runs,
        stops,
    )


class _NoPandasForSqliteUtils:
    """sqlite_utils imports pandas and numpy at its own import whenever they are installed (the `analysis`
    extra), only to map their value types to column types when it creates a table from Python values, which the
    store never asks of it (its tables are made by SQL statements); those imports were 0.4 s of every command's
    start-up CPU. This finder makes `import pandas` and `import numpy` fail for sqlite_utils.db's module body
    alone: both still import for everyone else, before or after. (A finder on `sys.meta_path` needs only
    `find_spec`: subclassing `importlib.abc.MetaPathFinder` imported `importlib.resources` with it, 20 ms of every
    command's start-up.)"""

    _HIDDEN = frozenset({"pandas", "numpy"})

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name in self._HIDDEN and name not in sys.modules:
            frame = sys._getframe(1)
            while frame is not None:
                if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "sqlite_utils.db":
                    raise ModuleNotFoundError(f"{name} is not imported for sqlite_utils", name=name)
                frame = frame.f_back
        return None


if "sqlite_utils.db" not in sys.modules and not any(isinstance(f, _NoPandasForSqliteUtils) for f in sys.meta_path):
    sys.meta_path.insert(0, _NoPandasForSqliteUtils())


def __getattr__(name: str) -> Any:
    if name in _API:
        # loaded on first use, never while the package itself is imported (modules that import the package for
        # its version, such as studies.reuse, form no cycle with the API that way)
        return getattr(importlib.import_module("critiquebench.api"), name)
    raise AttributeError(f"module 'critiquebench' has no attribute {name!r}")
