"""A cell's repetitions summarised: per numeric measure its mean and 95 % confidence interval
(Student's t with n − 1 degrees of freedom), and when two cells differ: only when their
intervals do not overlap (a difference inside the runs' own spread is not a finding).
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Sequence

import numpy as np
from scipy import stats

__all__ = ["LEVEL", "interval", "summarise", "apart", "differences"]

#: the intervals' confidence
LEVEL = 0.95
#: a row's columns that say which run it is, not what it measured
IDENTITY = ("experiment", "cell", "repetition", "seed", "server")


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``values`` and its LEVEL confidence interval, Student's
    t with n − 1 degrees of freedom; NaN bounds for a single value (no spread to measure)."""
    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    if len(x) < 2:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf((1 + LEVEL) / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return mean, mean - half, mean + half


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def stopped_early(row: dict) -> bool:
    """Did the run stop before its end (a signal, a lost process, a lagging relay, refused
    results), not at its time limit or the end of its arrivals?"""
    return row.get("stopped_by") not in (None, "", "max_time", "duration")


def summarise(rows: list[dict], axes: Sequence[str]) -> list[dict]:
    """Per cell (in the rows' order): its axes, ``repetitions`` (the runs), ``lagged`` (how many
    the generator flagged), ``stopped`` (how many stopped early), and per numeric measure
    ``NAME_mean``, ``NAME_lo`` and ``NAME_hi`` over the runs that measured it."""
    cells: dict[int, list[dict]] = defaultdict(list)
    for row in rows:
        cells[row["cell"]].append(row)
    out = []
    for cell, runs in cells.items():
        first = runs[0]
        summary: dict[str, Any] = {"experiment": first["experiment"], "cell": cell,
                                   **{a: first[a] for a in axes}, "server": first["server"],
                                   "repetitions": len(runs),
                                   "lagged": sum(bool(r.get("generator_lagged")) for r in runs),
                                   "stopped": sum(stopped_early(r) for r in runs)}
        names = dict.fromkeys(k for r in runs for k, v in r.items()
                              if k not in IDENTITY and k not in axes and _numeric(v))
        for name in names:
            values = [r[name] for r in runs if _numeric(r.get(name))]
            mean, lo, hi = interval(values)
            summary.update({f"{name}_mean": mean, f"{name}_lo": lo, f"{name}_hi": hi})
        out.append(summary)
    return out


def apart(a: dict, b: dict, name: str) -> bool | None:
    """Do two cells' summaries differ in measure ``name``: True when their intervals do not
    overlap, False when they do, None when either has no interval (one run, not measured)."""
    bounds = [(s.get(f"{name}_lo"), s.get(f"{name}_hi")) for s in (a, b)]
    if any(not (_numeric(lo) and _numeric(hi)) for lo, hi in bounds):
        return None
    (lo_a, hi_a), (lo_b, hi_b) = bounds
    return hi_a < lo_b or hi_b < lo_a


def differences(summaries: list[dict], names: Sequence[str]) -> list[str]:
    """One line per pair of consecutive cells: the measures of ``names`` in which they differ
    (intervals apart), or that none does."""
    lines = []
    for a, b in zip(summaries, summaries[1:]):
        verdicts = {n: apart(a, b, n) for n in names}
        found = [n for n, v in verdicts.items() if v]
        if all(v is None for v in verdicts.values()):
            text = "no intervals (one run a cell): no finding"
        elif found:
            text = "differ in " + ", ".join(found) + " (95 % intervals apart)"
        else:
            text = "no difference beyond the runs' spread (every interval overlaps)"
        lines.append(f"cell {a['cell']} vs {b['cell']}: {text}")
    return lines
