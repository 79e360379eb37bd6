"""The keep-alive timeout advisor: WAGON's queueing model of persistent connections, and the same
model with the time a kept-alive connection really holds a server process.

A session brings N clicks separated by think times Y (CDF F, density f, survival S). X₁ is a
click's transfer time on a new connection, X₂ on a kept-alive one, gain = E[X₁] − E[X₂]. After a
response the server process keeps the connection for at most the timeout Δ; a click that comes
within Δ reuses it.

**The paper** (Liu, Niclausse & Jalpa-Villanueva 2001) charges every click the part of the
timeout the user leaves unused:

    W(Δ) = E[N]·E[X₁] + E[N]·∫₀^Δ F(y) dy − E[N − 1]·F(Δ)·gain

whose derivative E[N]·(F(Δ) − δ·f(Δ)) gives Theorem 1: the best timeout solves F(Δ) = δ·f(Δ)
with δ = E[N − 1]/E[N]·gain. Its integral ∫₀^Δ∫ₓ^Δ f(y) dy dx is ∫₀^Δ y·f(y) dy (the order of
integration swapped), not ∫₀^Δ F(y) dy; and either way a connection the user does not come back
to in time holds the process for the whole Δ, which the term leaves out.

**Corrected**: after each of the first N − 1 clicks the process is held min(Y, Δ), after the
last one Δ (the user has left):

    W꜀(Δ) = E[N]·E[X₁] + E[N − 1]·(E[min(Y, Δ)] − F(Δ)·gain) + Δ

with E[min(Y, Δ)] = ∫₀^Δ S(y) dy. Its derivative E[N − 1]·(S(Δ) − gain·f(Δ)) + 1 is negative
only where the hazard h = f/S exceeds (1 + 1/(E[N − 1]·S(Δ)))/gain (h(Δ) = 1/gain without the
last click's wait): keeping a connection pays only while the user is that likely to come back
in the next instant. With m server processes and λ sessions per second, the server is stable
while λ·E[W] < m.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ..fitting.laws import CONTINUOUS, LAWS
from ..fitting.likelihood import count_mean
from ..fitting.spliced import SPLICED
from ..formats.model import Model
from .options import DEFAULT_CLICKS

__all__ = ["parse_law", "Advice", "advise", "LawSyntaxError", "think_and_clicks", "DEFAULT_CLICKS",
           "paper_work", "corrected_work", "delta_from_gain"]

GRID_POINTS = 400
_FLOAT_MAX = float(np.finfo(float).max)
MIN_QUANTILE = 1e-300   # the grid starts 1e-6 below, Brent's tolerance 1e-12 below that
LOW_MASS = 1e-12        # the grid reaches down to this quantile of the think times


class LawSyntaxError(ValueError):
    pass


def parse_law(text: str):
    """``lognormal(mu=3, sigma=1.1)`` → a frozen distribution (fitting's continuous laws: a
    think time is a duration)."""
    m = re.fullmatch(r"\s*([a-z_]+)\s*\((.*)\)\s*", text)
    if not m or m.group(1) not in CONTINUOUS:
        raise LawSyntaxError(f"{text!r}: write LAW(k=v, ...), LAW one of {', '.join(CONTINUOUS)}"
                             + (f" ({m.group(1)} counts, a think time is a duration)"
                                if m and m.group(1) in LAWS else ""))
    params = {}
    for item in filter(None, (p.strip() for p in m.group(2).split(","))):
        k, _, v = item.partition("=")
        try:
            params[k.strip()] = float(v)
        except ValueError:
            raise LawSyntaxError(f"{text!r}: {item!r} is not k=number") from None
    law = LAWS[m.group(1)]
    missing = set(law.params) - set(params)
    if missing:
        raise LawSyntaxError(f"{text!r}: missing {', '.join(sorted(missing))}")
    try:
        frozen = law.freeze(params)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")          # SciPy's overflow: said as out of range
            if not np.isfinite(frozen.mean()):
                raise ValueError
    except (TypeError, ValueError):
        raise LawSyntaxError(f"{text!r}: parameters out of range") from None
    return frozen


def delta_from_gain(gain: float, clicks_mean: float) -> float:
    """The paper's δ = E[N − 1]/E[N]·(E[X₁] − E[X₂])."""
    return (clicks_mean - 1) / clicks_mean * gain


