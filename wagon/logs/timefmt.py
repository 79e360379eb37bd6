"""Time formats of access logs: strftime-like specs compiled to tokens, decoded for all lines
at once.

A time field is a sequence of tokens (literal bytes, fixed-width numbers, month names, zones,
fractions, epoch counts). Decoding walks the tokens with one position per line; variable-width
tokens (full month names, epoch digits, optional fractions, zones) measure their run in a small
fixed window. Several time fields of one line (``%{sec}t`` … ``%{msec_frac}t``) add their
components before the time is assembled. Calendar-impossible values (31 February, zone +9999,
a year before 1970) are told apart from unreadable ones.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["TimeFormat", "TimeFormatError", "strftime_tokens", "apache_time", "decode_time",
           "assemble", "CLF_TOKENS", "ISO_TOKENS", "EPOCH_FLOAT", "NGINX_MSEC", "days_from_civil"]


class TimeFormatError(ValueError):
    """A time specification wagon cannot read."""


@dataclass(frozen=True)
class TimeFormat:
    """Tokens of one time field; ``group`` is ``begin`` (request received) or ``end`` (logged
    when the response was done); ``fast`` names a dedicated decoder for the common layouts."""

    tokens: tuple[tuple, ...]
    group: str = "begin"
    fast: str | None = None


_NUM = {"Y": 4, "m": 2, "d": 2, "e": 2, "H": 2, "I": 2, "M": 2, "S": 2, "j": 3, "y": 2,
        "U": 2, "V": 2, "W": 2, "u": 1, "w": 1}
_EXPAND = {"T": "%H:%M:%S", "D": "%m/%d/%y", "F": "%Y-%m-%d", "R": "%H:%M", "r": "%I:%M:%S %p",
           "h": "%b"}
_NAMED = set("bBaApzZs")
_SKIPPED_NUM = set("UVWuw")            # week numbers and weekdays: read, not used


def strftime_tokens(spec: str) -> list[tuple]:
    """Tokens of a strftime text (``%d/%b/%Y:%H:%M:%S %z``)."""
    out: list[tuple] = []
    i = 0
    while i < len(spec):
        c = spec[i]
        if c != "%":
            _literal(out, c)
            i += 1
            continue
        if i + 1 >= len(spec):
            raise TimeFormatError(f"time format {spec!r} ends with a lone %")
        k = spec[i + 1]
        i += 2
        if k == "%":
            _literal(out, "%")
        elif k in ("n", "t"):
            _literal(out, " " if k == "n" else "\t")
        elif k in _EXPAND:
            out.extend(strftime_tokens(_EXPAND[k]))
        elif k in _NUM:
            out.append(("num", k, _NUM[k]))
        elif k in _NAMED:
            out.append((k,))
        else:
            raise TimeFormatError(f"time format {spec!r}: %{k} is not supported (locale-dependent"
                                  " or without a fixed form); use an explicit format such as"
                                  " %d/%b/%Y:%H:%M:%S %z")
    return out


def _literal(out: list[tuple], text: str) -> None:
    if out and out[-1][0] == "lit":
        out[-1] = ("lit", out[-1][1] + text.encode("latin-1"))
    else:
        out.append(("lit", text.encode("latin-1")))


CLF_TOKENS = tuple(strftime_tokens("%d/%b/%Y:%H:%M:%S %z"))
EPA_TOKENS = tuple(strftime_tokens("%d:%H:%M:%S"))
#: RFC 3339 / ISO 8601 as nginx ($time_iso8601), Traefik and most JSON logs write it
ISO_TOKENS = tuple(strftime_tokens("%Y-%m-%dT%H:%M:%S") + [("ofrac",), ("z",)])

#: ("epoch", seconds per unit, whether a decimal fraction may follow: JSON and nginx $msec)
EPOCH_FLOAT = (("epoch", 1.0, True),)
#: nginx's $msec, always written %T.%03M: ten digits, a dot, three (a tail of that shape is
#: told from $request_time's 0.250 or Apache's %D)
NGINX_MSEC = (("epoch", 1.0, False, 10), ("lit", b"."), ("frac", 3))
_SPECIAL = {"sec": ("epoch", 1.0, False), "msec": ("epoch", 1e-3, False),
            "usec": ("epoch", 1e-6, False),
            "msec_frac": ("frac", 3), "usec_frac": ("frac", 6)}


def apache_time(arg: str | None) -> TimeFormat:
    """The TimeFormat of Apache's ``%t`` / ``%{arg}t`` (``begin:``/``end:`` prefixes)."""
    if arg is None:
        return TimeFormat(CLF_TOKENS, "begin", "clf")
    group = "begin"
    for prefix in ("begin:", "end:"):
        if arg.startswith(prefix):
            group, arg = prefix[:-1], arg[len(prefix):]
    if arg in _SPECIAL:
        return TimeFormat((_SPECIAL[arg],), group)
    tokens = tuple(strftime_tokens(arg))
    return TimeFormat(tokens, group, fast_kind(tokens))


