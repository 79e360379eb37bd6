"""``wagon report``: one self-contained HTML file (plots embedded as PNG data) for a model, a
workload (log, scenario: load, variance-time, autocorrelation, Hurst table, fitted inter-arrival
and think-time laws with CDF and QQ plots; replay results: ``replay.replay_sections``) or a
comparison of two workloads."""
from __future__ import annotations

import html

import numpy as np

from ..analysis.compare import CompareOptions, compare, overall, verdict_line
from ..analysis.digest import digest
from ..analysis.keepalive import advise
from ..analysis.selfsim import MIN_BINS, counts_per_bin, hurst_all
from ..analysis.workload import Workload
from ..fitting import Observation
from ..fitting.report import format_params
from ..formats.model import Model
from ..formats.results import read_results
from ..modeling.stages import FitTask, fit_stage
from .common import fig as _fig
from .common import howto, hurst_table, page, png, table
from .plots import fit_figure
from .replay import plot_width, replay_sections, summary_rows

__all__ = ["model_report", "workload_report", "compare_report", "law_sections"]


def _series_plots(times: np.ndarray, label: str) -> str:
    """Requests per second at a readable resolution; the variance-time plot and autocorrelation
    of the per-second counts and their Hurst estimates only where the series is long enough."""
    times = np.asarray(times, float)
    t0 = float(times.min()) if len(times) else 0.0
    c = counts_per_bin(times, 1.0)
    width = plot_width(len(c))
    load = counts_per_bin(times - t0, width) / width
    f, ax = _fig(1, 7, 3.2)
    ax[0, 0].plot((np.arange(len(load)) + 0.5) * width, load, lw=1, color="black")
    ax[0, 0].set(xlabel="time (s)", ylabel="requests per second",
                 title=f"{label}: load ({width:g} s bins)")
    out = [png(f), howto(f"requests per second averaged over {width:g} s bins (a run of "
                         f"{len(c):,} s); the level and its swings are the offered load.")]
    if len(c) < MIN_BINS:
        return "".join(out) + (f"<p class='note'>Variance-time, autocorrelation and Hurst not "
                               f"shown: {len(c)} one-second bins, the estimators need at least "
                               f"{MIN_BINS}.</p>")
    f, ax = _fig(2, 12, 3.6)
    m = np.unique(np.geomspace(1, len(c) // 10, 20).astype(int))
    v = np.array([c[: len(c) // k * k].reshape(-1, k).mean(axis=1).var() for k in m])
    ok = v > 0
    ax[0, 0].loglog(m[ok], v[ok] / v[ok][0], "o-", ms=3, color="black", label="data")
    ax[0, 0].loglog(m[ok], m[ok] ** -1.0, "--", color="gray", label="H = 0.5 (slope -1)")
    ax[0, 0].set(xlabel="aggregation m (s)", ylabel="normalised Var(X^(m))",
                 title="variance-time plot")
    ax[0, 0].legend(fontsize=8)
    lags = np.arange(1, min(100, len(c) // 4))
    x = c - c.mean()
    denom = float(x @ x) or 1.0
    ax[0, 1].bar(lags, [float(x[:-k] @ x[k:]) / denom for k in lags], color="black", width=0.8)
    for sign in (1, -1):
        ax[0, 1].axhline(sign * 1.96 / np.sqrt(len(c)), color="gray", ls="--")
    ax[0, 1].set(xlabel="lag (s)", title="autocorrelation of requests/s")
    out += [png(f), howto("left: a slope flatter than -1 means long-range dependence (H = 1 + "
                          "slope/2); right: bars beyond the dashed 95 % band are correlations "
                          "that chance does not explain.")]
    try:
        out.append(hurst_table(hurst_all(c)))
    except ValueError as e:
        out.append(f"<p class='note'>Hurst estimates: {html.escape(str(e))}.</p>")
    return "".join(out)


def model_report(model: Model, title: str = "wagon model") -> str:
    """Fitted laws (every candidate), their CDFs, the keep-alive curve."""
    body = ["<h2>Provenance</h2>" + table(
        ["item", "value"], [[k, v] for k, v in model.provenance.items()
                            if not isinstance(v, (dict, list))])]
    body += law_sections(model)
    if "think" in model.variables:
        clicks = model.variables.get("clicks")
        n = float(clicks.observed.mean()) if clicks else 5.0
        a = advise(model.variables["think"].parent, max(n, 1.0), 0.2, 0.05)
        fig, ax = _fig(1, 6, 3.2)
        d, w = zip(*a.curve)
        ax[0, 0].plot(d, w, color="black")
        ax[0, 0].axvline(a.optimal_timeout, color="tab:red", ls="--")
        ax[0, 0].set_xlabel("keep-alive timeout (s)")
        ax[0, 0].set_ylabel("E[W] per session (s)")
        ax[0, 0].set_title("keep-alive curve (E[X1] = 0.2 s, E[X2] = 0.05 s)")
        body.append("<h2>Keep-alive advisor</h2>"
                    f"<p>Optimal timeout {a.optimal_timeout:.3f} s for the model's think times "
                    f"and E[N] = {n:.3g} (δ = {a.delta:.3g} s).</p>" + png(fig)
                    + howto("expected time a session waits on connections for each keep-alive "
                            "timeout; the dashed line is the minimum."))
    return page(title, body)


def _interval(ci) -> str:
    """An interval as the console prints it (four significant digits); empty when none."""
    return "" if ci is None else "[{:.4g}, {:.4g}]".format(*ci)


def law_sections(model: Model, samples: dict[str, np.ndarray] | None = None) -> list[str]:
    """A section per fitted variable: every candidate's statistics, and the chosen law's CDF as
    fitted (the parent law) and as the log recorded it, with the data's own when ``samples``
    (the sample each variable was fitted to) are given."""
    body = []
    for name, v in model.data["variables"].items():
        if not v.get("best"):
            continue
        var = model.variables[name]
        data = v.get("mean")
        said = f"{data:.4g}" if isinstance(data, (int, float)) else "n/a"
        body.append(f"<h2>{html.escape(name)}: {html.escape(v['best'])} "
                    f"({html.escape(format_params(v['params']))})</h2>"
                    f"<p>Mean as recorded {float(var.observed.mean()):.4g} (the data's "
                    f"{said}).</p>")
        if var.ci_method:
            boot = ["bootstrap 95 % (percentile)"] if var.ci_bootstrap else []
            body.append(table(["parameter", "estimate", "standard error", "95 % interval",
                               "how", *boot],
                              [[p, var.params[p], var.se.get(p), _interval(var.ci.get(p)),
                                var.ci_method[p], *([_interval(var.ci_bootstrap.get(p))]
                                                    if boot else [])]
                               for p in var.ci_method if var.ci_method[p] != "fixed"],
                              f"intervals-{name}"))
        body.append(table(["law", "parameters", "λ²", "W²", "A²", "AIC", "p(A²)", "note"],
                           [[r["law"], ", ".join(f"{k}={p:.4g}" for k, p in r["params"].items()),
                             r["lambda2"], r["w2"], r["a2"], r["aic"], r["p_a2"],
                             r["error"] or (f"refused: {r['refused']}" if r.get("refused")
                                            else "chosen" if r["law"] == v["best"] else "")]
                            for r in v.get("table", [])]))
        fig, ax = _fig(1, 6, 3.2)
        lo, hi = var.parent.ppf(0.001), var.parent.ppf(0.999)
        data = None if samples is None else np.sort(np.asarray(samples.get(name, []), float))
        if data is not None and len(data):
            lo, hi = min(lo, data[0]), max(hi, data[-1])
            ax[0, 0].step(data, np.arange(1, len(data) + 1) / len(data), where="post",
                          color="tab:blue", lw=1, label=f"data (n={len(data):,})")
        grid = np.geomspace(max(lo, hi * 1e-6), hi, 300) if lo > 0 else np.linspace(lo, hi, 300)
        ax[0, 0].plot(grid, var.parent.cdf(grid), color="tab:red", label="parent law")
        ax[0, 0].plot(grid, var.observed.cdf(grid), color="black", ls="--", label="as recorded")
        ax[0, 0].legend(loc="lower right")
        if lo > 0:
            ax[0, 0].set_xscale("log")
        ax[0, 0].set_title(f"{name}: CDF of the fitted {v['best']}")
        body += [png(fig), howto("P(X ≤ x) of the chosen law (red) and of the values as the log "
                                 "recorded them (dashed: inside the truncation window, on the "
                                 "timestamps' grid, as counts), against the data where shown; "
                                 "the table ranks every candidate by its goodness-of-fit "
                                 "statistics (lower is better).")]
    return body


def workload_report(w: Workload, title: str | None = None, model: Model | None = None,
                    samples: dict[str, np.ndarray] | None = None,
                    head: list[str] | None = None) -> str:
    """A replay: ``replay.replay_sections``. A log: ``head`` (its traffic as GoAccess shows
    it: ``logpanel``), the laws of ``model`` (as ``wagon fit`` fitted them, with their
    ``samples``), then load over time, variance-time, autocorrelation and Hurst estimates. A
    scenario: the same with exact-value fits of its inter-arrival and think times."""
    if w.kind == "replay":
        return page(title or f"wagon report: {w.name}", replay_sections(w.source))
    said = (f"<p class='note'>Times in modeled seconds: the scenario's multiplied by its "
            f"--speedup {w.speedup:g}, as <code>wagon compare</code> reads them.</p>"
            if w.speedup != 1.0 else "")
    w = w.modeled()
    body = [f"<h2>{html.escape(w.kind)}: {html.escape(w.name)}</h2>", said,
            table(["requests", "sessions", "mean clicks", "median think (s)"],
                  [[len(w.time), len(w.starts), float(np.mean(w.clicks)) if len(w.clicks) else
                    float("nan"), float(np.median(w.think)) if len(w.think) else float("nan")]],
                  "headline"),
            ]
    if model is not None:                     # a log: GoAccess's view first, then the laws
        body += [*(head or []), "<h2>Fitted laws (those <code>wagon fit</code> chose)</h2>",
                 *law_sections(model, samples)]
    else:
        body.append(_fits(w))
    body += ["<h2>Self-similarity</h2>", _series_plots(w.time, w.name)]
    return page(title or f"wagon report: {w.name}", body)


def _fits(w: Workload) -> str:
    """Fitted laws of the session inter-arrivals and think times, with CDF and QQ plots."""
    out = []
    for name, values in (("session inter-arrival (s)", np.diff(np.sort(w.starts))),
                         ("think time (s)", w.think)):
        values = np.asarray(values, float)
        values = values[values > 0]
        if len(values) < 20:
            continue
        rep = fit_stage(FitTask(name, values, Observation()))    # BLAS on one thread
        if rep.best is None:
            continue
        out.append(f"<h3>{html.escape(name)}: {html.escape(rep.best.name)} "
                   f"({html.escape(format_params(rep.best.params))})</h3>"
                   + png(fit_figure(rep, values))
                   + howto("left: the data's CDF (black) against the fitted law's (red); right: "
                           "the QQ plot — points on the red line mean the law fits, a bend at "
                           "the end is a tail it misses."))
    return ("<h2>Fitted laws</h2>" + "".join(out)) if out else ""


def _clock(w: Workload) -> str:
    """A log read on the other log's coarser clock, said (``workload.on_one_clock``)."""
    return ("" if w.stamps is None else
            f", stamped every {w.stamps:g} s, read on the other's clock of {w.resolution:g} s")


def compare_report(a: Workload, b: Workload,
                   options: CompareOptions = CompareOptions()) -> str:
    """The comparison table and its overall verdict, with page popularity and variance-time
    plots of both workloads."""
    digests = [digest(w) for w in (a, b)]
    rows = compare(*digests, options)
    body = [f"<p>A: {html.escape(a.name)} ({a.kind}{_clock(a)}); B: {html.escape(b.name)} "
            f"({b.kind}{_clock(b)})</p>"]
    if a.kind == b.kind == "replay":
        sa, sb = (summary_rows(read_results(w.source).attrs["run"] or {}) for w in (a, b))
        body += ["<h2>Summaries side by side</h2>", table(
            ["figure", "A", "B"], [[x[0], x[1], y[1]] for x, y in zip(sa, sb) if x[0] == y[0]],
            "summaries")]
    body += ["<h2>Comparison</h2>", table(
        ["row", "A", "B", "test", "p", "verdict", "why"],
        [[r["row"], r["a"], r["b"], r["test"], r["p"], r["verdict"], r.get("why") or ""]
         for r in rows], "compare"),
        f"<p class='verdict'>{html.escape(verdict_line(overall(rows)))}</p>",
        howto("each row measures the same quantity on A and B; the verdict says whether the "
              "difference is within the row's margin (same, close), beyond it (differs), or "
              "cannot be told from these values (undecided), each wrong with probability at "
              "most alpha; the line under the table is the comparison's one verdict.")]
    fig, ax = _fig(1, 6, 3.6)
    for w, d, style in ((a, digests[0], "-"), (b, digests[1], "--")):
        ax[0, 0].loglog(np.arange(1, len(d.page_hits) + 1), d.page_hits, style, label=w.name)
    ax[0, 0].set_xlabel("rank")
    ax[0, 0].set_ylabel("clicks")
    ax[0, 0].set_title("page popularity")
    ax[0, 0].legend(fontsize=8)
    body += [png(fig), howto("clicks per page, most clicked first, on log–log axes: a straight "
                             "line is a Zipf law (the comparison's Zipf slope is that of the "
                             "100 most clicked pages); curves apart mean different "
                             "popularity.")]
    body += [f"<h2>A: {html.escape(a.name)}</h2>", _series_plots(a.time, a.name),
             f"<h2>B: {html.escape(b.name)}</h2>", _series_plots(b.time, b.name)]
    return page(f"wagon comparison: {a.name} vs {b.name}", body)
