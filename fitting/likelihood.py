"""A law meeting a sample as it was observed: its MLE, its statistics and its simulated replicates.

Each mode computes the likelihood of the data as recorded (``observation``):

- ``continuous``: exact values, the law's density; closed-form MLEs (``laws``);
- ``truncated``: exact values recorded only inside [a, b]: density / (F(b) − F(a));
- ``discrete``: counts under a discrete law (its pmf), the laws' own MLEs;
- ``rounded``: counts under a continuous law, N = max(s, round X): cells F(j + ½) − F(j − ½);
- ``grid``: differences of timestamps on a grid (``observation`` docstring): P(D ≤ j) is
  ∫_j^{j+1} F(u·step) du, computed by Gauss–Legendre quadrature on each unit interval (graded
  near the law's lower support bound, where F may behave like a power), from the survival
  function above the law's median so that neither tail cancels.

The cell modes (discrete, rounded, grid) are all "a distribution function at the integer cells":
cell probabilities, truncation to a window and the λ² bins follow from P(D ≤ j) alone. Their
MLEs without a closed form are numerical (``mle.maximize``) on the distinct values with their
counts, from the exact-value MLE as the starting point.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

import numpy as np
from scipy import integrate

from . import gof
from .laws import FitFailed, Law, Sample
from .mle import from_free, maximize, to_free

__all__ = ["make_model", "Objective", "Truncated", "draw_observed", "draw_latent", "latent_mean",
           "mode_of", "law_null_kernel", "count_mean"]

GL_NODES = 16
_t, _w = np.polynomial.legendre.leggauss(GL_NODES)
NODES, WEIGHTS = (_t + 1) / 2, _w / 2                # Gauss–Legendre on [0, 1]
_t, _w = np.polynomial.legendre.leggauss(8)
DENSITY_NODES, DENSITY_WEIGHTS = (_t + 1) / 2, _w / 2 * (1 - _t) / 2   # ∫₀¹ (1 − v)·g(v) dv
GRADE = 4                                            # u = L + v^GRADE near the support bound
BLOCK_ROWS = 1 << 15                                 # unit intervals integrated at once
CLOSED_FORM_CELLS = 1_000                            # ∫F in closed form below this cell: the
                                                     # difference of two ∫₀ˣF cancels more and
                                                     # more (4e-9 of a cell at the 1,000th)
EXACT_CELLS = 20_000                                 # single cells of the statistics
MAX_GROUPS = 300                                     # points of a cell null distribution
REJECT_MASS = 0.25                                   # truncated draws by rejection above
FD_STEP = 1e-5                                       # finite differences, free coordinates
TINY = np.finfo(float).tiny


def mode_of(law: Law, s: Sample) -> str:
    kind = s.obs.kind
    if kind == "counts":
        return "discrete" if law.kind == "discrete" else "rounded"
    if kind == "grid":
        return "grid"
    return "truncated" if s.obs.truncated else "continuous"


# --------------------------------------------------------------------------------------------
# distribution functions at integer cells: (P(D ≤ j), P(D > j), which of the two is exact)

def _split(frozen, points: np.ndarray, median: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """F and S at ``points``: F computed below the median, S above (the other is 1 − it)."""
    right = points > median
    return (*_sides(_either(frozen, points, right), right), right)


def _sides(vals: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(F, S) from values that are S where ``right`` and F elsewhere."""
    return np.where(right, 1 - vals, vals), np.where(right, vals, 1 - vals)


def _graded(frozen, lower: float, a: np.ndarray, b: np.ndarray, step: float, right: np.ndarray
            ) -> np.ndarray:
    """∫_a^b of F (S where ``right``) over u in grid units, with u = lower + v^GRADE: the power
    behaviour of F at its support bound ``lower`` becomes smooth in v."""
    va, vb = (a - lower) ** (1 / GRADE), (b - lower) ** (1 / GRADE)
    v = va[:, None] + (vb - va)[:, None] * NODES
    u = (lower + v ** GRADE) * step
    jac = GRADE * v ** (GRADE - 1) * (vb - va)[:, None] * WEIGHTS
    return np.sum(_either(frozen, u, right) * jac, axis=1)


