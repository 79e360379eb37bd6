"""Vectorised access-log parser: large chunks of bytes in, NumPy columns out.

Each chunk is split into lines with NumPy; every field of the compiled LogFormat is located for
all lines at once (sorted positions of its terminator + ``searchsorted``); timestamps and numbers
are decoded from fixed-width gathers; strings (hosts, URLs, agents) become integer codes into
vocabularies. No per-line Python except the dictionary look-up that factorises strings.
Malformed lines are counted by reason, never raised.
"""
from __future__ import annotations

import bz2
import functools
import gzip
import io
import lzma
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Iterable, Iterator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .logformat import (NAMED_FORMATS, FormatError, LogFormat, compile_format, line_regex,
                        resolve_format)

__all__ = ["Requests", "ParseStats", "LogError", "parse_logs", "parse_bytes", "detect_format",
           "REASONS"]

CHUNK_BYTES = 8 << 20
MAX_LINE_BYTES = 1 << 20
EXAMPLES_KEPT = 5
_PAD = bytes(64)          # zero bytes after each chunk: room for every fixed-width gather

#: why a line was not parsed; index 0 means parsed
REASONS = ("ok", "empty line", "does not match format", "bad timestamp", "bad request line",
           "bad status", "bad size", "bad duration", "line too long")
EMPTY, STRUCTURE, BAD_TIME, BAD_REQUEST, BAD_STATUS, BAD_SIZE, BAD_DURATION, TOO_LONG = range(1, 9)


def _key3(text: str) -> int:
    """Three letters, case-folded, as one integer (month names)."""
    return ((ord(text[0]) | 32) << 16) | ((ord(text[1]) | 32) << 8) | (ord(text[2]) | 32)


