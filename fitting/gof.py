"""Goodness of fit: Paxson's λ², Cramér–von Mises W², Anderson–Darling A², and their p-values.

- λ² (Paxson 1994): X² on bins, with K = Σ (Yᵢ − npᵢ)/(npᵢ) and df = bins − 1 − estimated
  parameters, λ² = (X² − K − df)/(n − 1). It measures the discrepancy per observation, so it does
  not grow with n the way a χ² p-value collapses on web-log sizes.
- Bins: B = max(5, ⌈2·n^0.4⌉) equal-count bins of the *data* (edges at its quantiles, repeated
  edges merged, so ties and integer data get one bin per heavy value), shared by every candidate.
- Continuous W² and A² from the sorted sample; A² sums log F and log S, with S taken from the
  law's survival function above its median (1 − F would cancel to 0 in the upper tail) and F
  from its distribution function below. Cell data (counts, timestamp grids) use the cell
  versions of Choulakian, Lockhart & Stephens (1994): W² = Σ Zⱼ² pⱼ / n,
  A² = Σ Zⱼ² pⱼ / (Hⱼ(1 − Hⱼ)) / n.
- p-values: Stephens' modified statistics for normal and lognormal laws with estimated
  parameters (D'Agostino & Stephens 1986, as in R's nortest); for every other case the
  asymptotic null distribution with estimated parameters — a weighted sum of χ²₁ whose weights
  are the eigenvalues of the limiting covariance kernel (``edf_eigenvalues``), its tail by
  Imhof's formula (``weighted_chi2_sf``); or the parametric bootstrap (``fitting.report``).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from .laws import Sample

__all__ = ["bin_edges", "observed", "lambda2", "cvm_ad", "normal_cvm_ad", "cell_cvm_ad",
           "stephens_normal_p", "weighted_chi2_sf", "edf_kernel", "edf_eigenvalues", "far_tail",
           "asymptotic_p",
           "logit_grid"]

TINY = np.finfo(float).tiny
LOG_TINY = math.log(TINY)
P_FLOOR = 1e-15
CHUNK = 1 << 20                 # values whose law's tails cvm_ad evaluates at once


def n_bins(n: int) -> int:
    return int(max(5, np.ceil(2 * n ** 0.4)))


def bin_edges(s: Sample) -> np.ndarray:
    """Inner bin edges at the sample's quantiles; bins are [e_j, e_j+1)."""
    b = n_bins(s.n)
    edges = np.unique(s.at((np.arange(1, b) * s.n) // b))
    return edges[edges > s.v[0]]


def observed(s: Sample, edges: np.ndarray) -> np.ndarray:
    return np.diff(np.concatenate(([0], s.below(edges), [s.n])))


def lambda2(obs: np.ndarray, below: np.ndarray, n: int, nparams: int) -> tuple[float, int]:
    """(λ², df) from observed bin counts and P(X < edge) at the inner edges."""
    p = np.diff(np.concatenate(([0.0], below, [1.0])))
    expected = n * np.maximum(p, P_FLOOR)
    resid = obs - expected
    x2 = float(np.sum(resid * resid / expected))
    k = float(np.sum(resid / expected))
    df = max(len(obs) - 1 - nparams, 1)
    return (x2 - k - df) / max(n - 1, 1), df


def _edf_sums(f: np.ndarray, log_f: np.ndarray, log_s: np.ndarray, w: np.ndarray | None,
              n: int, before: int = 0) -> tuple[float, float]:
    """W²'s and A²'s sums (without their constant terms) over distinct sorted values of a
    sample of n, the first of them at rank ``before`` + 1, each occurring ``w`` times (None:
    once), from F, log F and log S at them. A block of c equal values at ranks a..b adds
    c·(F − (a + b − 1)/2n)² + c(c² − 1)/12n² to W² (the sum of the squares about their mean)
    and Σ(2i − 1) = b² − (a − 1)² times log F, Σ(2n + 1 − 2i) times log S to A²'s sum."""
    w = np.ones(len(f), np.int64) if w is None else np.asarray(w, np.int64)
    b = before + np.cumsum(w)
    a = b - w + 1
    c = w.astype(float)
    w2 = float(np.sum(c * (f - (a + b - 1) / (2 * n)) ** 2 + c * (c * c - 1) / (12 * n * n)))
    up = (b * b - (a - 1) * (a - 1)).astype(float)
    down = (w * (2 * n + 1) - b * (b + 1) + (a - 1) * a).astype(float)
    return w2, float(up @ log_f + down @ log_s)


def _edf_statistics(sums: list[tuple[float, float]], n: int) -> tuple[float, float]:
    """(W², A²) from ``_edf_sums`` of the parts of a sample of n."""
    return 1 / (12 * n) + sum(w2 for w2, _ in sums), -n - sum(a2 for _, a2 in sums) / n


def cvm_ad(x: np.ndarray, frozen, w: np.ndarray | None = None) -> tuple[float, float]:
    """(W², A²) of a sorted continuous sample against a continuous law (``w``: the counts of
    the distinct values ``x``), a CHUNK of values at a time (a month's 3.4M session gaps at
    once: 200 MB of temporaries)."""
    n = len(x) if w is None else int(np.sum(w))
    median = frozen.ppf(0.5)
    sums, before = [], 0
    for lo in range(0, len(x), CHUNK):
        part = x[lo:lo + CHUNK]
        mine = None if w is None else w[lo:lo + CHUNK]
        # below the law's median F is computed and S = 1 − F is exact; above it, S is computed
        # and F = 1 − S: one special-function call per point and no cancellation in either tail
        half = int(np.searchsorted(part, median))
        f, sf = np.empty(len(part)), np.empty(len(part))
        f[:half] = frozen.cdf(part[:half])
        sf[:half] = 1 - f[:half]
        sf[half:] = frozen.sf(part[half:])
        f[half:] = 1 - sf[half:]
        sums.append(_edf_sums(f, np.log(np.maximum(f, TINY)), np.log(np.maximum(sf, TINY)),
                              mine, n, before))
        before += len(part) if mine is None else int(np.sum(mine))
    return _edf_statistics(sums, n)


def normal_cvm_ad(z: np.ndarray, w: np.ndarray | None = None) -> tuple[float, float]:
    """(W², A²) of sorted standardised values against the standard normal (log Φ from
    ``special.log_ndtr`` in both tails; ``w``: counts of the distinct values ``z``)."""
    log_f, log_s = special.log_ndtr(z), special.log_ndtr(-z)
    n = len(z) if w is None else int(np.sum(w))
    return _edf_statistics([_edf_sums(np.exp(log_f), np.maximum(log_f, LOG_TINY),
                                      np.maximum(log_s, LOG_TINY), w, n)], n)


def cell_cvm_ad(obs: np.ndarray, p: np.ndarray, h: np.ndarray) -> tuple[float, float]:
    """(W², A²) of counts ``obs`` on consecutive integer cells with probabilities ``p`` and
    distribution function ``h`` (P(D ≤ cell), mass below the first cell included)."""
    n = float(obs.sum())
    z = np.cumsum(obs) - n * h
    w2 = float(np.sum(z * z * p)) / n
    inside = (h > 0) & (h < 1 - 1e-12)
    a2 = float(np.sum(z[inside] ** 2 * p[inside] / (h[inside] * (1 - h[inside])))) / n
    return w2, a2


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


# --------------------------------------------------------------------------------------------
# asymptotic null distributions of W² and A² with estimated parameters

def weighted_chi2_sf(x: float, lam: np.ndarray) -> float:
    """P(Σ λⱼ Zⱼ² > x), Zⱼ independent standard normal: Imhof's (1961) inversion formula by
    the midpoint rule, as in Davies (1980): a step of δ in Imhof's variable u (the
    characteristic function at u/2) makes the sum see the law shifted by multiples of 4π/δ,
    so a step with 4π/δ beyond both x and T − x, where P(Q > T) < 1e-12 (Chernoff's bound),
    leaves no aliasing error to speak of; the sum runs up to where the integrand's envelope
    falls below 1e-12 (at most ``IMHOF_MAX_POINTS`` terms). The largest ``IMHOF_TERMS``
    eigenvalues enter exactly, the rest as one scaled χ² with the same mean and variance. Beyond
    where Chernoff's bound Π(1 − 2tλⱼ)^(−½)·e^(−tx) is below 1e-11, 0. Absolute accuracy about
    1e-9."""
    lam = np.sort(np.asarray(lam, float))[::-1]
    lam = lam[lam > 1e-10 * lam[0]] if len(lam) and lam[0] > 0 else lam[:0]
    if len(lam) == 0 or x <= 0:
        return 1.0 if x <= 0 else 0.0
    # log P(Q > y) ≤ −½ Σ log(1 − 2tλⱼ) − ty for 0 < t < 1/(2λ₁): t from 0 to the pole
    t = (1 - np.geomspace(1e-6, 0.98, 60)) / (2 * lam[0])
    cumulant = -0.5 * np.log1p(-2 * t[:, None] * lam).sum(axis=1)
    if np.min(cumulant - t * x) < math.log(1e-11):
        return 0.0
    far = float(np.min((cumulant - math.log(1e-12)) / t))          # P(Q > far) < 1e-12
    big, rest = lam[:IMHOF_TERMS], lam[IMHOF_TERMS:]
    c, nu = ((float((rest ** 2).sum() / rest.sum()), float(rest.sum() ** 2 / (rest ** 2).sum()))
             if len(rest) else (0.0, 0.0))

    def log_terms(u: np.ndarray) -> np.ndarray:
        return 0.25 * (np.log1p(np.outer(u, big) ** 2).sum(axis=1) + nu * np.log1p((c * u) ** 2))
    top = 1.0
    while -math.log(top) - log_terms(np.array([top]))[0] > math.log(1e-12) and top < 1e8:
        top *= 1.5
    du = 4 * math.pi / (1.05 * max(x, far - x))
    u = (np.arange(min(int(top / du) + 1, IMHOF_MAX_POINTS)) + 0.5) * du
    theta = 0.5 * (np.arctan(np.outer(u, big)).sum(axis=1) + nu * np.arctan(c * u) - x * u)
    p = 0.5 + du * float(np.sum(np.sin(theta) / u * np.exp(-log_terms(u)))) / math.pi
    return float(np.clip(p, 0.0, 1.0)) if p > 1e-10 else 0.0


def edf_kernel(h: np.ndarray, psi: np.ndarray, info: np.ndarray, weights: np.ndarray
               ) -> np.ndarray:
    """The symmetric matrix whose eigenvalues are those of the limiting quadratic form
    Σ wᵢ Y(hᵢ)² of an empirical process with covariance K(s, t) = min(s, t) − st −
    ψ(s)ᵀ I⁻¹ ψ(t) (parameters estimated by maximum likelihood; ψ = ∂F/∂θ, I the Fisher
    information per observation), on points ``h`` (values of F, increasing) with quadrature ×
    statistic weights ``weights``."""
    k = np.minimum.outer(h, h) - np.outer(h, h)
    if psi.size:
        k -= psi @ np.linalg.solve(info, psi.T)
    root = np.sqrt(np.maximum(weights, 0.0))
    return root[:, None] * k * root[None, :]


def edf_eigenvalues(h: np.ndarray, psi: np.ndarray, info: np.ndarray, weights: np.ndarray
                    ) -> np.ndarray:
    """The positive eigenvalues of ``edf_kernel``."""
    lam = np.linalg.eigvalsh(edf_kernel(h, psi, info, weights))
    return lam[lam > 0]


def far_tail(x: float, kernel: np.ndarray) -> bool:
    """Whether P(Σ λⱼ Zⱼ² > x) < 1e-11 (the tail ``weighted_chi2_sf`` calls 0) follows from the
    kernel's trace and Frobenius norm alone, without its eigenvalues: with λⱼ ≥ 0,
    −log(1 − u) ≤ u/(1 − u) and λ_max ≤ ‖K‖_F, Chernoff's bound gives
    log P ≤ t·tr K/(1 − 2t‖K‖_F) − t·x for 0 < t < 1/(2‖K‖_F). Large statistics (large samples
    of real data) skip the eigenvalue problem."""
    norm = float(np.linalg.norm(kernel)) * (1 + 1e-9)
    if not norm > 0:
        return False
    trace = float(np.trace(kernel)) + 1e-9 * norm
    t = np.linspace(0.01, 0.49, 49) / norm
    return bool(np.min(t * trace / (1 - 2 * t * norm) - t * x) < math.log(1e-11))


IMHOF_TERMS = 30
IMHOF_MAX_POINTS = 400_000

#: logit grid on which continuous null distributions are computed: t = expit(y), y ∈ [−Y, Y]
LOGIT_HALF_WIDTH = 22.0
LOGIT_POINTS = 321


def logit_grid() -> tuple[np.ndarray, float]:
    """(t, dy): in y = logit t, W² = ∫ Y² t(1 − t) dy and A² = ∫ Y² dy, both smooth in y."""
    y = np.linspace(-LOGIT_HALF_WIDTH, LOGIT_HALF_WIDTH, LOGIT_POINTS)
    return special.expit(y), float(y[1] - y[0])


def asymptotic_p(w2: float, a2: float, h: np.ndarray, psi: np.ndarray, info: np.ndarray,
                 w_w2: np.ndarray, w_a2: np.ndarray) -> tuple[float, float]:
    """Asymptotic p-values of W² and A² (weights: each statistic's, times quadrature)."""
    out = []
    for x, weights in ((w2, w_w2), (a2, w_a2)):
        kernel = edf_kernel(h, psi, info, weights)
        if far_tail(x, kernel):
            out.append(0.0)
            continue
        lam = np.linalg.eigvalsh(kernel)
        out.append(weighted_chi2_sf(x, lam[lam > 0]))
    return out[0], out[1]
