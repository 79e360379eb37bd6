"""The sections of a replay's report: the verdict and the summary table first (the figures of
``wagon replay``'s own summary, from the run file, with the run's metadata), the per-class and
per-page tables, then time series at a readable resolution, latency distributions per class and
per page, and the self-similarity analysis where the series is long enough for it.

Everything comes from the results files through ``wagon.formats.results``."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd

from ..analysis.selfsim import MIN_BINS, counts_per_bin, hurst_report
from ..formats.results import measured, pages_path, read_results
from ..replay.events import UNFINISHED
from ..replay.record import GENERATOR_LABELS, LATENCY_LABELS, window_text
from .common import fig, howto, hurst_table, png, table

__all__ = ["replay_sections", "summary_rows", "plot_width", "successful", "MAX_POINTS"]

MAX_POINTS = 240          # bins of a time-series plot at most: a line, never a solid block
TOP_PAGES = 8             # pages drawn in the per-page latency plot
TABLE_PAGES = 30          # rows of the per-page table
_NICE = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400)


def plot_width(duration: float) -> float:
    """The bin width (s) of a time-series plot: the smallest round width giving at most
    MAX_POINTS bins."""
    need = duration / MAX_POINTS
    return float(next((w for w in _NICE if w >= need), np.ceil(need)))


def _ms(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def summary_rows(run: dict) -> list[list[str]]:
    """(figure, value) rows of the run's summary, formatted as ``wagon replay`` prints them."""
    s = run.get("summary")
    model = run.get("model") or {}
    meta = [["target", run.get("target") or "-"], ["scenario", run.get("scenario") or "-"],
            ["model", " ".join(filter(None, (model.get("name"), model.get("digest"))))
             if model else "not recorded (results before version 3)"],
            ["start (UTC)", run.get("t0") or "-"],
            ["client classes", ", ".join(run.get("classes") or [])]]
    if s is None:
        return meta + [["summary", "none: the run did not end (interrupted writer)"]]
    r, e, t, g, ss = s["requests"], s["errors"], s["throughput"], s["generator"], s["sessions"]
    rows = meta + [
        ["duration (s)", f"{s['duration_s']:.1f}"],
        *([["measured window", w]] if (w := window_text(s)) else []),
        ["requests sent (ok, failed, in flight at the stop)",
         f"{r['total'] - r['not_started']:,} ({r['ok']:,}, {e['total']:,}, {r['in_flight']:,})"],
        ["requests not started (of those due)", f"{r['not_started']:,} ({r['total']:,})"],
        ["throughput (ok/s)", f"{t['requests_per_s']:,.1f}"],
        ["throughput (Mbit/s)", f"{8 * t['bytes_per_s'] / 1e6:,.2f}"],
        ["connections", f"{s['connections']:,}"],
        ["sessions started, completed, cut short, late",
         f"{ss['started']:,}, {ss['completed']:,}, {ss['interrupted']:,}, {ss['late']:,}"],
        ["pages (with errors)", f"{s['pages']['total']:,} ({s['pages']['with_errors']:,})"],
        ["errors", f"{e['total']:,}"]]
    rows += [[f"errors: {k}", f"{v:,}"] for k, v in sorted(e["by_kind"].items())]
    rows += [[f"latency (ms) {name}: p50, p90, p99, max",
              ", ".join(_ms(s["latency"].get(key, {}).get(p)) for p in ("p50", "p90", "p99",
                                                                          "max"))]
             for key, name in LATENCY_LABELS.items()]    # older summaries: no tls
    rows += [[f"generator (ms) {name}: p50, p90, p99, max",
              ", ".join(_ms(g[key][p]) for p in ("p50", "p90", "p99", "max"))]
             for key, name in GENERATOR_LABELS.items()]
    if g.get("cpu") is not None:
        rows.append(["generator CPU (% of a core)", f"{100 * g['cpu']:.0f}"])
    rows += [["WARNING", w] for w in s["warnings"]]
    return rows


def _verdict(summary: dict | None) -> str:
    """The run's verdict first: each threshold with the value measured, and how it ended."""
    if summary is None:
        return "<p class='verdict'>No verdict: the run did not end (no summary).</p>"
    checks = summary.get("thresholds") or []
    failed = [c for c in checks if c["failed"]]
    stop = summary.get("stopped_by")
    how = {None: "ran to its end", "max_time": "ended at --max-time (planned)",
           "duration": "ended at its steady duration (planned)", "signal": "was interrupted",
           "worker_died": "lost a worker", "relay_died": "lost its packet relay",
           "relay_lagged": "was stopped: its packet relay lagged"}.get(stop, f"stopped ({stop})")
    head = (f"FAILED {len(failed)} of {len(checks)} thresholds" if failed else
            f"passed its {len(checks)} threshold{'s' * (len(checks) != 1)}")
    return (f"<h2 id='verdict'>Verdict: the run {html.escape(how)} and {head}</h2>"
            + table(["threshold", "measured", "verdict"],
                    [[c["threshold"], _measured(c), "FAILED" if c["failed"] else "ok"]
                     for c in checks], "thresholds"))


