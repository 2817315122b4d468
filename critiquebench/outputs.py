"""Every file a command writes at a path the user names (`--output`, `--figure`, `cache export -o`, ...).

The promises, shared by every command (docs: "Reliability promises"):
- a regular file is written to a temporary file beside it and renamed into place only once the write and its
  `fsync` succeeded: an output is either the old file or the whole new one, never half of either;
- a FIFO or a character device (`/dev/stdout`, `/dev/null`) is written into, never replaced by a regular file
  (a FIFO no process reads is refused at once, not waited on); a block device or a socket is refused;
- a SQLite file (its first 16 bytes are "SQLite format 3\\0") is never replaced, nor the store the command
  reads (or its -wal/-shm files), whatever its name: an output named like the store cannot destroy it;
- every failure (read-only place, full disk, a folder, a missing parent) is one `OutputError` naming the path
  and the cause, and leaves what was there before as it was.

`view --output DIR` writes a folder the same way (`output_folder`): into a temporary folder beside DIR, moved
into place once every file is written, so a failure leaves DIR as it was. Its files are not each `fsync`ed: at
about 2 ms a file that would add some 20 s to a store of 10,000 runs, for a folder made again in seconds.
"""

from __future__ import annotations

import errno
import io
import json
import math
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SQLITE_HEADER = b"SQLite format 3\x00"
_SIDECARS = ("", "-wal", "-shm", "-journal")  # SQLite's files beside a store
# Paths that name a file descriptor already open (`--output /dev/stdout`): written into even when it is a regular
# file (`> out.txt`), which the shell opened and a rename would take away from it.
_OPEN_DESCRIPTOR = re.compile(r"^/(dev/(stdout|stderr|stdin|fd/\d+)|proc/(self|\d+)/fd/\d+)$")


class OutputError(ValueError):
    """An output cannot be written; the message is one line naming the path and why."""


def _fail(path: str | os.PathLike[str], cause: str) -> OutputError:
    return OutputError(f"cannot write {path}: {cause}")


