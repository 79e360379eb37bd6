"""When a click's embedded requests begin after its page, as the model keeps it
(``site.object_delays``): each rank's percentiles, and how the delays of one click go together.

A browser's objects come at the pace of its network: a click whose first object comes late
has its others late too. The model keeps Spearman's correlation of consecutive delays in a
click (``logs.delays.pair_spearman``: each delay ranked among its rank's, on a log grid), with
a 95 % interval counted in clicks (the pairs of a click are not independent): Fisher's
transform of the equivalent normal correlation 2·sin(πρ_S/6), with Fieller, Hartley and
Pearson's variance 1.06/(n − 3).

Synthesis (the export and the replay) draws a click's delays with a Gaussian copula, one
factor a click (``formats.scenario.click_delays``), and puts them in order, which correlates
them by itself: the copula's ``rho`` is not the log's correlation. The fit finds the ``rho``
whose simulated clicks, drawn and put in order so, have the log's Spearman correlation, by
bisection (common random numbers, so that the correlation is monotone in ``rho``), and keeps
it beside it."""
from __future__ import annotations

import math

import numpy as np

from ..formats.model import DELAY_QUANTILES
from ..formats.scenario import click_delays
from ..logs.delays import delay_bin, pair_spearman

__all__ = ["delay_quantiles", "delay_dependence", "calibrated_rho", "percentiles",
           "spearman_interval", "think_dependence", "normal_correlation", "SIMULATED_CLICKS"]


def percentiles(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The percentiles 0..100 (DELAY_QUANTILES of them) of ``values`` (sorted) each seen
    ``counts`` times: the inverted CDF, values that were recorded."""
    cum = np.cumsum(counts)
    k = np.arange(DELAY_QUANTILES)                # k · n / 100 exactly: no float noise at a tie
    at = np.searchsorted(cum, k * int(cum[-1]) / (DELAY_QUANTILES - 1), side="left")
    return values[np.minimum(at, len(values) - 1)]


def delay_quantiles(rows: np.ndarray) -> dict:
    """When embedded requests began after their page: for each rank (1st embedded request of
    a click, 2nd, ..., the last rank holding the later ones), the percentiles 0..100 of the
    delay in seconds (inverted CDF: values the log recorded) and how many requests."""
    ranks, counts = [], []
    for r in range(1, int(rows[:, 0].max()) + 1):
        mine = rows[rows[:, 0] == r]
        if not len(mine):
            break
        ranks.append((percentiles(mine[:, 1], mine[:, 2]) / 1e6).tolist())
        counts.append(int(mine[:, 2].sum()))
    return {"quantiles": ranks, "requests": counts}


def delay_dependence(pairs: np.ndarray, delays: dict) -> dict | None:
    """Spearman's correlation of consecutive delays in a click, its 95 % interval, the clicks
    and pairs it rests on, and the copula's ``rho`` that gives it with the percentiles of
    ``delays`` (``delay_quantiles``); None with fewer than 8 clicks of two embedded requests
    or more, or when no rank's delays vary."""
    found = spearman_interval(pairs)
    if found is None:
        return None
    spearman, interval, clicks, n = found
    return {"spearman": spearman, "interval": interval, "clicks": clicks, "pairs": n,
            "rho": calibrated_rho(delays, spearman)}


def spearman_interval(pairs: np.ndarray) -> tuple[float, list[float], int, int] | None:
    """Spearman's correlation of consecutive values (``logs.delays.pair_spearman``'s rows),
    its 95 % interval counted in the groups they come in (the pairs of one group are not
    independent: Fisher's transform of the equivalent normal correlation 2·sin(πρ_S/6), with
    Fieller, Hartley and Pearson's variance 1.06/(n − 3)), the groups and the pairs; None
    with fewer than 8 groups of two values or more, or when no value varies."""
    found = pair_spearman(pairs)
    if found is None or found[1] < 8:
        return None
    spearman, groups, n = found
    r = min(max(normal_correlation(spearman), -0.999999), 0.999999)
    half = 1.959964 * math.sqrt(1.06 / (groups - 3))
    lo, hi = (6 / math.pi * math.asin(math.tanh(z) / 2)
              for z in (math.atanh(r) - half, math.atanh(r) + half))
    return spearman, [min(lo, spearman), max(hi, spearman)], groups, n   # ±1: z infinite


def normal_correlation(spearman: float) -> float:
    """The correlation of a Gaussian copula whose Spearman correlation is ``spearman``
    (Pearson 1907: ρ = 2·sin(πρ_S/6))."""
    return 2 * math.sin(math.pi * spearman / 6)


def think_dependence(pairs: np.ndarray) -> dict | None:
    """How a session's think times go together (``logs.sessions._think_pairs``): Spearman's
    correlation of consecutive think times, its 95 % interval counted in sessions, the
    sessions and pairs, and the one-factor Gaussian copula's ``rho`` (one factor a session,
    every two of its think times correlated alike) that has that Spearman correlation;
    None as ``spearman_interval``."""
    found = spearman_interval(pairs)
    if found is None:
        return None
    spearman, interval, sessions, n = found
    return {"spearman": spearman, "interval": interval, "sessions": sessions, "pairs": n,
            "rho": min(max(normal_correlation(spearman), 0.0), 1.0)}


#: clicks simulated for each step of the bisection
SIMULATED_CLICKS = 10_000


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


def calibrated_rho(delays: dict, target: float, steps: int = 10) -> float:
    """The copula's ``rho`` in [0, 1] whose clicks have Spearman ``target`` for the
    percentiles and requests of ``delays`` (0 when independent draws already correlate as much
    as the log did)."""
    quantiles = np.asarray(delays["quantiles"], float)
    sizes = _click_sizes(delays["requests"])
    if len(quantiles) < 2 or _spearman(quantiles, sizes, 0.0) >= target:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _spearman(quantiles, sizes, mid) < target else (lo, mid)
    return (lo + hi) / 2
