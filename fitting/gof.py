"""Goodness of fit: Paxson's λ², Cramér–von Mises W², Anderson–Darling A².

- λ² (Paxson 1994): X² on bins, with K = Σ (Yᵢ − npᵢ)/(npᵢ) and df = bins − 1 − estimated
  parameters, λ² = (X² − K − df)/(n − 1). It measures the discrepancy per observation, so it does
  not grow with n the way a χ² p-value collapses on web-log sizes.
- Bins: B = max(5, ⌈2·n^0.4⌉) equal-count bins of the *data* (edges at its quantiles, repeated edges
  merged, so ties and integer data get one bin per heavy value), shared by every candidate.
- Continuous W² and A² from the sorted sample; A² sums log F and log S, with S taken from the
  law's survival function above its median (1 − F would cancel to 0 in the upper tail) and F
  from its distribution function below. Discrete samples use the cell versions of Choulakian, Lockhart & Stephens
  (1994): W² = Σ Zⱼ² pⱼ / n, A² = Σ Zⱼ² pⱼ / (Hⱼ(1 − Hⱼ)) / n over the integer cells.
- p-values: Stephens' modified statistics for normal and lognormal laws with estimated
  parameters (D'Agostino & Stephens 1986, as in R's nortest); other laws get p-values from the
  optional parametric bootstrap (fitting.report).
"""
from __future__ import annotations

import numpy as np

from .laws import Sample

__all__ = ["bin_edges", "observed", "prob_below", "lambda2", "cvm_ad", "cell_stats",
           "stephens_normal_p", "A2_CRIT_5", "W2_CRIT_5"]

TINY = np.finfo(float).tiny
P_FLOOR = 1e-15
#: 5 % points of A² and W² for a fully specified law (Stephens 1974): the selection tolerance
A2_CRIT_5 = 2.492
W2_CRIT_5 = 0.461
MAX_CELLS = 10_000_000


def n_bins(n: int) -> int:
    return int(max(5, np.ceil(2 * n ** 0.4)))


def bin_edges(s: Sample) -> np.ndarray:
    """Inner bin edges at the sample's quantiles; bins are [e_j, e_j+1)."""
    b = n_bins(s.n)
    edges = np.unique(s.x[(np.arange(1, b) * s.n) // b])
    return edges[edges > s.x[0]]


def observed(s: Sample, edges: np.ndarray) -> np.ndarray:
    below = np.searchsorted(s.x, edges, side="left")
    return np.diff(np.concatenate(([0], below, [s.n])))


def prob_below(frozen, edges: np.ndarray, mode: str, support_min: int = 0) -> np.ndarray:
    """P(X < e) under the law: ``continuous`` data, a ``discrete`` law on integers, or a
    continuous law ``rounded`` to integers (N = max(support_min, round(X)))."""
    if mode == "continuous":
        return frozen.cdf(edges)
    if mode == "discrete":
        return frozen.cdf(edges - 1)
    return np.where(edges <= support_min, 0.0, frozen.cdf(edges - 0.5))


def lambda2(obs: np.ndarray, below: np.ndarray, n: int, nparams: int) -> tuple[float, int]:
    """(λ², df) from observed bin counts and P(X < edge) at the inner edges."""
    p = np.diff(np.concatenate(([0.0], below, [1.0])))
    expected = n * np.maximum(p, P_FLOOR)
    resid = obs - expected
    x2 = float(np.sum(resid * resid / expected))
    k = float(np.sum(resid / expected))
    df = max(len(obs) - 1 - nparams, 1)
    return (x2 - k - df) / max(n - 1, 1), df


def cvm_ad(x: np.ndarray, frozen) -> tuple[float, float]:
    """(W², A²) of a sorted continuous sample against a continuous law."""
    n = len(x)
    # below the law's median F is computed and S = 1 − F is exact; above it, S is computed and
    # F = 1 − S: one special-function call per point and no cancellation in either tail
    half = int(np.searchsorted(x, frozen.ppf(0.5)))
    f, sf = np.empty(n), np.empty(n)
    f[:half] = frozen.cdf(x[:half])
    sf[:half] = 1 - f[:half]
    sf[half:] = frozen.sf(x[half:])
    f[half:] = 1 - sf[half:]
    log_f = np.log(np.maximum(f, TINY))
    log_s = np.log(np.maximum(sf, TINY))
    odd = 2.0 * np.arange(1, n + 1) - 1
    w2 = 1 / (12 * n) + float(np.sum((f - odd / (2 * n)) ** 2))
    a2 = -n - float(odd @ (log_f + log_s[::-1])) / n
    return w2, a2


def cell_probabilities(frozen, cells: np.ndarray, mode: str, support_min: int) -> np.ndarray:
    """P(N = j) of each integer cell j for a discrete law or a rounded continuous one."""
    if mode == "discrete":
        return frozen.pmf(cells)
    upper = frozen.cdf(cells + 0.5)
    lower = np.where(cells <= support_min, 0.0, frozen.cdf(cells - 0.5))
    return upper - lower


def cell_stats(s: Sample, frozen, mode: str) -> tuple[float, float, float]:
    """(log-likelihood, W², A²) of an integer sample on its cells support_min..max."""
    lo, hi = s.support_min, int(s.x[-1])
    if hi - lo + 1 > MAX_CELLS:
        raise ValueError(f"too many integer cells ({hi - lo + 1:,}); fit it as continuous")
    cells = np.arange(lo, hi + 1, dtype=np.float64)
    obs = np.bincount((s.x - lo).astype(np.int64), minlength=len(cells)).astype(np.float64)
    p = cell_probabilities(frozen, cells, mode, lo)
    seen = obs > 0
    loglik = float(obs[seen] @ np.log(np.maximum(p[seen], np.finfo(float).tiny)))
    z = np.cumsum(obs - s.n * p)
    h = np.cumsum(p)
    w2 = float(np.sum(z * z * p)) / s.n
    inside = (h > 0) & (h < 1 - 1e-12)
    a2 = float(np.sum(z[inside] ** 2 * p[inside] / (h[inside] * (1 - h[inside])))) / s.n
    return loglik, w2, a2


def stephens_normal_p(w2: float, a2: float, n: int) -> tuple[float, float]:
    """p-values of W² and A² for a normal law with estimated mean and variance."""
    aa = a2 * (1 + 0.75 / n + 2.25 / n ** 2)
    if aa < 0.2:
        pa = 1 - np.exp(-13.436 + 101.14 * aa - 223.73 * aa ** 2)
    elif aa < 0.34:
        pa = 1 - np.exp(-8.318 + 42.796 * aa - 59.938 * aa ** 2)
    elif aa < 0.6:
        pa = np.exp(0.9177 - 4.279 * aa - 1.38 * aa ** 2)
    elif aa < 10:
        pa = np.exp(1.2937 - 5.709 * aa + 0.0186 * aa ** 2)
    else:
        pa = 0.0
    ww = w2 * (1 + 0.5 / n)
    if ww < 0.0275:
        pw = 1 - np.exp(-13.953 + 775.5 * ww - 12542.61 * ww ** 2)
    elif ww < 0.051:
        pw = 1 - np.exp(-5.903 + 179.546 * ww - 1515.29 * ww ** 2)
    elif ww < 0.092:
        pw = np.exp(0.886 - 31.62 * ww + 10.897 * ww ** 2)
    elif ww < 1.1:
        pw = np.exp(1.111 - 34.242 * ww + 12.832 * ww ** 2)
    else:
        pw = 7.37e-10
    return float(np.clip(pw, 0, 1)), float(np.clip(pa, 0, 1))