def _measured(check: dict) -> str:
    """A threshold's measured value in its own unit: ``errors>1%`` → ``4.90 %``, a latency
    (``NAME.STAT``) in ms, a count of errors as a count; not measured → ``-``."""
    value, text = check["value"], check["threshold"]
    if value is None:
        return "-"
    if text.rstrip().endswith("%"):
        return f"{value:.2f} %"
    return f"{value:,.2f} ms" if "." in text.split(">")[0].split("<")[0] else f"{value:,.0f}"


def _active(starts: np.ndarray, ends: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """How many [start, end] intervals hold each time of ``grid``."""
    return (np.searchsorted(np.sort(starts), grid, "right")
            - np.searchsorted(np.sort(ends), grid, "right"))


def _per_bin(t: np.ndarray, width: float, n: int, weights=None) -> np.ndarray:
    idx = np.clip((t // width).astype(int), 0, n - 1)
    return np.bincount(idx, weights=weights, minlength=n)[:n]


def _shade(axes, window: dict | None, end: float) -> None:
    """Grey the warm-up and cool-down the statistics left out."""
    if not window:
        return
    spans = [(0.0, window["from_s"])] + ([(window["to_s"], end)] if window["to_s"] is not None
                                         else [])
    for ax in axes:
        for a, b in spans:
            if b > a:
                ax.axvspan(a, b, color="0.85", zorder=0, lw=0)


def _series(req, width: float, n: int, held: list[int] | None,
            window: dict | None) -> list[str]:
    """Throughput, errors by kind and status class, active sessions, open connections
    (``held``: the run's count at the end of each second; None in results before version 4),
    latency percentiles over time, each a plot with its how-to-read line; the seconds left out
    of the measured ``window`` shaded."""
    def shown(f) -> str:
        _shade(f.axes, window, n * width)
        return png(f)

    out = []
    done = req[req["last_byte"].notna()]
    t_end = done["last_byte"].to_numpy()
    x = (np.arange(n) + 0.5) * width
    unit = f"{width:g} s bins"
    ok = (done["error"] == "").to_numpy()
    f, ax = fig(1, 7, 3.2)
    ax[0, 0].plot(x, _per_bin(t_end[ok], width, n) / width, color="black", lw=1, label="ok")
    ax[0, 0].plot(x, _per_bin(t_end[~ok], width, n) / width, color="tab:red", lw=1,
                  label="errors")
    ax[0, 0].set(xlabel="time (s)", ylabel="requests per second", title=f"throughput ({unit})")
    ax[0, 0].legend(fontsize=8)
    out += [shown(f), howto("requests completed per second, averaged over each bin; a fall "
                           "while the offered load holds means the server (or the generator) "
                           "saturates.")]
    f, ax = fig(2, 12, 3.2)
    kinds = sorted(set(done["error"]) - {""})
    for k in kinds:
        ax[0, 0].plot(x, _per_bin(t_end[(done["error"] == k).to_numpy()], width, n) / width,
                      lw=1, label=k)
    if not kinds:
        ax[0, 0].text(0.5, 0.5, "no errors", ha="center", transform=ax[0, 0].transAxes)
    else:
        ax[0, 0].legend(fontsize=8)
    ax[0, 0].set(xlabel="time (s)", ylabel="errors per second", title="errors by kind")
    status = done["status"].to_numpy()
    for c in sorted({int(v) // 100 for v in status if v > 0}):
        ax[0, 1].plot(x, _per_bin(t_end[status // 100 == c], width, n) / width, lw=1,
                      label=f"{c}xx")
    if (status <= 0).any():
        ax[0, 1].plot(x, _per_bin(t_end[status <= 0], width, n) / width, lw=1, ls="--",
                      label="no status")
    ax[0, 1].set(xlabel="time (s)", ylabel="responses per second", title="status classes")
    ax[0, 1].legend(fontsize=8)
    out += [shown(f), howto("left: failed requests per second by kind (timeouts, resets…); "
                           "right: responses per second by HTTP status class — 4xx/5xx rising "
                           "with load is the server refusing or failing.")]
    started = req[req["start"].notna()]
    sess = started.groupby("session").agg(a=("start", "min"), b=("last_byte", "max"))
    f, ax = fig(1, 7, 3.2)
    b = sess["b"].fillna(n * width).to_numpy()
    ax[0, 0].plot(x, _active(sess["a"].to_numpy(), b, x), lw=1, color="black", label="sessions")
    if held is not None:
        at = np.minimum(x.astype(int), len(held))
        ax[0, 0].plot(x, np.append(held, 0)[at], lw=1, color="tab:blue", label="connections")
    ax[0, 0].set(xlabel="time (s)", ylabel="active", title="active sessions and open connections")
    ax[0, 0].legend(fontsize=8)
    out += [shown(f), howto("sessions between their first request and their last byte; "
                           "connections open at that second, idle keep-alive ones included "
                           "(counted by the replay as they open and close)"
                           + ("" if held is not None else "; not recorded in these results, "
                              "from before results version 4")
                           + " — a count that keeps growing means the server falls behind the "
                           "arrivals.")]
    f, ax = fig(1, 7, 3.2)
    good = done[ok]
    lat = 1e3 * (good["last_byte"] - good["start"]).to_numpy()
    idx = np.clip((good["last_byte"].to_numpy() // width).astype(int), 0, n - 1)
    by_bin = pd.Series(lat).groupby(idx)
    for q, colour in ((50, "black"), (90, "tab:blue"), (99, "tab:red")):
        ys = by_bin.quantile(q / 100).reindex(range(n)).to_numpy()
        ax[0, 0].plot(x, ys, lw=1, color=colour, label=f"p{q}")
    ax[0, 0].set_yscale("log")
    ax[0, 0].set(xlabel="time (s)", ylabel="latency (ms)", title=f"request latency ({unit})")
    ax[0, 0].legend(fontsize=8)
    out += [shown(f), howto("percentiles of the successful requests that ended in each bin (log "
                           "scale); a p99 far above p50 is a tail, a rising p50 is queueing.")]
    return out


def successful(req: pd.DataFrame) -> pd.DataFrame:
    """The requests that succeeded, with their start and last byte."""
    return req[(req["error"] == "") & req["start"].notna() & req["last_byte"].notna()]


def _cdf(ax, values_ms: np.ndarray, label: str) -> None:
    v = np.sort(values_ms)
    ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", lw=1,
            label=f"{label} (n={len(v):,})")


def _distributions(req, pages, urls: dict) -> list[str]:
    """Request latency per client class, page response time per page (the busiest ones)."""
    good = successful(req)
    f, ax = fig(2, 12, 3.6)
    for name, rows in good.groupby("class", sort=True):
        _cdf(ax[0, 0], 1e3 * (rows["last_byte"] - rows["start"]).to_numpy(), name)
    ax[0, 0].set(xscale="log", xlabel="request latency (ms)", ylabel="P(latency ≤ x)",
                 title="request latency by client class")
    timed = pages[pages["response_time"].notna()]
    busiest = timed["page"].value_counts().index[:TOP_PAGES]
    for p in busiest:
        _cdf(ax[0, 1], 1e3 * timed.loc[timed["page"] == p, "response_time"].to_numpy(),
             urls.get(p, str(p)))
    ax[0, 1].set(xscale="log", xlabel="page response time (ms)", ylabel="P(time ≤ x)",
                 title=f"page response time, the {len(busiest)} most visited pages")
    for a in ax[0]:
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=7)
    return ["<h2>Latency distributions</h2>", png(f),
            howto("each curve is a cumulative distribution: read the x where it crosses 0.5 for "
                  "the median, 0.99 for p99; a curve to the right is slower.")]


def nearest_rank(x: np.ndarray, q):
    """Nearest-rank percentiles (the ⌈q·n/100⌉-th value): the definition of wagon replay's
    summary (``replay.histogram``), so that a table beside it shows the same figure (NumPy's
    default, linear interpolation, put a one-class run's p99 15 % below the summary's)."""
    return np.percentile(x, q, method="inverted_cdf")


def page_rows(req, pages, urls: dict) -> list[list]:
    """Per page: visits, requests (its objects included), failed requests, p50 and p99 of its
    response time (ms); the most visited first."""
    reqs = req.groupby("page").size()
    errs = req[~req["error"].isin(("", *UNFINISHED))].groupby("page").size()
    rt = pages[pages["response_time"].notna()].groupby("page")["response_time"]
    p50, p99 = (rt.agg(lambda x, q=q: nearest_rank(x.to_numpy(), q)) for q in (50, 99))
    visits = pages.groupby("page").size().sort_values(ascending=False, kind="stable")
    return [[urls.get(p, str(p)), int(v), int(reqs.get(p, 0)), int(errs.get(p, 0)),
             1e3 * p50.get(p, np.nan), 1e3 * p99.get(p, np.nan)] for p, v in visits.items()]


def _analysis(times: np.ndarray) -> list[str]:
    """Hurst estimates of requests per second, or why there are none."""
    c = counts_per_bin(times, 1.0)
    if len(c) < MIN_BINS:
        return [f"<p class='note'>Self-similarity (Hurst, variance-time) not shown: the run "
                f"has {len(c)} one-second bins, the estimators need at least {MIN_BINS}.</p>"]
    try:
        est, notes = hurst_report(c)
    except ValueError as e:
        return [f"<p class='note'>Self-similarity not shown: {html.escape(str(e))}.</p>"]
    return ([hurst_table(est), howto("H near 0.5: no long-range dependence; above 0.5: bursts "
                                     "at every time scale.")]
            + [f"<p class='note'>{html.escape(n)}</p>" for n in notes])


def sessions_started(every: pd.DataFrame, run: dict) -> pd.Series:
    """Sessions per class that started inside the measured window, as the summary counts them:
    a session is placed at its first request (the smallest ``intended``), not counted for
    the later clicks a warm-up session makes inside the window."""
    due = every["intended"].fillna(every["start"]).dropna()
    first = every.loc[due.groupby(every.loc[due.index, "session"]).idxmin()]
    return first[measured(first, run)].groupby("class").size()


def replay_sections(path: str) -> list[str]:
    """The report body of the replay results at ``path``."""
    every = read_results(path)
    run = every.attrs["run"] or {}
    req = every[measured(every, run)]
    pages = read_results(pages_path(path))
    pages = pages[measured(pages, run)]
    body = [_verdict(run.get("summary")),
            "<h2>Summary</h2>", table(["figure", "value"], summary_rows(run), "summary"),
            howto("the figures of wagon replay's own summary (latencies from its histograms, "
                  "within 1 %); the tables and plots below are computed from the results CSV, "
                  "from its rows inside the measured window (the plots over time show the whole "
                  "run and shade what was left out).")]
    classes, started = [], sessions_started(every, run)
    for name, rows in req.groupby("class", sort=False):
        good = rows[rows["error"] == ""]
        lat = 1e3 * (good["last_byte"] - good["start"]).dropna().to_numpy()
        q = nearest_rank(lat, [50, 99]) if len(lat) else [np.nan, np.nan]
        cut = int(rows["error"].isin(UNFINISHED).sum())
        classes.append([name, int(started.get(name, 0)), len(rows), len(good),
                        len(rows) - len(good) - cut, cut, q[0], q[1]])
    body += ["<h2>Client classes</h2>", table(
        ["class", "sessions", "requests", "ok", "failed", "cut by the stop", "p50 (ms)",
         "p99 (ms)"], classes, "classes"),
        howto("per client class of the scenario: the sessions that started in the measured "
              "window (the summary's sessions started), and the window's requests: ok, failed "
              "(the summary's errors), and cut by the run's stop (in flight or not started: no "
              "error); latency of the successful ones, from send to last byte.")]
    urls = dict(req[req["kind"] == "page"].groupby("page")["url"].first())
    rows = page_rows(req, pages, urls)
    more = (f"<p class='note'>{len(rows) - TABLE_PAGES} less visited pages not shown.</p>"
            if len(rows) > TABLE_PAGES else "")
    body += ["<h2>Pages</h2>", table(["page", "visits", "requests", "failed requests",
                                      "p50 (ms)", "p99 (ms)"], rows[:TABLE_PAGES], "pages"), more,
             howto("requests include the page's objects; p50/p99: the page's response time, "
                   "from its first request to its last object.")]
    end = every["last_byte"].max()
    duration = float(end) if np.isfinite(end) else 0.0
    width = plot_width(duration)
    n = max(1, int(np.ceil(duration / width)))
    held = ((run.get("summary") or {}).get("open_connections") or {}).get("per_second")
    body += ["<h2>Over time</h2>",
             *_series(every, width, n, held, (run.get("summary") or {}).get("window"))]
    body += _distributions(req, pages, urls)
    body += ["<h2>Analysis</h2>",
             *_analysis(req["last_byte"].dropna().to_numpy())]
    return body
