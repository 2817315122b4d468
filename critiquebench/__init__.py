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
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Result", "StudyError", "__version__", "define", "import_samples", "list_studies", "report", "resume",
           "rounds", "run", "runs"]  # fmt: skip
_API = frozenset(__all__) - {"__version__"}

if TYPE_CHECKING:
    from critiquebench.api import (
        Result,
        StudyError,
        define,
        import_samples,
        list_studies,
        report,
        resume,
        rounds,
        run,
        runs,
    )


def __getattr__(name: str) -> Any:
    if name in _API:
        # loaded on first use, never while the package itself is imported (modules that import the package for
        # its version, such as studies.reuse, form no cycle with the API that way)
        return getattr(importlib.import_module("critiquebench.api"), name)
    raise AttributeError(f"module 'critiquebench' has no attribute {name!r}")
