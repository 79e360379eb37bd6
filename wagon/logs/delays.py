"""How the delays of a click's embedded requests go together: consecutive delays on a log grid,
and their Spearman correlation by rank (NumPy only: the fit keeps it from a log, synthesis
calibrates its draws to it)."""
from __future__ import annotations

import numpy as np

__all__ = ["DELAY_FLOOR", "DELAY_BINS_PER_OCTAVE", "delay_bin", "pair_spearman"]

#: bins of the delays: DELAY_BINS_PER_OCTAVE per octave from DELAY_FLOOR s (bin 0: below it),
#: so that a tally of pairs stays small whatever a log's time resolution
DELAY_FLOOR = 1e-3
DELAY_BINS_PER_OCTAVE = 16


def delay_bin(seconds: np.ndarray) -> np.ndarray:
    """The log-grid bin of each delay (0 below ``DELAY_FLOOR``; 1/16 octave wide above)."""
    s = np.asarray(seconds, float)
    octaves = np.log2(np.maximum(s / DELAY_FLOOR, 1.0))
    return np.where(s < DELAY_FLOOR, 0, 1 + np.floor(octaves * DELAY_BINS_PER_OCTAVE)
                    ).astype(np.int64)


def _uniform_scores(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mid-ranks of weighted values over their total, centred (ties share their mid-rank)."""
    distinct, at = np.unique(values, return_inverse=True)
    w = np.bincount(at, weights=weights, minlength=len(distinct))
    mid = (np.cumsum(w) - w / 2) / w.sum()
    return mid[at] - np.average(mid[at], weights=weights)


def pair_spearman(pairs: np.ndarray) -> tuple[float, int, int] | None:
    """Spearman's correlation of consecutive delays in a click, pooled over ranks (each delay
    ranked among its rank's), from (rank, delay bin, next delay bin, pairs) rows; with the
    clicks (pairs of the first rank) and pairs it rests on. None when no rank's delays vary."""
    if not len(pairs):
        return None
    rank, a, b, n = (np.asarray(c) for c in np.asarray(pairs).T)
    num = var_a = var_b = 0.0
    for r in np.unique(rank):
        mine = rank == r
        w = n[mine].astype(float)
        ua, ub = _uniform_scores(a[mine], w), _uniform_scores(b[mine], w)
        num += float(np.sum(w * ua * ub))
        var_a += float(np.sum(w * ua * ua))
        var_b += float(np.sum(w * ub * ub))
    if not (var_a > 0 and var_b > 0):
        return None
    return num / float(np.sqrt(var_a * var_b)), int(n[rank == rank.min()].sum()), int(n.sum())
