"""Vectorised access-log parser: large chunks of bytes in, NumPy columns out.

Each chunk is split into lines with NumPy; every field of the compiled LogFormat is located for
all lines at once (sorted positions of its terminator + ``searchsorted``); timestamps and numbers
are decoded from fixed-width gathers; strings (hosts, URLs, agents) become integer codes into
vocabularies. No per-line Python except the dictionary look-up that factorises strings.
Malformed lines are counted by reason, never raised.
"""
from __future__ import annotations

import functools
import io
import mmap
import os
import re
import stat
import sys
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Iterable, Iterator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..source import open_stream, pipe_stream, read_block
from .clean import clean_requests, distinct_times
from .jsonlog import JSON_FORMATS, bind_json, detect_json, to_text
from .pieces import DECOMPRESS_ERRORS, Piece, compression, decompressed, open_range
from .logformat import (AUTO_CANDIDATES, FormatError, LogFormat, compile_format, line_regex,
                        named_format, resolve_format)
from .presets import w3c_spec
from .shuffled import Disorder, Shuffle, disorder, restamp_inputs, shuffles_of
from .urls import LONG, MAX_URL_CHARS, page_urls
from .timefmt import _fraction, _run, _DIGIT, assemble, days_from_civil, days_in_month, decode_time

__all__ = ["Requests", "ParseStats", "LogError", "parse_logs", "parse_bytes", "detect_format",
           "REASONS", "ParseOptions", "Chunk", "PieceResult", "parse_piece", "partition_of",
           "sorted_table", "resolution_of", "finest", "MAX_PLACES"]

CHUNK_BYTES = 2 << 20             # read at a time: parsing one takes 5 times its size
MAX_LINE_BYTES = 1 << 20
EXAMPLES_KEPT = 5
_PAD = bytes(512)         # zero bytes after each chunk: room for every fixed-width gather
_WIDTHS = (8, 16, 32, 64, 128, 256, 512)              # string blocks factorised with NumPy


def _splitmix64(seed: int, n: int) -> np.ndarray:
    """``n`` odd 64-bit multipliers from SplitMix64 (Steele, Lea & Flood 2014): the block hash's
    mixing constants, without loading numpy.random at start-up (10 ms)."""
    out, x, mask = [], seed, (1 << 64) - 1
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) & mask
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append((z ^ (z >> 31)) | 1)
    return np.array(out, np.uint64)


_MIX = _splitmix64(12, 65)
#: the low k bytes of a little-endian word (k = 0..8): what of a word lies inside a string
_WORD_MASK = np.array([(1 << 8 * k) - 1 for k in range(9)], np.uint64)

#: why a line was not parsed; index 0 means parsed
REASONS = ("ok", "empty line", "does not match format", "bad timestamp", "bad request line",
           "bad status", "bad size", "bad duration", "no client address",
           "impossible date or zone", "not JSON", "line too long", "header line",
           "not an access record", "NUL bytes")
(EMPTY, STRUCTURE, BAD_TIME, BAD_REQUEST, BAD_STATUS, BAD_SIZE, BAD_DURATION, NO_CLIENT,
 IMPOSSIBLE_DATE, NOT_JSON, TOO_LONG, HEADER, NOT_ACCESS, NUL_BYTES) = range(1, 15)
#: lines skipped that are not malformed: a W3C file's directives, a CSV header, a server's
#: own messages among JSON access records
SKIPS = (REASONS[HEADER], REASONS[NOT_ACCESS])
#: how a line starts when it is a header (W3C directives, Google Cloud Storage's CSV header)
_HEADER_STARTS = (b"#", b'"time_micros"')
#: roles whose every field is checked as a number, even when a better one gives the value
#: (a duration is not: nginx's $upstream_* lists hold ", " and shift the fields after them)
_CHECKED = ("size", "size_total", "size_in")
#: lines the layout's regex, or another known layout, may read (a quote in a request, a file
#: that mixes layouts)
_RETRY = (STRUCTURE, BAD_TIME, BAD_REQUEST, BAD_STATUS, BAD_SIZE, BAD_DURATION, NO_CLIENT,
          IMPOSSIBLE_DATE)
_BOM = b"\xef\xbb\xbf"


def _key3(text: str) -> int:
    """Three letters, case-folded, as one integer (month names)."""
    return ((ord(text[0]) | 32) << 16) | ((ord(text[1]) | 32) << 8) | (ord(text[2]) | 32)


