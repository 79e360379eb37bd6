"""Are session arrivals Poisson, or at least renewal? The checks WAGON reports.

- renewal: inter-arrival times uncorrelated — autocorrelation at lags 1..k against the ±1.96/√n
  band, and the Ljung–Box test over those lags (statsmodels);
- Poisson: renewal with exponential inter-arrivals — exponential among the laws the fit cannot
  tell from the best one, and a coefficient of variation near 1;
- index of dispersion of the counts per window (variance/mean; 1 for Poisson), at several
  windows: it grows with the window when arrivals are bursty or the rate drifts (daily cycle).
"""
from __future__ import annotations

import numpy as np
from statsmodels.stats.diagnostic import acorr_ljungbox
from statsmodels.tsa.stattools import acf

from . import gof
from .report import FitReport

__all__ = ["arrival_report", "arrival_verdict"]

WINDOWS = (10.0, 60.0, 600.0)


def _exponential_close(report: FitReport) -> bool:
    best = report.best
    exp = next((c for c in report.candidates if c.name == "exponential" and c.ok), None)
    if best is None or exp is None:
        return False
    return exp.a2 - best.a2 <= gof.A2_CRIT_5 and exp.w2 - best.w2 <= gof.W2_CRIT_5


def arrival_report(starts: np.ndarray, fitted: FitReport, lags: int = 10,
                   alpha: float = 0.01) -> dict:
    """Renewal/Poisson diagnostics of sorted session start times (``fitted``: their gaps' fit)."""
    gaps = np.diff(np.sort(starts))
    n = len(gaps)
    lags = int(min(lags, max(n // 5, 1)))
    rho = acf(gaps, nlags=lags, fft=True)[1:] if n > 2 else np.zeros(0)
    band = 1.96 / np.sqrt(max(n, 1))
    lb_p = float(acorr_ljungbox(gaps, lags=[lags])["lb_pvalue"].iloc[0]) if n > lags + 1 else None
    span = float(starts[-1] - starts[0]) if len(starts) else 0.0
    dispersion = {}
    for w in WINDOWS:
        if span >= 10 * w:
            counts = np.bincount(((starts - starts[0]) // w).astype(np.int64))
            dispersion[f"{w:g}s"] = float(counts.var() / counts.mean())
    renewal = lb_p is None or lb_p >= alpha
    cv = float(gaps.std() / gaps.mean()) if n and gaps.mean() > 0 else None
    return {
        "sessions": int(len(starts)),
        "rate_per_s": float((len(starts) - 1) / span) if span > 0 else None,
        "cv": cv,
        "acf": [float(r) for r in rho],
        "acf_band": float(band),
        "acf_outside_band": int(np.sum(np.abs(rho) > band)),
        "ljung_box_p": lb_p,
        "dispersion_index": dispersion,
        "renewal": bool(renewal),
        "exponential": _exponential_close(fitted),
        "poisson": bool(renewal and _exponential_close(fitted)),
    }


def arrival_verdict(a: dict) -> str:
    """One line from an ``arrival_report``: the verdict and the figures behind it."""
    verdict = "Poisson" if a["poisson"] else ("renewal, not exponential" if a["renewal"]
                                              else "not renewal (correlated gaps)")
    lb = "n/a" if a["ljung_box_p"] is None else f"{a['ljung_box_p']:.3g}"
    disp = " ".join(f"{k}={v:.2f}" for k, v in a["dispersion_index"].items())
    return (f"{verdict}  (rate {a['rate_per_s']:.4g}/s, cv {a['cv']:.3g}, Ljung-Box p {lb}, "
            f"|acf| > band at {a['acf_outside_band']}/{len(a['acf'])} lags, dispersion "
            f"{disp or 'n/a'})")
