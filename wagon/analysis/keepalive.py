"""The keep-alive timeout advisor: WAGON's queueing model of persistent connections.

A session brings N clicks separated by think times Y (CDF F, density f). X₁ is a click's
transfer time on a new connection, X₂ on a kept-alive one, and a connection kept open after a
response costs the server the part of the timeout Δ the user leaves unused. The work a session
brings to the server, as a function of the timeout, is

    W(Δ) = E[N]·E[X₁] + E[N]·E[(Δ − Y)⁺] − E[N − 1]·F(Δ)·(E[X₁] − E[X₂])

with E[(Δ − Y)⁺] = ∫₀^Δ F(y) dy. Its derivative is E[N]·(F(Δ) − δ·f(Δ)) with the transfer-time gain
δ = E[N − 1]/E[N]·(E[X₁] − E[X₂]), so the best timeout solves F(Δ) − δ·f(Δ) = 0, or is 0. With m
server processes and sessions arriving at λ per second, the server is stable while λ·E[W] < m.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize

from ..fitting.laws import LAWS
from ..formats.model import Model

__all__ = ["parse_law", "Advice", "advise", "LawSyntaxError", "think_and_clicks", "DEFAULT_CLICKS"]

DEFAULT_CLICKS = 5.0                # E[N] when neither a model nor the user gives one


class LawSyntaxError(ValueError):
    pass


def parse_law(text: str):
    """``lognormal(mu=3, sigma=1.1)`` → a frozen scipy distribution (fitting's laws)."""
    m = re.fullmatch(r"\s*([a-z_]+)\s*\((.*)\)\s*", text)
    if not m or m.group(1) not in LAWS:
        raise LawSyntaxError(f"{text!r}: write LAW(k=v, ...), LAW one of {', '.join(LAWS)}")
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
        if not np.isfinite(frozen.mean()):
            raise ValueError
    except (TypeError, ValueError):
        raise LawSyntaxError(f"{text!r}: parameters out of range") from None
    return frozen


@dataclass
class Advice:
    optimal_timeout: float
    delta: float
    clicks_mean: float
    x1: float
    x2: float
    work_at_optimum: float
    work_without_keepalive: float
    curve: list[tuple[float, float]]               # (Δ, E[W])
    max_rate: dict[str, float] | None              # servers → largest stable λ at the optimum

    def as_dict(self) -> dict:
        return {"optimal_timeout": self.optimal_timeout, "delta": self.delta,
                "clicks_mean": self.clicks_mean, "x1": self.x1, "x2": self.x2,
                "work_at_optimum": self.work_at_optimum,
                "work_without_keepalive": self.work_without_keepalive,
                "curve": [{"timeout": d, "work": w} for d, w in self.curve],
                "max_stable_rate": self.max_rate}


def advise(think, clicks_mean: float, x1: float, x2: float, servers: int | None = None,
           horizon: float | None = None) -> Advice:
    """Best timeout and the work curve for a think-time law and mean transfer times."""
    if clicks_mean < 1:
        raise ValueError("the mean number of clicks must be at least 1")
    if x1 < x2 or x2 < 0:
        raise ValueError("need x1 ≥ x2 ≥ 0 (a new connection costs at least as much)")
    gain = x1 - x2
    delta = (clicks_mean - 1) / clicks_mean * gain
    hi = horizon or float(think.ppf(0.999))

    def work(d: float) -> float:
        unused = integrate.quad(think.cdf, 0, d, limit=200)[0] if d > 0 else 0.0
        return clicks_mean * x1 + clicks_mean * unused - (clicks_mean - 1) * think.cdf(d) * gain

    def g(d: float) -> float:
        return float(think.cdf(d) - delta * think.pdf(d))

    grid = np.concatenate(([0.0], np.geomspace(hi * 1e-6, hi, 400)))
    vals = np.array([g(d) for d in grid[1:]])
    roots = [optimize.brentq(g, a, b) for a, b, va, vb in
             zip(grid[1:-1], grid[2:], vals[:-1], vals[1:]) if va * vb < 0]
    candidates = [0.0] + roots
    best = min(candidates, key=work)
    curve = [(float(d), float(work(d))) for d in np.linspace(0, hi, 60)]
    w_best = float(work(best))
    rates = ({str(m): m / w_best for m in sorted({1, servers})} if servers else None)
    return Advice(float(best), float(delta), clicks_mean, x1, x2, w_best, float(work(0.0)), curve,
                  rates)


def think_and_clicks(model: Model) -> tuple[object, float | None]:
    """A model's think-time law (frozen) and mean clicks per session (None without a clicks
    law); ValueError when it has no think-time law."""
    var = model.variables.get("think")
    if var is None:
        raise ValueError("the model has no think-time law")
    clicks = model.variables.get("clicks")
    return var.frozen, float(clicks.frozen.mean()) if clicks is not None else None