_MONTH_KEYS = {_key3(m): i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_MONTHS = np.array(sorted(_MONTH_KEYS), dtype=np.int64)
_MONTH_ORDER = np.array([_MONTH_KEYS[k] for k in sorted(_MONTH_KEYS)], dtype=np.int64)


_HTTP = b"HTTP/"
_SPACE = np.zeros(256, bool)
_SPACE[32] = True
_regex_for = functools.lru_cache(maxsize=16)(line_regex)


class LogError(Exception):
    """An input that cannot be read at all (missing file, no parseable line, unknown format).

    Example:

    >>> try:
    ...     wagon.parse_logs(["no-such.log"])
    ... except wagon.LogError as e:
    ...     print(e)
    no-such.log: ...
    """


def sorted_table(tables: list[list[str]]) -> tuple[list[str], list[np.ndarray]]:
    """(the distinct strings of ``tables`` in sorted order, for each table the index of each of
    its strings among them): string tables merged, as ``np.unique(..., return_inverse=True)``
    would, by Python's sort and a dict (NumPy sorts and searches object arrays one rich
    comparison at a time: 3-5x slower)."""
    names = sorted({s for table in tables for s in table})
    at = {s: i for i, s in enumerate(names)}
    return names, [np.fromiter((at[s] for s in table), np.int64, len(table)) for table in tables]


def _groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(one index per distinct key, the group of each key): ``np.unique``'s work without its
    stable sort (any member may stand for its group)."""
    order = np.argsort(key)
    ordered = key[order]
    new = np.empty(len(key), bool)
    new[:1] = True
    new[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(len(key), np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


class Vocab:
    """Bytes → dense integer codes, shared across chunks and files."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}

    def codes(self, raw: bytes, arr: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Codes of the strings raw[a:b], factorised with NumPy: strings of up to 512 bytes are
        gathered into zero-padded blocks of 8, 16, ... 512 bytes by length, hashed and
        grouped, each group checked byte for byte against its first string; the dict sees one
        string per group (longer strings and hash collisions go through it one by one)."""
        out = np.empty(len(a), np.int32)
        length = b - a
        bucket = np.searchsorted(_WIDTHS, length).astype(np.int8)
        order = np.argsort(bucket, kind="stable")
        bounds = np.searchsorted(bucket[order], np.arange(len(_WIDTHS) + 2))
        for k, width in enumerate(_WIDTHS):
            rows = order[bounds[k]:bounds[k + 1]]
            if len(rows):
                out[rows] = self._block(raw, arr, a[rows], length[rows], width)
        rest = order[bounds[len(_WIDTHS)]:]
        if len(rest):
            out[rest] = self._lookup(raw, a[rest], b[rest])
        return out

    def _block(self, raw: bytes, arr: np.ndarray, a: np.ndarray, length: np.ndarray,
               width: int) -> np.ndarray:
        """Codes of strings of ``length`` at most ``width`` bytes, as 64-bit words: a word column
        at a time (NumPy reduces a row of a few words far slower than it adds whole columns),
        the bytes past each string's end zeroed, hashed, grouped, each checked against its
        group's first string."""
        words = _gather(arr, a, width).view(np.uint64)
        for j in range(words.shape[1]):
            words[:, j] &= _WORD_MASK[np.clip(length - 8 * j, 0, 8)]
        key = words[:, 0] * _MIX[0]
        for j in range(1, words.shape[1]):
            key += words[:, j] * _MIX[j]
        key ^= length.astype(np.uint64) * _MIX[-1]
        first, inverse = _groups(key)
        rep = first[inverse]
        out = self._lookup(raw, a[first], a[first] + length[first])[inverse]
        differs = length != length[rep]
        for j in range(words.shape[1]):
            column = words[:, j]
            differs |= column != column[rep]
        bad = np.flatnonzero(differs)
        if len(bad):                                    # hash collisions: one by one
            out[bad] = self._lookup(raw, a[bad], a[bad] + length[bad])
        return out

    def _lookup(self, raw: bytes, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d = self.index
        return np.asarray([d.setdefault(raw[x:y], len(d)) for x, y in zip(a.tolist(), b.tolist())],
                          dtype=np.int32)

    def code(self, key: bytes) -> int:
        return self.index.setdefault(key, len(self.index))

    def joined(self, raw: bytes, arr: np.ndarray, spans: list[np.ndarray]) -> np.ndarray:
        """Codes of raw[a:b] + query, the query (nginx's $args has no '?') joined with '?':
        the paths and the queries factorised apart (``codes``), each distinct pair joined
        once."""
        a, b, qa, qb = spans
        first = arr[np.minimum(qa, len(arr) - 1)]
        mark = (qb > qa) & (first == ord("?"))
        none = (qb == qa) | ((qb - qa == 1) & ((first == ord("-")) | mark))
        qa = qa + mark
        path, query = Vocab(), Vocab()
        pair = (path.codes(raw, arr, a, b).astype(np.int64) * (len(a) + 1)
                + np.where(none, 0, query.codes(raw, arr, qa, qb) + 1))
        _, at, inverse = np.unique(pair, return_index=True, return_inverse=True)
        d = self.index
        joined = [d.setdefault(raw[x:y] + (b"" if no else b"?" + raw[p:q]), len(d))
                  for x, y, p, q, no in zip(*(v[at].tolist() for v in (a, b, qa, qb, none)))]
        return np.asarray(joined, dtype=np.int32)[inverse.ravel()]

    def strings(self) -> list[str]:
        return [k.decode("utf-8", "backslashreplace") for k in self.index]


@dataclass
class Requests:
    """Parsed requests as columns; string columns are codes into the lists ``hosts``, ``urls``,
    ``agents``, ``methods``, ``referers``, ``vhosts``, ``content_types`` (-1 when the layout
    has no such field). ``time`` is when the request began: for layouts that log the end
    (nginx, Caddy), the logged time minus the duration when there is one.

    Example:

    >>> req, _ = wagon.parse_logs(["access_log.gz"])
    >>> len(req.time), req.urls[req.url[0]], int(req.status[0])
    (24540, '/section4/page004.html', 200)
    """

    time: np.ndarray          # float64, seconds since the epoch, UTC
    host: np.ndarray          # int32 (the client: host, or first X-Forwarded-For address)
    url: np.ndarray           # int32 (query string dropped unless keep_query)
    method: np.ndarray        # int16
    status: np.ndarray        # int16
    size: np.ndarray          # int64 bytes ('-' → 0)
    agent: np.ndarray         # int32, -1 when absent
    duration: np.ndarray      # float64 seconds, NaN when the layout has none
    file: np.ndarray          # int16: index of the input file
    hosts: list[str]
    urls: list[str]
    agents: list[str]
    methods: list[str]
    referer: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    vhost: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    content_type: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    line: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    referers: list[str] = field(default_factory=list)
    vhosts: list[str] = field(default_factory=list)
    content_types: list[str] = field(default_factory=list)
    #: the grid of the logged timestamps (s, ``resolution_of``): 1.0 for whole seconds, 0.001
    #: for milliseconds, ... 1e-6; 0.0 when finer (exact values); None: unknown
    resolution: float | None = None
    #: > 0: the times are known only to their cell of this many seconds (stamps shuffled in
    #: it, ``logs.shuffled``), spread inside it in the log's order
    cell: float = 0.0

    def __post_init__(self) -> None:
        n = len(self.time)
        for k in ("referer", "vhost", "content_type"):
            if len(getattr(self, k)) != n:
                setattr(self, k, np.full(n, -1, np.int32))
        if len(self.line) != n:
            self.line = np.zeros(n, np.int64)

    def __len__(self) -> int:
        return len(self.time)

    def take(self, idx: np.ndarray) -> "Requests":
        """Rows ``idx`` (indices or mask), vocabularies shared."""
        cols = {k: getattr(self, k)[idx] for k in _COLUMNS}
        return Requests(**cols, **{k: getattr(self, k) for k in _VOCABS},
                        resolution=self.resolution, cell=self.cell)


MAX_PLACES = 6                      # timestamps on a grid down to 1 µs; finer ones are exact


def finest(a: int | None, b: int | None) -> int | None:
    """The decimal places that hold times written with ``a`` and with ``b`` places (None: no
    time): decimal grids nest, so the finer grid holds both."""
    return b if a is None else a if b is None else max(a, b)


def resolution_of(places: int | None) -> float | None:
    """The grid (s) of times written with ``places`` decimal places: 10^-places s down to 1 µs,
    0.0 for finer times (exact values), None when no time was read."""
    if places is None:
        return None
    return 10.0 ** -places if places <= MAX_PLACES else 0.0


_COLUMNS = ("time", "host", "url", "method", "status", "size", "agent", "duration", "file",
            "referer", "vhost", "content_type", "line")
_VOCABS = ("hosts", "urls", "agents", "methods", "referers", "vhosts", "content_types")
_DTYPES = dict(time=np.float64, host=np.int32, url=np.int32, method=np.int16, status=np.int16,
               size=np.int64, agent=np.int32, duration=np.float64, file=np.int16,
               referer=np.int32, vhost=np.int32, content_type=np.int32, line=np.int64)


@dataclass
class ParseStats:
    """What was read: line counts, malformed lines by reason and the first few of them, time
    outliers and cross-file duplicates left out.

    Example:

    >>> _, stats = wagon.parse_logs(["access_log.gz"])
    >>> stats.lines, stats.parsed, stats.malformed_total
    (24545, 24540, 5)
    """

    lines: int = 0
    parsed: int = 0
    malformed: Counter = field(default_factory=Counter)
    examples: list[tuple[str, int, str, str]] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    time_outliers: int = 0
    duplicates: int = 0
    left_out: list[tuple[str, int, str, str]] = field(default_factory=list)
    long_urls: int = 0        # requests whose URL was cut to MAX_URL_CHARS (wagon.logs.urls)
    shuffled: dict[str, Shuffle] = field(default_factory=dict)   # inputs whose stamps were
                                                                 # shuffled (logs.shuffled)

    @property
    def malformed_total(self) -> int:
        return sum(v for k, v in self.malformed.items() if k not in SKIPS)

    @property
    def skipped(self) -> dict[str, int]:
        """Lines passed over that are not malformed (headers, a server's other records)."""
        return {k: v for k, v in self.malformed.items() if k in SKIPS}

    def by_reason(self) -> dict[str, int]:
        """Malformed lines by reason, most frequent first."""
        return {k: v for k, v in self.malformed.most_common() if k not in SKIPS}

    def summary_lines(self) -> list[str]:
        """What was read and what was not, as ``wagon fit`` and ``wagon compare`` print it: the
        layout of each input, lines parsed, malformed by reason, skipped, URLs cut, lines left
        out."""
        out = [f"{os.path.basename(path)}: format {fmt}" for path, fmt in self.formats.items()]
        bad = ", ".join(f"{k} {v:,}" for k, v in self.by_reason().items())
        skipped = ", ".join(f"{k} {v:,}" for k, v in self.skipped.items())
        out.append(f"lines {self.lines:,}  parsed {self.parsed:,}  malformed "
                   f"{self.malformed_total:,}" + (f" ({bad})" if bad else "")
                   + (f"  skipped: {skipped}" if skipped else ""))
        if self.long_urls:
            out.append(f"URLs longer than {MAX_URL_CHARS:,} characters cut (ending in {LONG}): "
                       f"{self.long_urls:,} requests")
        out += [f"{os.path.basename(path)}: {s.describe()}" for path, s in self.shuffled.items()]
        if self.time_outliers or self.duplicates:
            out.append(f"left out: {self.time_outliers:,} time outliers, {self.duplicates:,} "
                       "lines repeated from an earlier input")
        return out

    def as_dict(self) -> dict:
        return {"lines": self.lines, "parsed": self.parsed, "malformed": self.malformed_total,
                "malformed_by_reason": self.by_reason(), "skipped": self.skipped,
                "formats": dict(self.formats),
                "time_outliers": self.time_outliers, "duplicate_lines": self.duplicates,
                "long_urls": self.long_urls,
                "shuffled_stamps": {p: s.as_dict() for p, s in self.shuffled.items()},
                "examples": [{"file": f, "line": n, "reason": r, "text": t}
                             for f, n, r, t in self.examples + self.left_out]}


# ---------------------------------------------------------------------------------------------
# vectorised primitives

def _line_bounds(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive, trailing CR dropped) of each line of a buffer ending in LF."""
    nl = np.flatnonzero(arr == 10)
    starts = np.empty_like(nl)
    starts[:1] = 0
    starts[1:] = nl[:-1] + 1
    ends = nl.copy()
    cr = (ends > starts) & (arr[ends - 1] == 13)
    ends -= cr
    return starts, ends


def _gather(arr: np.ndarray, a: np.ndarray, width: int) -> np.ndarray:
    """``arr[a_i : a_i + width]`` for every i, as an (n, width) uint8 block (chunks are padded
    with ``_PAD`` so every window exists; indices past the end are clipped)."""
    return sliding_window_view(arr, width)[np.minimum(a, len(arr) - width)]


def _match_at(arr: np.ndarray, pos: np.ndarray, ends: np.ndarray, lit: bytes) -> np.ndarray:
    """Does ``lit`` stand at ``pos`` of each line, inside the line?"""
    ok = pos + len(lit) <= ends
    last = len(arr) - 1
    for k, c in enumerate(lit):
        ok &= arr[np.minimum(pos + k, last)] == c
    return ok


#: bytes that are rare in log lines: the best anchors to find a multi-byte separator
_RARE_FIRST = b'[]"\'|\t{}<>;'


def _anchor(lit: bytes) -> int:
    """Index of the byte of ``lit`` to search for first (the rarest-looking one)."""
    for k, c in enumerate(lit):
        if c in _RARE_FIRST:
            return k
    return 0


def _next_at_or_after(occ: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First occurrence ≥ pos (and whether there is one)."""
    if len(occ) == 0:
        return pos.copy(), np.zeros(len(pos), bool)
    j = np.searchsorted(occ, pos)
    found = j < len(occ)
    return occ[np.minimum(j, len(occ) - 1)], found


def _parse_uint(arr: np.ndarray, a: np.ndarray, b: np.ndarray, cap: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Decimal digits in [a, b) → int64, with a validity mask (1 to ``cap`` digits)."""
    length = b - a
    ok = (length >= 1) & (length <= cap)
    width = int(length[ok].max()) if ok.any() else 1
    block = _gather(arr, a, width)
    value = np.zeros(len(a), np.int64)
    for k in range(width):
        inside = k < length
        d = block[:, k] - np.uint8(48)                 # uint8: other bytes wrap above 9
        ok &= ~inside | (d <= 9)
        value = np.where(inside, value * 10 + d, value)
    return value, ok


def _number(M: np.ndarray, cols: Iterable[int]) -> np.ndarray:
    """Decimal value of the digit columns ``cols`` of a gathered uint8 block (int32)."""
    v = np.zeros(len(M), np.int32)
    for c in cols:
        v = v * 10 + (M[:, c] - 48)
    return v


def _all_digits(M: np.ndarray, cols: list[int]) -> np.ndarray:
    """Are the columns ``cols`` of a gathered uint8 block all decimal digits? (Column by column:
    NumPy's row reductions over a few columns are slow.)"""
    ok = np.ones(len(M), bool)
    for c in cols:
        ok &= (M[:, c] - np.uint8(48)) <= 9
    return ok


def _time_clf(arr: np.ndarray, a: np.ndarray, b: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``01/Aug/1995:00:00:01 -0400`` → (UTC seconds, readable, a real date and zone)."""
    M = _gather(arr, a, 26)
    ok = (b - a == 26) & _all_digits(M, [0, 1, 7, 8, 9, 10, 12, 13, 15, 16, 18, 19, 22, 23, 24, 25])
    for col, ch in ((2, "/"), (6, "/"), (11, ":"), (14, ":"), (17, ":"), (20, " ")):
        ok &= M[:, col] == ord(ch)
    minus = M[:, 21] == ord("-")
    ok &= minus | (M[:, 21] == ord("+"))
    low = M[:, 3:6].astype(np.int64) | 32
    key = (low[:, 0] << 16) | (low[:, 1] << 8) | low[:, 2]
    p = np.minimum(np.searchsorted(_MONTHS, key), 11)
    ok &= _MONTHS[p] == key
    day, year = _number(M, (0, 1)).astype(np.int64), _number(M, (7, 8, 9, 10)).astype(np.int64)
    hh, mm, ss = _number(M, (12, 13)), _number(M, (15, 16)), _number(M, (18, 19))
    zh, zm = _number(M, (22, 23)), _number(M, (24, 25))
    zone = zh * 3600 + zm * 60
    month = _MONTH_ORDER[p]
    real = ((day >= 1) & (day <= days_in_month(year, month)) & (hh <= 23) & (mm <= 59)
            & (ss <= 60) & (zh <= 14) & (zm <= 59) & (year >= 1970))
    days = days_from_civil(year, month, day)
    seconds = days * 86400 + (hh * 3600 + mm * 60 + ss - np.where(minus, -zone, zone))
    return seconds.astype(np.float64), ok, real


def _time_epa(arr: np.ndarray, a: np.ndarray, b: np.ndarray, base: float
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``30:00:00:00`` (day of month:h:m:s, no month, year or zone) → seconds after ``base``."""
    M = _gather(arr, a, 11)
    ok = (b - a == 11) & _all_digits(M, [0, 1, 3, 4, 6, 7, 9, 10])
    for col in (2, 5, 8):
        ok &= M[:, col] == ord(":")
    day, hh = _number(M, (0, 1)), _number(M, (3, 4))
    mm, ss = _number(M, (6, 7)), _number(M, (9, 10))
    real = (day >= 1) & (day <= 31) & (hh <= 23) & (mm <= 59) & (ss <= 60)
    return base + ((day - 1) * 86400 + hh * 3600 + mm * 60 + ss).astype(np.float64), ok, real


def _parse_decimal(arr: np.ndarray, a: np.ndarray, b: np.ndarray, strict: bool,
                   integer: bool = False, fraction: bool = False
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``12``, ``0.004``, ``-`` or a negative number (NaN: AWS's ``-1``, no target) in [a, b)
    → float64 and validity. Not ``strict``: a leading number is enough (nginx's ``0.004,
    0.002`` for several upstreams). ``integer``: counts of a unit (ms, µs) have no fraction;
    ``fraction``: nginx's times always have one (``%.3f``)."""
    minus = (b - a > 1) & (arr[np.minimum(a, len(arr) - 1)] == ord("-"))
    a = a + minus
    n1 = _run(arr, a, _DIGIT, 16)
    whole, _ = _parse_uint(arr, a, a + n1, 16)
    after = a + n1
    dot = arr[np.minimum(after, len(arr) - 1)] == ord(".")
    n2 = np.where(dot & (after < b), _run(arr, after + 1, _DIGIT, 12), 0)
    value = whole + _fraction(arr, after + 1, n2)
    end = after + np.where(dot & (n2 > 0), n2 + 1, 0)
    dash = (b - a == 1) & (arr[np.minimum(a, len(arr) - 1)] == ord("-"))
    ok = (n1 >= 1) & ((end == b) if strict else (end <= b))
    if integer:
        ok &= end == after
    if fraction:
        ok &= end > after
    return np.where(dash | minus, np.nan, value), ok | dash


# ---------------------------------------------------------------------------------------------
# one chunk

@dataclass
class _Options:
    keep_query: bool = False
    epa_base: float = 0.0
    client: str = "host"          # host | forwarded (first X-Forwarded-For address)
    mixed: bool = False           # lines the file's layout cannot read: try the other layouts


@dataclass
class _Vocabs:
    hosts: Vocab = field(default_factory=Vocab)
    urls: Vocab = field(default_factory=Vocab)
    agents: Vocab = field(default_factory=Vocab)
    methods: Vocab = field(default_factory=Vocab)
    referers: Vocab = field(default_factory=Vocab)
    vhosts: Vocab = field(default_factory=Vocab)
    content_types: Vocab = field(default_factory=Vocab)


#: string columns: (name in the output, vocabulary)
_STRINGS = (("host", "hosts"), ("url", "urls"), ("method", "methods"), ("agent", "agents"),
            ("referer", "referers"), ("vhost", "vhosts"), ("content_type", "content_types"))


def _inner(f, lit: bytes) -> int:
    """How many times a time field's own text holds ``lit``, the separator that ends it
    (``%Y-%m-%d %H:%M:%S`` holds one space): that many occurrences are inside the field."""
    if f.time is None or not lit:
        return 0
    return b"\0".join(t[1] if t[0] == "lit" else b"" for t in f.time.tokens).count(lit)


class _Chunk:
    """The vectorised walk of one buffer of whole lines."""

    def __init__(self, raw: bytes, fmt: LogFormat, vocabs: _Vocabs, opts: _Options,
                 reason: np.ndarray | None = None) -> None:
        self.raw, self.fmt, self.vocabs, self.opts = raw, fmt, vocabs, opts
        self.arr = np.frombuffer(raw + _PAD, np.uint8)
        self.starts, self.ends = _line_bounds(self.arr)
        n = len(self.starts)
        self.reason = np.zeros(n, np.uint8) if reason is None else reason
        self.places: int | None = None    # decimal places of the parsed lines' logged times
        self.reason[(self.ends == self.starts) & (self.reason == 0)] = EMPTY
        header = np.zeros(n, bool)
        for start in _HEADER_STARTS:
            header |= _match_at(self.arr, self.starts, self.ends, start)
        self.reason[header & (self.reason == 0)] = HEADER
        # NUL bytes: what a crash leaves of a file's unwritten blocks, before the line that
        # follows them ("\0\0...10.0.0.1 - - [...]"): the line is not the one logged
        nul = np.flatnonzero(self.arr[:len(raw)] == 0)
        self.reason[np.searchsorted(self.starts, nul, side="right") - 1] = NUL_BYTES
        self.reason[self.ends - self.starts > MAX_LINE_BYTES] = TOO_LONG
        self._occ: dict[bytes, np.ndarray] = {}

    def occ(self, lit: bytes) -> np.ndarray:
        """Sorted start positions of ``lit`` in the chunk (cached; single bytes are shared)."""
        if lit in self._occ:
            return self._occ[lit]
        if len(lit) == 1:
            pos = np.flatnonzero(self.arr == lit[0])
        else:
            k = _anchor(lit)
            pos = self.occ(lit[k:k + 1]) - k
            pos = pos[(pos >= 0) & (pos + len(lit) <= len(self.arr))]
            for j, c in enumerate(lit):
                if j != k:
                    pos = pos[self.arr[pos + j] == c]
        self._occ[lit] = pos
        return pos

    def fail(self, rows: np.ndarray, bad: np.ndarray, why: int) -> None:
        """Give reason ``why`` to the lines ``rows[bad]`` that have none yet."""
        r = rows[bad]
        self.reason[r[self.reason[r] == 0]] = why

    def spans(self) -> list[list[np.ndarray]]:
        """[a, b) of every field on every line; lines that do not fit get reason STRUCTURE.

        Spans of such lines are meaningless but stay harmless: every gather clips its indices."""
        fmt, starts, ends = self.fmt, self.starts, self.ends
        ok = self.reason == 0
        pos = starts
        out = []
        last = len(fmt.fields) - 1
        prefix = fmt.literals[0]
        if prefix:
            ok &= _match_at(self.arr, pos, ends, prefix)
            pos = pos + len(prefix)
        prev_lit, prev_j = None, None
        for i in range(len(fmt.fields)):
            nxt = fmt.literals[i + 1]       # the literal that ends field i
            if fmt.fields[i].pad:
                pos = pos + _run(self.arr, pos, _SPACE, 32)
            if i == last:
                end = ends - len(nxt)
                ok &= end >= pos
                if nxt:
                    ok &= _match_at(self.arr, end, ends, nxt)
            else:
                occ = self.occ(nxt)
                if nxt == prev_lit and len(occ):
                    # same separator as the previous field: its next occurrence, unless overlapping
                    j = prev_j + 1
                    stale = (j >= len(occ)) | (occ[np.minimum(j, len(occ) - 1)] < pos)
                    j[stale] = np.searchsorted(occ, pos[stale])
                else:
                    j = np.searchsorted(occ, pos)
                j = j + _inner(fmt.fields[i], nxt)
                ok &= j < len(occ)
                end = occ[np.minimum(j, len(occ) - 1)] if len(occ) else pos
                ok &= end + len(nxt) <= ends
                prev_lit, prev_j = nxt, j
            out.append([pos, end])
            pos = end + len(nxt)
        self.reason[~ok & (self.reason == 0)] = STRUCTURE
        return out

    def regex_spans(self, rows: np.ndarray) -> tuple[np.ndarray, list[list[np.ndarray]]]:
        """Slow path: split ``rows`` with the format's backtracking regex.

        Returns the rows that matched and their field spans."""
        rx = _regex_for(self.fmt)
        matched, spans = [], []
        for r in rows.tolist():
            s, e = int(self.starts[r]), int(self.ends[r])
            m = rx.fullmatch(self.raw, s, e)
            if m is not None:
                matched.append(r)
                spans.append([m.span(g) for g in range(1, len(self.fmt.fields) + 1)])
        if not matched:
            return np.zeros(0, np.int64), []
        sp = np.asarray(spans, dtype=np.int64)          # rows × fields × 2
        return np.asarray(matched), [[sp[:, k, 0], sp[:, k, 1]] for k in range(sp.shape[1])]

    def _cut_query(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """End of the URL [a, b) without its query string, unless queries are kept."""
        if self.opts.keep_query:
            return b
        q, found = _next_at_or_after(self.occ(b"?"), a)
        return np.where(found & (q < b), q, b)

    def request(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
        """``METHOD URL [HTTP/x.y]`` → (method span, URL span, ok); URLs may hold spaces."""
        arr = self.arr
        sp = self.occ(b" ")
        s1, found = _next_at_or_after(sp, a)
        ok = found & (s1 < b) & (s1 > a) & (s1 - a <= 16)
        j = np.searchsorted(sp, b) - 1
        s_last = sp[np.maximum(j, 0)] if len(sp) else s1
        proto = _gather(arr, np.minimum(s_last + 1, len(arr) - 1), 5)
        has_proto = (j >= 0) & (s_last > s1) & (s_last < b)
        for k, c in enumerate(_HTTP):
            has_proto &= proto[:, k] == c
        url_a = s1 + 1
        url_b = self._cut_query(url_a, np.where(has_proto, s_last, b))
        ok &= url_b > url_a
        return a, s1, url_a, url_b, ok

    def before_port(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """End of the address of ``address:port`` in [a, b): the last colon's position (an
        IPv6 address keeps its own colons)."""
        occ = self.occ(b":")
        j = np.searchsorted(occ, b) - 1
        last = occ[np.maximum(j, 0)] if len(occ) else b
        return np.where((j >= 0) & (last > a), last, b)

    def first_address(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """End of the first address of an X-Forwarded-For list in [a, b), and whether there is
        one (not empty, not ``-``)."""
        comma, found = _next_at_or_after(self.occ(b","), a)
        end = np.where(found & (comma < b), comma, b)
        dash = (end - a == 1) & (self.arr[np.minimum(a, len(self.arr) - 1)] == ord("-"))
        return end, (end > a) & ~dash

    def decode(self, spans: list[list[np.ndarray]], rows: np.ndarray) -> dict[str, np.ndarray]:
        """Decode lines ``rows`` (``spans`` aligned with them): numeric columns, plus [a, b) of the
        string columns (``<name>_a``, ``<name>_b``) to factorise once lines are final."""
        arr = self.arr
        out: dict[str, np.ndarray] = {}
        rank: dict[str, int] = {}
        groups: dict[str, dict[str, np.ndarray]] = {}
        for f, (a, b) in zip(self.fmt.fields, spans):
            role = f.role
            # a better field of this role was read: a number is still checked (combinedio's
            # %O must not take Traefik's "router" "server" 2ms), its value not kept
            second = role != "time" and rank.get(role, 99) <= f.rank
            if role == "skip" or (second and role not in _CHECKED):
                continue
            if not second:
                rank[role] = f.rank
            if role == "time":
                comps, ok = self._time(f, a, b)
                self.fail(rows, ~ok, BAD_TIME)
                group = groups.setdefault(f.time.group, {})
                places = np.maximum(group.get("places", 0), comps.pop("places", 0))
                group.update(comps, places=places)
            elif role == "status":
                out["status"], ok = _parse_uint(arr, a, b, 3)
                self.fail(rows, ~ok | (b - a != 3) | (out["status"] < 100), BAD_STATUS)
            elif role in ("size", "size_total", "size_in"):
                dash = (b - a == 1) & (arr[np.minimum(a, len(arr) - 1)] == ord("-"))
                value, ok = _parse_uint(arr, a, b, 15)
                self.fail(rows, ~(ok | dash), BAD_SIZE)
                if not second:
                    out[role] = np.where(dash, 0, value)
            elif role == "duration":
                value, ok = _parse_decimal(arr, a, b, strict=f.rank < 3, integer=f.unit < 1,
                                           fraction=f.fraction)
                out["duration"] = value * f.unit
                self.fail(rows, ~ok, BAD_DURATION)
            elif role == "request":
                out["method_a"], out["method_b"], out["url_a"], out["url_b"], ok = \
                    self.request(a, b)
                self.fail(rows, ~ok, BAD_REQUEST)
            elif role == "url":
                out["url_a"], out["url_b"] = a, self._cut_query(a, b)
                self.fail(rows, b == a, BAD_REQUEST)
            elif role == "forwarded":
                out["fwd_a"], (out["fwd_b"], out["fwd_ok"]) = a, self.first_address(a, b)
            elif role in ("host", "method", "agent", "referer", "vhost", "content_type", "query"):
                out[role + "_a"], out[role + "_b"] = a, self.before_port(a, b) if f.port else b
        self._client(out, rows)
        self._times(out, groups, rows)
        if "size" not in out and "size_total" in out:      # %S: bytes in and out (minus %I)
            out["size"] = out["size_total"] - out.get("size_in", 0)
        out.pop("size_total", None)
        out.pop("size_in", None)
        return out

    def _client(self, out: dict[str, np.ndarray], rows: np.ndarray) -> None:
        """The client's span: the first X-Forwarded-For address when asked for (or when it is
        the only client field), the connection's address otherwise or when it is absent."""
        if "fwd_a" in out:
            fa, fb, fok = out.pop("fwd_a"), out.pop("fwd_b"), out.pop("fwd_ok")
            if "host_a" not in out:
                self.fail(rows, ~fok, NO_CLIENT)
                out["host_a"], out["host_b"] = fa, fb
            elif self.opts.client == "forwarded":
                out["host_a"] = np.where(fok, fa, out["host_a"])
                out["host_b"] = np.where(fok, fb, out["host_b"])
        if "host_a" in out:
            self.fail(rows, out["host_b"] == out["host_a"], NO_CLIENT)

    def _times(self, out: dict[str, np.ndarray], groups: dict, rows: np.ndarray) -> None:
        """The request's start: the ``begin`` time, else the ``end`` time minus the duration
        (and the duration from both when only they are logged)."""
        n = len(rows)
        times = {}
        for group, comps in groups.items():
            t, real = assemble(comps, n, self.opts.epa_base)
            self.fail(rows, ~(real & comps.get("real", True)), IMPOSSIBLE_DATE)
            times[group] = t
        logged_group = "begin" if "begin" in times else "end"
        logged = times[logged_group]
        if "begin" in times and "end" in times and "duration" not in out:
            out["duration"] = np.maximum(times["end"] - times["begin"], 0.0)
        start = logged
        if "begin" not in times and "duration" in out:
            start = logged - np.nan_to_num(out["duration"])
        out["time"] = start
        out["places"] = np.broadcast_to(groups[logged_group]["places"], n).astype(np.int8)

    def columns(self, slow: bool = True) -> dict[str, np.ndarray]:
        """Decode every line; returns the columns of the lines that parsed. ``slow``: split
        the lines the vectorised walk cannot with the layout's regex."""
        spans = self.spans()
        rows = np.arange(len(self.starts))
        cols = self.decode(spans, rows)
        retry = rows[np.isin(self.reason, _RETRY)]
        if slow and len(retry):
            fixed, fixed_spans = self.regex_spans(retry)
            if len(fixed):
                self.reason[fixed] = 0
                for k, v in self.decode(fixed_spans, fixed).items():
                    cols[k][fixed] = v
        good = self.reason == 0
        n = int(good.sum())
        if n == len(good):              # every line parsed (most chunks): no copy to make
            good = slice(None)
        places = cols.pop("places")[good]
        self.places = int(places.max()) if len(places) else None
        out = {k: v[good] for k, v in cols.items() if not k.endswith(("_a", "_b"))}
        out.setdefault("size", np.zeros(n, np.int64))
        out.setdefault("duration", np.full(n, np.nan))
        for name, vocab_name in _STRINGS:
            vocab = getattr(self.vocabs, vocab_name)
            if name + "_a" not in cols:
                out[name] = (np.full(n, vocab.code(b"-"), np.int32) if name == "method"
                             else np.full(n, -1, np.int32))
            elif name == "url" and "query_a" in cols and self.opts.keep_query:
                out[name] = vocab.joined(self.raw, self.arr, [cols[k][good] for k in
                                                              ("url_a", "url_b", "query_a",
                                                               "query_b")])
            else:
                out[name] = vocab.codes(self.raw, self.arr, cols[name + "_a"][good],
                                        cols[name + "_b"][good])
        return out

    def _time(self, f, a: np.ndarray, b: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Components of one time field, and whether it could be read."""
        if f.time.fast == "clf":
            t, ok, real = _time_clf(self.arr, a, b)
            return {"epoch": t, "real": real}, ok
        if f.time.fast == "epa":
            t, ok, real = _time_epa(self.arr, a, b, self.opts.epa_base)
            return {"epoch": t, "real": real}, ok
        return decode_time(self.arr, a, b, f.time)

    def line_text(self, i: int, source: bytes | None = None) -> str:
        """Line ``i`` as logged (``source``: the chunk's original bytes, for JSON lines)."""
        if source is not None:
            line = source.split(b"\n", i + 1)[i][:200]
        else:
            s, e = int(self.starts[i]), int(self.ends[i])
            line = self.raw[s:min(e, s + 200)]
        return line.decode("utf-8", "backslashreplace").replace("\0", "\\x00")


# ---------------------------------------------------------------------------------------------
# files

def _sniff(name: str, stream: BinaryIO) -> BinaryIO:
    """``stream`` decompressed when it starts with a gzip, bzip2, xz or zstd header."""
    if not hasattr(stream, "peek"):
        stream = io.BufferedReader(stream)            # type: ignore[arg-type]
    kind = compression(stream.peek(6)[:6])
    try:
        return decompressed(kind, stream) if kind else stream
    except OSError as e:                              # zstd without its module
        raise LogError(f"{name}: {e}") from None


def _open(path: str) -> tuple[BinaryIO, BinaryIO | None]:
    """(decompressed stream, underlying raw file for progress) of a path, or of stdin for '-'."""
    if path == "-":
        return _sniff(path, _stdin()), None
    raw = open_stream(path, LogError)
    return _sniff(path, raw), raw


def _stdin() -> BinaryIO:
    """Standard input as a log: a pipe (``pipe_stream``), a file or a terminal; a device
    (``< /dev/zero``) is a LogError, as it is given by name; a stream without a descriptor (a
    caller's in-memory one) is read as it is."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return sys.stdin.buffer
    if (stat.S_ISCHR(mode) and not sys.stdin.isatty()) or stat.S_ISBLK(mode) or \
            stat.S_ISDIR(mode):
        raise LogError("-: standard input is a device, not a log file or a pipe")
    if stat.S_ISFIFO(mode):
        return pipe_stream(io.FileIO(sys.stdin.fileno(), "rb", closefd=False))
    return sys.stdin.buffer


def _reached(stream: BinaryIO, done: int) -> int:
    """How far a decompressing ``stream`` got: its position (a read that fails loses the
    block it was filling, so ``done``, the bytes handed over before it, says 0 for a file
    smaller than a block)."""
    try:
        return max(done, stream.tell())
    except (OSError, ValueError, AttributeError):
        return done


def _chunks(stream: BinaryIO, name: str, size: int = CHUNK_BYTES, at_start: bool = True
            ) -> Iterator[bytes]:
    """Buffers of whole lines (the last line gets a newline if it lacked one; a UTF-8 byte order
    mark at the start of a file, ``at_start``, is dropped)."""
    rest = b""
    first = at_start
    done = 0
    while True:
        try:
            block = read_block(stream, size)
        except DECOMPRESS_ERRORS as e:
            raise LogError(f"{name}: cannot decompress after {_reached(stream, done):,} bytes "
                           f"(truncated or damaged): {e}") from None
        done += len(block)
        if first and block.startswith(_BOM):
            block = block[len(_BOM):] or b"\n"        # a lone mark still makes a line
        first = False
        if not block:
            if rest:
                yield rest + b"\n"
            return
        data = rest + block
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            if len(data) > MAX_LINE_BYTES:      # a giant line: hand it over, it will be counted
                yield data + b"\n"
                data = b""
            rest = data
            continue
        yield data[:cut]
        rest = data[cut:]


_HOST = re.compile(rb"\d{1,3}(?:\.\d{1,3}){3}|\[?[0-9A-Fa-f]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*"
                   rb"(?:%\w+)?\]?|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?")


#: what servers write for a client without an address: ``-`` (Apache, nginx), ``unix:`` (nginx
#: on a Unix socket): one such line is no sign of another layout
_NO_ADDRESS = frozenset(("-", "unix:"))


def _address_like(text: str) -> bool:
    """An IPv4 or IPv6 address, a host name (not ``host:port``, not ``1.2.3.4,``), or a
    server's mark of a client without one."""
    return (text in _NO_ADDRESS
            or _HOST.fullmatch(text.encode("utf-8", "surrogateescape")) is not None)


@dataclass
class _Layout:
    """What a file is read with: a text layout, or a JSON layout (``json`` set); ``w3c``: a
    W3C extended layout, which the file's ``#Fields:`` lines redefine."""

    fmt: LogFormat
    json: object | None = None
    w3c: bool = False


_FIELDS = re.compile(rb"^#Fields:[ \t]*([^\r\n]*)", re.M)


def _w3c_layout(fields: bytes, data: bytes) -> _Layout:
    """The layout of a W3C ``#Fields:`` list (its fields separated by tabs when the data lines
    that follow are: CloudFront); LogError when it lacks what sessions need."""
    first = next((x for x in data.split(b"\n") if x.strip() and not x.startswith(b"#")), b"")
    names = fields.decode("latin-1")
    try:
        fmt = compile_format(w3c_spec(names, "\t" if b"\t" in first else " "), "w3c #Fields")
    except FormatError as e:
        raise LogError(f"#Fields: {names}: {e}") from None
    return _Layout(fmt, w3c=True)


def _w3c_pieces(buf: bytes) -> list[tuple[bytes, bytes | None]]:
    """``buf`` cut before each of its ``#Fields:`` lines: (the bytes, the field list that
    starts them, or None for the bytes before the first)."""
    found = list(_FIELDS.finditer(buf))
    cuts = [m.start() for m in found]
    pieces = [(buf[:cuts[0]], None)] if cuts[0] else []
    for m, a, b in zip(found, cuts, cuts[1:] + [len(buf)]):
        pieces.append((buf[a:b], m.group(1)))
    return pieces


def _sample_lines(sample: bytes) -> bytes:
    cut = sample.rfind(b"\n") + 1
    return (b"\n".join(sample[:cut].split(b"\n")[:-1][:200]) + b"\n") if cut else sample + b"\n"


def _tried(reason: np.ndarray) -> int:
    """The lines of a sample a layout was tried on: all but headers and a server's messages."""
    return int(np.count_nonzero((reason != HEADER) & (reason != NOT_ACCESS)))


def _shaped(reason: np.ndarray) -> int:
    """Lines of a sample a layout cut into its fields and read a timestamp from, parsed or
    refused for a field's value (an impossible date, a bad status)."""
    return int(np.count_nonzero(~np.isin(reason, (EMPTY, STRUCTURE, BAD_TIME, NOT_JSON, HEADER,
                                                   NOT_ACCESS))))


def detect_format(sample: bytes, opts: _Options | None = None, strict: bool = False
                  ) -> tuple[_Layout, int, int]:
    """The layout that parses most of the first lines of ``sample`` (richer first on ties),
    among those whose client field holds addresses. ``strict``: raise LogError, naming the
    layouts that fit, when only layouts whose client is not an address fit (an
    X-Forwarded-For list, a ``vhost:port``) rather than guess a client.

    Lines are counted as the vectorised walk reads them (the regex of each candidate would
    backtrack at length on lines of another layout). Returns (layout, lines parsed, lines
    tried)."""
    opts = opts or _Options()
    return _detect(_sample_lines(sample), opts.keep_query, opts.epa_base, opts.client,
                   opts.mixed, strict)


@functools.lru_cache(maxsize=16)
def _detect(head: bytes, keep_query: bool, epa_base: float, client: str, mixed: bool,
            strict: bool) -> tuple[_Layout, int, int]:
    """``detect_format`` of a sample's first lines, once per process: every piece of a file
    detects from the file's head (a 1 GB log's 16 pieces tried the 34 layouts 16 times)."""
    opts = _Options(keep_query, epa_base, client, mixed)
    fields = _FIELDS.search(head)
    layout = None
    if fields is not None:
        try:
            layout = _w3c_layout(fields.group(1), head[fields.end():])
        except LogError:
            if strict:
                raise
    if layout is not None:                       # (an unusable #Fields: line is a header)
        chunk = _Chunk(head[fields.start():], layout.fmt, _Vocabs(), opts)
        chunk.columns(slow=False)
        return layout, int((chunk.reason == 0).sum()), _tried(chunk.reason)
    first = head.lstrip()[:1]
    if first == b"{":
        layout = detect_json(head.split(b"\n"))
        if layout is not None:
            text, kind = to_text(head, layout)
            chunk = _Chunk(text, layout.fmt, _Vocabs(), opts, reason=_json_reasons(kind))
            chunk.columns(slow=False)
            return (_Layout(layout.fmt, layout), int((chunk.reason == 0).sum()),
                    _tried(chunk.reason))
    scores = []
    for name in AUTO_CANDIDATES:
        fmt = named_format(name)
        vocabs = _Vocabs()
        chunk = _Chunk(head, fmt, vocabs, opts)
        cols = chunk.columns(slow=False)
        bad = [h for h in {vocabs.hosts.strings()[c] for c in set(cols["host"].tolist())}
               if not _address_like(h)]
        bad += [v for v in vocabs.vhosts.strings() if not _address_like(v)]
        scores.append((name, fmt, len(cols["host"]), bad, _tried(chunk.reason),
                       _shaped(chunk.reason)))
    fitting = [sc for sc in scores if sc[2] > 0]
    good = [sc for sc in fitting if not sc[3]]
    if fitting and not good and strict:
        raise LogError(f"the client field is not an address ({fitting[0][3][0]!r}); the "
                       f"layouts that fit ({', '.join(sc[0] for sc in fitting)}) would make "
                       "that the client: give --format (a proxy's log: its LogFormat with "
                       "%{X-Forwarded-For}i, and --client forwarded)")
    if not fitting:        # none parses a line: the one whose fields a bad value alone spoils
        name, fmt, ok, _, tried, _ = max(scores, key=lambda sc: sc[5])
        return _Layout(fmt), ok, tried
    name, fmt, ok, _, tried, _ = max(good or fitting, key=lambda sc: sc[2])  # first on ties
    return _Layout(fmt), ok, tried


def _lines_of(chunk: _Chunk, rows: np.ndarray) -> bytes:
    """Lines ``rows`` of a chunk as a buffer of whole lines."""
    raw = chunk.raw
    return b"".join(raw[a:b] + b"\n" for a, b in zip(chunk.starts[rows].tolist(),
                                                     chunk.ends[rows].tolist()))


def _json_reasons(kind: np.ndarray) -> np.ndarray:
    """The reason of each line from what ``to_text`` says of it."""
    return np.array([0, NOT_JSON, NOT_ACCESS], np.uint8)[kind]


class _Collector:
    """Accumulates the columns and statistics of many chunks and files."""

    def __init__(self, opts: _Options) -> None:
        self.opts = opts
        self.vocabs = _Vocabs()
        self.parts: list[dict[str, np.ndarray]] = []
        self.stats = ParseStats()
        self.places: int | None = None    # of every chunk's logged times (None: no record)
        self.mixed: dict[str, Counter] = {}   # file → lines read by another layout, by layout

    def add(self, raw: bytes, layout: _Layout, name: str, file_index: int, first_line: int
            ) -> int:
        source = None
        reason = None
        if layout.json is not None:
            source = raw
            raw, kind = to_text(raw, layout.json)
            reason = _json_reasons(kind)
        chunk = _Chunk(raw, layout.fmt, self.vocabs, self.opts, reason)
        mixed = self.opts.mixed and layout.json is None and not layout.w3c
        cols = chunk.columns(slow=not mixed)
        self.places = finest(self.places, chunk.places)
        cols["line"] = first_line + 1 + np.flatnonzero(chunk.reason == 0)
        if mixed:
            cols = self._rescue(chunk, cols, layout, name, first_line)
        cols["file"] = np.full(len(cols["time"]), file_index, np.int16)
        self.parts.append(cols)
        n = len(chunk.reason)
        bad = np.flatnonzero(chunk.reason)
        self.stats.lines += n
        self.stats.parsed += n - len(bad)
        if len(bad):
            codes, counts = np.unique(chunk.reason[bad], return_counts=True)
            for c, k in zip(codes, counts):
                self.stats.malformed[REASONS[c]] += int(k)
            room = EXAMPLES_KEPT - sum(1 for e in self.stats.examples if e[0] == name)
            for i in bad[:max(room, 0)]:
                self.stats.examples.append((name, first_line + int(i) + 1,
                                            REASONS[chunk.reason[i]],
                                            chunk.line_text(int(i), source)))
        return n

    def _rescue(self, chunk: _Chunk, cols: dict[str, np.ndarray], layout: _Layout, name: str,
                first_line: int) -> dict[str, np.ndarray]:
        """``cols`` with the lines of ``chunk`` the vectorised walk of its layout could not
        read, read by another known layout (the one that reads most of them: a file that
        mixes two layouts, as Common and Combined lines, is read line by line with each), then
        the rest by the layout's regex (after, so that the other layout's lines do not go
        through a backtracking regex that fails on them)."""
        rows = np.flatnonzero(np.isin(chunk.reason, _RETRY))
        if not len(rows):
            return cols
        other, ok, _ = detect_format(_lines_of(chunk, rows), self.opts)
        found = ok and other.json is None and other.fmt.name != layout.fmt.name
        for fmt, slow in ((other.fmt, False),) * found + ((layout.fmt, True),):
            if not len(rows):
                break
            again = _Chunk(_lines_of(chunk, rows), fmt, self.vocabs, self.opts)
            more = again.columns(slow)
            won = rows[again.reason == 0]
            if slow:                           # the file's layout: its reasons are final
                chunk.reason[rows] = again.reason
            chunk.reason[won] = 0
            self.places = finest(self.places, again.places)
            more["line"] = first_line + 1 + won
            if not slow:
                self.mixed.setdefault(name, Counter())[fmt.name] += len(won)
            cols = {k: np.concatenate([cols[k], more[k]]) for k in cols}
            rows = rows[again.reason != 0]
        order = np.argsort(cols["line"], kind="stable")
        return {k: v[order] for k, v in cols.items()}

    def requests(self) -> Requests:
        """Every chunk's columns as one ``Requests``, once all are added: each column of the
        chunks is let go as soon as it is joined, so that memory holds one copy of the
        records and a column, not two copies."""
        resolution = resolution_of(self.places)
        cols = {}
        for k in _COLUMNS:
            parts = [p.pop(k) for p in self.parts if k in p]
            cols[k] = (np.concatenate(parts).astype(_DTYPES[k], copy=False) if parts
                       else np.zeros(0, _DTYPES[k]))
            del parts
        self.parts = []
        vocabs = {k: getattr(self.vocabs, k).strings() for k in _VOCABS}
        vocabs["urls"], code, capped = page_urls(vocabs["urls"])
        if len(cols["url"]):
            self.stats.long_urls += int(np.count_nonzero(capped[cols["url"]]))
            cols["url"] = code[cols["url"]]
        return Requests(**cols, **vocabs, resolution=resolution)


def _month_epoch(base_month: str | None) -> float:
    if not base_month:
        return 0.0
    try:
        y, m = (int(x) for x in base_month.split("-"))
        if not 1 <= m <= 12:
            raise ValueError
    except ValueError:
        raise LogError(f"--base-month {base_month!r}: expected YYYY-MM") from None
    return float(days_from_civil(np.array([y]), np.array([m]), np.array([1]))[0] * 86400)


def parse_logs(paths: Iterable[str], fmt: str | LogFormat = "auto", keep_query: bool = False,
               base_month: str | None = None, progress: Callable[[int], None] | None = None,
               client: str = "host") -> tuple[Requests, ParseStats]:
    """Parse one or more logs (plain, .gz, .bz2, .xz, .zst, or '-' for stdin) into time-ordered
    columns.

    ``fmt``: 'auto', a named layout (text or JSON) or a LogFormat / log_format string.
    ``client``: 'host' (the connection's address) or 'forwarded' (the first X-Forwarded-For
    address, when the layout logs it). ``progress`` is called with the number of decompressed
    bytes read since the last call. Time outliers and lines repeated across inputs are left out
    and counted (``wagon.logs.clean``). Raises LogError when an input cannot be read or yields
    no parseable line.

    Example:

    >>> req, stats = wagon.parse_logs(["access_log.gz"])       # the layout found by itself
    >>> stats.parsed, len(req.hosts)
    (24540, ...)
    """
    sources = [(path, lambda path=path: _open(path)) for path in paths]
    return _parse_sources(sources, fmt, keep_query, base_month, progress, client, strict=True)


def parse_bytes(data: bytes, fmt: str | LogFormat = "auto", keep_query: bool = False,
                base_month: str | None = None, client: str = "host"
                ) -> tuple[Requests, ParseStats]:
    """Parse an in-memory log. Never raises on content: every line is parsed or counted.

    Example:

    >>> log = (b'10.0.0.1 - - [01/Aug/2001:10:00:00 +0000] "GET /a.html HTTP/1.0" 200 1043\\n'
    ...        b'10.0.0.1 - - [01/Aug/2001:10:00:07 +0000] "GET /b.html HTTP/1.0" 200 512\\n'
    ...        b'not a log line\\n')
    >>> req, stats = wagon.parse_bytes(log)
    >>> stats.parsed, stats.malformed_total, req.urls
    (2, 1, ['/a.html', '/b.html'])
    """
    sources = [("<bytes>", lambda: (io.BytesIO(data), None))]
    return _parse_sources(sources, fmt, keep_query, base_month, None, client, strict=False)


def _fixed_layout(fmt: str | LogFormat, client: str) -> _Layout | None:
    """The layout named by ``fmt`` (None for auto); LogError when it is not one."""
    if fmt == "auto":
        return None
    if isinstance(fmt, LogFormat):
        layout = _Layout(fmt)
    elif fmt in JSON_FORMATS:
        layout = _Layout(compile_format('%h %t "%r"', fmt), json=fmt)   # keys bound per file
    else:
        try:
            layout = _Layout(resolve_format(fmt), w3c=fmt in ("w3c", "cloudfront"))
        except FormatError as e:
            raise LogError(str(e)) from None
    if client == "forwarded" and layout.json is None and not layout.fmt.has("forwarded"):
        raise LogError(f"--client forwarded: the format {layout.fmt.name} has no "
                       "X-Forwarded-For field (%{X-Forwarded-For}i, $http_x_forwarded_for)")
    return layout


def _parse_sources(sources, fmt, keep_query, base_month, progress, client, strict: bool
                   ) -> tuple[Requests, ParseStats]:
    if client not in ("host", "forwarded"):
        raise LogError(f"client must be 'host' or 'forwarded', not {client!r}")
    fixed = _fixed_layout(fmt, client)
    col = _Collector(_Options(keep_query=keep_query, epa_base=_month_epoch(base_month),
                              client=client, mixed=fixed is None))
    for index, (name, opener) in enumerate(sources):
        col.stats.inputs.append(name)
        parsed_before, malformed_before = col.stats.parsed, col.stats.malformed.copy()
        stream, raw = opener()
        try:
            _parse_stream(col, stream, name, index, fixed, progress, strict)
        finally:
            if raw is not None:
                stream.close()
        if strict and col.stats.parsed == parsed_before:
            raise nothing_parsed(name, col.stats.formats[name],
                                 col.stats.malformed - malformed_before)
    req = col.requests()
    shuffles = shuffles_of(req.time, req.line, req.file)    # every line, as pieces see them
    if len(sources) > 1:
        req = req.take(np.argsort(req.time, kind="stable"))
    req, stats = clean_requests(req, col.stats)             # on the stamps as logged
    restamp_inputs(req, shuffles)
    stats.shuffled.update((stats.inputs[index], s) for index, s in shuffles.items())
    if shuffles:
        req = req.take(np.argsort(req.time, kind="stable"))
    return req, stats


def nothing_parsed(name: str, fmt: str, malformed: Counter) -> LogError:
    """The error for an input of which no line parsed: its lines by reason (a right layout
    whose every timestamp is bad is no layout to change)."""
    why = ", ".join(f"{k} {v:,}" for k, v in malformed.most_common())
    return LogError(f"{name}: no line could be parsed as {fmt}" + (f" ({why})" if why else "")
                    + "; give --format (a named layout, an Apache LogFormat or an nginx "
                    "log_format string)")


def _bind_json(name: str, buf: bytes) -> _Layout:
    """JSON layout ``name`` bound to the keys of the first record of ``buf`` (to its usual keys
    when no record has them: its lines are then counted as not matching)."""
    bound = bind_json(name, _sample_lines(buf).split(b"\n"))
    return _Layout(bound.fmt, bound)


def _resolve(layout: _Layout | None, head: bytes, col: _Collector, name: str, strict: bool
             ) -> _Layout:
    """The layout of a file from its first buffer ``head``: auto-detected (``layout`` None) or a
    JSON layout bound to the file's keys."""
    if layout is None:
        try:
            layout, ok, tried = detect_format(head, col.opts, strict)
        except LogError as e:
            raise LogError(f"{name}: {e}") from None
        col.stats.formats[name] = (f"{layout.fmt.name} (auto-detected: {ok}/{tried} sample "
                                   "lines)" if ok else "no known format (auto-detection failed; "
                                   f"read as {layout.fmt.name})")
        return layout
    return _bind_json(layout.json, head) if isinstance(layout.json, str) else layout


def _parse_stream(col: _Collector, stream: BinaryIO, name: str, index: int,
                  fixed: _Layout | None, progress: Callable[[int], None] | None,
                  strict: bool, head: bytes | None = None, at_start: bool = True) -> None:
    """Parse a stream of whole lines into ``col``; ``head``: the file's first buffer, when the
    stream is a piece of it (the layout is detected from the file's head, as for the whole
    file); ``progress`` is called with the decompressed bytes of each buffer."""
    layout = fixed
    line = 0
    col.stats.formats[name] = layout.fmt.name if layout else "empty input"
    if head is not None and (layout is None or isinstance(layout.json, str)):
        layout = _resolve(layout, head, col, name, strict)
    elif head is not None and layout.w3c and _FIELDS.search(head):
        fields = _FIELDS.search(head)
        layout = _w3c_layout(fields.group(1), head[fields.end():])
    for buf in _chunks(stream, name, at_start=at_start):
        if layout is None or isinstance(layout.json, str):
            layout = _resolve(layout, buf, col, name, strict)
        pieces = _w3c_pieces(buf) if layout.w3c and b"#Fields:" in buf else [(buf, None)]
        for piece, fields in pieces:
            if fields is not None:
                try:
                    new = _w3c_layout(fields, piece)
                except LogError as e:
                    if strict:
                        raise LogError(f"{name}: line {line + 1}: {e}") from None
                    new = layout                 # its lines counted as the layout reads them
                if layout.fmt.name == new.fmt.name and new.fmt.spec != layout.fmt.spec:
                    col.stats.formats[name] += f"; new #Fields: at line {line + 1:,}"
                layout = new
            line += col.add(piece, layout, name, index, line)
        if progress is not None:
            progress(len(buf))
    for other, n in sorted(col.mixed.pop(name, Counter()).items()):
        col.stats.formats[name] += f"; {n:,} lines read as {other}"


# ---------------------------------------------------------------------------------------------
# pieces, routed into partitions by client

@dataclass(frozen=True)
class ParseOptions:
    """How every piece is parsed (``parse_logs``' keyword arguments)."""

    fmt: str | LogFormat = "auto"
    keep_query: bool = False
    base_month: str | None = None
    client: str = "host"


@dataclass
class Chunk:
    """The records of piece ``key`` (input, part) that fall in one partition, as ``Requests``
    with their own string tables; ``line`` counts from the piece's first line."""

    key: tuple[int, int]
    requests: Requests


@dataclass
class PieceResult:
    """What parsing a piece gives: its statistics, its distinct start times with their counts
    (the time-outlier rule needs the whole file's), the decimal places of a second its logged
    times need (None: no record), and one chunk per partition (None once handed to a runner)."""

    piece: Piece
    stats: ParseStats
    times: tuple[np.ndarray, np.ndarray]
    places: int | None
    chunks: list[Chunk] | None = None
    routes: list[str] = field(default_factory=list)   # its routes (templates.route_paths)
    disorder: Disorder = field(default_factory=Disorder)   # of its stamps (logs.shuffled)


def partition_of(hosts: list[str], n_partitions: int) -> np.ndarray:
    """The partition of each client address: CRC-32 of its text modulo ``n_partitions`` (the
    same in every process, unlike ``hash``), so all of a client's requests meet."""
    if n_partitions == 1:
        return np.zeros(len(hosts), np.int64)
    crc = np.fromiter((zlib.crc32(h.encode("utf-8", "surrogateescape")) for h in hosts),
                      np.int64, len(hosts))
    return crc % n_partitions


def _file_head(path: str) -> bytes:
    """The lines of a file's first buffer that a whole-file parse detects its layout from
    (``_sample_lines``: the buffer itself, 8 MiB, is not kept through the piece's parse)."""
    with open(path, "rb") as f:
        head = next(_chunks(f, path), b"")
    return _sample_lines(head) if head else head


def _w3c_head(path: str, offset: int) -> bytes:
    """The lines of a W3C file from its last ``#Fields:`` line before ``offset`` (the layout of
    a piece that starts there)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        at = offset
        while at > 0:
            at = m.rfind(b"#Fields:", 0, at)
            if at <= 0 or m[at - 1] == 10:
                break
        return _sample_lines(m[max(at, 0):max(at, 0) + (1 << 16)])


def _pruned(req: Requests, rows: np.ndarray) -> Requests:
    """Rows ``rows`` of ``req`` with string tables holding only the strings they use."""
    out = req.take(rows)
    for col, table in (("host", "hosts"), ("url", "urls"), ("agent", "agents"),
                       ("method", "methods"), ("referer", "referers"), ("vhost", "vhosts"),
                       ("content_type", "content_types")):
        codes = getattr(out, col)
        strings = getattr(req, table)
        used = np.bincount(codes[codes >= 0], minlength=len(strings)) > 0
        renumber = np.append(np.cumsum(used) - 1, -1).astype(codes.dtype)   # code −1 → −1
        setattr(out, col, renumber[codes])
        setattr(out, table, [strings[i] for i in np.flatnonzero(used).tolist()])
    return out


def parse_piece(piece: Piece, options: ParseOptions = ParseOptions(), n_partitions: int = 1,
                progress: Callable[[int], None] | None = None) -> PieceResult:
    """Parse one piece and route its records into ``n_partitions`` by client address
    (``partition_of``). Raises LogError when the input cannot be opened or read."""
    if options.client not in ("host", "forwarded"):
        raise LogError(f"client must be 'host' or 'forwarded', not {options.client!r}")
    fixed = _fixed_layout(options.fmt, options.client)
    col = _Collector(_Options(keep_query=options.keep_query,
                              epa_base=_month_epoch(options.base_month), client=options.client,
                              mixed=fixed is None))
    col.stats.inputs.append(piece.path)
    head = None
    if piece.path == "-":
        stream = _sniff(piece.path, _stdin())
    elif piece.spool is not None:                 # decompressed lines (wagon.logs.spool)
        head, stream = piece.head, open(piece.spool, "rb")
    elif piece.start or piece.stop is not None:
        head = _file_head(piece.path)
        if _FIELDS.search(head):
            head = _w3c_head(piece.path, piece.start)
        stream = open_range(_open(piece.path)[1], piece)        # type: ignore[arg-type]
    else:
        stream = _open(piece.path)[0]
    try:
        _parse_stream(col, stream, piece.path, piece.index, fixed, progress, True, head,
                      at_start=piece.start == 0 and piece.spool is None)
    finally:
        if piece.path != "-":
            stream.close()
    req = col.requests()
    part = partition_of(req.hosts, n_partitions)[req.host] if len(req) else req.host
    if n_partitions < 2 ** 15:      # a stable sort of 16-bit keys is a radix sort: O(n)
        part = part.astype(np.int16)
    order = np.argsort(part, kind="stable")
    bounds = np.searchsorted(part[order], np.arange(n_partitions + 1))
    chunks = [Chunk(piece.key, _pruned(req, order[bounds[k]:bounds[k + 1]]))
              for k in range(n_partitions)]
    return PieceResult(piece, col.stats, distinct_times(req.time), col.places, chunks,
                       disorder=disorder(req.time, req.line))