_T, _W = np.polynomial.legendre.leggauss(64)
_T, _W = (_T + 1) / 2, _W / 2


def _integral(fn, d):
    """∫₀^d fn for each d (Gauss–Legendre in t with y = d·t², which smooths the power
    behaviour a distribution function may have at 0)."""
    d = np.asarray(d, float)
    y = d[..., None] * _T ** 2
    return np.sum(fn(y) * 2 * _T * _W, axis=-1) * d


def paper_work(think, d, clicks_mean: float, x1: float, gain: float):
    """The paper's E[W](Δ) (module docstring), with its ∫₀^Δ F; Δ a number or an array."""
    return (clicks_mean * x1 + clicks_mean * _integral(think.cdf, d)
            - (clicks_mean - 1) * think.cdf(d) * gain)


def corrected_work(think, d, clicks_mean: float, x1: float, gain: float):
    """E[W꜀](Δ): the process held min(Y, Δ) after each click but the last, Δ after it."""
    return (clicks_mean * x1 + (clicks_mean - 1) * (_integral(think.sf, d)
                                                    - think.cdf(d) * gain) + np.asarray(d))


def _horizon(hi: float, *gs) -> float:
    """``hi`` widened tenfold until no g is below 0 there: each g tends to a positive value at
    infinity (F → 1, S and f → 0), so one still negative at ``hi`` has a root beyond (think
    times of a millisecond and a gain of a second put the optimum past the 0.999 quantile; a
    lognormal of σ = 20 keeps a slope negative 50 decades past it). Not past the largest
    float's tenth, where ``hi`` would overflow."""
    while hi < _FLOAT_MAX / 10 and any(float(g(hi)) < 0 for g in gs):
        hi *= 10
    return hi


def _floor(think, q999: float) -> float:
    """Where the search starts: a millionth of the 0.999 quantile, or lower, where at most
    LOW_MASS of the think times lie (a density that diverges at 0, weibull(shape=0.2,
    scale=10), has both optima, 0.13 s and 0.05 s, below that millionth, 0.16 s); a root below
    both changes E[W] by less than E[N]·gain·LOW_MASS. Never below MIN_QUANTILE's millionth."""
    low = float(think.ppf(LOW_MASS))
    return max(min(q999 * 1e-6, q999 if np.isnan(low) else low), MIN_QUANTILE * 1e-6)


def _search_grid(lo: float, hi: float, quantiles: np.ndarray) -> np.ndarray:
    """A log grid from ``lo`` to ``hi`` (GRID_POINTS per six decades) joined with the think
    time's ``quantiles`` in that range (a law narrower than the grid's steps, normal(μ=10,
    σ=1e-9), has its slope's roots between them)."""
    points = int(GRID_POINTS * max(1.0, (np.log10(hi) - np.log10(lo)) / 6))   # hi/lo: inf
    inside = quantiles[(quantiles > lo) & (quantiles < hi)]
    return np.unique(np.concatenate([np.geomspace(lo, hi, points), inside]))


def _roots(g, grid: np.ndarray) -> list[float]:
    """Every sign change of g (vectorised) on ``grid``, refined by Brent's method (to 1e-12 of
    the root for small ones)."""
    sign = np.sign(g(grid))                          # (a product of values may overflow)
    return [optimize.brentq(lambda d: float(g(d)), a, b, xtol=min(2e-12, 1e-12 * a))
            for a, b, sa, sb in zip(grid[:-1], grid[1:], sign[:-1], sign[1:]) if sa * sb < 0]


