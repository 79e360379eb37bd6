"""Samples recorded the ways wagon meets them, simulated without wagon (SciPy's generators,
floored timestamps): an independent observer for the tests and bench/coverage_bench.py."""
from __future__ import annotations

import numpy as np


def timestamp_gaps(dist, n: int, rng: np.random.Generator, window: tuple | None = None
                   ) -> np.ndarray:
    """n differences of floored timestamps of a stream of gaps of ``dist`` whose first time
    has a uniform phase, those outside ``window`` (lower, upper) not recorded (as a log
    records them, neighbouring gaps sharing a timestamp)."""
    kept, have = [], 0
    while have < n:
        t = rng.random() + np.concatenate(([0.0], np.cumsum(dist.rvs(size=2 * n,
                                                                     random_state=rng))))
        d = np.diff(np.floor(t))
        if window is not None:
            d = d[(d >= window[0]) & (d <= window[1])]
        kept.append(d)
        have += len(d)
    return np.concatenate(kept)[:n]


def inside(dist, n: int, rng: np.random.Generator, a: float, b: float) -> np.ndarray:
    """n draws of ``dist`` kept only inside [a, b] (a truncated record)."""
    kept, have = [], 0
    while have < n:
        x = dist.rvs(size=2 * n, random_state=rng)
        kept.append(x[(x >= a) & (x <= b)])
        have += len(kept[-1])
    return np.concatenate(kept)[:n]
