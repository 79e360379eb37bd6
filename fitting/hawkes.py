"""Clustered session arrivals: a self-exciting (Hawkes) process with an exponential kernel,
fitted by maximum likelihood and judged by time rescaling.

Each arrival raises the rate by α·e^{−β·s} for the s seconds after it, on top of a base rate μ:
λ(t) = μ + Σ_{tⱼ<t} α e^{−β(t − tⱼ)} (Hawkes 1971). η = α/β < 1 is the branching ratio (the
mean number of arrivals one arrival brings, directly), so the stationary rate is μ/(1 − η) and
a share η of the arrivals are brought by others: sessions that come in clusters, as when a link
posted somewhere brings visitors. Its log-likelihood over [0, T] (Ozaki 1979) is

    ℓ = Σᵢ log(μ + α Rᵢ) − μT − η Σⱼ (1 − e^{−β(T − tⱼ)}),   Rᵢ = Σ_{j<i} e^{−β(tᵢ − tⱼ)},

with Rᵢ = e^{−βτᵢ}(1 + Rᵢ₋₁) (τᵢ the gaps): a first-order linear recurrence, computed as a
prefix scan of affine maps in ⌈log₂ n⌉ vectorised passes (every value in [0, n]: no
cancellation, no overflow). The maximum is found through the profile likelihood of β: for a
fixed β, ℓ is concave in (μ, η) and its maximum lies on μT + ηC = n (C the compensator's sum:
the two score equations weighted by μ and η add up to it), so η solves a concave problem of one
variable (Newton's method, safeguarded), or is 0 when ℓ falls from there (the Poisson process);
β then maximises that profile, searched on a grid of decays and refined by Brent's method on
log β: about 30 scans, where a Newton search in three coordinates by finite differences took
100–300. The intervals are Wald's, from the observed information on the log, logit and log
scales (``mle``).

**Time rescaling** (Brown et al. 2002): the compensator between arrivals,
Λ(tᵢ₋₁, tᵢ) = μτᵢ + η(1 + Rᵢ₋₁)(1 − e^{−βτᵢ}), is Exp(1) and independent from gap to gap when
the model is right; A² against the exponential and Ljung–Box on those gaps judge it, as
``arrivals`` judges the Poisson model.

**Drawing** uses the cluster (branching) representation (Hawkes & Oakes 1974): base arrivals
are Poisson(μ); each arrival has Poisson(η) children at Exp(β) delays, generation by generation
(vectorised). ``HawkesStream`` draws window after window, carrying the children that fall past a
window's end into the next, so that a long run is drawn in chunks of bounded memory with the
same law as at once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .gaps import exponential_a2, ljung_box
from .mle import derivatives, free_slope, negated, to_free
from .uncertainty import ParamUncertainty, inverse_information

__all__ = ["Hawkes", "HawkesFit", "fit_hawkes", "HawkesStream", "describe"]

DOMAINS = ("positive", "unit", "positive")          # μ, η, β
#: decays the profile likelihood is first computed at, in units of the mean rate (β·mean gap)
DECAY_GRID = np.geomspace(1e-3, 1e3, 13)
DECAY_XTOL = 1e-6               # Brent's tolerance on log β
ETA_ITER = 60                   # safeguarded Newton steps for η, at most
ETA_GAIN = 1e-12                # η found when a Newton step would gain less log-likelihood
#: chosen over the Poisson process when 2(ℓ_Hawkes − ℓ_Poisson) exceeds this: χ²₂'s 1 % point
#: (two parameters more). AIC's rule (> 4) called 12–14 % of Poisson streams clustered, as the
#: decay is free to fit chance coincidences once η > 0 (bench/hawkes_null_bench.py)
CRITICAL_LR = 9.21
BURN_IN = 20.0                  # cluster lifetimes 1/(β(1 − η)) a stream is warmed up over


def _kernel_sums(t: np.ndarray, beta: float) -> np.ndarray:
    """Rᵢ = Σ_{j<i} e^{−β(tᵢ − tⱼ)} for sorted ``t``, by a prefix scan of the affine maps
    x ↦ aᵢx + aᵢ, aᵢ = e^{−β(tᵢ − tᵢ₋₁)} (Hillis–Steele: ⌈log₂ n⌉ passes)."""
    a = np.exp(-beta * np.diff(t))
    b = a.copy()
    d = 1
    while d < len(a):
        b[d:] = a[d:] * b[:-d] + b[d:]      # right side evaluated first: the old values
        a[d:] = a[d:] * a[:-d]
        d *= 2
    return np.concatenate(([0.0], b))


@dataclass(frozen=True)
class Hawkes:
    """A frozen Hawkes process of base rate ``mu``, branching ratio ``eta`` and decay
    ``beta`` (per second)."""

    mu: float
    eta: float
    beta: float

    @property
    def rate(self) -> float:
        """The stationary rate μ/(1 − η)."""
        return self.mu / (1.0 - self.eta)

    def loglik(self, t: np.ndarray, span: float) -> float:
        """Log-likelihood of the sorted arrival times ``t`` observed over [0, ``span``]."""
        r = _kernel_sums(t, self.beta)
        return float(np.sum(np.log(self.mu + self.eta * self.beta * r)) - self.mu * span
                     - self.eta * np.sum(-np.expm1(-self.beta * (span - t))))

    def rescaled(self, t: np.ndarray) -> np.ndarray:
        """The compensator between consecutive arrivals (Exp(1), independent, if the model is
        right)."""
        r = _kernel_sums(t, self.beta)
        tau = np.diff(t)
        return self.mu * tau + self.eta * (1.0 + r[:-1]) * -np.expm1(-self.beta * tau)

    def scaled(self, rate: float) -> "Hawkes":
        """The same process on a time axis stretched so that its stationary rate is ``rate``."""
        k = rate / self.rate
        return Hawkes(self.mu * k, self.eta, self.beta * k)

    def as_dict(self) -> dict:
        return {"law": "hawkes", "mu": self.mu, "eta": self.eta, "beta": self.beta}


@dataclass
class HawkesFit:
    """A fitted Hawkes process: the estimate, its intervals, the likelihoods and the time
    rescaling checks (``summary()``, ``conf_int()``)."""

    process: Hawkes
    n: int
    span: float
    loglik: float
    poisson_loglik: float
    se: dict[str, float | None]
    intervals: dict[str, tuple[float, float] | None]
    exponential_p: float
    ljung_box_p: float
    cv: float
    unit: str = "s"             # of the times: seconds, or "mean gap" in operational time

    @property
    def aic(self) -> float:
        return 2 * 3 - 2 * self.loglik

    @property
    def poisson_aic(self) -> float:
        return 2 * 1 - 2 * self.poisson_loglik

    @property
    def likelihood_ratio(self) -> float:
        """2(ℓ − ℓ_Poisson), the Poisson process of the same mean rate."""
        return 2 * (self.loglik - self.poisson_loglik)

    @property
    def better_than_poisson(self) -> bool:
        """The likelihood ratio against the Poisson process beyond ``CRITICAL_LR``."""
        return self.likelihood_ratio > CRITICAL_LR

    def conf_int(self) -> dict[str, tuple[float, float] | None]:
        """95 % Wald intervals of μ, η, β (mapped back from their free scales)."""
        return dict(self.intervals)

    def table(self) -> list[dict]:
        """A row per parameter: estimate, standard error, interval."""
        p = self.process
        return [{"parameter": k, "estimate": getattr(p, k), "se": self.se[k],
                 "ci": self.intervals[k]} for k in ("mu", "eta", "beta")]

    def summary(self) -> str:
        """One line: the parameters with their intervals, what they mean, and the checks."""
        return describe(self.as_dict())

    def as_dict(self) -> dict:
        """JSON-ready (the model's ``arrivals.process``)."""
        return {**self.process.as_dict(), "n": self.n, "span_s": self.span,
                "se": self.se, "ci": {k: (list(v) if v else None)
                                      for k, v in self.intervals.items()},
                "loglik": self.loglik, "aic": self.aic, "poisson_aic": self.poisson_aic,
                "chosen": self.better_than_poisson, "exponential_p": self.exponential_p,
                "ljung_box_p": self.ljung_box_p, "cv": self.cv, "unit": self.unit}


def describe(d: dict) -> str:
    """One line of a fitted process (``HawkesFit.as_dict()``, as the model keeps it)."""
    def end(x: float | None) -> str:              # JSON keeps an unbounded end as null
        return "inf" if x is None else f"{x:.3g}"

    def show(k: str) -> str:
        ci = d["ci"].get(k)
        return f"{k} {d[k]:.3g}" + (f" [{end(ci[0])}, {end(ci[1])}]" if ci else "")
    unit = d.get("unit", "s")
    ratio = d["poisson_aic"] - d["aic"] + 4           # 2(ℓ − ℓ_Poisson)
    return (f"Hawkes: {', '.join(show(k) for k in ('mu', 'eta', 'beta'))} per {unit} (a share "
            f"{d['eta']:.2f} of arrivals brought by others, clusters fading in "
            f"~{1 / d['beta']:.3g} {unit}; likelihood ratio {ratio:.1f} against Poisson, "
            f"{CRITICAL_LR:g} needed: {'chosen' if d['chosen'] else 'not chosen'}; rescaled "
            f"gaps: cv {d['cv']:.3g}, A2 exponential p {d['exponential_p']:.3g}, Ljung-Box p "
            f"{d['ljung_box_p']:.3g})")


def _mean_loglik(t: np.ndarray, span: float):
    def f(params: list[float]) -> float:
        mu, eta, beta = params
        return Hawkes(mu, eta, beta).loglik(t, span) / len(t)
    return f


def _given_decay(t: np.ndarray, span: float, beta: float) -> tuple[float, float, float]:
    """(μ, η, ℓ) of the most likely process of decay ``beta`` (module docstring): on the line
    μ = (n − ηC)/T, λᵢ = m + η·eᵢ with m = n/T and eᵢ = βRᵢ − C/T, and ℓ = Σ log λᵢ − n is
    concave in η; its root of Σ eᵢ/λᵢ = 0 by Newton's method kept inside the bracket where
    every λᵢ > 0, μ > 0 and η < 1 (bisection when a step leaves it)."""
    n = len(t)
    m = n / span
    c = float(np.sum(-np.expm1(-beta * (span - t))))
    e = beta * _kernel_sums(t, beta) - c / span
    lo, hi = 0.0, min(1.0, n / c if c > 0 else 1.0)
    if e.min() < 0:
        hi = min(hi, -m / float(e.min()))
    if not float(np.sum(e)) > 0:                # ℓ falls from η = 0: the Poisson process
        return m, 0.0, n * math.log(m) - n
    eta = hi / 2
    for _ in range(ETA_ITER):
        w = e / (m + eta * e)
        slope, curve = float(np.sum(w)), float(w @ w)
        if slope * slope <= ETA_GAIN * curve:    # what a Newton step would still gain
            break
        if slope > 0:
            lo = eta
        else:
            hi = eta
        step = eta + slope / curve
        eta = step if lo < step < hi else (lo + hi) / 2
    return (n - eta * c) / span, eta, float(np.sum(np.log(m + eta * e))) - n


def _most_likely(t: np.ndarray, span: float) -> Hawkes:
    """The maximum-likelihood process: the profile likelihood of β on ``DECAY_GRID`` (in
    units of the mean rate), then Brent's method on log β between the best point's
    neighbours; the best process any of them gave."""
    logs = np.log(DECAY_GRID * len(t) / span)
    best: list = [math.inf, None]

    def negative_profile(log_beta: float) -> float:
        mu, eta, ll = _given_decay(t, span, math.exp(log_beta))
        if -ll < best[0]:
            best[:] = -ll, Hawkes(mu, eta, math.exp(log_beta))
        return -ll
    k = int(np.argmin([negative_profile(x) for x in logs]))
    if best[1].eta > 0:                         # a clustered process: refine its decay
        optimize.minimize_scalar(negative_profile, method="bounded",
                                 bounds=(logs[max(k - 1, 0)], logs[min(k + 1, len(logs) - 1)]),
                                 options={"xatol": DECAY_XTOL})
    return best[1]


def fit_hawkes(times: np.ndarray, span: float | None = None, lags: int = 10,
               unit: str = "s") -> HawkesFit:
    """Maximum-likelihood Hawkes process of the arrival ``times`` (any origin, in ``unit``)
    observed over ``span`` from the first (default: to the last); ValueError with fewer than
    10 arrivals or a zero span."""
    t = np.sort(np.asarray(times, float))
    if len(t) < 10:
        raise ValueError(f"a Hawkes process needs at least 10 arrivals (got {len(t)})")
    t = t - t[0]
    span = float(t[-1]) if span is None else float(span)
    if not span > 0:
        raise ValueError("a Hawkes process needs arrivals spread over time (span 0)")
    process = _most_likely(t, span)
    ll = process.loglik(t, span)
    se, intervals = _wald(_mean_loglik(t, span), [process.mu, process.eta, process.beta],
                          len(t))
    gaps = process.rescaled(t)
    _, exp_p = exponential_a2(gaps)
    _, lb_p = ljung_box(gaps, min(lags, len(gaps) - 1))
    n = len(t)
    poisson = n * math.log(n / span) - n
    return HawkesFit(process, n, span, ll, poisson, se, intervals, float(exp_p), float(lb_p),
                     float(gaps.std() / gaps.mean()), unit)


def _wald(f, params: list[float], n: int) -> tuple[dict, dict]:
    """Standard errors and intervals of μ, η, β as ``uncertainty`` gives a law's Wald ones
    (the observed information on the free scales, mapped back); None where the information is
    singular or the estimate not a stationary point."""
    names = ("mu", "eta", "beta")
    if not 0 < params[1] < 1:                   # the Poisson process: β has no information
        return dict.fromkeys(names), dict.fromkeys(names)
    phi = to_free(params, DOMAINS)
    objective = negated(f, DOMAINS)
    grad, hess = derivatives(objective, phi, objective(phi))
    cov, _ = inverse_information(grad, hess, n)
    if cov is None:
        return dict.fromkeys(names), dict.fromkeys(names)
    slope = free_slope(params, DOMAINS)
    wald = [ParamUncertainty("wald", v, float(abs(s) * math.sqrt(c)), (float(x), math.sqrt(c)),
                             d)
            for v, s, c, x, d in zip(params, slope, np.diag(cov), phi, DOMAINS)]
    with np.errstate(over="ignore"):           # an end at infinity: unbounded (null in JSON)
        intervals = {k: u.interval() for k, u in zip(names, wald)}
    return {k: u.se for k, u in zip(names, wald)}, intervals


class HawkesStream:
    """Arrival times of a Hawkes process drawn in chunks (module docstring): ``next(n, rng)``
    gives the next ``n`` times, after a burn-in so that the stream starts stationary."""

    def __init__(self, process: Hawkes, rng: np.random.Generator) -> None:
        self.p = process
        self.ready = np.zeros(0)                  # drawn, not yet given
        self.pending = np.zeros(0)                # children past the drawn window's end
        life = 1.0 / (process.beta * (1.0 - process.eta))
        self.end = -BURN_IN * life
        self._window(0.0, rng)                    # the burn-in: its arrivals are dropped
        self.ready = self.ready[self.ready >= 0.0]

    def _window(self, end: float, rng: np.random.Generator) -> None:
        """Draw every arrival in [self.end, end): base arrivals, the pending children that
        fall there, and their descendants there; later ones wait in ``pending``."""
        start, p = self.end, self.p
        base = start + np.sort(rng.uniform(0.0, end - start, rng.poisson(p.mu * (end - start))))
        due = self.pending < end
        generation = np.concatenate((base, self.pending[due]))
        later = [self.pending[~due]]
        drawn = [generation]
        while len(generation):
            kids = np.repeat(generation, rng.poisson(p.eta, len(generation)))
            kids = kids + rng.exponential(1.0 / p.beta, len(kids))
            later.append(kids[kids >= end])
            generation = kids[kids < end]
            drawn.append(generation)
        self.pending = np.concatenate(later)
        self.ready = np.concatenate([self.ready] + drawn)
        self.ready.sort()
        self.end = end

    def next(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """The next ``n`` arrival times (seconds from the stream's start)."""
        while len(self.ready) < n:
            self._window(self.end + max(n - len(self.ready), 1) / self.p.rate * 1.25, rng)
        out, self.ready = self.ready[:n], self.ready[n:]
        return out
