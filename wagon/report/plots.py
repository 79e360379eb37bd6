"""PNG plots of fitted laws: empirical vs fitted CDF on log axes, and a QQ plot."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..fitting import FitReport
from ..formats.results import read_results
from .common import save_png
from .replay import plot_width, successful

__all__ = ["plot_fit", "fit_figure", "write_plots", "plot_replay"]


def plot_fit(report: FitReport, values: np.ndarray, path: str | os.PathLike) -> None:
    """``fit_figure`` as a PNG file at ``path``."""
    fig = fit_figure(report, values)
    save_png(fig, path, dpi=100)


def fit_figure(report: FitReport, values: np.ndarray) -> Figure:
    """Left the empirical CDF against the chosen law's as the sample was recorded (inside the
    window, on the grid, as counts: ``FitReport.recorded``), right the QQ plot of the same."""
    best = report.best
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    ranks = np.unique(np.linspace(0, n - 1, min(n, 1000)).astype(int))   # a readable subset
    probs = (ranks + 0.5) / n
    law = report.recorded()
    fig = Figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    ax1.step(x[ranks], (ranks + 1) / n, where="post", label=f"data (n={n:,})", color="black", lw=1)
    positive = x[0] > 0
    grid = np.geomspace(x[0], x[-1], 400) if positive else np.linspace(x[0], x[-1], 400)
    ax1.plot(grid, law.cdf(grid), label=f"{best.name}, as recorded", color="tab:red",
             drawstyle="default" if law.mode in ("continuous", "truncated") else "steps-post")
    ax1.set_xlabel(report.name)
    ax1.set_ylabel("P(X ≤ x)")
    ax1.legend(loc="lower right")
    ax1.set_title(f"{report.name}: CDF")
    theo = law.ppf(probs)
    ax2.plot(theo, x[ranks], ".", ms=3, color="black")
    finite = theo[np.isfinite(theo)]
    lo, hi = min(finite.min(), x[0]), max(finite.max(), x[-1])
    ax2.plot([lo, hi], [lo, hi], color="tab:red", lw=1)
    if positive and lo > 0:
        for ax in (ax1, ax2):
            ax.set_xscale("log")
        ax2.set_yscale("log")
    ax2.set_xlabel(f"{best.name} quantiles")
    ax2.set_ylabel("data quantiles")
    ax2.set_title("QQ plot")
    fig.tight_layout()
    return fig


def write_plots(fits: dict[str, FitReport], samples: dict[str, np.ndarray],
                outdir: str | os.PathLike) -> list[Path]:
    """A PNG per fitted variable in ``outdir`` (created); returns the paths written."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, report in fits.items():
        if report.best is None:
            continue
        path = outdir / f"{name}.png"
        plot_fit(report, samples[name], path)
        written.append(path)
    return written


def plot_replay(summary: dict, results_csv: str | os.PathLike,
                path: str | os.PathLike) -> None:
    """Requests completed per second (averaged over bins of a readable width), and the latency
    distribution of each client class."""
    req = read_results(results_csv)
    ok = successful(req)
    fig = Figure(figsize=(11, 4))
    ax1, ax2 = fig.subplots(1, 2)
    series = np.asarray(summary["throughput"]["per_second"], float)
    width = int(plot_width(len(series)))               # a line, not a block, for long runs
    n = -(-len(series) // width)
    binned = np.bincount(np.arange(len(series)) // width, series, minlength=n) / width
    ax1.plot((np.arange(n) + 0.5) * width, binned, color="black", lw=1)
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel("requests completed per second")
    ax1.set_title(f"throughput ({width} s bins)")
    for name, rows in ok.groupby("class", sort=True):
        lat = np.sort(1e3 * (rows["last_byte"] - rows["start"]).to_numpy())
        ax2.step(lat, np.arange(1, len(lat) + 1) / len(lat), where="post",
                 label=f"{name} (n={len(lat):,})")
    ax2.set_xscale("log")
    ax2.set_xlabel("request latency (ms), from its send")
    ax2.set_ylabel("P(latency ≤ x)")
    ax2.set_title("latency by client class")
    ax2.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    save_png(fig, path, dpi=100)
