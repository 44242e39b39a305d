"""No-follow reads: the grader reads a submission's files only as regular files of bounded
size, opened without following a link, so that a FIFO, a device or a link into a
classmate's folder or the grader is never read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_SUBMISSION_FILE_BYTES = 1 << 20


def read_regular(path: Path | str, limit: int = MAX_SUBMISSION_FILE_BYTES, dir_fd: int | None = None) -> bytes | None:
    """The bytes of `path` (relative to the folder open as `dir_fd`, if given) if it is a
    regular file of at most `limit` bytes, opened without following a link (a FIFO, a device
    or a link to elsewhere is never read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        return fh.read(limit + 1)[:limit]


def copy_submission(src: Path, dst: Path, modules) -> None:
    """Copy the topic modules (`<module>.py`, regular files only, never through a link) into
    `dst`: the worker gets a copy of exactly these, never the original folder."""
    dst.mkdir(parents=True)
    for module in sorted(set(modules)):
        data = read_regular(Path(src) / f"{module}.py")
        if data is not None:
            (dst / f"{module}.py").write_bytes(data)
