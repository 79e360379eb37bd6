"""Logs recorded in windows: the first minute of every hour, say, with nothing in between.

Such a log (elastic's Apache example: 84 windows of 59 s, one an hour) is a sample of the
site's time, not of its traffic: inside a window every request was logged. Left as it is, its
session rate is the rate over all of its span (1,868 sessions in 298,836 s: 0.006/s, where the
site served 0.37/s while it was recorded) and its arrivals look clustered (a burst each hour).

``recording_windows`` finds them: at least ``MIN_GAPS`` silences longer than the session
timeout whose lengths, and the times from one window's start to the next, agree within
``SPREAD`` of their medians — a periodic sampling, which no rate profile makes (a night's
silence varies in length, and so do the days between them). ``to_recorded``
then maps a time to recorded time (each silence taken out), ``from_recorded`` back.
"""
from __future__ import annotations

import numpy as np

__all__ = ["recording_windows", "to_recorded", "from_recorded", "widened", "MIN_GAPS"]

MIN_GAPS = 3                # silences at least, for a periodic sampling to be told
SPREAD = 0.02               # their lengths and the windows' periods within 2 % of their medians


def recording_windows(times: np.ndarray, silence: float, tick: float = 1.0, cell: float = 0.0
                      ) -> np.ndarray | None:
    """The windows ([start, end] rows, s) a log was recorded in, from its requests' or clicks'
    ``times`` on a grid of ``tick`` s (0: exact times), when its silences longer than
    ``silence`` seconds are periodic (module docstring); None for a log recorded throughout.
    ``cell`` > 0: times known only to their cell of that many seconds (``logs.shuffled``):
    each window is the whole cells its times fall in."""
    t = np.sort(np.asarray(times, float))
    if len(t) < 2:
        return None
    gaps = np.diff(t)
    cut = np.flatnonzero(gaps > silence)
    if len(cut) < MIN_GAPS:
        return None
    starts = np.r_[t[0], t[cut + 1]]
    if not all(np.max(np.abs(x - np.median(x))) <= SPREAD * np.median(x)
               for x in (gaps[cut], np.diff(starts))):
        return None
    ends = np.r_[t[cut], t[-1]] + tick                     # a window holds its last tick
    if cell:
        starts, ends = np.floor(starts / cell) * cell, (np.floor(ends / cell) + 1) * cell
    return np.c_[starts, ends]


def widened(windows: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``windows`` stretched to hold every time of ``t``, each time going to the window it is
    nearest to: windows found from a log's clicks end at its last page, but the recorder went
    on (the objects that page fetched, the robots' requests); mapped to recorded time, a time
    past its window's end would pile up at that end."""
    t = np.asarray(t, float)
    out = windows.copy()
    if not len(t):
        return out
    i = np.clip(np.searchsorted(windows[:, 0], t, side="right") - 1, 0, len(windows) - 1)
    nxt = np.minimum(i + 1, len(windows) - 1)
    later = (nxt > i) & (t > windows[i, 1]) & (windows[nxt, 0] - t < t - windows[i, 1])
    i = np.where(later, nxt, i)
    np.minimum.at(out[:, 0], i, t)
    np.maximum.at(out[:, 1], i, np.floor(t) + 1.0)     # a window holds its last second
    return out


def to_recorded(t: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """Times ``t`` in recorded time: the silences before each taken out (the first window's
    times unchanged; a time inside a silence goes to the end of the window before it)."""
    t = np.asarray(t, float)
    silent = np.r_[0.0, np.cumsum(windows[1:, 0] - windows[:-1, 1])]
    i = np.clip(np.searchsorted(windows[:, 0], t, side="right") - 1, 0, len(windows) - 1)
    return np.minimum(t, windows[i, 1]) - silent[i]


def from_recorded(u: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """Recorded times ``u`` back in the log's time: each in its window (past the last one,
    after it)."""
    u = np.asarray(u, float)
    silent = np.r_[0.0, np.cumsum(windows[1:, 0] - windows[:-1, 1])]
    begins = windows[:, 0] - silent                   # each window's start in recorded time
    i = np.clip(np.searchsorted(begins, u, side="right") - 1, 0, len(windows) - 1)
    return u + silent[i]
