"""Numbers as people read them: bytes in KB/MB/GB, durations in ms/s/min/h/d, counts with
thousands separators (issue 38: ``bytes sent 2747282505`` and ``span (s) 2.989e+05`` read
badly). Decimal units: 1 KB = 1,000 bytes, as disks and networks count them."""
from __future__ import annotations

import math

__all__ = ["count", "size", "duration", "share"]

_SIZES = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB"))
_SPANS = ((86400.0, "d", "h", 3600.0), (3600.0, "h", "min", 60.0), (60.0, "min", "s", 1.0))


def count(n: float) -> str:
    """``2747282`` → ``2,747,282``."""
    return f"{int(n):,}"


def size(n: float) -> str:
    """Bytes with three significant digits in the largest unit that is at least 1:
    ``2747282505`` → ``2.75 GB``, ``512`` → ``512 B``."""
    rounded = float(f"{n:.3g}")                 # 999,999 bytes are 1 MB, not 1e03 KB
    for unit, name in _SIZES:
        if abs(rounded) >= unit:
            return f"{n / unit:.3g} {name}"
    return f"{int(n)} B"


def duration(seconds: float) -> str:
    """``0.0523`` → ``52.3 ms``, ``4.2`` → ``4.2 s``, ``298900`` → ``3 d 11 h``."""
    if not math.isfinite(seconds):
        return ""
    for unit, name, small, small_unit in _SPANS:
        if seconds >= unit:
            whole = int(seconds // unit)
            rest = int((seconds - whole * unit) // small_unit)
            return f"{whole} {name} {rest} {small}" if rest else f"{whole} {name}"
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def share(part: float, whole: float) -> str:
    """A percentage with one decimal (``12.3 %``); empty for a whole of 0."""
    return f"{100 * part / whole:.1f} %" if whole else ""
