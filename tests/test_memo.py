"""What one process computes once (`domains.memo`): shared while the same objects live or the file is unchanged."""

from __future__ import annotations

import os
from pathlib import Path

from critiquebench.domains.memo import ObjectMemo, read_once


def test_a_value_is_made_once_for_the_very_objects_and_again_for_equal_others() -> None:
    memo, made = ObjectMemo(2), []

    def make(tag: str) -> str:
        made.append(tag)
        return tag

    first, twin = [1, 2], [1, 2]  # equal, not the same object
    assert memo.get((first,), "k", lambda: make("a")) == "a"
    assert memo.get((first,), "k", lambda: make("b")) == "a"  # kept
    assert memo.get((twin,), "k", lambda: make("c")) == "c"  # another object: made again
    assert memo.get((first,), "other", lambda: make("d")) == "d"  # another key
    assert memo.get((twin,), "k", lambda: make("e")) == "c"
    assert memo.get((first,), "k", lambda: make("f")) == "f"  # the least recently used went (size 2)
    assert made == ["a", "c", "d", "f"]


def test_a_reading_is_made_again_when_the_file_changes(tmp_path: Path) -> None:
    path, reads = tmp_path / "f.txt", []

    def read(p: Path) -> str:
        reads.append(p)
        return p.read_text()

    path.write_text("one")
    assert read_once(path, read) == read_once(path, read) == "one" and len(reads) == 1
    path.write_text("three")  # another size
    assert read_once(path, read) == "three"
    os.utime(path, ns=(1, 1))  # the same size, another time
    assert read_once(path, read) == "three" and len(reads) == 3
    assert read_once(path, read, variant="x") == "three" and len(reads) == 4  # another variant: its own reading
