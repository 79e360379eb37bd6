"""Inputs cut into pieces that can be parsed independently (in any process, in any order).

A piece is a whole file, or a byte range of a big uncompressed file: a range owns the lines
that *start* inside it, so ranges cut anywhere still give every line to exactly one piece.
A compressed file cannot be entered mid-stream: ``plan`` gives it as one piece with the size
(``cut``) of the pieces its decompressed lines are cut into as they are read
(``wagon.logs.spool``), each then parsed like a range of a plain file. Standard input is one
piece. Each piece knows how many decompressed bytes it holds (an estimate for bzip2, xz and zstd),
which is what progress is measured in.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO

from ..source import not_regular

try:                                  # zstd: Python 3.14's module, or its backport before it
    from compression import zstd      # type: ignore[import-not-found]
except ImportError:
    try:                              # (pip install 'wagon-workload[zst]')
        from backports import zstd    # type: ignore[no-redef]
    except ImportError:
        zstd = None

__all__ = ["Piece", "plan", "PIECE_BYTES", "MIN_SPREAD_BYTES", "open_range", "aligned",
           "compression", "decompressed", "DECOMPRESS_ERRORS"]

PIECE_BYTES = 16 << 20            # a plain file is cut into ranges of about this size (a
#                                   parse holds about 2.5 times a piece: its columns, twice)
MIN_SPREAD_BYTES = 1 << 20        # the smallest range cut to give several workers a share
_SAMPLE = 1 << 20                 # compressed bytes decompressed to estimate a ratio
_DEFLATE_MAX_RATIO = 1032         # deflate never expands more: a larger trailer is not a length
# what reading a truncated or damaged compressed stream raises
DECOMPRESS_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error) + (
    (zstd.ZstdError,) if zstd else ())
ZSTD_MISSING = ("a zstd-compressed log needs Python 3.14 or the backports.zstd package "
                "(pip install 'wagon-workload[zst]')")


@dataclass(frozen=True)
class Piece:
    """Bytes [start, stop) of input ``index`` (``path``; '-' is standard input); ``stop`` None:
    to the end. ``part`` numbers the pieces of one input; ``size``: decompressed bytes.
    A compressed input: ``cut`` > 0 is the size of the pieces it is to be cut into as it is
    decompressed (0: parsed whole); one of those pieces has its lines in the temporary file
    ``spool`` and the input's first lines (or its last ``#Fields:`` line's) in ``head``."""

    path: str
    index: int
    part: int = 0
    start: int = 0
    stop: int | None = None
    size: int = 0
    cut: int = 0
    spool: str | None = None
    head: bytes | None = None

    @property
    def key(self) -> tuple[int, int]:
        """Where the piece stands among all pieces (input, then part)."""
        return self.index, self.part


def compression(head: bytes) -> str | None:
    """'gzip', 'bzip2', 'xz' or 'zstd' from a file's first bytes, else None."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh"):
        return "bzip2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"\x28\xb5\x2f\xfd") or (head[1:4] == b"\x2a\x4d\x18"
                                                  and 0x50 <= head[:1][0] <= 0x5f):
        return "zstd"           # a frame, or a skippable frame before one (as pzstd writes)
    return None


def decompressed(kind: str, stream: BinaryIO) -> BinaryIO:
    """``stream`` read through the decompressor of ``kind`` (``compression``'s answer); zstd
    without its module raises OSError (``ZSTD_MISSING``)."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=stream)          # type: ignore[return-value]
    if kind == "zstd":
        if zstd is None:
            raise OSError(ZSTD_MISSING)
        return zstd.ZstdFile(stream)
    return {"bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind](stream)  # type: ignore[return-value]


def _decompressed_size(path: str, kind: str, on_disk: int) -> int:
    """gzip: the trailer's length where deflate could have produced it (modulo 4 GiB, so a
    larger result of the ratio wins; a damaged file's trailer is no length); bzip2, xz, zstd:
    the ratio of the first MiB times the file's size."""
    with open(path, "rb") as f:
        if kind == "gzip" and on_disk >= 18:
            f.seek(-4, os.SEEK_END)
            exact = struct.unpack("<I", f.read(4))[0]
            if on_disk <= exact <= _DEFLATE_MAX_RATIO * on_disk:
                return exact
            f.seek(0)
        try:
            out = len(decompressed(kind, f).read(16 * _SAMPLE))
        except DECOMPRESS_ERRORS:
            return on_disk
        used = min(f.tell(), on_disk) or 1
    return max(on_disk, int(out * on_disk / used))


def _step(total: int, piece_bytes: int, spread: int) -> int:
    """At most ``piece_bytes``, smaller where that makes at least ``spread`` pieces of
    ``total`` bytes (never under ``MIN_SPREAD_BYTES``)."""
    return max(1, min(piece_bytes, max(MIN_SPREAD_BYTES, -(-total // max(spread, 1)))))


def plan(paths: list[str], piece_bytes: int = PIECE_BYTES, spread: int = 1) -> list[Piece]:
    """The pieces of ``paths`` in input order. Plain files are cut into ranges of at most
    ``piece_bytes``, smaller where that makes at least ``spread`` pieces of their bytes
    together (work for ``spread`` workers at once; never under ``MIN_SPREAD_BYTES``);
    compressed files get that size, reckoned on their estimated decompressed bytes, as their
    ``cut`` (every one: an estimate, or a gzip trailer modulo 4 GiB, can be short). Unreadable inputs are one piece each: parsing them
    reports the error."""
    found: list[tuple[int, str, str | None, int]] = []      # index, path, compression, size
    out: list[Piece] = []
    for index, path in enumerate(paths):
        if path == "-" or not_regular(path):     # a stream (a pipe), or refused when parsed
            out.append(Piece(path, index))
            continue
        try:
            size = os.path.getsize(path)
            with open(path, "rb") as f:
                found.append((index, path, compression(f.read(6)), size))
        except OSError:
            out.append(Piece(path, index))
    plain = sum(size for _, _, kind, size in found if kind is None)
    step = _step(plain, piece_bytes, spread)
    packed = {index: _decompressed_size(path, kind, size)
              for index, path, kind, size in found if kind is not None}
    cut = _step(sum(packed.values()), piece_bytes, spread)
    for index, path, kind, size in found:
        if kind is not None:
            out.append(Piece(path, index, size=packed[index], cut=cut))
            continue
        cuts = list(range(0, size, step)) or [0]
        for part, start in enumerate(cuts):
            stop = cuts[part + 1] if part + 1 < len(cuts) else None
            out.append(Piece(path, index, part, start, stop,
                             (stop if stop is not None else size) - start))
    return sorted(out, key=lambda p: p.key)


def aligned(f: BinaryIO, offset: int) -> int:
    """The first line start at or after ``offset`` (0 stays 0)."""
    if offset <= 0:
        return 0
    f.seek(offset - 1)
    f.readline()
    return f.tell()


class _Range:
    """A read-only stream of bytes [start, stop) of an open file."""

    def __init__(self, f: BinaryIO, start: int, stop: int) -> None:
        self.f, self.left = f, stop - start
        f.seek(start)

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        data = self.f.read(size)
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.f.close()


def open_range(f: BinaryIO, piece: Piece) -> BinaryIO:
    """The lines of a plain file's ``piece``: from the first line starting in the range to
    the end of the last one."""
    start = aligned(f, piece.start)
    stop = aligned(f, piece.stop) if piece.stop is not None else os.fstat(f.fileno()).st_size
    return _Range(f, start, max(start, stop))          # type: ignore[return-value]