@dataclass
class Advice:
    optimal_timeout: float                         # Theorem 1 (the paper's model)
    delta: float
    clicks_mean: float
    x1: float
    x2: float
    work_at_optimum: float
    work_without_keepalive: float
    curve: list[tuple[float, float]]               # (Δ, E[W]) of the paper's model
    max_rate: dict[str, float] | None              # servers → largest stable λ at the optimum
    corrected_timeout: float = 0.0                 # the corrected model's optimum
    corrected_work_at_optimum: float = 0.0
    corrected_work_at_paper_timeout: float = 0.0
    corrected_curve: list[tuple[float, float]] | None = None
    corrected_max_rate: dict[str, float] | None = None

    @property
    def gain(self) -> float:
        return self.x1 - self.x2

    def as_dict(self) -> dict:
        return {"optimal_timeout": self.optimal_timeout, "delta": self.delta,
                "gain": self.gain, "clicks_mean": self.clicks_mean, "x1": self.x1, "x2": self.x2,
                "work_at_optimum": self.work_at_optimum,
                "work_without_keepalive": self.work_without_keepalive,
                "curve": [{"timeout": d, "work": w} for d, w in self.curve],
                "max_stable_rate": self.max_rate,
                "corrected": {"optimal_timeout": self.corrected_timeout,
                              "work_at_optimum": self.corrected_work_at_optimum,
                              "work_at_paper_timeout": self.corrected_work_at_paper_timeout,
                              "curve": [{"timeout": d, "work": w}
                                        for d, w in self.corrected_curve or []],
                              "max_stable_rate": self.corrected_max_rate}}


def advise(think, clicks_mean: float, x1: float, x2: float, servers: int | None = None
           ) -> Advice:
    """Best timeouts (paper's Theorem 1 and the corrected model) and their work curves, for a
    think-time law and mean transfer times."""
    if clicks_mean < 1:
        raise ValueError("the mean number of clicks must be at least 1")
    if x1 < x2 or x2 < 0:
        raise ValueError("need x1 ≥ x2 ≥ 0 (a new connection costs at least as much)")
    gain = x1 - x2
    delta = delta_from_gain(gain, clicks_mean)
    q999 = float(think.ppf(0.999))
    if not q999 >= MIN_QUANTILE:                     # the search's grid and tolerance underflow
        raise ValueError(f"think times of {q999:.3g} s at their 0.999 quantile: the search "
                         f"needs at least {MIN_QUANTILE:g} s (a think time is a duration)")

    def paper(d):
        return paper_work(think, d, clicks_mean, x1, gain)

    def corrected(d):
        return corrected_work(think, d, clicks_mean, x1, gain)

    def paper_slope(d):                              # dE[W]/dΔ ÷ E[N] (Theorem 1)
        return think.cdf(d) - delta * think.pdf(d)

    def corrected_slope(d):                          # dE[W꜀]/dΔ
        return (clicks_mean - 1) * (think.sf(d) - gain * think.pdf(d)) + 1
    hi = _horizon(q999, paper_slope, corrected_slope)
    search = _search_grid(_floor(think, q999), hi,
                          think.ppf(np.linspace(0, 1, GRID_POINTS + 1)[1:-1]))
    best = min([0.0] + _roots(paper_slope, search), key=paper)
    best_c = min([0.0] + _roots(corrected_slope, search), key=corrected)
    grid = np.linspace(0, hi, 60)
    w_best, w_best_c = float(paper(best)), float(corrected(best_c))

    def rates(w: float):
        return {str(m): m / w for m in sorted({1, servers})} if servers else None
    return Advice(float(best), float(delta), clicks_mean, x1, x2, w_best, float(paper(0.0)),
                  list(zip(grid.tolist(), paper(grid).tolist())), rates(w_best),
                  float(best_c), w_best_c, float(corrected(best)),
                  list(zip(grid.tolist(), corrected(grid).tolist())), rates(w_best_c))


def think_and_clicks(model: Model) -> tuple[object, float | None]:
    """A model's think-time law (frozen) and mean clicks per session (None without a clicks
    law); ValueError when it has no think-time law."""
    var = model.variables.get("think")
    if var is None:
        raise ValueError("the model has no think-time law")
    if var.law not in (*CONTINUOUS, SPLICED):
        raise ValueError(f"the model's think-time law {var.law} is not a law of durations")
    clicks = model.variables.get("clicks")
    if clicks is None:
        return var.parent, None
    support = clicks.observation.support_min if clicks.observation else None
    return var.parent, count_mean(clicks.parent, clicks.kind, support or 1)
