"""``wagon report``: one self-contained HTML file (plots embedded as PNG data) for a model, a
workload (log, scenario, replay results: load, variance-time, autocorrelation, Hurst table, fitted
inter-arrival and think-time laws with CDF and QQ plots, latencies for a replay) or a comparison
of two workloads.

The page checks itself when loaded: a script marks ``<body data-images="ok N">`` once every image
has decoded (``broken K`` otherwise) and ``data-errors`` with any script error, so a headless
browser can tell that it renders."""
from __future__ import annotations

import base64
import html
import io
from datetime import datetime, timezone

import numpy as np
from matplotlib.figure import Figure

from .. import __version__
from ..analysis.compare import CompareOptions, compare
from ..analysis.keepalive import advise
from ..analysis.selfsim import counts_per_bin, hurst_all
from ..analysis.workload import Workload
from ..fitting import fit
from ..fitting.report import format_params
from ..formats.model import Model
from ..formats.results import read_results
from .plots import plot_fit

__all__ = ["model_report", "workload_report", "compare_report"]

_CHECK = """<script>
window.addEventListener('error', e => { document.body.dataset.errors =
  (document.body.dataset.errors || '') + e.message + ';'; });
window.addEventListener('load', () => {
  const imgs = [...document.images];
  const bad = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).length;
  document.body.dataset.images = bad ? 'broken ' + bad : 'ok ' + imgs.length;
});
</script>"""

_STYLE = """<style>
body { font-family: sans-serif; margin: 2em; max-width: 1100px; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; } .note { color: #555; }
</style>"""


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return ('<img alt="plot" src="data:image/png;base64,'
            + base64.b64encode(buf.getvalue()).decode() + '">')


def _fig(ncols: int = 2, width: float = 11, height: float = 3.6):
    fig = Figure(figsize=(width, height))
    return fig, fig.subplots(1, ncols, squeeze=False)


def _table(head: list[str], rows: list[list]) -> str:
    def cell(v):
        if isinstance(v, float):
            return "" if not np.isfinite(v) else f"{v:.4g}"
        return html.escape("" if v is None else str(v))
    return ("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in r) + "</tr>" for r in rows)
            + "</table>")


def _page(title: str, body: list[str]) -> str:
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title>{_STYLE}</head><body><h1>{html.escape(title)}</h1>"
            f"<p class='note'>wagon-workload {__version__}, {stamp}</p>" + "".join(body)
            + _CHECK + "</body></html>")


