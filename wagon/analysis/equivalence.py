"""The equivalence tests behind ``wagon compare``'s verdicts: is the difference between A and B
within a margin? Each verdict is a one-sided test at level α (two one-sided tests, Schuirmann
1987): ``same``/``close`` is wrong — the true difference beyond the margin — with probability at
most α, and so is ``differs``; the interval ``[lower, upper]`` of a row is made of the two
one-sided bounds (a 1 − 2α interval).

For distributions the difference is the Kolmogorov distance Δ = sup |F − G| of the laws,
estimated by the two-sample KS distance D (sizes n and m):

- upper bound (``same`` when it is within the margin): D + z₁₋α·½·√(1/n + 1/m) + 1/(2n) +
  1/(2m). At the point x* where |F − G| reaches Δ, F̂(x*) − Ĝ(x*) is a difference of two binomial
  proportions of variance at most ¼(1/n + 1/m), and D is at least its size: one point, not the
  whole curve, has to stay below its mean, so no supremum of the empirical process is paid
  for. The last two terms are the continuity correction that keeps the exact binomial size
  within α (tests/test_equivalence.py checks it with SciPy's binomial laws). Valid for any
  laws, continuous or not (ties, counts): the variance bound only grows looser;
- lower bound (``differs`` when it is beyond the margin): D − c, c the 1 − α quantile of
  K₁/√n + K₂/√m with K₁, K₂ independent Kolmogorov variables (``scipy.stats.kstwobign``), for
  Δ ≥ D − sup|F̂ − F| − sup|Ĝ − G|. √k·sup|F̂ − F| follows Kolmogorov's law for a continuous
  law as k → ∞; below it at finite k (SciPy's exact ``kstwo``, from 8 values) and for a
  discrete law (Conover 1972), so the bound is conservative.

``n_same``: the values a side from which two samples of one continuous law are said ``same``
in 90 % of draws (sides of unequal sizes count as their harmonic mean).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, stats

__all__ = ["ks_equivalence", "difference", "verdict", "n_same", "same_bound", "differs_bound",
           "SAME_POWER"]

SAME_POWER = 0.9           # the share of draws of one law said ``same`` at ``n_same`` values
_NODES = 2000              # quantile nodes of the Kolmogorov law in the convolution


def verdict(lo: float, hi: float, margin: float, inside: str) -> str:
    """``inside`` when [lo, hi] ⊂ [−margin, margin], ``differs`` when disjoint from it."""
    if hi <= margin and lo >= -margin:
        return inside
    if lo > margin or hi < -margin:
        return "differs"
    return "undecided"


def same_bound(n: int, m: int, alpha: float) -> float:
    """What the KS distance D is raised by for its upper bound (module docstring)."""
    return (stats.norm.ppf(1 - alpha) * 0.5 * math.sqrt(1 / n + 1 / m)
            + 0.5 / n + 0.5 / m)


@functools.cache
def _kolmogorov_nodes() -> np.ndarray:
    """Kolmogorov's law at the midpoints of ``_NODES`` equal steps of probability."""
    return stats.kstwobign.ppf((np.arange(_NODES) + 0.5) / _NODES)


def differs_bound(n: int, m: int, alpha: float) -> float:
    """The 1 − α quantile of K₁/√n + K₂/√m (module docstring): P(S ≤ c) = E[K(√m (c − K₁/√n))]
    over the nodes of K₁, solved for c."""
    first = _kolmogorov_nodes() / math.sqrt(n)

    def below(c: float) -> float:
        return float(np.mean(stats.kstwobign.cdf(math.sqrt(m) * (c - first)))) - (1 - alpha)
    top = first[-1] + _kolmogorov_nodes()[-1] / math.sqrt(m)
    return optimize.brentq(below, 0.0, top, xtol=1e-7)


@functools.cache
def n_same(margin: float, alpha: float) -> int:
    """Values a side from which one continuous law on both sides is said ``same`` in
    ``SAME_POWER`` of draws: the least n with D's ``SAME_POWER`` quantile, k·√(2/n) (k of
    Kolmogorov's law), plus ``same_bound(n, n)`` within the margin — a quadratic in 1/√n."""
    b = (stats.kstwobign.ppf(SAME_POWER) + stats.norm.ppf(1 - alpha) / 2) * math.sqrt(2)
    s = (-b + math.sqrt(b * b + 4 * margin)) / 2
    return math.ceil(1 / (s * s))


def _sizes_why(n: int, m: int, margin: float, alpha: float) -> str | None:
    """Why an undecided distance is undecided: too few values (harmonic mean of the sizes
    below ``n_same``), or a distance too near the margin."""
    need = n_same(margin, alpha)
    if 2 / (1 / n + 1 / m) < need:
        return (f"too few values to say same: A {n:,}, B {m:,}; about {need:,} a side needed "
                f"at margin {margin:g}")
    return "the distance is too near the margin to tell"


def ks_equivalence(a: np.ndarray, b: np.ndarray, margin: float, alpha: float) -> dict:
    """KS distance D of two samples, its bounds, the KS p-value, the verdict, ``n_same`` and,
    when undecided, why (module docstring)."""
    d = stats.ks_2samp(a, b)
    n, m, dist = len(a), len(b), float(d.statistic)
    lo = max(0.0, dist - differs_bound(n, m, alpha))
    hi = min(1.0, dist + same_bound(n, m, alpha))
    said = verdict(lo, hi, margin, "same")
    return {"effect": dist, "interval": [lo, hi], "margin": margin, "p": float(d.pvalue),
            "verdict": said, "n_same": n_same(margin, alpha),
            "why": _sizes_why(n, m, margin, alpha) if said == "undecided" else None}


def difference(va: float, sa: float, vb: float, sb: float, margin: float, alpha: float
               ) -> dict:
    """B − A with its two one-sided bounds at level α from both standard errors (normal), and
    the verdict against ± ``margin``; when its interval alone is wider than the margin,
    why (too few values for ``close``)."""
    diff, half = vb - va, stats.norm.ppf(1 - alpha) * math.hypot(sa, sb)
    said = verdict(diff - half, diff + half, margin, "close")
    why = ("the interval is wider than the margin: too few values to say close"
           if said == "undecided" and half >= margin else None)
    return {"effect": diff, "interval": [diff - half, diff + half], "margin": margin,
            "verdict": said, "why": why}
