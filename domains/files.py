"""Reading a file the user names (a price file, a prompt file) without ever blocking on it.

A FIFO, a device or a socket given where a file is expected would make a plain `open` wait for a writer for
ever (or read without end from `/dev/zero`): such a path is refused in one line instead. The open itself is
non-blocking, so a FIFO is found out without waiting for a writer.
"""

from __future__ import annotations

import errno
import os
import stat


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file at `path`; OSError (its `strerror` one line, for the caller to put after the
    path) for anything else."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a folder" if stat.S_ISDIR(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")  # fmt: skip
            raise OSError(errno.EINVAL, f"it is {kind}, not a regular file")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as fp:
            fd = -1  # the file object closes it
            return fp.read()
    finally:
        if fd >= 0:
            os.close(fd)