def _either(frozen, u: np.ndarray, right: np.ndarray) -> np.ndarray:
    """S(u) on the rows (or points) where ``right``, F(u) on the others (each computed only
    there)."""
    if right.all():                      # one side only (most calls): no rows to pick out
        return frozen.sf(u)
    if not right.any():
        return frozen.cdf(u)
    out = np.empty(u.shape)
    out[right] = frozen.sf(u[right])
    out[~right] = frozen.cdf(u[~right])
    return out


def grid_cdf(frozen, j: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P(D ≤ j) = ∫_j^{j+1} F(u·step) du and P(D > j) = ∫_j^{j+1} S(u·step) du: in closed form
    for the first ``CLOSED_FORM_CELLS`` cells where the law has one, by quadrature elsewhere."""
    j = np.asarray(j, float)
    right = j + 0.5 > float(frozen.median()) / step
    cdf, sf = np.zeros(len(j)), np.ones(len(j))
    closed = np.zeros(len(j), bool)
    if getattr(frozen, "integrated", None) is not None:
        closed = np.abs(j) < CLOSED_FORM_CELLS
        jc, rc = j[closed], right[closed]
        v = frozen.integrated(np.concatenate((jc, jc + 1)) * step, np.concatenate((rc, rc)))
        n = len(jc)
        cdf[closed], sf[closed] = _sides(np.where(rc, v[:n] - v[n:], v[n:] - v[:n]) / step, rc)
    lower = float(frozen.support()[0]) / step
    below = closed | (j + 1 <= lower)                         # done, or F = 0 on the interval
    near = ~below & (j < lower + 1)                           # touches the support bound
    far = np.flatnonzero(~below & ~near)
    unit = _from_density if getattr(frozen, "integrated", None) is not None else _from_cdf
    for first in range(0, len(far), BLOCK_ROWS):               # memory: a block of nodes at a time
        rows = far[first:first + BLOCK_ROWS]
        cdf[rows], sf[rows] = unit(frozen, j[rows], step, right[rows])
    if near.any():
        a = np.maximum(j[near], lower)
        r = right[near]
        vals = _graded(frozen, lower, a, j[near] + 1, step, r)
        flat = a - j[near]                                    # part of the interval below it
        sf_near = np.where(r, flat + vals, 1 - vals)
        cdf[near] = np.where(r, 1 - sf_near, vals)
        sf[near] = sf_near
    return cdf, sf, right


def _from_cdf(frozen, j: np.ndarray, step: float, right: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """(∫_j^{j+1} F(u·step) du, the same of S) by Gauss–Legendre on F (on S where ``right``)."""
    return _sides(_either(frozen, (j[:, None] + NODES) * step, right) @ WEIGHTS, right)


def _from_density(frozen, j: np.ndarray, step: float, right: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The same as F(j·step) + step·∫₀¹ (1 − v) f((j + v)·step) dv (S(j·step) less it where
    ``right``): one value of F a unit interval, for a law whose F is slow (the gamma's
    incomplete gamma function), and the density by Gauss–Legendre, which a cell far from the
    support bound finds smooth."""
    edge = _either(frozen, j * step, right)
    inside = step * (frozen.pdf((j[:, None] + DENSITY_NODES) * step) @ DENSITY_WEIGHTS)
    return _sides(np.where(right, edge - inside, edge + inside), right)


def rounded_cdf(frozen, j: np.ndarray, support_min: int):
    """P(N ≤ j) for N = max(support_min, round X)."""
    j = np.asarray(j, float)
    cdf, sf, right = _split(frozen, j + 0.5, float(frozen.median()))
    low = j < support_min
    cdf[low], sf[low] = 0.0, 1.0
    return cdf, sf, right & ~low


def discrete_cdf(frozen, j: np.ndarray):
    j = np.asarray(j, float)
    return _split(frozen, j, float(frozen.median()))


def _mass(cdf, sf, right, i: np.ndarray, k: np.ndarray) -> np.ndarray:
    """P(i < D ≤ k) from the values at knots i and k (indices into cdf/sf)."""
    return np.where(right[i], sf[i] - sf[k], cdf[k] - cdf[i])


# --------------------------------------------------------------------------------------------

class Truncated:
    """A frozen continuous law conditioned on [a, b]: what ``cvm_ad`` and the draws need."""

    def __init__(self, frozen, a: float | None, b: float | None) -> None:
        self.frozen = frozen
        self.a = -math.inf if a is None else float(a)
        self.b = math.inf if b is None else float(b)
        self.fa, self.sa = float(frozen.cdf(self.a)), float(frozen.sf(self.a))
        self.fb, self.sb = float(frozen.cdf(self.b)), float(frozen.sf(self.b))
        self.z = self.sa - self.sb if self.fa > 0.5 else self.fb - self.fa
        if not self.z > 0:
            raise FitFailed("the law puts no mass inside the truncation window")

    def cdf(self, x):
        return np.clip((self.frozen.cdf(x) - self.fa) / self.z, 0, 1)

    def sf(self, x):
        return np.clip((self.frozen.sf(x) - self.sb) / self.z, 0, 1)

    def logpdf(self, x):
        return self.frozen.logpdf(x) - math.log(self.z)

    def ppf(self, q):
        q = np.asarray(q, float)
        return np.clip(self.frozen.ppf(self.fa + q * self.z), self.a, self.b)

    def isf(self, q):
        q = np.asarray(q, float)
        return np.clip(self.frozen.isf(self.sb + q * self.z), self.a, self.b)

    def median(self) -> float:
        return float(self.ppf(0.5))

    def rvs(self, size: int, random_state: np.random.Generator) -> np.ndarray:
        """Draws inside [a, b]: by rejection from the law's own generator when the window holds
        at least ``REJECT_MASS`` of it (SciPy's ppf is a numerical root for some laws: 4 µs a
        value for the inverse Gaussian), else by inverse transform, from the survival side when
        the window lies in the upper tail (1 − F would round to 0 there)."""
        if self.z < REJECT_MASS:
            u = random_state.random(size)
            return self.isf(u) if self.fa > 0.5 else self.ppf(u)
        kept, have = [], 0
        while have < size:
            x = np.asarray(self.frozen.rvs(size=int((size - have) / self.z * 1.05) + 16,
                                           random_state=random_state), float)
            kept.append(x[(x >= self.a) & (x <= self.b)])
            have += len(kept[-1])
        return np.concatenate(kept)[:size]


def draw_observed(frozen, s_obs, mode: str, support_min: int, n: int,
                  rng: np.random.Generator) -> np.ndarray:
    """n values of the law recorded the way ``s_obs`` (an Observation) says."""
    if mode == "truncated":
        return Truncated(frozen, s_obs.lower, s_obs.upper).rvs(n, rng)
    if mode in ("continuous", "discrete"):
        return np.asarray(frozen.rvs(size=n, random_state=rng), float)
    if mode == "rounded":
        return np.maximum(support_min, np.round(frozen.rvs(size=n, random_state=rng)))
    return _grid_draws(frozen, s_obs, n, rng)[0] * s_obs.step


@lru_cache(maxsize=256)
def _truncated(frozen, a: float | None, b: float | None) -> Truncated:
    """``Truncated(frozen, a, b)``, kept: synthesis draws a law within the same windows batch
    after batch (a transition's think-time bins), and each costs four of SciPy's calls."""
    return Truncated(frozen, a, b)


def _grid_draws(frozen, obs, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(recorded cells, latent values) of n gaps whose recorded cell falls in the window: true
    values drawn within a step of the window (outside it they are never recorded there), a
    uniform phase, kept when ⌊U + g/step⌋ is in the window."""
    lo, hi = obs.cell_window()
    near = _truncated(frozen, *obs.latent_window())
    cells, latent, have = [], [], 0
    for _ in range(1000):
        m = max(2 * (n - have), 64)
        g = near.rvs(m, rng)
        d = np.floor(rng.random(m) + g / obs.step)
        keep = (d >= lo) & (d <= hi)
        cells.append(d[keep])
        latent.append(g[keep])
        have += int(keep.sum())
        if have >= n:
            return np.concatenate(cells)[:n], np.concatenate(latent)[:n]
    raise FitFailed("the law almost never falls in the recorded window")


def draw_latent(frozen, obs, n: int, rng: np.random.Generator) -> np.ndarray:
    """n true values whose recording would have been kept: the law conditioned on the
    observation's window (what a synthetic workload should draw)."""
    if obs.kind == "grid":
        return _grid_draws(frozen, obs, n, rng)[1]
    if obs.truncated:
        return Truncated(frozen, obs.lower, obs.upper).rvs(n, rng)
    return np.asarray(frozen.rvs(size=n, random_state=rng), float)


def latent_mean(frozen, obs) -> float:
    """E[X | its recording is kept]: the mean of what ``draw_latent`` draws (the law's own
    when it lies inside the window, where every value is kept: a spliced law)."""
    low, high = frozen.support()
    if not obs.truncated or ((obs.lower is None or low >= obs.lower)
                             and (obs.upper is None or high <= obs.upper)):
        return float(frozen.mean())
    a, b = obs.latent_window()
    if obs.kind == "grid":
        lo, hi = (np.array(obs.cell_window()) * obs.step).tolist()
        a = max(a, float(low))

        def keep(g: float) -> float:          # P(lo ≤ ⌊U + g/step⌋·step ≤ hi)
            return float(np.clip(min(g - lo + obs.step, hi + obs.step - g) / obs.step, 0, 1))
    else:
        def keep(g: float) -> float:
            return 1.0
    points = [p for p in (lo, hi) if a < p < b] or None if obs.kind == "grid" else None
    mass = integrate.quad(lambda g: frozen.pdf(g) * keep(g), a, b, points=points, limit=200)[0]
    first = integrate.quad(lambda g: g * frozen.pdf(g) * keep(g), a, b, points=points,
                           limit=200)[0]
    if not mass > 0:
        raise FitFailed("the law puts no mass inside the recording window")
    return first / mass


def count_mean(frozen, kind: str, support_min: int = 1) -> float:
    """E[N] of counts drawn by ``frozen``: a discrete law's mean, or for a continuous law
    (``kind`` "rounded") the mean of N = max(support_min, round X) = s + Σ_{j ≥ s} S(j + ½)."""
    if kind != "rounded":
        return float(frozen.mean())
    total, j = float(support_min), float(support_min)
    for _ in range(40):
        tail = frozen.sf(np.arange(j, j + 25_000) + 0.5)
        total += float(tail.sum())
        if tail[-1] < 1e-13:
            return total
        j += 25_000
    return math.inf


# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Objective:
    """The mean log-likelihood per observation a model's MLE maximises, as a function of the
    values of the parameters it estimates (``names``, in the law's order, with their
    ``domains``); ``held``: the parameters it does not (a discrete law's ``loc``, a scale that
    is the sample minimum)."""

    law: Law
    names: list[str]
    domains: list[str]
    held: dict
    mean_loglik: Callable[[object], float]

    def params(self, values) -> dict:
        return {**dict(zip(self.names, map(float, values))), **self.held}

    def __call__(self, values) -> float:
        return self.mean_loglik(self.law.freeze(self.params(values)))


class _Model:
    """A law and a sample: MLE (``estimate``) and statistics (``measure``)."""

    mode = ""

    def __init__(self, law: Law, s: Sample) -> None:
        self.law, self.s = law, s

    def estimate(self, start: dict | None = None) -> dict:
        raise NotImplementedError

    def measure(self, params: dict, edges: np.ndarray) -> tuple[float, float, float, np.ndarray]:
        """(log-likelihood, W², A², P(X < e) at the λ² bin edges)."""
        raise NotImplementedError

    def fixed(self, params: dict) -> dict:
        """Parameters not estimated by a regular MLE (kept out of the null distribution)."""
        return {}

    def null_kernel(self, params: dict):
        """(points h, ψ = ∂h/∂θ, Fisher information I, weights of W², weights of A²): what
        ``gof.asymptotic_p`` needs for this law, sample and observation."""
        raise NotImplementedError

    def _perturbed(self, params: dict):
        return perturbed(self.law, params, self.fixed(params))

    def mean_loglik(self, frozen) -> float:
        """The log-likelihood per observation of the data as recorded, under ``frozen``."""
        raise NotImplementedError

    def objective(self, params: dict) -> Objective:
        """What the MLE maximises, as a function of the parameters it estimates (the others
        held at ``params``, or at the sample minimum for a scale estimated by it)."""
        fixed = self.fixed(params)
        names = [p for p in self.law.params if p not in fixed]
        domains = [d for p, d in zip(self.law.params, self.law.domain) if p not in fixed]
        extra = {k: v for k, v in params.items() if k not in self.law.params}   # loc
        return Objective(self.law, names, domains, {**fixed, **extra}, self.mean_loglik)

    def _numeric(self, start: dict) -> dict:
        """Maximise the likelihood over the parameters ``objective`` names, from ``start``."""
        objective = self.objective(start)
        try:
            best = maximize(objective, [start[p] for p in objective.names], objective.domains)
        except ValueError as e:
            raise FitFailed(str(e)) from None
        return objective.params(best)


class _Continuous(_Model):
    mode = "continuous"

    def estimate(self, start=None) -> dict:
        return self.law.estimate(self.s)

    def fixed(self, params):
        """The Pareto's scale: its MLE is the sample minimum, not a root of the score."""
        return {"scale": float(self.s.v[0])} if self.law.scale_at_min else {}

    def mean_loglik(self, frozen) -> float:
        return float(self.s.w @ frozen.logpdf(self.s.v)) / self.s.n

    def minimum_rate(self, params: dict) -> float:
        """n·x₍₁₎·f(x₍₁₎) (f recorded: truncated where the data are), for a scale at the
        sample minimum x₍₁₎: the rate of log x₍₁₎ − log xₘ, exponential (uncertainty)."""
        x = float(self.s.v[0])
        return self.s.n * x * math.exp(float(self._law(self.law.freeze(params)).logpdf(
            np.nextafter(x, math.inf))))

    def _law(self, frozen):
        return frozen

    def null_kernel(self, params):
        return law_null_kernel(self.law, params, self.fixed(params), self._law)

    def measure(self, params, edges):
        frozen = self.law.freeze(params)
        v, w = self._statistics_sample()
        w2, a2 = gof.cvm_ad(v, frozen, w)
        return float(self.s.w @ frozen.logpdf(self.s.v)), w2, a2, frozen.cdf(edges)

    def _statistics_sample(self) -> tuple[np.ndarray, np.ndarray]:
        """(distinct values, counts) W² and A² are computed on: a scale estimated by the
        sample minimum puts that point at F = 0; given the minimum, the other values are a
        sample of the fitted law."""
        v, w = self.s.v, self.s.w
        if not self.law.scale_at_min:
            return v, w
        w = np.concatenate(([w[0] - 1], w[1:]))
        return v[w > 0], w[w > 0]


class _Truncated(_Model):
    mode = "truncated"

    def estimate(self, start=None) -> dict:
        return self._numeric(start or self.law.estimate(self.s))

    def mean_loglik(self, frozen) -> float:
        return _Continuous.mean_loglik(self, frozen) - math.log(
            Truncated(frozen, self.s.obs.lower, self.s.obs.upper).z)

    def measure(self, params, edges):
        t = Truncated(self.law.freeze(params), self.s.obs.lower, self.s.obs.upper)
        v, w = self._statistics_sample()
        w2, a2 = gof.cvm_ad(v, t, w)
        return float(self.s.w @ t.logpdf(self.s.v)), w2, a2, t.cdf(edges)

    fixed = _Continuous.fixed
    minimum_rate = _Continuous.minimum_rate
    null_kernel = _Continuous.null_kernel
    _statistics_sample = _Continuous._statistics_sample

    def _law(self, frozen):
        return Truncated(frozen, self.s.obs.lower, self.s.obs.upper)


class _Cells(_Model):
    """Counts or grid cells: everything from P(D ≤ j) at integer knots.

    The statistics use a partition of the cells from the first possible one to the largest
    value: single cells for the first ``EXACT_CELLS``, then one group per observed value (the
    empty cells before it included), so that a few gaps of hours do not cost a cell a second.
    """

    def __init__(self, law: Law, s: Sample) -> None:
        super().__init__(law, s)
        self.values, self.counts = s.cells
        if s.obs.kind == "grid":
            self.lo_w, self.hi_w = s.obs.cell_window()
        else:
            self.lo_w, self.hi_w = (self.law.support_from or s.support_min), math.inf
        self.value_knots = self.knots(self.values - 1, self.values)    # fixed during the MLE

    def cdf_at(self, frozen, j: np.ndarray):
        raise NotImplementedError

    def knots(self, after: np.ndarray, upto: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(distinct knots, index of after, upto and the window's ends into them)."""
        ends = [self.lo_w - 1, self.hi_w]
        return np.unique(np.concatenate((after, upto, ends)), return_inverse=True)

    def interval_probabilities(self, frozen, after: np.ndarray, upto: np.ndarray,
                               knots: tuple[np.ndarray, np.ndarray] | None = None
                               ) -> tuple[np.ndarray, np.ndarray]:
        """(P(after < D ≤ upto), P(D ≤ upto)) for integer knots, within the recording window
        (``knots``: ``self.knots(after, upto)`` when already known)."""
        knots, index = knots or self.knots(after, upto)
        finite = np.isfinite(knots)
        cdf, sf, right = np.zeros(len(knots)), np.ones(len(knots)), knots > 0  # ±inf: 0 or 1
        cdf[~finite & right], sf[~finite & right] = 1.0, 0.0
        cdf[finite], sf[finite], right[finite] = self.cdf_at(frozen, knots[finite])
        m = len(upto)
        below_i, at_i = index[:m], index[m:2 * m]
        lo_i, hi_i = np.full(m, index[2 * m]), index[2 * m + 1:]
        z = _mass(cdf, sf, right, lo_i[:1], hi_i)[0]
        if not z > 0:
            raise FitFailed("the law puts no mass inside the recording window")
        p = _mass(cdf, sf, right, below_i, at_i) / z
        h = _mass(cdf, sf, right, lo_i, at_i) / z
        return np.maximum(p, 0.0), np.clip(h, 0.0, 1.0)

    def mean_loglik(self, frozen) -> float:
        p, _ = self.interval_probabilities(frozen, self.values - 1, self.values,
                                           self.value_knots)
        return float(self.counts @ np.log(np.maximum(p, TINY))) / self.s.n

    def partition(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower knots, upper knots) of the cells the statistics use (class docstring)."""
        lo = self.lo_w if math.isfinite(self.lo_w) else self.values[0]
        hi = self.values[-1]
        upto = np.arange(lo, min(hi, lo + EXACT_CELLS - 1) + 1, dtype=float)
        upto = np.concatenate((upto, self.values[self.values > upto[-1]]))
        return np.concatenate(([lo - 1], upto[:-1])), upto

    def partition_probabilities(self, params: dict) -> tuple[np.ndarray, np.ndarray]:
        """``interval_probabilities`` of the partition's cells at ``params`` (kept for the
        last parameters: ``measure`` and ``null_kernel`` both need them)."""
        key = tuple(sorted(params.items()))
        if getattr(self, "_cached", (None,))[0] != key:
            after, upto = self.partition()
            self._cached = key, self.interval_probabilities(self.law.freeze(params), after,
                                                            upto)
        return self._cached[1]

    def null_kernel(self, params):
        """The partition's cells plus the mass below and above them; consecutive cells of
        small probability grouped (at most MAX_GROUPS points) for the eigenvalue problem."""
        after, upto = self.partition()
        p, h = self.partition_probabilities(params)
        ends = _group_ends(p)
        starts = _starts(ends)
        w_a2 = np.where((h > 0) & (h < 1 - 1e-12), p / np.maximum(h * (1 - h), TINY), 0.0)
        g_after, g_upto = after[starts], upto[ends]
        gp, gh = self.interval_probabilities(self.law.freeze(params), g_after, g_upto)
        dp, dh = [], []
        for plus, minus in self._perturbed(params):
            (pp, hp), (pm, hm) = (self.interval_probabilities(f, g_after, g_upto)
                                  for f in (plus, minus))
            dp.append((pp - pm) / (2 * FD_STEP))
            dh.append((hp - hm) / (2 * FD_STEP))
        dp, dh = np.array(dp).T.reshape(len(ends), -1), np.array(dh).T.reshape(len(ends), -1)
        # the multinomial's cells: below the first group, the groups, above the last
        q = np.concatenate(([gh[0] - gp[0]], gp, [1 - gh[-1]]))
        dq = np.vstack((dh[:1] - dp[:1], dp, -dh[-1:]))
        live = q > 1e-300
        info = (dq[live] / q[live, None]).T @ dq[live]
        return gh, dh, info, np.add.reduceat(p, starts), np.add.reduceat(w_a2, starts)

    def measure(self, params, edges):
        frozen = self.law.freeze(params)
        upto = self.partition()[1]
        p, h = self.partition_probabilities(params)
        obs = np.bincount(np.searchsorted(upto, self.values), weights=self.counts,
                          minlength=len(upto)).astype(float)
        loglik = self.mean_loglik(frozen) * self.s.n
        w2, a2 = gof.cell_cvm_ad(obs, p, h)
        # λ² edges are values: P(D < e) = P(D ≤ e − 1)
        knots = np.round(edges / self.s.unit) - 1
        below = self.interval_probabilities(frozen, knots, knots)[1] if len(knots) else knots
        return loglik, w2, a2, below


class _Discrete(_Cells):
    mode = "discrete"

    def estimate(self, start=None) -> dict:
        return self.law.estimate(self.s)

    def objective(self, params):
        """The laws' own MLEs maximise the likelihood of their pmf (the cells' equals it, but
        for tail cells whose probability underflows)."""
        return replace(super().objective(params), mean_loglik=self._pmf_loglik)

    def _pmf_loglik(self, frozen) -> float:
        return float(self.s.w @ frozen.logpmf(self.s.v)) / self.s.n

    def cdf_at(self, frozen, j):
        return discrete_cdf(frozen, j)


class _Rounded(_Cells):
    mode = "rounded"

    def estimate(self, start=None) -> dict:
        if start is None:
            # from the exact-value MLE of the counts, zeros moved to a quarter
            start = self.law.estimate(Sample(np.maximum(self.s.v, 0.25), counts=self.s.w))
        return self._numeric(start)

    def cdf_at(self, frozen, j):
        return rounded_cdf(frozen, j, self.s.support_min)


class _Grid(_Cells):
    mode = "grid"

    def estimate(self, start=None) -> dict:
        if start is None:
            # start from the exact-value MLE of the recorded values, zeros moved to a quarter
            # step (the MLE of most laws needs positive values)
            pseudo = Sample(np.maximum(self.s.v, self.s.obs.step / 4), counts=self.s.w)
            start = self.law.estimate(pseudo)
        return self._numeric(start)

    def cdf_at(self, frozen, j):
        return grid_cdf(frozen, j, self.s.obs.step)


def perturbed(law: Law, params: dict, fixed: dict) -> list[tuple]:
    """Frozen laws at ±FD_STEP along each free parameter (free coordinates: log, logit)."""
    fixed = {**fixed, **{k: v for k, v in params.items() if k not in law.params}}
    names = [p for p in law.params if p not in fixed]
    domains = [d for p, d in zip(law.params, law.domain) if p not in fixed]
    phi = to_free([params[p] for p in names], domains)
    out = []
    for i in range(len(names)):
        pair = []
        for sign in (1, -1):
            shifted = phi.copy()
            shifted[i] += sign * FD_STEP
            pair.append(law.freeze({**dict(zip(names, from_free(shifted, domains))), **fixed}))
        out.append(tuple(pair))
    return out


#: halvings of a bracket in ``grid_quantiles``: its width (its ratio when positive) over 2⁶⁴
HALVINGS = 64


def _middle(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The geometric middle of a positive bracket (its digits, not its width, halve: the far
    lower tail of a law on x > 0 is found to a double's precision), else the arithmetic."""
    return np.where(lo > 0, np.sqrt(np.maximum(lo, 0) * hi), lo + (hi - lo) / 2)


def grid_quantiles(frozen, t: np.ndarray) -> np.ndarray:
    """x with F(x) = t where t ≤ ½ and S(x) = 1 − t above, for an increasing grid t: the ends
    and the median by SciPy's ppf and isf, the points between them all at once by halving
    brackets. SciPy inverts some laws one point at a time by a root search (the inverse
    Gaussian of a small mu: 2 s for the 321 points of a kernel, 20 ms here)."""
    upper = t > 0.5
    lo_end, median, hi_end = (float(frozen.ppf(t[0])), float(frozen.ppf(0.5)),
                              float(frozen.isf(1 - t[-1])))
    lo = np.where(upper, median, lo_end)
    hi = np.where(upper, hi_end, median)
    for _ in range(HALVINGS):
        mid = _middle(lo, hi)
        below = np.where(upper, frozen.sf(mid) > 1 - t, frozen.cdf(mid) < t)
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    x = _middle(lo, hi)
    x[0], x[-1] = lo_end, hi_end
    return x


def law_null_kernel(law: Law, params: dict, fixed: dict | None = None, wrap=lambda f: f):
    """The null-distribution kernel of W² and A² for exact values of ``law`` (``wrap``: e.g. a
    truncation), on the logit grid of ``gof``: (t, ψ, I, weights of W², weights of A²)."""
    t, dy = gof.logit_grid()
    upper = t > 0.5
    frozen = wrap(law.freeze(params))
    x = grid_quantiles(frozen, t)
    pairs = perturbed(law, params, fixed or {})
    psi, score = np.zeros((len(t), len(pairs))), np.zeros((len(t), len(pairs)))
    for i, (plus, minus) in enumerate(pairs):
        plus, minus = wrap(plus), wrap(minus)
        psi[:, i] = np.where(upper, minus.sf(x) - plus.sf(x), plus.cdf(x) - minus.cdf(x))
        score[:, i] = plus.logpdf(x) - minus.logpdf(x)
    psi, score = psi / (2 * FD_STEP), score / (2 * FD_STEP)
    psi[~np.isfinite(psi)] = 0.0
    score[~np.isfinite(score)] = 0.0
    dens = t * (1 - t) * dy
    info = (score * dens[:, None]).T @ score
    return t, psi, info, dens, np.full(len(t), dy)


def _group_ends(p: np.ndarray) -> np.ndarray:
    """Last cell of each group: consecutive cells merged until a group holds 1/MAX_GROUPS of
    the probability (a cell that holds more is a group of its own)."""
    if len(p) <= MAX_GROUPS:
        return np.arange(len(p))
    cum = np.cumsum(p) * MAX_GROUPS / max(p.sum(), TINY)
    ends = np.flatnonzero(np.floor(cum[1:]) > np.floor(cum[:-1]))
    return np.unique(np.concatenate((ends, [len(p) - 1])))


def _starts(ends: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], ends[:-1] + 1))


_MODELS = {m.mode: m for m in (_Continuous, _Truncated, _Discrete, _Rounded, _Grid)}


def make_model(law: Law, s: Sample) -> _Model:
    return _MODELS[mode_of(law, s)](law, s)
