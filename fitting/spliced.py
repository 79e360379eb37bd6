"""The spliced law: a variable's own recorded distribution up to a threshold, a generalized
Pareto tail beyond it (docs/methods.md, "The spliced law").

Real samples of web logs are mixtures of users, pages and sites, and once they hold thousands of
values A² rejects every candidate law. The spliced law then stands for the variable, as
SURGE's lognormal body and Pareto tail did for file sizes (Barford & Crovella 1998), with the
data themselves as the body:

- **the threshold** u: the sample's 90 % quantile, so that the upper 10 % of the values make the
  tail (DuMouchel 1983), lowered to leave at least ``MIN_TAIL`` values above it; when the
  values above it would take fewer than ``MIN_DISTINCT`` distinct values (sizes of a small
  site, counts that stop at 13), no tail: the body is the whole sample;
- **the body**: each recorded value up to u holds its share of the sample spread evenly over
  its cell, a piecewise-linear CDF through the cells' edges (Law & Kelton's continuous
  empirical law): [k − ½, k + ½) in units of the grid's step or for counts, so that rounding
  gives back the counts exactly; ± half the gap to its nearer neighbour for exact values (the
  cell's mean is the value; the law is flat between cells); never below the
  variable's floor (the window's lower end, or 0 when no value is negative) nor above the
  window's upper end. At most ``MAX_KNOTS`` knots: beyond, the two ends of each segment where
  the CDF crosses a multiple of 1/255;
- **the tail**: u + E with E a generalized Pareto law, S(e) = (1 + ξe/σ)^(−1/ξ) (Pickands 1975),
  conditioned on ending by the window's upper end (when there is one), of weight ``tail_mass``,
  the sample's share above u: (ξ, σ) by maximum likelihood of the data as recorded (the same
  likelihood as every candidate's: ``likelihood.make_model``), from the exact-value MLE of the
  excesses.

The law is a parent like the others: the observation records it (rounded, on the grid, inside
the window), and synthesis draws it the same way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy import stats

from .laws import FitFailed, Law, Sample
from .mle import maximize

__all__ = ["SPLICED", "Spliced", "SplicedLaw", "spliced_law", "body_law", "NO_BODY"]

SPLICED = "spliced"
TAIL_SHARE = 0.10           # the tail: the values above the sample's (1 − TAIL_SHARE) quantile
MIN_TAIL = 30               # ... and at least this many
MIN_DISTINCT = 10           # ... taking at least this many values, else no tail
MAX_KNOTS = 512             # knots of the body's CDF at most
TAIL_PARAMS = ("shape", "scale")    # estimated; the threshold and the tail's share are held
FLAT = 1e-12                # |ξ| below: the exponential limit of the tail's formulas


def _log_sf(e: np.ndarray, xi: float, sigma: float) -> np.ndarray:
    """log S(e) of the generalized Pareto law (−inf beyond its end point when ξ < 0)."""
    return stats.genpareto.logsf(np.maximum(e, 0.0), xi, scale=sigma)


def _isf(p: np.ndarray, xi: float, sigma: float) -> np.ndarray:
    """The excess e with S(e) = p."""
    return stats.genpareto.isf(p, xi, scale=sigma)


def _log_pdf(e: np.ndarray, xi: float, sigma: float) -> np.ndarray:
    """log f(e)."""
    return stats.genpareto.logpdf(e, xi, scale=sigma)


def _integrated_sf(end: float, xi: float, sigma: float) -> float:
    """∫₀^end S(e) de: σ(1 − (1 + ξ·end/σ)^(1 − 1/ξ))/(1 − ξ), and its limits at ξ = 0 and 1
    (σ/(1 − ξ) to infinity, infinite for ξ ≥ 1)."""
    if math.isinf(end):
        return sigma / (1 - xi) if xi < 1 else math.inf
    z = end / sigma
    if abs(xi) < FLAT:
        return -sigma * math.expm1(-z)
    if abs(1 - xi) < FLAT:
        return sigma * math.log1p(z)
    base = max(1 + xi * z, 0.0)
    power = 0.0 if base == 0 else math.exp((1 - 1 / xi) * math.log(base))
    return sigma * (1 - power) / (1 - xi)


class Spliced:
    """The spliced law at fixed parameters, with the methods of a frozen SciPy law: the body's
    CDF (knots ``x``, shares ``q`` from 0 to 1) with weight 1 − ``tail_mass`` up to
    ``threshold`` (the last knot); beyond it, with weight ``tail_mass``, ``threshold`` + a
    generalized Pareto(``shape``, ``scale``) excess, conditioned on ending by ``end`` (the
    upper end of the values as recorded, when there is one)."""

    integrated = None                       # no closed-form ∫F: the grid integrates F itself

    def __init__(self, x: np.ndarray, q: np.ndarray, end: float, threshold: float,
                 tail_mass: float, shape: float | None = None, scale: float = 1.0) -> None:
        if threshold != x[-1]:
            raise ValueError(f"the threshold {threshold:g} is not the body's last knot "
                             f"{x[-1]:g}")
        if shape is None and tail_mass != 0:
            raise ValueError("a spliced law without a tail has tail_mass 0")
        shape = 0.0 if shape is None else shape
        if not (0 <= tail_mass < 1 and 0 < scale < math.inf and math.isfinite(shape)):
            raise ValueError("tail_mass must be in [0, 1), scale > 0 and shape finite")
        self.x, self.q = x, q
        self.u, self.p, self.xi, self.sigma = float(threshold), float(tail_mass), float(shape), \
            float(scale)
        self.span = end - self.u                        # the longest excess
        self.s_end = float(np.exp(_log_sf(np.array(self.span), self.xi, self.sigma)))
        if not self.s_end < 1:
            raise ValueError("the tail puts no mass below its end")
        self.density = np.diff(q) / np.diff(x)          # of the body, per segment

    def __repr__(self) -> str:
        return (f"Spliced({len(self.x)} knots, threshold={self.u:g}, tail_mass={self.p:g}, "
                f"shape={self.xi:g}, scale={self.sigma:g}, end={self.u + self.span:g})")

    def _body(self, x: np.ndarray) -> np.ndarray:
        return (1 - self.p) * np.interp(x, self.x, self.q, left=0.0, right=1.0)

    def _tail(self, x: np.ndarray) -> np.ndarray:
        """P(X > x) for x beyond the threshold."""
        s = np.exp(_log_sf(np.minimum(x - self.u, self.span), self.xi, self.sigma))
        return self.p * (s - self.s_end) / (1 - self.s_end)

    def _tail_isf(self, t: np.ndarray) -> np.ndarray:
        """The x beyond the threshold with P(X > x | X > threshold) = t."""
        excess = _isf(self.s_end + t * (1 - self.s_end), self.xi, self.sigma)
        return self.u + np.minimum(excess, self.span)

    def cdf(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        return np.where(x > self.u, 1 - self._tail(x), self._body(x))

    def sf(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        return np.where(x > self.u, self._tail(x), 1 - self._body(x))

    def logpdf(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        i = np.clip(np.searchsorted(self.x, x, side="right") - 1, 0, len(self.density) - 1)
        inside = (x >= self.x[0]) & (x <= self.u)
        with np.errstate(divide="ignore"):
            body = np.where(inside, np.log((1 - self.p) * self.density[i]), -np.inf)
            tail = math.log(self.p / (1 - self.s_end)) if self.p > 0 else -math.inf
            tail = np.where(x - self.u <= self.span,
                            tail + _log_pdf(x - self.u, self.xi, self.sigma), -np.inf)
        return np.where(x > self.u, tail, body)

    def pdf(self, x) -> np.ndarray:
        return np.exp(self.logpdf(x))

    def ppf(self, q) -> np.ndarray:
        q = np.asarray(q, float)
        share = np.clip(q / (1 - self.p), 0.0, 1.0)
        i = np.clip(np.searchsorted(self.q, share, side="left"), 1, len(self.q) - 1)
        lo, hi = self.q[i - 1], self.q[i]
        frac = np.divide(share - lo, hi - lo, out=np.zeros(np.shape(share)), where=hi > lo)
        body = self.x[i - 1] + frac * (self.x[i] - self.x[i - 1])
        beyond = q > 1 - self.p
        tail = self._tail_isf(np.where(beyond, (1 - q) / max(self.p, 1e-300), 1.0))
        return np.where(beyond, tail, body)

    def isf(self, q) -> np.ndarray:
        q = np.asarray(q, float)
        tail = self._tail_isf(np.clip(q / max(self.p, 1e-300), 0.0, 1.0))
        return np.where(q < self.p, tail, self.ppf(1 - q))

    def median(self) -> float:
        return float(self.ppf(0.5))

    def mean(self) -> float:
        """The body's mean (each segment's midpoint by its share) and the tail's, u + E[the
        excess] = u + (∫₀^span S − span·S(span))/(1 − S(span)) (infinite for ξ ≥ 1 without an
        end)."""
        body = float(np.diff(self.q) @ (self.x[:-1] + self.x[1:])) / 2
        if self.p == 0:
            return body
        area = _integrated_sf(self.span, self.xi, self.sigma)
        beyond = self.span * self.s_end if self.s_end > 0 else 0.0
        return (1 - self.p) * body + self.p * (self.u + (area - beyond) / (1 - self.s_end))

    def support(self) -> tuple[float, float]:
        end = self.span if self.xi >= 0 else min(self.span, self.sigma / -self.xi)
        return float(self.x[0]), self.u + end if self.p > 0 else self.u

    def rvs(self, size=None, random_state=None) -> np.ndarray:
        """Draws by inversion (``random_state``: a Generator, a seed or None)."""
        return self.ppf(np.random.default_rng(random_state).random(size))


def _tail_mle(e: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """(ξ, σ): the generalized Pareto MLE of excesses ``e`` > 0 with counts ``w``, by Newton
    (``mle.maximize``) from the moments' estimate (ξ = (1 − m²/v)/2, σ = m(1 − ξ), ξ kept
    within [−0.4, 0.45])."""
    n = float(w.sum())
    m = float(w @ e) / n
    v = float(w @ (e - m) ** 2) / n
    if not v > 0:
        raise FitFailed("the values above the threshold are all equal")
    xi = min(max((1 - m * m / v) / 2, -0.4), 0.45)
    return tuple(maximize(lambda t: float(w @ _log_pdf(e, t[0], t[1])) / n,
                          [xi, m * (1 - xi)], ("real", "positive")))


def _estimate(threshold: float, tail: bool, s: Sample) -> dict:
    """The exact-value MLE: the share above the threshold, and the tail's MLE of the excesses
    (the body's likelihood depends on nothing else)."""
    if not tail:
        return {"threshold": threshold, "tail_mass": 0.0}
    above = s.v > threshold
    xi, sigma = _tail_mle(s.v[above] - threshold, s.w[above].astype(float))
    return {"threshold": threshold, "tail_mass": float(s.w[above].sum()) / s.n, "shape": xi,
            "scale": sigma}


@dataclass(frozen=True)
class SplicedLaw(Law):
    """The spliced law of one body (knots ``x``, shares ``q``), with or without a tail (ending
    at ``end``): the candidate whose tail the fit estimates, its ``threshold`` and
    ``tail_mass`` held (the body's last knot, the sample's share above it; 0 without a
    tail)."""

    x: tuple[float, ...] = ()
    q: tuple[float, ...] = ()
    end: float = math.inf

    def __reduce__(self):
        """Pickled by its body (a fit report crosses processes)."""
        return _law, (self.x, self.q, self.end, bool(self.params))

    def takes(self) -> tuple[str, ...]:
        return ("threshold", "tail_mass") + self.params

    @property
    def nparams(self) -> int:
        """The body's shares (every segment that holds mass) with the tail's (their sum is 1)
        and the tail's shape and scale: what AIC, BIC and λ² count."""
        return int(np.count_nonzero(np.diff(self.q))) - 1 + len(self.params) + bool(self.params)

    @property
    def body(self) -> dict:
        """The body as the model file holds it (``end`` when the tail has one)."""
        return {"x": list(self.x), "q": list(self.q),
                **({"end": self.end} if math.isfinite(self.end) else {})}


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def body_law(body: object, tail: bool = True) -> SplicedLaw:
    """The spliced law of a body ``{"x": knots, "q": shares, "end": number}`` (``end``
    optional; as ``SplicedLaw.body`` gives it), with a tail or not; ValueError saying what is
    wrong with it."""
    ok = isinstance(body, dict) and {"x", "q"} <= set(body) <= {"x", "q", "end"}
    x = body.get("x") if ok else None
    q = body.get("q") if ok else None
    if not (isinstance(x, list) and isinstance(q, list) and len(x) == len(q) >= 2
            and all(map(_number, x + q))):
        raise ValueError("the body needs lists 'x' and 'q' of as many numbers, at least 2, "
                         "and an optional 'end'")
    xa, qa = np.array(x, float), np.array(q, float)
    steps = np.diff(xa)
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(steps)) and np.all(steps > 0)):
        raise ValueError("the body's knots 'x' must increase by finite steps")
    if not (qa[0] == 0 and qa[-1] == 1 and np.all(np.diff(qa) >= 0)):
        raise ValueError("the body's shares 'q' must rise from 0 to 1")
    end = body.get("end", math.inf)
    if not (_number(end) and xa[-1] < end):
        raise ValueError("the body's 'end' must be a number beyond its last knot")
    return _law(tuple(map(float, x)), tuple(map(float, q)), float(end), tail)


