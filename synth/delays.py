"""The copula a scenario draws a click's delays with, calibrated to the model: the ``rho`` of
``formats.scenario.click_delays`` whose clicks, drawn and put in order as the export and the
replay put them, have the Spearman correlation of consecutive delays the log had (``object_delays.dependence``).
Putting a click's delays in order correlates them by itself, so the log's correlation is not
the copula's: it is found by bisection over simulated clicks (common random numbers, so that
the correlation is monotone in ``rho``)."""
from __future__ import annotations

import numpy as np

from ..formats.scenario import click_delays
from ..logs.delays import delay_bin, pair_spearman

__all__ = ["calibrated_rho", "SIMULATED_CLICKS"]

#: clicks simulated for each step of the bisection
SIMULATED_CLICKS = 20_000


def _click_sizes(requests: list[int]) -> np.ndarray:
    """Clicks by number of embedded requests (index k - 1) from the requests of each rank (the
    last rank's count: as many clicks of that many, each one pair at the last pair rank)."""
    n = np.asarray(requests, float)
    return np.r_[np.maximum(n[:-1] - n[1:], 0), n[-1:]]


def _spearman(quantiles: np.ndarray, sizes: np.ndarray, rho: float) -> float:
    rng = np.random.default_rng(0xC0F)
    k = rng.choice(np.arange(1, len(sizes) + 1), SIMULATED_CLICKS, p=sizes / sizes.sum())
    click = np.repeat(np.arange(len(k)), k)
    rank = np.arange(len(click)) - np.repeat(np.cumsum(k) - k, k) + 1
    d = delay_bin(click_delays(quantiles, rank, click, len(k), rho, rng))
    at = np.flatnonzero(click[1:] == click[:-1])
    rows = np.c_[np.minimum(rank[at], len(quantiles) - 1), d[at], d[at + 1], np.ones(len(at))]
    found = pair_spearman(rows.astype(np.int64))
    return found[0] if found else 0.0


def calibrated_rho(delays: dict, steps: int = 12) -> float:
    """The copula's ``rho`` in [0, 1] for a model's ``object_delays`` (0 without its
    ``dependence``, or when independent draws already correlate as much as the log did)."""
    target = (delays.get("dependence") or {}).get("spearman")
    quantiles = np.asarray(delays["quantiles"], float)
    sizes = _click_sizes(delays["requests"])
    if target is None or len(quantiles) < 2 or _spearman(quantiles, sizes, 0.0) >= target:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _spearman(quantiles, sizes, mid) < target else (lo, mid)
    return (lo + hi) / 2
