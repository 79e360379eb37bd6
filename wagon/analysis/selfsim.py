"""Self-similarity: Hurst parameter estimators and an exact fractional Gaussian noise generator.

Estimators (each returns H, its fit range, the number of points its fit rests on and, where
theory gives one, a 95 % interval):
- aggregated variance (variance-time plot, WAGON's method): Var(X^(m)) ∝ m^(2H−2);
- rescaled range R/S: E[R/S](m) ∝ m^H;
- periodogram: I(λ) ∝ λ^(1−2H) over the lowest 10 % of frequencies;
- DFA (order 1): F(m) ∝ m^H;
- local Whittle (Robinson 1995), m = n^0.65 frequencies, CI ±1.96/(2√m); also at m = n^0.5 and
  n^0.8 (``bandwidth``): a spread of H beyond twice the standard error of the narrowest one,
  1/(2√m), says the estimate depends on which frequencies it uses (a trend, a daily cycle,
  short-range structure);
- Abry–Veitch wavelet (Daubechies-3, PyWavelets): weighted regression of the bias-corrected
  log2 detail energies on octaves j1..j2, slope 2H − 1, CI from the regression's variance. The
  finest octaves are biased for fractional Gaussian noise (the spectrum is a power law only at
  low frequencies): j1 = max(3, ⌊log₂ n / 4⌋) gives the nominal coverage (96 % of 100 exact fGn
  series at H = 0.7, n = 2¹⁴, where j1 = 2 gave 72 % and j1 = 1 30 %: bench/hurst_bench.py).
A regression needs at least ``MIN_POINTS`` scales (``MIN_OCTAVES`` octaves for the wavelet): an
estimator with fewer on a series says so instead of estimating (a two-point variance-time fit
printed H > 1). They disagree on real data (trends, non-stationarity, short series), so
reports show them side by side; ``detrend`` removes the mean of every block (e.g. each hour)
first.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pywt
from scipy import optimize, special

from .options import DEFAULT_SCALES

__all__ = ["fgn", "fgn_autocovariance", "Estimate", "ESTIMATORS", "hurst_all", "hurst_report",
           "counts_per_bin", "hurst_by_scale", "detrend", "wavelet_first_octave",
           "DEFAULT_SCALES", "MIN_BINS", "MIN_POINTS", "MIN_OCTAVES", "TooFewPoints"]

MIN_BINS = 256                          # shortest series any estimator is run on
MIN_POINTS = 5                          # scales a log–log regression needs
MIN_OCTAVES = 3                         # octaves the wavelet regression needs
LW_EXPONENTS = (0.5, 0.65, 0.8)         # local Whittle bandwidths m = n^e (0.65 is the estimate)


class TooFewPoints(ValueError):
    """An estimator whose fit would rest on too few points for this series."""


@dataclass
class Estimate:
    estimator: str
    H: float
    ci: tuple[float, float] | None
    fit_range: str
    points: int = 0
    bandwidth: list[dict] | None = None          # local Whittle: H at other bandwidths

    def as_dict(self) -> dict:
        out = {"estimator": self.estimator, "H": self.H,
               "ci": list(self.ci) if self.ci else None, "fit_range": self.fit_range,
               "points": self.points}
        if self.bandwidth is not None:
            out["bandwidth"] = self.bandwidth
        return out


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


def _slope(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None,
           what: str = "scales") -> tuple[float, float]:
    """Weighted least-squares slope and its variance; TooFewPoints under MIN_POINTS."""
    if len(x) < (MIN_OCTAVES if what == "octaves" else MIN_POINTS):
        raise TooFewPoints(f"{len(x)} {what} to fit (needs "
                           f"{MIN_OCTAVES if what == 'octaves' else MIN_POINTS})")
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
    return Estimate("aggregated_variance", 1 + beta / 2, None, f"m = {m[0]}..{m[-1]}",
                    int(ok.sum()))


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
    return Estimate("rescaled_range", h, None, f"m = {m[0]}..{m[-1]}", int(ok.sum()))


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
    return Estimate("periodogram", (1 - slope) / 2, None, f"lowest {k} frequencies",
                    int(ok.sum()))


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
    return Estimate("dfa", h, None, f"windows {m[0]}..{m[-1]}", len(m))


def _whittle(lam: np.ndarray, I: np.ndarray, m: int) -> float:
    lam, I = lam[:m], I[:m]
    loglam = np.log(lam).mean()

    def r(h: float) -> float:
        return float(np.log(np.mean(lam ** (2 * h - 1) * I)) - (2 * h - 1) * loglam)
    return float(optimize.minimize_scalar(r, bounds=(0.001, 0.999), method="bounded",
                                          options={"xatol": 1e-6}).x)


def local_whittle(x: np.ndarray) -> Estimate:
    lam, I = _periodogram(x)
    ms = [max(8, int(len(x) ** e)) for e in LW_EXPONENTS]
    hs = [_whittle(lam, I, m) for m in ms]
    m, h = ms[1], hs[1]
    half = 1.96 / (2 * np.sqrt(m))
    return Estimate("local_whittle", h, (h - half, h + half), f"lowest {m} frequencies", m,
                    [{"exponent": e, "m": mm, "H": hh} for e, mm, hh in zip(LW_EXPONENTS, ms, hs)])


def wavelet_first_octave(n: int) -> int:
    """j1 = max(3, ⌊log₂ n / 4⌋): the finest octave used (module docstring)."""
    return max(3, int(np.log2(max(n, 2))) // 4)


def _detail_energies(x: np.ndarray) -> list[tuple[int, float]]:
    """(coefficients, mean squared detail coefficient) of each octave of ``x``'s Daubechies-3
    transform with at least 8 coefficients, finest first: ``pywt.wavedec``'s levels computed
    one at a time, the details before the approximation and each let go once measured (a
    series of 35 million seconds is otherwise held three times over)."""
    db3 = pywt.Wavelet("db3")
    out, a = [], x
    for _ in range(pywt.dwt_max_level(len(x), db3.dec_len)):
        d = pywt.downcoef("d", a, db3, mode="periodization")
        if len(d) < 8:
            break
        out.append((len(d), float(np.mean(np.square(d, out=d)))))
        del d
        a = pywt.downcoef("a", a, db3, mode="periodization")
    return out


def wavelet(x: np.ndarray, j1: int | None = None) -> Estimate:
    j1 = wavelet_first_octave(len(x)) if j1 is None else j1
    js, ys, ws = [], [], []
    for j, (nj, energy) in enumerate(_detail_energies(x), start=1):
        y = np.log2(energy) - (special.digamma(nj / 2) / np.log(2) - np.log2(nj / 2))
        var = special.polygamma(1, nj / 2) / np.log(2) ** 2
        js.append(j)
        ys.append(y)
        ws.append(1 / var)
    js, ys, ws = np.array(js, float), np.array(ys), np.array(ws)
    sel = js >= j1
    slope, var = _slope(js[sel], ys[sel], ws[sel], "octaves")
    h = (slope + 1) / 2
    half = 1.96 * np.sqrt(var) / 2
    return Estimate("wavelet", h, (h - half, h + half),
                    f"octaves {int(js[sel][0])}..{int(js[sel][-1])}", int(sel.sum()))


ESTIMATORS = {"aggregated_variance": aggregated_variance, "rescaled_range": rescaled_range,
              "periodogram": periodogram, "dfa": dfa, "local_whittle": local_whittle,
              "wavelet": wavelet}


def detrend(x: np.ndarray, block: int) -> np.ndarray:
    """``x`` minus the mean of each consecutive block of ``block`` values (e.g. each hour of
    per-second counts): a daily cycle or a rising load otherwise passes for long memory."""
    x = np.asarray(x, float)
    if block < 2:
        return x
    idx = np.arange(len(x)) // block
    return x - (np.bincount(idx, weights=x) / np.bincount(idx))[idx]


def hurst_report(x, detrend_block: int | None = None) -> tuple[list[Estimate], list[str]]:
    """Every estimator that has enough points on one series (at least MIN_BINS values), and
    notes: the estimators left out and why, estimates of 1 or more (no stationary series has
    them), and whether local Whittle depends on its bandwidth."""
    x = np.asarray(x, dtype=float)
    if len(x) < MIN_BINS:
        raise ValueError(f"a series of {len(x)} values is too short (at least {MIN_BINS})")
    bad = np.flatnonzero(~np.isfinite(x))
    if len(bad):
        raise ValueError(f"value {bad[0] + 1} is {x[bad[0]]}: counts are finite numbers")
    if detrend_block:
        x = detrend(x, detrend_block)
    if np.ptp(x) == 0:
        raise ValueError("the series is constant")
    out, notes = [], []
    for name, f in ESTIMATORS.items():
        try:
            out.append(f(x))
        except TooFewPoints as e:
            notes.append(f"{name} not estimated: {e}")
    above = [f"{e.estimator} {e.H:.2f}" for e in out if e.H >= 1]
    if above:
        notes.append(f"H ≥ 1 ({', '.join(above)}) is outside the range of a stationary series: "
                     "the counts have a trend or level shifts (the rate changed); remove them "
                     "(--detrend SECONDS) or estimate on a steady stretch")
    lw = next((e for e in out if e.estimator == "local_whittle"), None)
    if lw is not None:
        hs = [b["H"] for b in lw.bandwidth]
        se = 1 / (2 * np.sqrt(lw.bandwidth[0]["m"]))        # of the narrowest bandwidth
        line = ", ".join(f"m=n^{b['exponent']:g} ({b['m']}): {b['H']:.3f}" for b in lw.bandwidth)
        if max(hs) - min(hs) > 2 * se:
            notes.append(f"local Whittle depends on its bandwidth ({line}): a spread of "
                         f"{max(hs) - min(hs):.2f} against a standard error of {se:.3f}")
    return out, notes


def hurst_all(x, detrend_block: int | None = None) -> list[Estimate]:
    """Every estimator that has enough points on one series (at least MIN_BINS values)."""
    return hurst_report(x, detrend_block)[0]


def counts_per_bin(times: np.ndarray, width: float) -> np.ndarray:
    """Number of events per bin of ``width`` seconds from the first event to the last."""
    times = np.asarray(times, float)
    if len(times) == 0:
        return np.zeros(0)
    idx = ((times - times.min()) // width).astype(np.int64)
    return np.bincount(idx).astype(float)


def hurst_by_scale(times: np.ndarray, resolution: float, scales=DEFAULT_SCALES,
                   detrend_s: float | None = None) -> tuple[list[dict], list[str]]:
    """Every estimator on the counts of ``times`` per bin, for each bin width in ``scales``;
    returns (rows, notes: why a scale or an estimator was skipped, bandwidth warnings).
    ``resolution``: the finest meaningful bin of the input (1 s for whole-second log
    timestamps); ``detrend_s``: remove the mean of every block of that many seconds first."""
    rows, notes = [], []
    for width in scales:
        if width < resolution:
            notes.append(f"{width:g} s: finer than the input's {resolution:g} s timestamps")
            continue
        c = counts_per_bin(times, width)
        block = int(round(detrend_s / width)) if detrend_s else None
        try:
            estimates, why = hurst_report(c, block)
        except ValueError as e:
            notes.append(f"{width:g} s: {e}")
            continue
        rows += [{"scale": f"{width:g}s", "bins": len(c), **e.as_dict()} for e in estimates]
        notes += [f"{width:g} s: {w}" for w in why]
    return rows, notes
