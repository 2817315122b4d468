"""The `pddl` package's parsers, their grammar analysed once per machine instead of once per process.

Building a `pddl` parser analyses its lark grammar: 0.08-0.2 s of CPU in every process that reads a domain, which
is a sixth of replaying 100 recorded answers (issue 31). lark can keep the analysed grammar in a file (`cache=`),
checked against a hash of the grammar, its options and lark's version, and rebuilt when they differ. The file is
kept in a folder of the user's own under the system's temporary directory (mode 0700: lark's cache is a pickle,
so no other user may be able to write it); where that folder cannot be had, the parser is built as `pddl`
builds it.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

import lark
from lark import Lark, Transformer
from pddl.parser import GRAMMAR_FILE, PARSERS_DIRECTORY


def _cache_folder() -> Path | None:
    """The user's own private folder for the grammar cache, or None when it cannot be made safe."""
    if not hasattr(os, "getuid"):
        return None
    folder = Path(tempfile.gettempdir()) / f"critiquebench-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None  # another user's folder, a link, or one others may write to: no pickle is loaded from it
    return folder


def parser(kind: type) -> Any:
    """A `pddl` parser of class `kind` (`DomainParser`, `ProblemParser`) whose grammar comes from the cache: what
    `pddl.parser.base.BaseParser.__init__` builds, with lark's `cache` given. Falls back to `kind()` where this
    `pddl` lays its parsers out otherwise."""
    folder = _cache_folder()
    start, transformer_cls = getattr(kind, "start_symbol", None), getattr(kind, "transformer_cls", None)
    if folder is None or start is None or transformer_cls is None:
        return kind()
    made = kind.__new__(kind)
    Transformer.__init__(made)
    made._transformer = transformer_cls()
    version = f"{sys.version_info[0]}{sys.version_info[1]}"
    # lark's check covers the import paths, i.e. where this `pddl` is installed: a file of its own per
    # installation, or two environments (a second checkout's venv) would each rebuild and overwrite the other's
    where = hashlib.sha256(str(PARSERS_DIRECTORY).encode()).hexdigest()[:12]
    cache = folder / f"pddl-{kind.__name__}-lark{lark.__version__}-py{version}-{where}.cache"
    made._parser = Lark(GRAMMAR_FILE.read_text(), parser="lalr", import_paths=[PARSERS_DIRECTORY], start=start,
                        transformer=made._transformer, cache=str(cache))  # fmt: skip
    return made