def _cause(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _same(path: Path, store: Path) -> bool:
    for suffix in _SIDECARS:
        try:
            if os.path.samefile(path, f"{store}{suffix}"):
                return True
        except OSError:
            continue
    return False


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as fp:
            return fp.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def check_output(path: str | os.PathLike[str], stores: Iterable[Any] = (), *, folder: bool = False) -> str:
    """Refuse `path` before anything is written (OutputError); else what it is: "missing", "file", "folder" or
    "stream" (a FIFO or character device, written into). `stores`: the stores the command reads (a Postgres URL
    among them is skipped: no file of it can be named). `folder`: the output is a folder (`view --output`)."""
    target = Path(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError as exc:  # not a directory, a link loop, no permission
        raise _fail(path, _cause(exc)) from None
    for store in stores:
        if isinstance(store, str | os.PathLike) and "://" not in str(store) and _same(target, Path(store)):
            raise _fail(path, f"it is the store this command reads ({store}); give another file")
    if stat.S_ISDIR(mode):
        if folder:
            return "folder"
        raise _fail(path, "Is a directory; give a file name")
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        if folder:
            raise _fail(path, f"it is {'a FIFO' if stat.S_ISFIFO(mode) else 'a device'}, not a folder")
        return "stream"
    if not stat.S_ISREG(mode):
        kind = "a socket" if stat.S_ISSOCK(mode) else "a block device" if stat.S_ISBLK(mode) else "not a file"
        raise _fail(path, f"it is {kind}; give a file name")
    if _is_sqlite(target):
        raise _fail(path, "it is a SQLite file (a store?), which an output never replaces; give another file")
    if folder:
        raise _fail(path, "Not a directory; give a folder for the viewer's files")
    return "file"


# The suffixes a file of each format may have. A file named with another format's suffix, or one critiquebench
# does not write (`.feather`), is refused before anything is written: a `.parquet` holding CSV is a trap.
SUFFIXES: dict[str, tuple[str, ...]] = {
    "jsonl": (".jsonl", ".ndjson"),
    "json": (".json",),
    "csv": (".csv",),
    "parquet": (".parquet", ".pq"),
    "md": (".md", ".markdown"),
    "table": (".txt",),
    "mermaid": (".mmd", ".mermaid"),
    "ascii": (".txt",),
    "png": (".png",),
}


def check_suffix(path: str | os.PathLike[str] | None, fmt: str) -> None:
    """OutputError (one line) when file `path`'s suffix names another format than `fmt`; a name without a suffix,
    standard output (None) and a stream (`/dev/stdout`) take any."""
    if path is None or _OPEN_DESCRIPTOR.match(str(path)) or fmt not in SUFFIXES:
        return
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device is written into, whatever its name
            return
    except OSError:
        pass  # missing (or unreadable: check_output says why)
    suffix = Path(path).suffix.lower()
    if suffix and suffix not in SUFFIXES[fmt]:
        wanted = " or ".join(SUFFIXES[fmt])
        named = [f for f, ends in SUFFIXES.items() if suffix in ends]
        other = f" (a {named[0]} suffix)" if named else ""
        raise OutputError(f"--output {path}: {fmt} is written to a file ending in {wanted}, not {suffix}{other}; "
                          "rename the file or choose its --format")  # fmt: skip


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def open_output(path: str | os.PathLike[str], stores: Iterable[Any] = (), *, binary: bool = False) -> Iterator[Any]:
    """A file to write the output `path` through, for a `with` block (UTF-8 text, or bytes with `binary`); see
    the module's promises. An OSError while the block writes becomes one OutputError naming `path`."""
    kind = check_output(path, stores)
    stream = kind == "stream" or (kind == "file" and bool(_OPEN_DESCRIPTOR.match(os.path.abspath(path))))
    try:
        with _stream(path, binary) if stream else _replacing(Path(path), binary) as fp:
            yield fp
    except OSError as exc:
        raise _fail(path, _cause(exc)) from None


@contextmanager
def _stream(path: str | os.PathLike[str], binary: bool) -> Iterator[Any]:
    # O_APPEND: a /dev/stdout the shell opened for `>>` keeps what is before; a FIFO or a device ignores it.
    # O_NONBLOCK for the open only: a FIFO no process reads fails at once (ENXIO) instead of waiting for ever
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(exc.errno, "it is a FIFO no process reads; start its reader first") from None
        raise
    os.set_blocking(fd, True)  # the writes wait for a slow reader, as a shell redirection's do
    raw = os.fdopen(fd, "wb")
    with raw if binary else io.TextIOWrapper(raw, encoding="utf-8", newline="") as fp:
        yield fp


@contextmanager
def _replacing(path: Path, binary: bool) -> Iterator[Any]:
    target = Path(os.path.realpath(path))  # through a symlink: the file it points at is replaced, the link kept
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()  # what `open(path, "w")` would have made (mkstemp's own is 0600)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        raw = os.fdopen(fd, "wb")
        with raw if binary else io.TextIOWrapper(raw, encoding="utf-8", newline="") as fp:
            yield fp
            fp.flush()
            os.fchmod(raw.fileno(), mode)
            os.fsync(raw.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(target.parent)


@contextmanager
def new_store_file(path: str | os.PathLike[str], stores: Iterable[Any] = ()) -> Iterator[Path]:
    """A temporary path beside the missing file `path`, for a writer that makes a whole file itself (`store copy`
    writes a SQLite store): once the block ends without error the file is synced and renamed to `path`; on any
    error it is removed (with SQLite's files beside it), so a full disk leaves no empty or partial store.
    OutputError when `path` cannot be written (see `check_output`) or exists."""
    if check_output(path, stores) != "missing":
        raise _fail(path, "it exists; give a new file name")
    target = Path(os.path.abspath(path))
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _fail(path, _cause(exc)) from None
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb") as fp:
            os.fsync(fp.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        for suffix in _SIDECARS:
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Make a rename durable (best effort: some file systems cannot sync a directory)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_output(path: str | os.PathLike[str], data: str | bytes, stores: Iterable[Any] = ()) -> None:
    """Write `data` (text as UTF-8) to the output `path` with `open_output`'s promises."""
    if isinstance(data, bytes):
        with open_output(path, stores, binary=True) as fp:
            fp.write(data)
    else:
        with open_output(path, stores) as fp:
            fp.write(data)


@contextmanager
def output_folder(out: str | os.PathLike[str], stores: Iterable[Any] = ()) -> Iterator[Path]:
    """A new empty folder beside `out` for the block to write into; once the block ends without error, its
    files are moved into `out` (made if missing; other files already in `out` stay). On any error `out` is as it
    was and the error is one OutputError naming `out`."""
    out = Path(out)
    kind = check_output(out, stores, folder=True)
    try:
        parent = out.parent
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    except OSError as exc:
        raise _fail(out, _cause(exc)) from None
    try:
        yield staging
        if kind == "missing":
            os.rename(staging, out)
        else:
            _move_into(staging, out)
        _sync_folder(parent)
    except OSError as exc:
        raise _fail(out, _cause(exc)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _move_into(staging: Path, out: Path) -> None:
    """Each staged file renamed over its place under `out` (folders made as needed)."""
    for folder, _, files in os.walk(staging):
        rel = Path(folder).relative_to(staging)
        (out / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            os.replace(Path(folder) / name, out / rel / name)


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula (OWASP)


def spreadsheet_safe(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: a string starting like a formula gets a leading `'` (OWASP's
    advice), unless it is a number (`-3.5` stays a number). Other values are returned as they are."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_STARTS):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


def spreadsheet_row(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with every cell made `spreadsheet_safe` (for csv.DictWriter)."""
    return {key: spreadsheet_safe(value) for key, value in row.items()}


def json_text(value: Any, **options: Any) -> str:
    """`json.dumps(value, **options)` as strict JSON: a non-finite number (NaN, an overflowed cost) is written as
    null, never as the `NaN`/`Infinity` that Python writes by default and strict readers refuse."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:  # rare: walk the value only when it holds a non-finite number
        return json.dumps(_finite(value), allow_nan=False, **options)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