def _law(x: tuple[float, ...], q: tuple[float, ...], end: float, tail: bool) -> SplicedLaw:
    """The spliced law of a body already checked (``body_law``), or of none (``NO_BODY``)."""
    xa, qa = np.array(x, float), np.array(q, float)
    return SplicedLaw(SPLICED, "continuous", TAIL_PARAMS if tail else (), False,
                      partial(_estimate, float(xa[-1]) if len(x) else math.nan, tail),
                      partial(Spliced, xa, qa, end), ("real", "positive") if tail else (),
                      x=x, q=q, end=end)


def _threshold_index(s: Sample) -> int:
    """Index into ``s.v`` of the last value of the body (module docstring): the last of all
    when the values above the threshold would take fewer than ``MIN_DISTINCT`` values."""
    top = int(s.cum.searchsorted(math.ceil((1 - TAIL_SHARE) * s.n), side="left"))
    most = int(s.cum.searchsorted(s.n - MIN_TAIL, side="right")) - 1
    last = min(top, most)
    return last if last >= 0 and len(s.v) - 1 - last >= MIN_DISTINCT else len(s.v) - 1


def _edges(s: Sample, last: int) -> tuple[np.ndarray, np.ndarray]:
    """(left, right) edge of each body value's cell (module docstring): ±½ step on a grid or
    for counts, ± half the gap to the nearer neighbour for exact values (so that the cell's
    mean is the value), inside the variable's floor and the window's upper end."""
    v = s.v[:last + 2]                                  # the body, and the first tail value
    if s.obs.kind == "exact":
        gaps = np.diff(v)
        before = np.concatenate(([gaps[0]], gaps))[:last + 1]
        after = np.concatenate((gaps, [gaps[-1]]))[:last + 1]
        half = np.minimum(before, after) / 2
        left, right = v[:last + 1] - half, v[:last + 1] + half
    else:
        cells = np.round(v[:last + 1] / s.unit)
        left, right = (cells - 0.5) * s.unit, (cells + 0.5) * s.unit
    floor = s.obs.lower if s.obs.lower is not None else 0.0 if s.v[0] >= 0 else -math.inf
    top = s.obs.upper if s.obs.upper is not None else math.inf
    return np.maximum(left, floor), np.minimum(right, top)