_MONTH_KEYS = {_key3(m): i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_MONTHS = np.array(sorted(_MONTH_KEYS), dtype=np.int64)
_MONTH_ORDER = np.array([_MONTH_KEYS[k] for k in sorted(_MONTH_KEYS)], dtype=np.int64)


_HTTP = np.frombuffer(b"HTTP/", np.uint8)
_regex_for = functools.lru_cache(maxsize=16)(line_regex)


class LogError(Exception):
    """An input that cannot be read at all (missing file, no parseable line, unknown format)."""


class Vocab:
    """Bytes → dense integer codes, shared across chunks and files."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}

    def codes(self, raw: bytes, arr: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Codes of the strings raw[a:b]. Strings of up to 8 bytes (methods, short hosts) are
        packed into integers and factorised with NumPy; longer ones go through the dict."""
        out = np.empty(len(a), np.int32)
        short = (b - a) <= 8
        if short.any():
            sa, sb = a[short], b[short]
            packed = _gather(arr, sa, 8)
            packed[np.arange(8) >= (sb - sa)[:, None]] = 0
            keys = packed.view(np.uint64).ravel()
            _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
            mapped = self._lookup(raw, sa[first], sb[first])
            out[short] = mapped[inverse]
        if not short.all():
            out[~short] = self._lookup(raw, a[~short], b[~short])
        return out

    def _lookup(self, raw: bytes, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d = self.index
        return np.asarray([d.setdefault(raw[x:y], len(d)) for x, y in zip(a.tolist(), b.tolist())],
                          dtype=np.int32)

    def strings(self) -> list[str]:
        return [k.decode("utf-8", "backslashreplace") for k in self.index]


@dataclass
class Requests:
    """Parsed requests as columns; string columns are codes into the lists ``hosts``, ``urls``,
    ``agents``, ``methods`` (agent code -1 when the format has no user agent)."""

    time: np.ndarray          # float64, seconds since the epoch, UTC
    host: np.ndarray          # int32
    url: np.ndarray           # int32 (query string dropped unless keep_query)
    method: np.ndarray        # int16
    status: np.ndarray        # int16
    size: np.ndarray          # int64 bytes ('-' → 0)
    agent: np.ndarray         # int32, -1 when absent
    duration: np.ndarray      # float64 seconds, NaN when the format has none
    file: np.ndarray          # int16: index of the input file
    hosts: list[str]
    urls: list[str]
    agents: list[str]
    methods: list[str]

    def __len__(self) -> int:
        return len(self.time)

    def take(self, idx: np.ndarray) -> "Requests":
        """Rows ``idx`` (indices or mask), vocabularies shared."""
        cols = {k: getattr(self, k)[idx] for k in _COLUMNS}
        return Requests(**cols, hosts=self.hosts, urls=self.urls, agents=self.agents,
                        methods=self.methods)


_COLUMNS = ("time", "host", "url", "method", "status", "size", "agent", "duration", "file")
_DTYPES = dict(time=np.float64, host=np.int32, url=np.int32, method=np.int16, status=np.int16,
               size=np.int64, agent=np.int32, duration=np.float64, file=np.int16)


@dataclass
class ParseStats:
    """What was read: line counts, malformed lines by reason, and the first few of them."""

    lines: int = 0
    parsed: int = 0
    malformed: Counter = field(default_factory=Counter)
    examples: list[tuple[str, int, str, str]] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)

    @property
    def malformed_total(self) -> int:
        return sum(self.malformed.values())

    def as_dict(self) -> dict:
        return {"lines": self.lines, "parsed": self.parsed, "malformed": self.malformed_total,
                "malformed_by_reason": dict(self.malformed), "formats": dict(self.formats),
                "examples": [{"file": f, "line": n, "reason": r, "text": t}
                             for f, n, r, t in self.examples]}


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
    digits = _gather(arr, a, width).astype(np.int64) - 48
    value = np.zeros(len(a), np.int64)
    for k in range(width):
        inside = k < length
        d = digits[:, k]
        ok &= ~inside | ((d >= 0) & (d <= 9))
        value = np.where(inside, value * 10 + d, value)
    return value, ok


def _days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _number(M: np.ndarray, cols: Iterable[int]) -> np.ndarray:
    """Decimal value of the digit columns ``cols`` of a gathered uint8 block (int32)."""
    v = np.zeros(len(M), np.int32)
    for c in cols:
        v = v * 10 + (M[:, c] - 48)
    return v


def _all_digits(M: np.ndarray, cols: list[int]) -> np.ndarray:
    return np.all((M[:, cols] - np.uint8(48)) <= 9, axis=1)


def _time_clf(arr: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``01/Aug/1995:00:00:01 -0400`` → UTC seconds."""
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
    day, year = _number(M, (0, 1)), _number(M, (7, 8, 9, 10))
    hh, mm, ss = _number(M, (12, 13)), _number(M, (15, 16)), _number(M, (18, 19))
    zone = _number(M, (22, 23)) * 3600 + _number(M, (24, 25)) * 60
    ok &= (day >= 1) & (day <= 31) & (hh <= 23) & (mm <= 59) & (ss <= 60)
    days = _days_from_civil(year.astype(np.int64), _MONTH_ORDER[p], day.astype(np.int64))
    seconds = days * 86400 + (hh * 3600 + mm * 60 + ss - np.where(minus, -zone, zone))
    return seconds.astype(np.float64), ok


def _time_epa(arr: np.ndarray, a: np.ndarray, b: np.ndarray, base: float
              ) -> tuple[np.ndarray, np.ndarray]:
    """``30:00:00:00`` (day of month:h:m:s, no month, year or zone) → seconds after ``base``."""
    M = _gather(arr, a, 11)
    ok = (b - a == 11) & _all_digits(M, [0, 1, 3, 4, 6, 7, 9, 10])
    for col in (2, 5, 8):
        ok &= M[:, col] == ord(":")
    day, hh = _number(M, (0, 1)), _number(M, (3, 4))
    mm, ss = _number(M, (6, 7)), _number(M, (9, 10))
    ok &= (day >= 1) & (day <= 31) & (hh <= 23) & (mm <= 59) & (ss <= 60)
    return base + ((day - 1) * 86400 + hh * 3600 + mm * 60 + ss).astype(np.float64), ok


# ---------------------------------------------------------------------------------------------
# one chunk

@dataclass
class _Options:
    keep_query: bool = False
    epa_base: float = 0.0


@dataclass
class _Vocabs:
    hosts: Vocab = field(default_factory=Vocab)
    urls: Vocab = field(default_factory=Vocab)
    agents: Vocab = field(default_factory=Vocab)
    methods: Vocab = field(default_factory=Vocab)


class _Chunk:
    """The vectorised walk of one buffer of whole lines."""

    def __init__(self, raw: bytes, fmt: LogFormat, vocabs: _Vocabs, opts: _Options) -> None:
        self.raw, self.fmt, self.vocabs, self.opts = raw, fmt, vocabs, opts
        self.arr = np.frombuffer(raw + _PAD, np.uint8)
        self.starts, self.ends = _line_bounds(self.arr)
        n = len(self.starts)
        self.reason = np.zeros(n, np.uint8)
        self.reason[self.ends == self.starts] = EMPTY
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

    def request(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
        """``METHOD URL [HTTP/x.y]`` → (method span, URL span, ok); URLs may hold spaces."""
        arr = self.arr
        sp = self.occ(b" ")
        s1, found = _next_at_or_after(sp, a)
        ok = found & (s1 < b) & (s1 > a) & (s1 - a <= 16)
        j = np.searchsorted(sp, b) - 1
        s_last = sp[np.maximum(j, 0)] if len(sp) else s1
        proto = _gather(arr, np.minimum(s_last + 1, len(arr) - 1), 5)
        has_proto = (j >= 0) & (s_last > s1) & (s_last < b) & np.all(proto == _HTTP, axis=1)
        url_a = s1 + 1
        url_b = np.where(has_proto, s_last, b)
        if not self.opts.keep_query:
            q, qfound = _next_at_or_after(self.occ(b"?"), url_a)
            url_b = np.where(qfound & (q < url_b), q, url_b)
        ok &= url_b > url_a
        return a, s1, url_a, url_b, ok

    def decode(self, spans: list[list[np.ndarray]], rows: np.ndarray) -> dict[str, np.ndarray]:
        """Decode lines ``rows`` (``spans`` aligned with them): numeric columns, plus [a, b) of the
        string columns (``<name>_a``, ``<name>_b``) to factorise once lines are final."""
        arr = self.arr
        out: dict[str, np.ndarray] = {}
        for f, (a, b) in zip(self.fmt.fields, spans):
            role = f.role
            if role == "time":
                out["time"], ok = self._time(f.time_format, a, b)
                self.fail(rows, ~ok, BAD_TIME)
            elif role == "status":
                out["status"], ok = _parse_uint(arr, a, b, 3)
                self.fail(rows, ~ok | (b - a != 3) | (out["status"] < 100), BAD_STATUS)
            elif role == "size":
                dash = (b - a == 1) & (arr[np.minimum(a, len(arr) - 1)] == ord("-"))
                value, ok = _parse_uint(arr, a, b, 15)
                out["size"] = np.where(dash, 0, value)
                self.fail(rows, ~(ok | dash), BAD_SIZE)
            elif role in ("duration_us", "duration_s"):
                value, ok = _parse_uint(arr, a, b, 15)
                out["duration"] = value * (1e-6 if role == "duration_us" else 1.0)
                self.fail(rows, ~ok, BAD_DURATION)
            elif role == "request":
                out["method_a"], out["method_b"], out["url_a"], out["url_b"], ok = \
                    self.request(a, b)
                self.fail(rows, ~ok, BAD_REQUEST)
            elif role == "host" and "host_a" not in out:
                self.fail(rows, b == a, STRUCTURE)
                out["host_a"], out["host_b"] = a, b
            elif role == "agent":
                out["agent_a"], out["agent_b"] = a, b
        return out

    def columns(self) -> dict[str, np.ndarray]:
        """Decode every line; returns the columns of the lines that parsed."""
        spans = self.spans()
        rows = np.arange(len(self.starts))
        cols = self.decode(spans, rows)
        retry = rows[(self.reason >= STRUCTURE) & (self.reason < TOO_LONG)]
        if len(retry):
            fixed, fixed_spans = self.regex_spans(retry)
            if len(fixed):
                self.reason[fixed] = 0
                for k, v in self.decode(fixed_spans, fixed).items():
                    cols[k][fixed] = v
        good = self.reason == 0
        out = {k: v[good] for k, v in cols.items() if not k.endswith(("_a", "_b"))}
        n = int(good.sum())
        out.setdefault("size", np.zeros(n, np.int64))
        out.setdefault("duration", np.full(n, np.nan))
        out["agent"] = np.full(n, -1, np.int32)
        for name, vocab in (("host", self.vocabs.hosts), ("url", self.vocabs.urls),
                            ("method", self.vocabs.methods), ("agent", self.vocabs.agents)):
            if name + "_a" in cols:
                out[name] = vocab.codes(self.raw, self.arr, cols[name + "_a"][good],
                                        cols[name + "_b"][good])
        return out

    def _time(self, kind: str | None, a: np.ndarray, b: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        if kind == "clf":
            return _time_clf(self.arr, a, b)
        if kind == "epa":
            return _time_epa(self.arr, a, b, self.opts.epa_base)
        value, ok = _parse_uint(self.arr, a, b, 16)
        return value * (1e-3 if kind == "epoch_ms" else 1.0), ok

    def line_text(self, i: int) -> str:
        s, e = int(self.starts[i]), int(self.ends[i])
        return self.raw[s:min(e, s + 200)].decode("utf-8", "backslashreplace")


# ---------------------------------------------------------------------------------------------
# files

def _open(path: str) -> tuple[BinaryIO, BinaryIO | None]:
    """(decompressed stream, underlying raw file for progress) of a path, or of stdin for '-'."""
    if path == "-":
        return sys.stdin.buffer, None
    try:
        raw = open(path, "rb")
    except OSError as e:
        raise LogError(f"{path}: {e.strerror or e}") from None
    head = raw.peek(6)[:6] if hasattr(raw, "peek") else b""
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw), raw
    if head.startswith(b"BZh"):
        return bz2.BZ2File(raw), raw
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(raw), raw
    return raw, raw


def _chunks(stream: BinaryIO, size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Buffers of whole lines (the last line gets a newline if it lacked one)."""
    rest = b""
    while True:
        try:
            block = stream.read(size)
        except (OSError, EOFError, lzma.LZMAError) as e:
            raise LogError(f"cannot decompress: {e}") from None
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


_DETECT_ORDER = ("combined", "common", "epa")


def detect_format(sample: bytes) -> tuple[LogFormat, int, int]:
    """The named format that parses most of the first lines of ``sample`` (richer first on ties).

    Returns (format, lines parsed, lines tried)."""
    cut = sample.rfind(b"\n") + 1
    head = (b"\n".join(sample[:cut].split(b"\n")[:-1][:200]) + b"\n") if cut else sample + b"\n"
    best, best_ok, total = None, -1, 0
    for name in _DETECT_ORDER:
        fmt = compile_format(NAMED_FORMATS[name], name)
        chunk = _Chunk(head, fmt, _Vocabs(), _Options())
        chunk.columns()
        ok = int((chunk.reason == 0).sum())
        total = len(chunk.reason)
        if ok > best_ok:
            best, best_ok = fmt, ok
    assert best is not None
    return best, best_ok, total


class _Collector:
    """Accumulates the columns and statistics of many chunks and files."""

    def __init__(self, opts: _Options) -> None:
        self.opts = opts
        self.vocabs = _Vocabs()
        self.parts: list[dict[str, np.ndarray]] = []
        self.stats = ParseStats()

    def add(self, raw: bytes, fmt: LogFormat, name: str, file_index: int, first_line: int) -> int:
        chunk = _Chunk(raw, fmt, self.vocabs, self.opts)
        cols = chunk.columns()
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
                                            REASONS[chunk.reason[i]], chunk.line_text(int(i))))
        return n

    def requests(self) -> Requests:
        cols = {}
        for k in _COLUMNS:
            parts = [p[k] for p in self.parts if k in p]
            cols[k] = (np.concatenate(parts).astype(_DTYPES[k], copy=False) if parts
                       else np.zeros(0, _DTYPES[k]))
        return Requests(**cols, hosts=self.vocabs.hosts.strings(),
                        urls=self.vocabs.urls.strings(), agents=self.vocabs.agents.strings(),
                        methods=self.vocabs.methods.strings())


