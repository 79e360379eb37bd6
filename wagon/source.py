"""Opening an input: every reader of wagon opens its files here, so that a device, a pipe or a
file without end is refused or read within a stated bound, in one line, never read forever.

- wagon's own files (model, scenario, results and run files, recipes) are regular files: a
  character device (``/dev/zero``), a FIFO, a socket or a folder is refused (``regular``); a
  file read whole (JSON, TOML: ``read_document``) is read up to its size when opened and at
  most ``MAX_DOCUMENT_BYTES``, so one that grows while it is read ends where it was.
- access logs may also come down a pipe (``-``, a FIFO, ``<(zcat x)``): ``open_stream`` takes
  regular files and pipes and refuses devices; a FIFO that no writer opens within
  ``FIFO_WAIT_S`` is refused (a blocking open would wait for one for ever); the log parser
  bounds a line
  (``logs.parse.MAX_LINE_BYTES``), so an endless stream is read as lines, never held whole.

docs/formats.md, "Input files and their bounds", states these bounds.
"""
from __future__ import annotations

import io
import os
import select
import stat
import time
import tomllib
from typing import BinaryIO

__all__ = ["MAX_DOCUMENT_BYTES", "FIFO_WAIT_S", "PIPE_POLL_S", "not_regular", "open_regular",
           "read_document", "read_toml", "read_block", "open_stream", "pipe_stream"]

#: bytes of a JSON or TOML file read whole (a model with a million pages is ~200 MB)
MAX_DOCUMENT_BYTES = 1 << 30
#: seconds a FIFO given as a log may stay without a writer before it is refused
FIFO_WAIT_S = 10.0

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
        return _open_fifo(path, error) if kind else open(path, "rb")
    except OSError as e:
        raise error(f"{path}: {e.strerror or e}") from None


def _open_fifo(path: str, error: type[Exception]) -> BinaryIO:
    """A FIFO opened for reading once a writer has it open; an ``error`` (one line) when
    none has within ``FIFO_WAIT_S`` (``open(2)`` of a FIFO waits for its writer for ever)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        head = _first_bytes(fd, path, error)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return pipe_stream(io.FileIO(fd, "rb"), head)


def _first_bytes(fd: int, path: str, error: type[Exception]) -> bytes:
    """What FIFO ``fd`` (opened without blocking) held when a writer was first seen: a read
    of it tells, at its end (b"") while no writer has opened it, nothing yet (EAGAIN) while
    its writer is silent; polled every 0.1 s up to ``FIFO_WAIT_S``, a writer's bytes or its
    departure (POLLHUP) ending the wait at once."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + FIFO_WAIT_S
    while True:
        try:
            head = os.read(fd, 1 << 16)
        except BlockingIOError:
            return b""
        left = deadline - time.monotonic()
        if head or poller.poll(max(min(left, 0.1), 0.0) * 1000):
            return head
        if left <= 0:
            raise error(f"{path}: a pipe no writer opened in {FIFO_WAIT_S:g} s")


#: seconds a read of a pipe waits for data before Python looks at its signals again
PIPE_POLL_S = 0.2


class _Pipe(io.RawIOBase):
    """A pipe's raw stream: ``head`` (bytes already read from ``raw``), then ``raw``, each read
    waiting for data in polls of at most ``PIPE_POLL_S``. A SIGINT or SIGTERM that lands
    between Python's last look at its signals and a ``read(2)`` of an empty pipe is handled
    only when that read returns: never, for a writer that holds the pipe open and waits
    (``wagon compare`` of such a FIFO ignored SIGTERM one run in two); now within
    ``PIPE_POLL_S``."""

    def __init__(self, raw: io.RawIOBase, head: bytes = b"") -> None:
        self._head, self._raw = memoryview(head), raw
        self._poller = select.poll()
        self._poller.register(raw.fileno(), select.POLLIN)    # and POLLHUP, POLLERR

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._raw.fileno()

    def readinto(self, buffer) -> int | None:
        if not self._head:
            while not self._poller.poll(PIPE_POLL_S * 1000):
                pass
            return self._raw.readinto(buffer)
        n = min(len(buffer), len(self._head))
        buffer[:n] = self._head[:n]
        self._head = self._head[n:]
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def pipe_stream(raw: io.RawIOBase, head: bytes = b"") -> BinaryIO:
    """A buffered reader of pipe ``raw`` (``_Pipe``: a signal is handled while it waits)."""
    return io.BufferedReader(_Pipe(raw, head))


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