def spliced_law(s: Sample, bounded: bool = False) -> SplicedLaw:
    """The spliced law of sample ``s`` (at least 2 distinct values): its threshold and body by
    the module docstring's rules (the fit estimates its tail), the tail ending at the window's
    upper end, or with ``bounded`` at the largest value recorded."""
    if len(s.v) < 2:
        raise FitFailed("all values are equal")
    last = _threshold_index(s)
    left, right = _edges(s, last)
    share = s.cum[:last + 1] / s.cum[last]
    x = np.ravel(np.column_stack((left, right)))
    q = np.ravel(np.column_stack((np.concatenate(([0.0], share[:-1])), share)))
    keep = np.concatenate(([True], x[1:] > x[:-1]))      # a cell's right edge is the next's left
    x, q = x[keep], q[keep]
    if len(x) > MAX_KNOTS:                             # both ends of each segment crossing
        crossing = np.diff(np.floor(q * (MAX_KNOTS // 2 - 1))) > 0      # a multiple of 1/K
        keep = np.concatenate(([True], crossing)) | np.concatenate((crossing, [True]))
        x, q = x[keep], q[keep]
    end = s.obs.upper if s.obs.upper is not None else math.inf
    if bounded:
        end = min(end, float(s.v[-1]) + (s.unit / 2 if s.obs.kind != "exact" else 0.0))
    return body_law({"x": x.tolist(), "q": q.tolist(), "end": end}, last < len(s.v) - 1)


#: the spliced law of a sample it cannot describe (all values equal): the table says why
NO_BODY = _law((), (), math.inf, False)
