"""A compressed input cut into pieces as it is decompressed.

A gzip, bzip2, xz or zstd stream cannot be entered mid-way, so its pieces cannot be planned
ahead as a plain file's byte ranges are. ``spool`` reads it once, cuts its decompressed lines
into pieces of about ``piece.cut`` bytes at line ends, and writes each to a temporary file of
its own, handed on as soon as it is complete: whoever parses it (``parse_piece``) reads it like
a range of a plain file and removes it (``wagon.modeling.stages.parse_stage``). So the memory
of a compressed input is that of one piece, and its pieces spread over the workers while the
rest is still being decompressed; the disk holds the pieces not yet parsed, which the caller
bounds by drawing the next piece only when a worker is ready for it.

Each piece carries the input's first lines (``head``, from which a whole-file parse detects its
layout) or, in a W3C log, the lines from its last ``#Fields:`` line before the piece, so that
every piece is read as the whole file would read those lines.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Iterator

from .parse import _FIELDS, _chunks, _open, _sample_lines
from .pieces import Piece

__all__ = ["spool"]

_FIELDS_SAMPLE = 1 << 16          # bytes from a #Fields: line a piece's head keeps (_w3c_head)


def _fields_head(block: bytes, a: int, b: int, head: bytes) -> bytes:
    """The head of what follows ``block[a:b]``: from its last ``#Fields:`` line, else
    ``head``."""
    last = None
    for last in _FIELDS.finditer(block, a, b):
        pass
    return head if last is None else _sample_lines(block[last.start():
                                                         last.start() + _FIELDS_SAMPLE])


def spool(piece: Piece, directory: str) -> Iterator[Piece]:
    """The pieces of compressed input ``piece`` (``cut`` > 0), each spooled to a file of
    ``directory``, numbered from part 0, its ``start`` and ``stop`` counted in decompressed
    bytes. An input with no line is one piece read whole. Raises LogError as a whole-file
    parse does when it cannot be opened or decompressed."""
    stream, raw = _open(piece.path)
    part, start, size = 0, 0, 0
    head = out = None
    try:
        for block in _chunks(stream, piece.path):
            if head is None:
                head = _sample_lines(block)
                w3c = _FIELDS.search(head) is not None
            view, a = memoryview(block), 0
            while a < len(block):                   # every block ends with a newline
                if out is None:
                    name = os.path.join(directory, f"spool-{piece.index}-{part}")
                    out, piece_head = open(name, "wb"), head
                b = block.find(b"\n", a + max(piece.cut - size, 1) - 1) + 1 or len(block)
                out.write(view[a:b])
                if w3c:
                    head = _fields_head(block, a, b, head)
                size += b - a
                a = b
                if size >= piece.cut:
                    out.close()
                    out = None
                    yield replace(piece, part=part, start=start, stop=start + size, size=size,
                                  spool=name, head=piece_head)
                    part, start, size = part + 1, start + size, 0
        if out is not None:
            out.close()
            out = None
            yield replace(piece, part=part, start=start, stop=start + size, size=size,
                          spool=name, head=piece_head)
        elif part == 0:
            yield piece                                   # no line: read whole, as before
    finally:
        if out is not None:
            out.close()
        stream.close()
        if raw is not None:
            raw.close()