def fast_kind(tokens: tuple) -> str | None:
    return {CLF_TOKENS: "clf", EPA_TOKENS: "epa"}.get(tuple(tokens))


def merged(a: TimeFormat, between: str, b: TimeFormat) -> TimeFormat:
    """Two time fields with only ``between`` between them, read as one field."""
    tokens: list[tuple] = list(a.tokens)
    for c in between:
        _literal(tokens, c)
    for t in b.tokens:
        if t[0] == "lit":
            _literal(tokens, t[1].decode("latin-1"))
        else:
            tokens.append(t)
    return TimeFormat(tuple(tokens), a.group, fast_kind(tuple(tokens)))


def has_date(tokens: tuple) -> bool:
    kinds = {t[1] if t[0] == "num" else t[0] for t in tokens}
    return bool(kinds & {"epoch", "s"}) or "d" in kinds or "e" in kinds or "j" in kinds


# ---------------------------------------------------------------------------------------------
# decoding

def _gather(arr: np.ndarray, a: np.ndarray, width: int) -> np.ndarray:
    return sliding_window_view(arr, width)[np.clip(a, 0, len(arr) - width)]


def _digits(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Value and validity of fixed-width digit blocks."""
    d = M.astype(np.int64) - 48
    ok = np.all((d >= 0) & (d <= 9), axis=1)
    v = np.zeros(len(M), np.int64)
    for k in range(M.shape[1]):
        v = v * 10 + d[:, k]
    return v, ok


def _run(arr: np.ndarray, p: np.ndarray, cls: np.ndarray, width: int) -> np.ndarray:
    """Length of the run of bytes of class ``cls`` (a 256-entry mask) starting at ``p``."""
    M = cls[_gather(arr, p, width)]
    return np.where(M.all(axis=1), width, np.argmin(M, axis=1))


_DIGIT = np.zeros(256, bool)
_DIGIT[48:58] = True
_ALPHA = np.zeros(256, bool)
_ALPHA[65:91] = _ALPHA[97:123] = True


def _key3(M: np.ndarray) -> np.ndarray:
    low = M[:, :3].astype(np.int64) | 32
    return (low[:, 0] << 16) | (low[:, 1] << 8) | low[:, 2]


def _k(text: str) -> int:
    return (ord(text[0]) << 16) | (ord(text[1]) << 8) | ord(text[2])


_MONTH_KEYS = np.array([_k(m) for m in ("jan feb mar apr may jun jul aug sep oct nov dec"
                                        .split())], np.int64)
_MONTH_SORT = np.argsort(_MONTH_KEYS)
_ZONE_NAMES = {_k("utc"): 0, _k("gmt"): 0}


def _month(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = _MONTH_KEYS[_MONTH_SORT]
    i = np.minimum(np.searchsorted(s, key), 11)
    return _MONTH_SORT[i] + 1, s[i] == key


def _fraction(arr: np.ndarray, p: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Value of the ``n`` (≤ 9 used) digits at ``p`` as a fraction of a second."""
    M = _gather(arr, p, 9).astype(np.int64) - 48
    v = np.zeros(len(p), np.float64)
    scale = 0.1
    for k in range(9):
        v += np.where(k < n, M[:, k] * scale, 0.0)
        scale /= 10
    return v


def _places(arr: np.ndarray, p: np.ndarray, n: np.ndarray | int, width: int = 12) -> np.ndarray:
    """Decimal places the ``n`` digits at ``p`` need: where their last non-zero digit is (0
    when all are zeros), read from the digits, not from a float."""
    k = np.arange(1, width + 1)
    nonzero = (_gather(arr, p, width) != ord("0")) & (k <= np.reshape(n, (-1, 1)))
    return np.max(np.where(nonzero, k, 0), axis=1)


def _unit_places(v: np.ndarray, places: int) -> np.ndarray:
    """Decimal places of a second that integer counts ``v`` of 10^-``places`` s need (a count
    of milliseconds ending in 0 needs two places)."""
    zeros = sum((np.fmod(v, 10.0 ** k) == 0).astype(np.int64) for k in range(1, places + 1))
    return places - zeros


def decode_time(arr: np.ndarray, a: np.ndarray, b: np.ndarray, tf: TimeFormat
                ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Components (Y, mon, day, H, M, S, zone, frac, epoch …) of the fields [a, b) and whether
    each line could be read; ``places``: the decimal places of a second each time was written
    with (trailing zeros aside)."""
    p = a.copy()
    ok = np.ones(len(a), bool)
    places = np.zeros(len(a), np.int64)
    c: dict[str, np.ndarray] = {}
    for tok in tf.tokens:
        kind = tok[0]
        if kind == "lit":
            lit = tok[1]
            M = _gather(arr, p, len(lit))
            ok &= np.all(M == np.frombuffer(lit, np.uint8), axis=1)
            p = p + len(lit)
        elif kind == "num":
            letter, width = tok[1], tok[2]
            M = _gather(arr, p, width)
            if letter == "e":                       # space-padded day
                M = np.where(M == 32, np.uint8(48), M)
            v, good = _digits(M)
            ok &= good
            if letter not in _SKIPPED_NUM:
                c[letter] = v
            p = p + width
        elif kind in ("b", "a"):
            M = _gather(arr, p, 3)
            ok &= np.all(_ALPHA[M], axis=1)
            if kind == "b":
                c["mon"], good = _month(_key3(M))
                ok &= good
            p = p + 3
        elif kind in ("B", "A"):
            n = _run(arr, p, _ALPHA, 12)
            ok &= n >= 3
            if kind == "B":
                c["mon"], good = _month(_key3(_gather(arr, p, 3)))
                ok &= good
            p = p + n
        elif kind == "p":
            M = _gather(arr, p, 2) | 32
            am, pm = (M[:, 0] == ord("a")), (M[:, 0] == ord("p"))
            ok &= (am | pm) & (M[:, 1] == ord("m"))
            c["pm"] = pm
            p = p + 2
        elif kind == "z":
            p = _zone(arr, p, ok, c)
        elif kind == "Z":
            n = _run(arr, p, _ALPHA, 5)
            key = _key3(np.where(n[:, None] >= np.arange(1, 4), _gather(arr, p, 3), 32))
            known = (n == 3) & np.isin(key, list(_ZONE_NAMES))
            ok &= known | ((n == 1) & ((arr[np.minimum(p, len(arr) - 1)] | 32) == ord("z")))
            c["zone"] = np.zeros(len(p), np.int64)
            p = p + n
        elif kind in ("s", "epoch"):
            n = _run(arr, p, _DIGIT, 20)
            ok &= (n == tok[3]) if len(tok) > 3 else (n >= 1) & (n <= 19)
            v = np.zeros(len(p), np.float64)
            M = _gather(arr, p, 20).astype(np.float64) - 48
            for k in range(20):
                v = np.where(k < n, v * 10 + M[:, k], v)
            scale = tok[1] if kind == "epoch" else 1.0
            if scale < 1:                          # %{msec}t, %{usec}t: counts of a unit
                places = np.maximum(places, _unit_places(v, round(-np.log10(scale))))
            p = p + n
            dot = arr[np.minimum(p, len(arr) - 1)] == ord(".")
            if kind == "epoch" and tok[2] and dot.any():   # JSON: 1709632800.123456
                nf = np.where(dot, _run(arr, p + 1, _DIGIT, 12), 0)
                v = v + _fraction(arr, p + 1, nf)
                places = np.maximum(places, _places(arr, p + 1, nf))
                p = p + np.where(dot & (nf > 0), nf + 1, 0)
            c["epoch"] = v * scale
        elif kind == "frac":
            M = _gather(arr, p, tok[1])
            v, good = _digits(M)
            ok &= good
            c["frac"] = v / 10.0 ** tok[1]
            places = np.maximum(places, _places(arr, p, tok[1], tok[1]))
            p = p + tok[1]
        elif kind == "ofrac":
            dot = np.isin(arr[np.minimum(p, len(arr) - 1)], (ord("."), ord(",")))
            n = np.where(dot, _run(arr, p + 1, _DIGIT, 12), 0)
            c["frac"] = _fraction(arr, p + 1, n)
            places = np.maximum(places, _places(arr, p + 1, n))
            p = p + np.where(dot & (n > 0), n + 1, 0)
    ok &= p == b
    c["places"] = places
    return c, ok


def _zone(arr: np.ndarray, p: np.ndarray, ok: np.ndarray, c: dict) -> np.ndarray:
    """``Z``, ``±hh``, ``±hhmm`` or ``±hh:mm``; sets c['zone'] (seconds east of UTC)."""
    M = _gather(arr, p, 6)
    z = (M[:, 0] | 32) == ord("z")
    sign = np.where(M[:, 0] == ord("-"), -1, 1)
    signed = (M[:, 0] == ord("+")) | (M[:, 0] == ord("-"))
    hh, good_h = _digits(M[:, 1:3])
    colon = M[:, 3] == ord(":")
    mm_at = np.where(colon, 4, 3)
    mm_block = np.take_along_axis(M, np.c_[mm_at, mm_at + 1], axis=1)
    mm, good_m = _digits(mm_block)
    has_mm = good_m
    ok &= z | (signed & good_h)
    c["zone"] = np.where(z, 0, sign * (hh * 3600 + np.where(has_mm, mm, 0) * 60))
    c["zone_bad"] = ~z & ((hh > 14) | (has_mm & (mm > 59)))
    width = np.where(z, 1, np.where(has_mm, np.where(colon, 6, 5), 3))
    return p + width


_DAYS_IN = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], np.int64)


def days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def days_in_month(y: np.ndarray, m: np.ndarray) -> np.ndarray:
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    return _DAYS_IN[np.clip(m, 1, 12) - 1] + (leap & (m == 2))


def assemble(c: dict[str, np.ndarray], n: int, base: float
             ) -> tuple[np.ndarray, np.ndarray]:
    """UTC seconds from the components of one group, and whether they form a real date.

    Without a year and month (EPA), the date is day ``d`` of the month starting at ``base``."""
    frac = c.get("frac", np.zeros(n))
    if "epoch" in c:
        t = c["epoch"] + frac
        return t, t >= 0
    zero = np.zeros(n, np.int64)
    hour = c.get("H", c.get("I", zero))
    if "pm" in c:
        hour = hour % 12 + np.where(c["pm"], 12, 0)
    mi, s = c.get("M", zero), c.get("S", zero)
    real = (hour <= 23) & (mi <= 59) & (s <= 60) & ~c.get("zone_bad", np.zeros(n, bool))
    tod = hour * 3600 + mi * 60 + s - c.get("zone", zero)
    if "s" in c:                                   # %s: seconds since the epoch
        return c["s"] + frac, real
    day = c.get("d", c.get("e"))
    if "Y" in c or "y" in c:
        year = c["Y"] if "Y" in c else np.where(c["y"] < 69, 2000 + c["y"], 1900 + c["y"])
        if "j" in c:
            days = days_from_civil(year, np.ones(n, np.int64), np.ones(n, np.int64)) + c["j"] - 1
            real &= (c["j"] >= 1) & (c["j"] <= 365 + (days_in_month(year, zero + 2) == 29))
        else:
            mon = c.get("mon", c.get("m", zero + 1))
            day = day if day is not None else zero + 1
            real &= (mon >= 1) & (mon <= 12) & (day >= 1)
            real &= day <= days_in_month(year, mon)
            days = days_from_civil(year, np.clip(mon, 1, 12), day)
        real &= (year >= 1970) & (year <= 9999)
        return (days * 86400 + tod).astype(np.float64) + frac, real
    day = day if day is not None else zero + 1
    real &= (day >= 1) & (day <= 31)
    return base + ((day - 1) * 86400 + tod).astype(np.float64) + frac, real
