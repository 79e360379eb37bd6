"""Decimal numbers to and from ASCII bytes with NumPy: millions of numbers per call, exactly
the text ``%d``/``%.Nf`` write and the values ``float()`` reads.

Writing places digits at given offsets of a byte buffer (``put_int``, ``put_fixed``). Fixed-point
text of a float is its correctly rounded ``x·10^N`` (``scaled``): ``rint`` of the product where
that product is more than two ulps from a half (then both round alike), Python's own ``%`` for
the rare values near a tie. Reading takes every run of digits and dots (``runs``): its integer
mantissa (≤ 15 digits, exact in int64) divided by 10^(digits after the dot) is one IEEE division
of two exact doubles, hence the correctly rounded value — the one ``float(text)`` gives
(Clinger's fast path).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ndigits", "put_int", "put_bytes", "scaled", "put_fixed", "fixed_width", "Runs",
           "runs", "MAX_DIGITS"]

POW10 = 10 ** np.arange(19, dtype=np.int64)
MAX_DIGITS = 15                     # mantissas below 2**53: exact as doubles
_LIMIT = float(2 ** 52)             # fixed-point products beyond this go to Python's %
_NOT_DIGITS = bytes(c for c in range(256) if not 48 <= c <= 57)


def ndigits(v: np.ndarray) -> np.ndarray:
    """Decimal digits of each non-negative integer (1 for 0)."""
    nd = np.ones(len(v), np.int64)
    top = int(v.max()) if len(v) else 0
    for p in POW10[1:]:
        if p > top:
            break
        nd += v >= p
    return nd


def put_int(buf: np.ndarray, pos: np.ndarray, v: np.ndarray, nd: np.ndarray) -> None:
    """Write non-negative integers ``v`` (``nd`` digits each) at offsets ``pos`` of ``buf``."""
    for j in range(int(nd.max()) if len(nd) else 0):
        sel = nd > j
        if sel.all():
            buf[pos + nd - 1 - j] = v // POW10[j] % 10 + 48
        else:
            buf[(pos + nd - 1 - j)[sel]] = v[sel] // POW10[j] % 10 + 48


def put_bytes(buf: np.ndarray, pos: np.ndarray, text: bytes) -> None:
    """Write the same ``text`` at each offset ``pos``."""
    for j, byte in enumerate(text):
        buf[pos + j] = byte


def scaled(x: np.ndarray, places: int) -> np.ndarray | None:
    """``x·10^places`` rounded as ``%.{places}f`` rounds it, as int64; None when some value
    is negative (or -0.0), not finite or too large for this exact path."""
    y = x * 10.0 ** places
    if len(y) and not (np.all(np.isfinite(y)) and y.max() < _LIMIT
                       and not np.signbit(x).any()):
        return None
    k = np.rint(y)
    near = np.abs(y - np.floor(y) - 0.5) <= 2 * np.spacing(y)
    out = k.astype(np.int64)
    if near.any():
        out[near] = [int(f"{v:.{places}f}".replace(".", "")) for v in x[near].tolist()]
    return out


def put_fixed(buf: np.ndarray, pos: np.ndarray, k: np.ndarray, places: int,
              nd: np.ndarray) -> None:
    """Write ``k / 10^places`` with ``places`` decimals at ``pos``; ``nd``: digits of the
    integer part (``ndigits(k // 10**places)``)."""
    put_int(buf, pos, k // POW10[places], nd)
    buf[pos + nd] = 46
    put_int(buf, pos + nd + 1, k % POW10[places], np.full(len(k), places))


def fixed_width(k: np.ndarray, places: int) -> np.ndarray:
    """Digits of the integer part of each ``k / 10^places``."""
    return ndigits(k // POW10[places])


@dataclass
class Runs:
    """The maximal runs of digits and dots of a byte array: offsets ``[start, end)``, the
    value read as a number and whether it has a dot."""

    start: np.ndarray
    end: np.ndarray
    mantissa: np.ndarray        # the digits as an integer, the dot ignored
    value: np.ndarray
    places: np.ndarray          # digits after the dot (0 without one; -1: a dot at the end)


def runs(text: bytes) -> Runs | None:
    """Every run of digits and dots in ``text`` as a number; None when a run has no digit,
    more than one dot or more than MAX_DIGITS digits (not read exactly here)."""
    a = np.frombuffer(text, np.uint8)
    digit = (a - 48) < 10                               # uint8 wraps: only '0'..'9' pass
    dot = a == 46
    num = digit | dot
    edge = np.flatnonzero(num[1:] != num[:-1]) + 1
    if len(a) and num[0]:
        edge = np.concatenate(([0], edge))
    if len(a) and num[-1]:
        edge = np.concatenate((edge, [len(a)]))
    start, end = edge[0::2], edge[1::2]
    at = np.flatnonzero(dot)
    owner = np.searchsorted(start, at, side="right") - 1
    dots = np.bincount(owner, minlength=len(start))
    nd = end - start - dots
    if len(start) and (nd.min() < 1 or nd.max() > MAX_DIGITS or dots.max() > 1):
        return None
    vals = np.frombuffer(text.translate(None, _NOT_DIGITS), np.uint8) - np.int64(48)
    through = np.cumsum(nd)
    power = np.repeat(through, nd) - np.arange(1, len(vals) + 1)
    mantissa = (np.add.reduceat(vals * POW10[power], through - nd) if len(vals)
                else np.zeros(0, np.int64))
    frac = np.zeros(len(start), np.int64)
    frac[owner] = end[owner] - at - 1
    places = frac.copy()
    places[owner[frac[owner] == 0]] = -1
    return Runs(start, end, mantissa, mantissa / 10.0 ** frac, places)
