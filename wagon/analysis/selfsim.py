"""Self-similarity: Hurst parameter estimators and an exact fractional Gaussian noise generator.

Estimators (each returns H, its fit range and, where theory gives one, a 95 % interval):
- aggregated variance (variance-time plot, WAGON's method): Var(X^(m)) ∝ m^(2H−2);
- rescaled range R/S: E[R/S](m) ∝ m^H;
- periodogram: I(λ) ∝ λ^(1−2H) over the lowest 10 % of frequencies;
- DFA (order 1): F(m) ∝ m^H;
- local Whittle (Robinson 1995), m = n^0.65 frequencies, CI ±1.96/(2√m);
- Abry–Veitch wavelet (Daubechies-3, PyWavelets): weighted regression of the bias-corrected
  log2 detail energies on octaves j1..j2, slope 2H − 1, CI from the regression's variance.
They disagree on real data (trends, non-stationarity, short series), so reports show them side
by side.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pywt
from scipy import optimize, special

__all__ = ["fgn", "fgn_autocovariance", "Estimate", "ESTIMATORS", "hurst_all", "counts_per_bin",
           "hurst_by_scale", "DEFAULT_SCALES", "MIN_BINS"]

DEFAULT_SCALES = (0.01, 0.1, 1.0)      # bin widths (s) at which requests are counted
MIN_BINS = 256                          # shortest series any estimator is run on


@dataclass
class Estimate:
    estimator: str
    H: float
    ci: tuple[float, float] | None
    fit_range: str

    def as_dict(self) -> dict:
        return {"estimator": self.estimator, "H": self.H,
                "ci": list(self.ci) if self.ci else None, "fit_range": self.fit_range}


def fgn_autocovariance(H: float, n: int) -> np.ndarray:
    """γ(k), k = 0..n−1, of unit-variance fractional Gaussian noise."""
    k = np.arange(n, dtype=float)
    return 0.5 * (np.abs(k + 1) ** (2 * H) - 2 * k ** (2 * H) + np.abs(k - 1) ** (2 * H))


def fgn(n: int, H: float, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """Exact fGn by circulant embedding (Davies & Harte 1987)."""
    if not 0 < H < 1:
        raise ValueError("H must be in (0, 1)")
    rng = np.random.default_rng(rng)
    g = fgn_autocovariance(H, n + 1)
    row = np.concatenate((g, g[-2:0:-1]))            # circulant of size 2n
    lam = np.fft.fft(row).real
    if lam.min() < -1e-9 * lam.max():
        raise ValueError("circulant embedding is not non-negative definite")
    lam = np.clip(lam, 0, None)
    m = len(row)
    # Re(FFT(√(λ/m)·z)) with z complex standard normal (each part N(0,1)) has covariance γ
    z = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    w = np.fft.fft(np.sqrt(lam / m) * z)
    return w.real[:n]


def _scales(n: int, lo: int = 10, hi_frac: float = 0.1, count: int = 20) -> np.ndarray:
    hi = max(lo + 1, int(n * hi_frac))
    return np.unique(np.geomspace(lo, hi, count).astype(int))


def _slope(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> tuple[float, float]:
    """Weighted least-squares slope and its variance."""
    w = np.ones_like(x) if w is None else w
    s0, s1, s2 = w.sum(), (w * x).sum(), (w * x * x).sum()
    det = s0 * s2 - s1 * s1
    slope = (s0 * (w * x * y).sum() - s1 * (w * y).sum()) / det
    return float(slope), float(s0 / det)


def aggregated_variance(x: np.ndarray) -> Estimate:
    # block sizes up to n/100: block variances about the sample mean are biased down under long
    # memory, the more so for large blocks
    m = _scales(len(x), hi_frac=0.01)
    v = np.array([x[: len(x) // k * k].reshape(-1, k).mean(axis=1).var() for k in m])
    ok = v > 0
    beta, _ = _slope(np.log(m[ok]), np.log(v[ok]))
    return Estimate("aggregated_variance", 1 + beta / 2, None, f"m = {m[0]}..{m[-1]}")


def rescaled_range(x: np.ndarray) -> Estimate:
    m = _scales(len(x))
    rs = []
    for k in m:
        blocks = x[: len(x) // k * k].reshape(-1, k)
        dev = np.cumsum(blocks - blocks.mean(axis=1, keepdims=True), axis=1)
        r = dev.max(axis=1) - dev.min(axis=1)
        s = blocks.std(axis=1)
        good = s > 0
        rs.append(np.mean(r[good] / s[good]) if good.any() else np.nan)
    rs = np.array(rs)
    ok = np.isfinite(rs) & (rs > 0)
    h, _ = _slope(np.log(m[ok]), np.log(rs[ok]))
    return Estimate("rescaled_range", h, None, f"m = {m[0]}..{m[-1]}")


def _periodogram(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(x)
    f = np.fft.rfft(x - x.mean())
    lam = 2 * np.pi * np.arange(1, n // 2 + 1) / n
    return lam, (np.abs(f[1: n // 2 + 1]) ** 2) / (2 * np.pi * n)


def periodogram(x: np.ndarray) -> Estimate:
    lam, I = _periodogram(x)
    k = max(4, len(lam) // 10)
    ok = I[:k] > 0
    slope, _ = _slope(np.log(lam[:k][ok]), np.log(I[:k][ok]))
    return Estimate("periodogram", (1 - slope) / 2, None, f"lowest {k} frequencies")


def dfa(x: np.ndarray) -> Estimate:
    y = np.cumsum(x - x.mean())
    m = _scales(len(x), lo=10, hi_frac=0.1)
    F = []
    for k in m:
        segs = y[: len(y) // k * k].reshape(-1, k)
        t = np.arange(k)
        tc = t - t.mean()
        slope = (segs - segs.mean(axis=1, keepdims=True)) @ tc / (tc @ tc)
        fit = segs.mean(axis=1, keepdims=True) + slope[:, None] * tc
        F.append(np.sqrt(np.mean((segs - fit) ** 2)))
    F = np.array(F)
    h, _ = _slope(np.log(m), np.log(F))
    return Estimate("dfa", h, None, f"windows {m[0]}..{m[-1]}")


def local_whittle(x: np.ndarray) -> Estimate:
    lam, I = _periodogram(x)
    m = max(8, int(len(x) ** 0.65))
    lam, I = lam[:m], I[:m]
    loglam = np.log(lam).mean()

    def r(h: float) -> float:
        return float(np.log(np.mean(lam ** (2 * h - 1) * I)) - (2 * h - 1) * loglam)
    h = optimize.minimize_scalar(r, bounds=(0.001, 0.999), method="bounded",
                                 options={"xatol": 1e-6}).x
    half = 1.96 / (2 * np.sqrt(m))
    return Estimate("local_whittle", float(h), (float(h - half), float(h + half)),
                    f"lowest {m} frequencies")


def wavelet(x: np.ndarray, j1: int = 2) -> Estimate:
    levels = pywt.dwt_max_level(len(x), pywt.Wavelet("db3").dec_len)
    coeffs = pywt.wavedec(x, "db3", level=levels, mode="periodization")[1:][::-1]  # octave 1 first
    js, ys, ws = [], [], []
    for j, d in enumerate(coeffs, start=1):
        nj = len(d)
        if nj < 8:
            break
        y = np.log2(np.mean(d ** 2)) - (special.digamma(nj / 2) / np.log(2) - np.log2(nj / 2))
        var = special.polygamma(1, nj / 2) / np.log(2) ** 2
        js.append(j)
        ys.append(y)
        ws.append(1 / var)
    js, ys, ws = np.array(js, float), np.array(ys), np.array(ws)
    sel = js >= j1
    slope, var = _slope(js[sel], ys[sel], ws[sel])
    h = (slope + 1) / 2
    half = 1.96 * np.sqrt(var) / 2
    return Estimate("wavelet", h, (h - half, h + half),
                    f"octaves {int(js[sel][0])}..{int(js[sel][-1])}")


ESTIMATORS = {"aggregated_variance": aggregated_variance, "rescaled_range": rescaled_range,
              "periodogram": periodogram, "dfa": dfa, "local_whittle": local_whittle,
              "wavelet": wavelet}


def hurst_all(x) -> list[Estimate]:
    """Every estimator on one series (at least 256 values)."""
    x = np.asarray(x, dtype=float)
    if len(x) < MIN_BINS:
        raise ValueError(f"a series of {len(x)} values is too short (at least {MIN_BINS})")
    if np.ptp(x) == 0:
        raise ValueError("the series is constant")
    return [f(x) for f in ESTIMATORS.values()]


def counts_per_bin(times: np.ndarray, width: float) -> np.ndarray:
    """Number of events per bin of ``width`` seconds from the first event to the last."""
    times = np.asarray(times, float)
    if len(times) == 0:
        return np.zeros(0)
    idx = ((times - times.min()) // width).astype(np.int64)
    return np.bincount(idx).astype(float)


def hurst_by_scale(times: np.ndarray, resolution: float, scales=DEFAULT_SCALES
                   ) -> tuple[list[dict], list[str]]:
    """Every estimator on the counts of ``times`` per bin, for each bin width in ``scales``;
    returns (rows, why each skipped scale was skipped). ``resolution``: the finest meaningful
    bin of the input (1 s for whole-second log timestamps)."""
    rows, skipped = [], []
    for width in scales:
        if width < resolution:
            skipped.append(f"{width:g} s: finer than the input's {resolution:g} s timestamps")
            continue
        c = counts_per_bin(times, width)
        try:
            estimates = hurst_all(c)
        except ValueError as e:
            skipped.append(f"{width:g} s: {e}")
            continue
        rows += [{"scale": f"{width:g}s", "bins": len(c), **e.as_dict()} for e in estimates]
    return rows, skipped