def _month_epoch(base_month: str | None) -> float:
    if not base_month:
        return 0.0
    try:
        y, m = (int(x) for x in base_month.split("-"))
        if not 1 <= m <= 12:
            raise ValueError
    except ValueError:
        raise LogError(f"--base-month {base_month!r}: expected YYYY-MM") from None
    return float(_days_from_civil(np.array([y]), np.array([m]), np.array([1]))[0] * 86400)


def parse_logs(paths: Iterable[str], fmt: str | LogFormat = "auto", keep_query: bool = False,
               base_month: str | None = None, progress: Callable[[int], None] | None = None
               ) -> tuple[Requests, ParseStats]:
    """Parse one or more logs (plain, .gz, .bz2, .xz, or '-' for stdin) into time-ordered columns.

    ``fmt``: 'auto', a named format or a LogFormat string. ``progress`` is called with the number
    of input bytes consumed since the last call. Raises LogError when an input cannot be read or
    yields no parseable line."""
    sources = [(path, lambda path=path: _open(path)) for path in paths]
    return _parse_sources(sources, fmt, keep_query, base_month, progress, strict=True)


def parse_bytes(data: bytes, fmt: str | LogFormat = "auto", keep_query: bool = False,
                base_month: str | None = None) -> tuple[Requests, ParseStats]:
    """Parse an in-memory log. Never raises on content: every line is parsed or counted."""
    sources = [("<bytes>", lambda: (io.BytesIO(data), None))]
    return _parse_sources(sources, fmt, keep_query, base_month, None, strict=False)


