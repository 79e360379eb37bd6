"""The figures of an experiment's table (``wagon experiment``, a recipe's ``[[plot]]``)."""
from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path

from matplotlib.figure import Figure

from ..experiment.summary import interval
from .common import save_png

__all__ = ["plot_table", "series"]


def _number(v) -> float:
    """A table value as a number; NaN when it is not one (an axis of names, a flag)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def series(rows: list[dict], x: str, y: str, by: str | None
           ) -> dict[object, list[tuple[object, float, float, float]]]:
    """Per value of ``by`` (one series when None): (x, mean, low, high) of ``y`` over the
    repetitions at each x — its 95 % confidence interval (``experiment.summary.interval``; the
    mean for both bounds of a single run) — in the order the x values first appear; runs
    without ``y`` left out."""
    groups: dict[object, dict[object, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        v = _number(row.get(y))
        if not math.isnan(v):
            groups[row.get(by) if by else None][row.get(x)].append(v)
    return {s: [(xv, *_bounded(vs)) for xv, vs in points.items()]
            for s, points in groups.items()}


def _bounded(values: list[float]) -> tuple[float, float, float]:
    """The mean and its interval; the mean as both bounds when there is none (one run)."""
    mean, lo, hi = interval(values)
    return (mean, mean, mean) if math.isnan(lo) else (mean, lo, hi)


def plot_table(rows: list[dict], plots: list[dict], folder: Path, title: str = ""
               ) -> tuple[list[Path], list[str]]:
    """One PNG per plot of the recipe, in ``folder``: each y against x, a line per series
    value, the mean over repetitions with its 95 % confidence interval as error bars; titled by the plot's
    own title, else ``title`` (the recipe's). Returns the files, and why each plot naming a
    column the table does not have was skipped (it would be an empty figure)."""
    out, skipped = [], []
    columns = {c for row in rows for c in row}
    for k, p in enumerate(plots):
        missing = [c for c in (p["x"], *p["y"], p["series"]) if c and c not in columns]
        if missing:
            skipped.append(f"plot {k} skipped: the table has no column {missing[0]!r}")
            continue
        fig = Figure(figsize=(5.5 * len(p["y"]), 4))
        axes = fig.subplots(1, len(p["y"]), squeeze=False)[0]
        for ax, y in zip(axes, p["y"]):
            for s, points in series(rows, p["x"], y, p["series"]).items():
                xs = [pt[0] for pt in points]
                numeric = all(not math.isnan(_number(v)) for v in xs)
                at = [_number(v) for v in xs] if numeric else list(range(len(xs)))
                mean = [pt[1] for pt in points]
                ax.errorbar(at, mean, yerr=[[m - pt[2] for m, pt in zip(mean, points)],
                                            [pt[3] - m for m, pt in zip(mean, points)]],
                            marker="o", capsize=3,
                            label=None if s is None else f"{p['series']} = {s}")
                if not numeric:
                    long = max(len(str(v)) for v in xs) > 60 / len(xs)   # would overlap
                    ax.set_xticks(at, [str(v) for v in xs], rotation=20 if long else 0,
                                  ha="right" if long else "center")
            ax.set(xlabel=p["x"], ylabel=y, yscale="log" if p["logy"] else "linear")
            if p["logx"] and numeric:           # (setting a scale drops a label axis' ticks)
                ax.set_xscale("log")
            if p["series"]:
                ax.legend(fontsize="small")
        fig.suptitle(p["title"] or title or ", ".join(p["y"]) + f" against {p['x']}")
        fig.tight_layout()
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"plot-{k}-{'-'.join(p['y'])}")[:100] + ".png"
        save_png(fig, folder / name, dpi=90)
        out.append(folder / name)
    return out, skipped
