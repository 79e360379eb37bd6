"""Files that appear complete or not at all.

Every file wagon writes is first written beside its target (``.NAME.PID.tmp`` in the same
directory, so the rename cannot cross file systems), flushed to the disk (``fsync``) and renamed
over the target: a reader, or a crash, sees the old file or the new one, never half of one. A
write that fails (a full disk, an exception, Ctrl-C) removes its temporary file and leaves the
target as it was.

A target that is not a regular file (``/dev/null``, ``/dev/stdout``, a named pipe) is written in
place: a rename would replace the device with a file. A symbolic link is followed: the file it
names is replaced, the link kept.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import zlib
from typing import IO, Iterator

#: the longest file name (bytes) a file system takes (Linux's NAME_MAX)
NAME_MAX = 255

__all__ = ["atomic_path", "atomic_write", "DISK_FULL"]

#: a write that failed for want of room: the disk or the quota is full, or the file-size limit
DISK_FULL = frozenset((errno.ENOSPC, errno.EDQUOT, errno.EFBIG))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, sync: bool = True) -> Iterator[str]:
    """A temporary path beside ``path`` for the block to write (as a path: for writers that
    open it themselves); renamed over ``path`` when the block ends, removed if it raises.
    ``sync``: flush it to the disk before the rename (False for a multitude of small files
    whose set is rebuilt if lost, such as a site)."""
    path = os.fspath(path)
    if _special(path):
        yield path
        return
    path = os.path.realpath(path)
    head, name = os.path.split(path)
    mine = f".{name}.{os.getpid()}.tmp"
    if len(os.fsencode(mine)) > NAME_MAX:       # a name near the limit: a hash of it instead
        mine = f".{zlib.crc32(os.fsencode(name)):08x}.{os.getpid()}.tmp"
    tmp = os.path.join(head, mine)
    try:
        yield tmp
        if sync:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _special(path: str) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory (a device, a
    pipe, a socket)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", sync: bool = True,
                 **kwargs) -> Iterator[IO]:
    """``open(path, mode)`` through ``atomic_path``."""
    with atomic_path(path, sync) as tmp, open(tmp, mode, **kwargs) as f:
        yield f