def _parse_sources(sources, fmt, keep_query, base_month, progress, strict: bool
                   ) -> tuple[Requests, ParseStats]:
    try:
        fixed = None if fmt == "auto" else (fmt if isinstance(fmt, LogFormat)
                                            else resolve_format(fmt))
    except FormatError as e:
        raise LogError(str(e)) from None
    col = _Collector(_Options(keep_query=keep_query, epa_base=_month_epoch(base_month)))
    for index, (name, opener) in enumerate(sources):
        col.stats.inputs.append(name)
        parsed_before = col.stats.parsed
        stream, raw = opener()
        try:
            _parse_stream(col, stream, raw, name, index, fixed, progress)
        finally:
            if raw is not None:
                stream.close()
        if strict and col.stats.parsed == parsed_before:
            raise LogError(f"{name}: no line could be parsed as {col.stats.formats[name]}; "
                           "give --format (common, combined, epa or an Apache LogFormat string)")
    req = col.requests()
    if len(sources) > 1:
        req = req.take(np.argsort(req.time, kind="stable"))
    return req, col.stats


def _parse_stream(col: _Collector, stream: BinaryIO, raw: BinaryIO | None, name: str, index: int,
                  fixed: LogFormat | None, progress: Callable[[int], None] | None) -> None:
    fmt = fixed
    line = 0
    consumed = 0
    col.stats.formats[name] = fmt.name if fmt else "empty input"
    for buf in _chunks(stream):
        if fmt is None:
            fmt, ok, tried = detect_format(buf)
            col.stats.formats[name] = (f"{fmt.name} (auto-detected: {ok}/{tried} sample lines)"
                                       if ok else "no known format (auto-detection failed)")
        line += col.add(buf, fmt, name, index, line)
        if progress is not None and raw is not None:
            pos = raw.tell()
            progress(pos - consumed)
            consumed = pos
