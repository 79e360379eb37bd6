"""Session arrivals as they are: a rate that changes over the log, and whether the arrivals are
Poisson once that change is taken out.

- **Rate profile**: a histogram of the start times whose bin width minimises Shimazaki &
  Shinomoto's (2007) cost (2·k̄ − v)/Δ² (k̄, v: mean and variance of the counts per bin of width
  Δ; the rule that minimises the expected squared error of a Poisson rate estimate), over widths
  that tile the log with bins holding at least ``MIN_PER_BIN`` arrivals on average (so that the
  profile follows the day, not the bursts of a few arrivals). Over ``MIN_DAYS`` days or more,
  those bins' widths are too wide for a day (a month of a small site, 666 sessions: bins of
  2.4 days), so the histogram times a **daily cycle** is a candidate too: the rate in each hour
  the product of its bin's level and its hour of the day's (from the first start), both fitted
  by Poisson maximum likelihood (iterative proportional fitting), written out hour by hour; of
  the two, the one with the lower AIC is kept.
- **Time rescaling** (Brown et al. 2002): with Λ the cumulative profile (linear inside each
  bin), the rescaled gaps Λ(tᵢ₊₁) − Λ(tᵢ) of an inhomogeneous Poisson process are independent
  Exp(1). Within a bin they are the normalised spacings of uniform points, whose empirical
  distribution behaves like that of exponentials with an estimated scale (Pyke 1965), so A² is
  referred to the null distribution of the exponential law with estimated scale.
- **Renewal**: Ljung–Box on the rescaled gaps, lags 1..10, their autocorrelation a dot
  product a lag (O(10 n); statsmodels' own call is O(n²) without ``fft``).
- **Dispersion**: counts in sub-windows of each bin against the bin's uniform share; Σ(O − E)²/E
  over the sub-windows is χ² with (windows − bins) degrees of freedom for a Poisson process
  (given the bin totals); its ratio to the degrees of freedom is the dispersion index (1 for
  Poisson, > 1 for bursty arrivals, < 1 for regular ones). The index of the raw counts per 10 s,
  60 s and 600 s windows is also shown: it grows with the window when the rate drifts.
- **Verdict**: Poisson when none of Ljung–Box, A² and the dispersion test rejects at ``alpha``;
  renewal when Ljung–Box does not.
- **Clustered arrivals**: when the verdict is not Poisson, a Hawkes process (``hawkes``) is
  fitted to the starts in operational time (Λ(t): the profile taken out, one arrival a unit on
  average) and judged by time rescaling; it is ``chosen`` (what ``wagon synth`` draws by
  default) when its likelihood ratio against the Poisson process of the same mean rate
  exceeds χ²₂'s 1 % point (``hawkes.CRITICAL_LR``; AIC's rule calls 12–14 % of Poisson
  streams clustered: the decay fits chance coincidences once η > 0). Over a
  long log it is fitted to the first ``HAWKES_MAX`` starts (4 s; clustering is a matter of
  seconds to hours, and that many starts hold it).
- **Ties**: starts recorded on a grid (whole seconds, milliseconds...) tie; they are judged as
  what they are, points known to lie in a cell: each is spread uniformly inside its cell
  (seeded), which for a Poisson process restores it exactly. Exact times that tie are not
  judged, and the report says so.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from .gaps import acf, exponential_a2, ljung_box
from .hawkes import describe, fit_hawkes
from .threads import one_blas_thread

__all__ = ["RateProfile", "rate_profile", "acf", "ljung_box", "arrival_report",
           "arrival_verdict", "MIN_PER_BIN"]

MIN_PER_BIN = 50
MAX_BINS = 2000
WIDTH_CANDIDATES = 80
PER_WINDOW = 10                      # expected arrivals per dispersion sub-window
WINDOWS = (10.0, 60.0, 600.0)
HOUR = 3600.0
DAY_HOURS = 24
MIN_DAYS = 3                         # days a log spans at least for a daily cycle
IPF_ROUNDS = 50
HAWKES_MAX = 500_000                 # starts the clustered process is fitted to, at most
CHUNK = 1 << 18                      # starts a pass over millions of them takes at a time


@dataclass
class RateProfile:
    """Arrivals per bin of ``width`` seconds from ``start`` (the first arrival)."""

    start: float
    width: float
    counts: np.ndarray

    @property
    def rates(self) -> np.ndarray:
        return self.counts / self.width

    def cumulative(self, t: np.ndarray) -> np.ndarray:
        """Λ(t): arrivals expected from ``start`` to t (linear inside each bin)."""
        u = (np.asarray(t, float) - self.start) / self.width
        i = np.clip(np.floor(u).astype(np.int64), 0, len(self.counts) - 1)
        before = np.concatenate(([0.0], np.cumsum(self.counts)))
        return before[i] + self.counts[i] * np.clip(u - i, 0.0, 1.0)

    def as_dict(self) -> dict:
        """JSON-ready (the model's ``arrivals.profile``): rates are counts / bin_s (a daily
        cycle's expected counts are not whole)."""
        return {"start": float(self.start), "bin_s": float(self.width),
                "counts": [int(c) if c == int(c) else float(c) for c in self.counts]}

    @classmethod
    def from_dict(cls, d: dict) -> "RateProfile":
        return cls(float(d.get("start", 0.0)), float(d["bin_s"]),
                   np.asarray(d["counts"], float))


def _bin_counts(t: np.ndarray, origin: float, width: float, bins: int) -> np.ndarray:
    """How many of ``t`` (≥ ``origin``) fall in each of ``bins`` bins of ``width`` from
    ``origin``, the last taking the rest: a ``CHUNK`` of them at a time, so that no temporary
    is as long as ``t``."""
    counts = np.zeros(bins, np.int64)
    for a in range(0, len(t), CHUNK):
        k = ((t[a:a + CHUNK] - origin) / width).astype(np.int64)
        counts += np.bincount(np.minimum(k, bins - 1), minlength=bins)
    return counts


def _rescaled_gaps(profile: RateProfile, t: np.ndarray) -> np.ndarray:
    """``np.diff(profile.cumulative(t))``, a ``CHUNK`` of ``t`` at a time (the same values;
    no temporary as long as ``t``)."""
    gaps = np.empty(max(len(t) - 1, 0))
    for a in range(0, len(gaps), CHUNK):
        gaps[a:a + CHUNK] = np.diff(profile.cumulative(t[a:a + CHUNK + 1]))
    return gaps


def rate_profile(times: np.ndarray) -> RateProfile:
    """The piecewise-constant rate of sorted ``times`` (bin width: module docstring)."""
    t = np.asarray(times, float)
    span = float(t[-1] - t[0]) if len(t) > 1 else 0.0
    if span <= 0:
        return RateProfile(float(t[0]) if len(t) else 0.0, max(span, 1.0),
                           np.array([float(len(t))]))
    most = int(max(1, min(MAX_BINS, len(t) // MIN_PER_BIN)))
    best = None
    for bins in np.unique(np.geomspace(1, most, WIDTH_CANDIDATES).astype(np.int64)):
        width = span / bins
        counts = _bin_counts(t, t[0], width, bins).astype(float)
        cost = (2 * counts.mean() - counts.var()) / width ** 2
        if best is None or cost < best[0]:
            best = (cost, width, counts)
    histogram = RateProfile(float(t[0]), best[1], best[2])
    if span < MIN_DAYS * DAY_HOURS * HOUR:
        return histogram
    daily, hourly = _daily(t, span, best[1])
    return min((histogram, _loglik(histogram, best[2]), len(histogram.counts)),
               (daily, _loglik(daily, hourly), len(histogram.counts) + DAY_HOURS - 1),
               key=lambda c: 2 * c[2] - 2 * c[1])[0]


def _daily(t: np.ndarray, span: float, width: float) -> tuple[RateProfile, np.ndarray]:
    """Hour by hour, the expected arrivals of the histogram of bins of ``width`` times a daily
    cycle (both factors by iterative proportional fitting: Poisson maximum likelihood), and
    the arrivals of each hour."""
    hours = int(np.ceil(span / HOUR))
    n = _bin_counts(t, t[0], HOUR, hours).astype(float)
    b = np.minimum((np.arange(hours) * HOUR // width).astype(np.int64), int(span // width))
    h = np.arange(hours) % DAY_HOURS
    level, cycle = np.ones(b.max() + 1), np.ones(DAY_HOURS)
    for _ in range(IPF_ROUNDS):
        level = _ratio(np.bincount(b, n), np.bincount(b, cycle[h]))
        cycle = _ratio(np.bincount(h, n, DAY_HOURS), np.bincount(h, level[b], DAY_HOURS))
    return RateProfile(float(t[0]), HOUR, level[b] * cycle[h]), n


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.divide(a, b, out=np.zeros_like(a), where=b > 0)


def _loglik(profile: RateProfile, n: np.ndarray) -> float:
    """Poisson process log-likelihood, under ``profile``, of arrivals counted ``n`` in its
    bins: Σ log λ(tᵢ) − Λ(end)."""
    live = n > 0
    return float(np.sum(n[live] * np.log(profile.rates[live]))) - float(profile.counts.sum())


def _dispersion(t: np.ndarray, profile: RateProfile) -> tuple[float, float, int]:
    """(index, two-sided p, degrees of freedom) of counts in sub-windows given bin totals."""
    bins = len(profile.counts)
    totals = _bin_counts(t, profile.start, profile.width, bins).astype(float)   # observed
    per_bin = int(max(2, np.floor(totals.mean() / PER_WINDOW)))
    cells = bins * per_bin
    observed = _bin_counts(t, profile.start, profile.width / per_bin, cells).reshape(bins, per_bin)
    expected = totals[:, None] / per_bin
    live = expected[:, 0] > 0
    x2 = float(np.sum((observed[live] - expected[live]) ** 2 / expected[live]))
    df = int(live.sum() * (per_bin - 1))
    p = 2 * min(stats.chi2.sf(x2, df), stats.chi2.cdf(x2, df))
    return x2 / df, float(min(p, 1.0)), df


@one_blas_thread
def arrival_report(starts: np.ndarray, lags: int = 10, alpha: float = 0.01,
                   resolution: float = 0.0, seed: int = 0) -> dict:
    """Rate profile and Poisson/renewal diagnostics of session start times (module docstring).

    ``resolution``: the grid (s) the starts were recorded on, ties included (0: exact times).
    Each start is then spread uniformly inside its cell, seeded by ``seed`` (both kept in the
    report as ``spread``): for a Poisson process that reconstruction is exact, since given its
    count in a cell its points are independent and uniform in it. The work is done on times
    from the first start, where float64 still parts microseconds (near 1.7e9 s it holds four
    values a microsecond). Exact starts that tie cannot be rescaled: the report says why
    (``unjudged``) instead of judging."""
    t = np.sort(np.asarray(starts, float))
    n = len(t)
    origin = float(t[0]) if n else 0.0
    t -= origin                     # in place, as _spread: one array of n starts, not three
    cells = float(t[-1] / resolution) + 1 if resolution > 0 and n else np.inf
    if resolution > 0:
        _spread(t, resolution, seed)
    profile = rate_profile(t)
    gaps = _rescaled_gaps(profile, t)
    why = _unjudged(n, gaps, lags, cells, resolution)
    rho = None if why else acf(gaps, lags)[1:]
    out = {"sessions": int(n), "profile": replace(profile, start=origin + profile.start).as_dict(),
           "rate_bins": len(profile.counts)}
    span = float(t[-1] - t[0]) if n > 1 else 0.0
    out["span_s"] = span
    out["rate_per_s"] = float((n - 1) / span) if span > 0 else None
    out["rate_min_max_per_s"] = [float(profile.rates.min()), float(profile.rates.max())]
    out["rate_constant_p"] = (float(stats.chi2.sf(np.sum((profile.counts - profile.counts.mean())
                                                         ** 2) / profile.counts.mean(),
                                                  len(profile.counts) - 1))
                              if len(profile.counts) > 1 else 1.0)
    raw = {}
    for w in WINDOWS:
        if span >= 10 * w:
            raw[f"{w:g}s"] = _index_of_dispersion(_window_counts(t, w))
    out["dispersion_raw"] = raw
    if resolution > 0:
        out["spread"] = {"cell_s": float(resolution), "seed": int(seed)}
    if why:
        out.update(cv=None, acf=[], acf_band=None, acf_outside_band=0, ljung_box_p=None,
                   exponential_a2=None, exponential_p=None, dispersion_index=None,
                   dispersion_p=None, renewal=None, exponential=None, poisson=None,
                   unjudged=why)
        return out
    band = 1.96 / np.sqrt(len(gaps))
    _, lb_p = ljung_box(gaps, lags, rho)
    a2, exp_p = exponential_a2(gaps)
    index, disp_p, _ = _dispersion(t, profile)
    out.update(cv=float(gaps.std() / gaps.mean()), acf=[float(r) for r in rho],
               acf_band=float(band), acf_outside_band=int(np.sum(np.abs(rho) > band)),
               ljung_box_p=lb_p, exponential_a2=a2, exponential_p=exp_p,
               dispersion_index=index, dispersion_p=disp_p,
               renewal=bool(lb_p >= alpha), exponential=bool(exp_p >= alpha))
    out["poisson"] = bool(out["renewal"] and out["exponential"] and disp_p >= alpha)
    if not out["poisson"]:
        out["process"] = fit_hawkes(profile.cumulative(t[:HAWKES_MAX]), lags=lags,
                                    unit="mean gap").as_dict()
    return out


def _spread(t: np.ndarray, cell: float, seed: int) -> None:
    """Move each of the times ``t`` uniformly inside its cell of ``cell`` s (seeded), in place,
    a ``CHUNK`` at a time (the generator draws the same values in chunks as all at once), and
    sort them."""
    rng = np.random.default_rng(seed)
    for a in range(0, len(t), CHUNK):
        part = t[a:a + CHUNK]
        part += rng.uniform(0.0, cell, len(part))
    t.sort()


def _window_counts(t: np.ndarray, width: float) -> np.ndarray:
    """Starts (sorted ``t``) in each window of ``width`` s from the first, as floats, a
    ``CHUNK`` of starts at a time (all at once: 110 MB of temporaries at a month's starts)."""
    counts = np.zeros(int((t[-1] - t[0]) // width) + 1)
    for a in range(0, len(t), CHUNK):
        k = ((t[a:a + CHUNK] - t[0]) // width).astype(np.int64)
        counts[k[0]:k[-1] + 1] += np.bincount(k - k[0])
    return counts


def _index_of_dispersion(counts: np.ndarray) -> float:
    """``counts.var() / counts.mean()`` of float ``counts`` (overwritten): NumPy's arithmetic for
    the variance, in place instead of in a copy (over a long log, 13M windows of 10 s: 100 MB)."""
    mean = counts.mean()
    counts -= mean
    counts *= counts
    return float(counts.mean() / mean)


def _unjudged(n: int, gaps: np.ndarray, lags: int, cells: float = np.inf,
              resolution: float = 0.0) -> str | None:
    """Why the starts cannot be judged (None: they can): too few, on too few cells of their
    grid (spread inside a handful of cells, their gaps are the spreading's draws, not the
    log's), or exact times that tie (a rescaled gap of 0 has no exponential likelihood)."""
    least = max(3 * lags, 30)
    if n < least:
        return f"too few sessions to judge ({n}; the checks need {least})"
    if cells < least:
        return (f"not judged: the {n:,} session starts span {int(cells)} cell(s) of "
                f"{resolution:g} s (the checks need {least}: inside a cell only the spreading "
                "places them)")
    ties = int(np.sum(gaps <= 0))
    if ties:
        return (f"not judged: {ties:,} of {len(gaps):,} gaps between session starts are 0 (times "
                "recorded on a grid; give its resolution to spread them inside their cells)")
    return None


def arrival_verdict(a: dict) -> str:
    """One line from an ``arrival_report``: the verdict and the figures behind it."""
    if a.get("poisson") is None:
        return a.get("unjudged") or f"too few sessions to judge ({a.get('sessions', 0)})"
    if a["poisson"]:
        verdict = "Poisson"
    elif not a["renewal"]:
        verdict = "not renewal (correlated gaps)"
    elif not a["exponential"]:
        verdict = "renewal, not exponential"
    else:
        verdict = "not Poisson (counts over-dispersed)" if a["dispersion_index"] > 1 \
            else "not Poisson (counts under-dispersed)"
    lo, hi = a["rate_min_max_per_s"]
    rate = (f"rate {a['rate_per_s']:.4g}/s constant" if a["rate_bins"] == 1 else
            f"rate {lo:.3g}..{hi:.3g}/s in {a['rate_bins']} bins of "
            f"{a['profile']['bin_s']:.4g} s")
    raw = " ".join(f"{k}={v:.2f}" for k, v in a["dispersion_raw"].items())
    return (f"{verdict}  ({rate}; rescaled gaps: cv {a['cv']:.3g}, A2 exponential p "
            f"{a['exponential_p']:.3g}, Ljung-Box p {a['ljung_box_p']:.3g}, dispersion "
            f"{a['dispersion_index']:.2f} p {a['dispersion_p']:.3g}; raw dispersion "
            f"{raw or 'n/a'})") + (f"\n  clustered: {describe(a['process'])}"
                                   if a.get("process") else "")
