"""The capacity curve of ``wagon sweep`` as a PNG."""
from __future__ import annotations

import os

from matplotlib.figure import Figure

from ..formats.atomic import atomic_path

__all__ = ["plot_capacity"]


def plot_capacity(result: dict, path: str | os.PathLike) -> None:
    """Left: achieved against offered throughput, the line where they are equal, the knee.
    Right: latency percentiles against offered throughput."""
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
    for p in ("p50", "p90", "p99"):
        xs = [x for x, s in zip(offered, steps) if s["latency_ms"][p] is not None]
        right.plot(xs, [s["latency_ms"][p] for s in steps if s["latency_ms"][p] is not None],
                   "o-", label=p)
    right.set(xlabel="offered requests/s", ylabel="request latency (ms)", yscale="log",
              title="Latency of successful requests per step")
    right.legend()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=90, format="png")