def _series_plots(times: np.ndarray, label: str) -> str:
    """Requests per second, variance-time plot and autocorrelation of a series of times."""
    c = counts_per_bin(times, 1.0)
    fig, ax = _fig(3, 13, 3.6)
    ax[0, 0].plot(c, lw=0.7, color="black")
    ax[0, 0].set_xlabel("time (s)")
    ax[0, 0].set_ylabel("requests per second")
    ax[0, 0].set_title(f"{label}: load")
    m = np.unique(np.geomspace(1, max(2, len(c) // 10), 20).astype(int))
    m = m[m <= len(c)]
    v = np.array([c[: len(c) // k * k].reshape(-1, k).mean(axis=1).var() for k in m])
    ok = v > 0
    if ok.sum() >= 2:
        ax[0, 1].loglog(m[ok], v[ok] / v[ok][0], "o-", ms=3, color="black", label="data")
        ax[0, 1].loglog(m[ok], m[ok] ** -1.0, "--", color="gray", label="H = 0.5 (slope -1)")
    else:
        ax[0, 1].text(0.5, 0.5, f"{len(c)} s of data: too short", ha="center",
                      transform=ax[0, 1].transAxes)
    ax[0, 1].set_xlabel("aggregation m (s)")
    ax[0, 1].set_ylabel("normalised Var(X^(m))")
    ax[0, 1].set_title("variance-time plot")
    if ok.sum() >= 2:
        ax[0, 1].legend(fontsize=8)
    lags = np.arange(1, max(2, min(100, len(c) // 4)))
    x = c - c.mean()
    denom = float(x @ x) or 1.0
    acf = [float(x[:-k] @ x[k:]) / denom if k < len(x) else 0.0 for k in lags]
    ax[0, 2].bar(lags, acf, color="black", width=0.8)
    ax[0, 2].axhline(1.96 / np.sqrt(len(c)), color="gray", ls="--")
    ax[0, 2].axhline(-1.96 / np.sqrt(len(c)), color="gray", ls="--")
    ax[0, 2].set_xlabel("lag (s)")
    ax[0, 2].set_title("autocorrelation of requests/s")
    fig.tight_layout()
    return _png(fig)


def _hurst_table(times: np.ndarray) -> str:
    c = counts_per_bin(times, 1.0)
    try:
        est = hurst_all(c)
    except ValueError as e:
        return f"<p class='note'>Hurst estimates: {html.escape(str(e))} (per-second counts).</p>"
    return "<h3>Hurst parameter (requests per second)</h3>" + _table(
        ["estimator", "H", "95% CI", "fit range"],
        [[e.estimator, e.H, f"[{e.ci[0]:.3f}, {e.ci[1]:.3f}]" if e.ci else "", e.fit_range]
         for e in est])


def model_report(model: Model, title: str = "wagon model") -> str:
    """Fitted laws (every candidate), their CDFs, the keep-alive curve."""
    body = ["<h2>Provenance</h2>" + _table(
        ["item", "value"], [[k, v] for k, v in model.provenance.items()
                            if not isinstance(v, (dict, list))])]
    for name, v in model.data["variables"].items():
        if not v.get("best"):
            continue
        body.append(f"<h2>{html.escape(name)}: {html.escape(v['best'])}</h2>")
        body.append(_table(["law", "parameters", "λ²", "W²", "A²", "AIC", "p(A²)", "note"],
                           [[r["law"], ", ".join(f"{k}={p:.4g}" for k, p in r["params"].items()),
                             r["lambda2"], r["w2"], r["a2"], r["aic"], r["p_a2"],
                             r["error"] or ("chosen" if r["law"] == v["best"] else "")]
                            for r in v.get("table", [])]))
        law = model.variables[name].frozen
        fig, ax = _fig(1, 6, 3.2)
        lo, hi = law.ppf(0.001), law.ppf(0.999)
        grid = np.geomspace(max(lo, hi * 1e-6), hi, 300) if lo >= 0 else np.linspace(lo, hi, 300)
        ax[0, 0].plot(grid, law.cdf(grid), color="tab:red")
        if lo >= 0:
            ax[0, 0].set_xscale("log")
        ax[0, 0].set_title(f"{name}: CDF of the fitted {v['best']}")
        fig.tight_layout()
        body.append(_png(fig))
    if "think" in model.variables:
        clicks = model.variables.get("clicks")
        n = float(clicks.frozen.mean()) if clicks else 5.0
        a = advise(model.variables["think"].frozen, max(n, 1.0), 0.2, 0.05)
        fig, ax = _fig(1, 6, 3.2)
        d, w = zip(*a.curve)
        ax[0, 0].plot(d, w, color="black")
        ax[0, 0].axvline(a.optimal_timeout, color="tab:red", ls="--")
        ax[0, 0].set_xlabel("keep-alive timeout (s)")
        ax[0, 0].set_ylabel("E[W] per session (s)")
        ax[0, 0].set_title("keep-alive curve (E[X1] = 0.2 s, E[X2] = 0.05 s)")
        fig.tight_layout()
        body.append("<h2>Keep-alive advisor</h2>"
                    f"<p>Optimal timeout {a.optimal_timeout:.3f} s for the model's think times "
                    f"and E[N] = {n:.3g} (δ = {a.delta:.3g} s).</p>" + _png(fig))
    return _page(title, body)


def workload_report(w: Workload, title: str | None = None) -> str:
    """Load over time, variance-time and autocorrelation, Hurst estimates; latencies for replays."""
    body = [f"<h2>{html.escape(w.kind)}: {html.escape(w.name)}</h2>",
            _table(["requests", "sessions", "mean clicks", "median think (s)"],
                   [[len(w.time), len(w.starts), float(np.mean(w.clicks)) if len(w.clicks) else
                     float("nan"), float(np.median(w.think)) if len(w.think) else float("nan")]]),
            _series_plots(w.time, w.name), _hurst_table(w.time)]
    body.append(_fits(w))
    if w.kind == "replay":
        body.append(_latency_plot(w))
    return _page(title or f"wagon report: {w.name}", body)


def _fits(w: Workload) -> str:
    """Fitted laws of the session inter-arrivals and think times, with CDF and QQ plots."""
    out = []
    for name, values in (("session inter-arrival (s)", np.diff(np.sort(w.starts))),
                         ("think time (s)", w.think)):
        values = np.asarray(values, float)
        values = values[values > 0]
        if len(values) < 20:
            continue
        rep = fit(values, name=name)
        if rep.best is None:
            continue
        buf = io.BytesIO()
        plot_fit(rep, values, buf)
        out.append(f"<h3>{html.escape(name)}: {html.escape(rep.best.name)} "
                   f"({html.escape(format_params(rep.best.params))})</h3>"
                   '<img alt="fit" src="data:image/png;base64,'
                   + base64.b64encode(buf.getvalue()).decode() + '">')
    return ("<h2>Fitted laws</h2>" + "".join(out)) if out else ""


def _latency_plot(w: Workload) -> str:
    """Latency distribution per client class and latency over time (median, p99 per second)."""
    req = read_results(w.source)
    ok = req[(req["error"] == "") & req["start"].notna() & req["last_byte"].notna()]
    if ok.empty:
        return ""
    ms = 1e3 * (ok["last_byte"] - ok["start"]).to_numpy()
    fig, ax = _fig(2, 12, 3.6)
    for name, rows in ok.groupby("class", sort=True):
        v = np.sort(1e3 * (rows["last_byte"] - rows["start"]).to_numpy())
        ax[0, 0].step(v, np.arange(1, len(v) + 1) / len(v), where="post",
                      label=f"{name} (n={len(v):,})")
    ax[0, 0].set_xscale("log")
    ax[0, 0].set_xlabel("latency (ms)")
    ax[0, 0].set_ylabel("P(latency ≤ x)")
    ax[0, 0].legend(fontsize=8)
    ax[0, 0].set_title("latency distribution by client class")
    sec = np.floor(ok["last_byte"].to_numpy()).astype(int)
    seconds = np.unique(sec)
    ax[0, 1].plot(seconds, [np.median(ms[sec == k]) for k in seconds], label="median",
                  color="black", lw=1)
    ax[0, 1].plot(seconds, [np.percentile(ms[sec == k], 99) for k in seconds], label="p99",
                  color="tab:red", lw=1)
    ax[0, 1].set_yscale("log")
    ax[0, 1].set_xlabel("time (s)")
    ax[0, 1].set_ylabel("latency (ms)")
    ax[0, 1].set_title("latency over time")
    ax[0, 1].legend(fontsize=8)
    fig.tight_layout()
    return "<h2>Latency</h2>" + _png(fig)


def compare_report(a: Workload, b: Workload, options: CompareOptions = CompareOptions()) -> str:
    """The comparison table with popularity and variance-time plots of both workloads."""
    rows = compare(a, b, options)
    body = [_table(["row", "A", "B", "test", "p", "verdict"],
                   [[r["row"], r["a"], r["b"], r["test"], r["p"], r["verdict"]] for r in rows])]
    fig, ax = _fig(1, 6, 3.6)
    for w, style in ((a, "-"), (b, "--")):
        counts = np.sort(np.bincount(w.url))[::-1]
        counts = counts[counts > 0]
        ax[0, 0].loglog(np.arange(1, len(counts) + 1), counts, style, label=w.name)
    ax[0, 0].set_xlabel("rank")
    ax[0, 0].set_ylabel("requests")
    ax[0, 0].set_title("page popularity")
    ax[0, 0].legend(fontsize=8)
    fig.tight_layout()
    body.append(_png(fig))
    body += [f"<h2>A: {html.escape(a.name)}</h2>", _series_plots(a.time, a.name),
             f"<h2>B: {html.escape(b.name)}</h2>", _series_plots(b.time, b.name)]
    return _page(f"wagon comparison: {a.name} vs {b.name}", body)
