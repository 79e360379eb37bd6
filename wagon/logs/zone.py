"""The UTC offset a log writes its times in, so that a report shows them as the log does
(``01/Aug/1995:00:00:01 -0400`` is shown as 1995-08-01 00:00:01, not 04:00:01 UTC).

The parser turns every time into UTC seconds; the offset is read once more from the first
lines' timestamps (CLF's ``[… -0400]`` or ISO 8601's ``…T…Z`` / ``+02:00``): the one most of
them give. A layout without an offset (epoch seconds, EPA's day:h:m:s) has none."""
from __future__ import annotations

import re
from collections import Counter

from .parse import _open

__all__ = ["utc_offset"]

SAMPLED = 200                       # first lines whose offsets are read
_ZONE = re.compile(rb"\d{4}:\d\d:\d\d:\d\d ([+-])(\d\d)(\d\d)\]"                  # CLF
                   rb"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:(Z)|([+-])(\d\d):?(\d\d))")


def utc_offset(path: str) -> int | None:
    """Seconds east of UTC of the times in the log at ``path`` (its first lines' most common
    offset), or None when its layout writes none (or it cannot be read again: standard input)."""
    if path == "-":
        return None
    try:
        stream, raw = _open(path)
        try:
            lines = [stream.readline(4096) for _ in range(SAMPLED)]
        finally:
            (raw or stream).close()
    except (OSError, ValueError, EOFError):
        return None
    seen = Counter()
    for line in lines:
        m = _ZONE.search(line)
        if m:
            seen[_seconds(m)] += 1
    return seen.most_common(1)[0][0] if seen else None


def _seconds(m: re.Match) -> int:
    """The offset one timestamp's match gives."""
    if m[4] == b"Z":
        return 0
    sign, hh, mm = (m[1], m[2], m[3]) if m[1] else (m[5], m[6], m[7])
    return (-1 if sign == b"-" else 1) * (int(hh) * 3600 + int(mm) * 60)
