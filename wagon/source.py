"""Opening an input: every reader of wagon opens its files here, so that a device, a pipe or a
file without end is refused or read within a stated bound, in one line, never read forever.

- wagon's own files (model, scenario, results and run files, recipes) are regular files: a
  character device (``/dev/zero``), a FIFO, a socket or a folder is refused (``regular``); a
  file read whole (JSON, TOML: ``read_document``) is read up to its size when opened and at
  most ``MAX_DOCUMENT_BYTES``, so one that grows while it is read ends where it was.
- access logs may also come down a pipe (``-``, a FIFO, ``<(zcat x)``): ``stream`` takes
  regular files and pipes and refuses devices; the log parser bounds a line
  (``logs.parse.MAX_LINE_BYTES``), so an endless stream is read as lines, never held whole.

docs/formats.md, "Input files and their bounds", states these bounds.
"""
from __future__ import annotations

import os
import stat
import tomllib
from typing import BinaryIO

__all__ = ["MAX_DOCUMENT_BYTES", "not_regular", "open_regular", "read_document", "read_toml",
           "read_block", "open_stream"]

#: bytes of a JSON or TOML file read whole (a model with a million pages is ~200 MB)
MAX_DOCUMENT_BYTES = 1 << 30

_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a pipe"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def _kind(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file."""
    return next((name for test, name in _KINDS if test(mode)), None if stat.S_ISREG(mode)
                else "not a regular file")


def not_regular(path: str | os.PathLike) -> str | None:
    """Why ``path`` is not a regular file ("PATH: a character device, not a regular file"),
    or None (a regular file, or nothing there: its reader says so)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    kind = _kind(mode)
    return kind and f"{path}: {kind}, not a regular file"


def open_regular(path: str | os.PathLike, error: type[Exception]) -> BinaryIO:
    """``path`` opened for reading, checked on the opened file (no race with a rename); an
    ``error`` (one line) for a file that is not regular or cannot be opened."""
    why = not_regular(path)                       # a FIFO would block in open()
    if why:
        raise error(why)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise error(f"{path}: {e.strerror or e}") from None
    kind = _kind(os.fstat(f.fileno()).st_mode)
    if kind:
        f.close()
        raise error(f"{path}: {kind}, not a regular file")
    return f


def read_document(path: str | os.PathLike, error: type[Exception],
                  limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of a regular file read whole: as many as it held when opened, refused (an
    ``error``, one line) beyond ``limit``."""
    with open_regular(path, error) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise error(f"{path}: {size:,} bytes, more than the {limit:,} a file read whole "
                        "may hold")
        try:
            return f.read(size)
        except OSError as e:
            raise error(f"{path}: {e.strerror or e}") from None


def read_toml(path: str | os.PathLike, error: type[Exception]) -> dict:
    """A TOML file read whole (``read_document``); an ``error`` (one line) when it is not."""
    try:
        return tomllib.loads(read_document(path, error).decode())
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not TOML ({e})") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not TOML (not UTF-8 text)") from None


def open_stream(path: str, error: type[Exception]) -> BinaryIO:
    """An access log opened for reading: a regular file or a pipe (a FIFO; ``/dev/stdin``);
    a device, socket or folder is an ``error`` (one line)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise error(f"{path}: {e.strerror or e}") from None
    kind = _kind(mode)
    if kind and not stat.S_ISFIFO(mode):
        raise error(f"{path}: {kind}, not a log file or a pipe")
    try:
        return open(path, "rb")
    except OSError as e:
        raise error(f"{path}: {e.strerror or e}") from None


def read_block(stream: BinaryIO, size: int) -> bytes:
    """``size`` bytes of ``stream`` (fewer only at its end), read a buffer at a time
    (``read1``) so that a signal that comes while a pipe is read is handled at once:
    ``BufferedReader.read(size)`` loops over the pipe's reads in C and ran the handler of
    a SIGINT or SIGTERM that fell between two of them only once ``size`` bytes came (a
    ``wagon compare`` of a FIFO its writer kept open never stopped)."""
    read1 = getattr(stream, "read1", None)
    if read1 is None:
        return stream.read(size)
    parts, got = [], 0
    while got < size:
        part = read1(size - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)
