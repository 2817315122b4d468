"""What one process computes once and shares: a file's reading while the file is unchanged, and a value made from
objects while those very objects live.

An import of a PlanBench file builds its domain under up to ten option sets, and a replay in the same process
builds it again; a run's identity is hashed twice. Each would read the same folder, parse the same problems and
serialise the same instance data anew. What these return is shared between callers, so it is never changed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_READS: OrderedDict[tuple[str, str, Hashable], tuple[tuple[int, int], Any]] = OrderedDict()
_READS_KEPT = 50_000
_lock = threading.Lock()


def read_once(path: Path, make: Callable[[Path], T], variant: Hashable = None) -> T:
    """`make(path)`, made again only when the file or folder at `path` changes (its modification time or size; a
    folder's time changes when an entry is added or removed). `variant` tells apart readings by one `make` that
    differ otherwise. A path that cannot be looked at is `make`'s to report, as without the cache."""
    try:
        st = path.stat()
    except OSError:
        return make(path)
    key, stamp = (str(path), make.__qualname__, variant), (st.st_mtime_ns, st.st_size)
    with _lock:
        kept = _READS.get(key)
    if kept is None or kept[0] != stamp:
        kept = (stamp, make(path))
        with _lock:
            _READS[key] = kept
            if len(_READS) > _READS_KEPT:
                _READS.popitem(last=False)
    return kept[1]


class ObjectMemo:
    """Values made from some objects and a key, kept while those same objects are used: an entry is found by the
    objects' ids and taken only if they are still the very objects (an id can be reused once its object is
    gone; the entry holds the objects, so theirs is not). The `size` most recently used entries are kept."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[tuple[tuple[int, ...], Hashable], tuple[tuple[object, ...], Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, owners: tuple[object, ...], key: Hashable, make: Callable[[], T]) -> T:
        """The value for `owners` and `key`, made by `make()` the first time."""
        full = (tuple(map(id, owners)), key)
        with self._lock:
            kept = self._kept.get(full)
            if kept is not None and all(a is b for a, b in zip(kept[0], owners, strict=True)):
                self._kept.move_to_end(full)
                return kept[1]
        value = make()
        with self._lock:
            self._kept[full] = (owners, value)
            if len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return value
