"""The capacity curve of ``wagon sweep`` as a PNG."""
from __future__ import annotations

import os

from matplotlib.figure import Figure

from .common import save_png

__all__ = ["plot_capacity"]


def plot_capacity(result: dict, path: str | os.PathLike) -> None:
    """Left: achieved against offered throughput, the line where they are equal, the knee.
    Right: page response time (Kaplan–Meier p50 and p90, the pages a step's end cut censored;
    a triangle where the quantile lies beyond the longest time observed) against offered
    throughput."""
    steps = result["steps"]
    offered = [s["offered_rps"] for s in steps]
    fig = Figure(figsize=(11, 4))
    left, right = fig.subplots(1, 2)
    left.plot(offered, offered, ":", color="grey", label="achieved = offered")
    left.plot(offered, [s["achieved_rps"] for s in steps], "o-", label="achieved")
    left.plot(offered, [s["served_rps"] for s in steps], "x--", label="served in the window")
    if result["knee"] is not None:
        k = result["knee"]
        left.plot([k["offered_rps"]], [k["achieved_rps"]], "s", color="red", ms=10,
                  label=f"knee (rate scale {k['rate_scale']:g})")
    left.set(xlabel="offered requests/s", ylabel="successful requests/s",
             title="Throughput: the curve leaves the diagonal where the server saturates")
    left.legend()
    for q, label in (("median", "p50"), ("p90", "p90")):
        pages = [s["pages"] for s in steps]
        known = [(x, p[f"km_{q}_s"]) for x, p in zip(offered, pages) if p[f"km_{q}_s"] is not None]
        beyond = [(x, p[f"km_{q}_lower_bound_s"]) for x, p in zip(offered, pages)
                  if p[f"km_{q}_lower_bound_s"] is not None]
        color = right.plot(*zip(*known), "o-", label=label)[0].get_color() if known else None
        if beyond:
            right.plot(*zip(*beyond), "^", ms=9, color=color, fillstyle="none",
                       label=f"{label} beyond the longest page seen")
    right.set(xlabel="offered requests/s", ylabel="page response time (s)", yscale="log",
              title="Page response time (Kaplan–Meier, cut pages censored)")
    right.legend()
    fig.tight_layout()
    save_png(fig, path, dpi=90)
