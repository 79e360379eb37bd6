"""A fitted law seen the way its sample was recorded: what a user means by "the think time law"
is rarely the parent law itself.

A fit estimates a *parent* law (``Law.freeze(params)``): think times of the parent fall below
Tmin or above Tmax, inter-arrival gaps of the parent are real numbers. The log recorded
something else: think times only inside [Tmin, Tmax], gaps as differences of timestamps on a
grid, counts as integers. ``Observed`` is that recorded law, with ``cdf``, ``sf``, ``mean`` and
``rvs`` of the values as they would be recorded (what a goodness-of-fit plot compares the data
with), and ``latent`` the law of the true values whose recording is kept (what a synthetic
workload draws: a think time inside the window, a gap at full resolution).
"""
from __future__ import annotations

import math

import numpy as np

from .likelihood import (Truncated, count_mean, draw_latent, draw_observed, grid_cdf,
                         latent_mean, rounded_cdf)
from .observation import Observation

__all__ = ["Observed", "Latent"]

CHUNK = 100_000            # grid cells summed at a time
MAX_CELLS = 1 << 22        # a window of more cells: its mean is the latent one (within a step)


class Latent:
    """The true values whose recording would have been kept: the parent conditioned on the
    observation's window (the parent itself when nothing is cut)."""

    def __init__(self, parent, observation: Observation) -> None:
        self.parent, self.observation = parent, observation

    def mean(self) -> float:
        return latent_mean(self.parent, self.observation)

    def rvs(self, size: int, random_state: np.random.Generator) -> np.ndarray:
        return draw_latent(self.parent, self.observation, size, random_state)


class Observed:
    """The parent law recorded as ``observation`` says; ``mode`` is the fit's (``truncated``,
    ``grid``, ``rounded``, ``discrete`` or ``continuous``: wagon.fitting.likelihood)."""

    def __init__(self, parent, observation: Observation, mode: str, support_min: int = 0
                 ) -> None:
        self.parent, self.observation, self.mode = parent, observation, mode
        self.support_min = support_min
        self.latent = Latent(parent, observation)
        self._window = Truncated(parent, observation.lower, observation.upper) \
            if mode == "truncated" else None
        if mode == "grid":
            lo, hi = observation.cell_window()
            self._cells = (lo, hi)
            edges = [c for c in (lo - 1, hi) if math.isfinite(c)]
            below = self._grid_cdf(np.array(edges)) if edges else np.zeros(0)
            self._below = float(below[0]) if math.isfinite(lo) else 0.0
            self._mass = (float(below[-1]) if math.isfinite(hi) else 1.0) - self._below

    def _grid_cdf(self, j: np.ndarray) -> np.ndarray:
        return grid_cdf(self.parent, j, self.observation.step)[0]

    def cdf(self, x) -> np.ndarray:
        """P(a recorded value ≤ x)."""
        x = np.asarray(x, float)
        if self.mode == "truncated":
            return self._window.cdf(x)
        if self.mode == "rounded":
            return rounded_cdf(self.parent, np.floor(x), self.support_min)[0]
        if self.mode == "grid":
            lo, hi = self._cells
            j = np.clip(np.floor(x / self.observation.step + 1e-9), lo - 1, hi)
            flat = j.ravel()
            return ((self._grid_cdf(flat) - self._below) / self._mass).clip(0, 1).reshape(j.shape)
        return self.parent.cdf(x)

    def sf(self, x) -> np.ndarray:
        return 1.0 - self.cdf(x)

    def ppf(self, q) -> np.ndarray:
        """The ``q``-quantiles of the values as recorded: on cells (counts, the grid) the
        smallest cell whose CDF reaches q, by bisection."""
        q = np.asarray(q, float)
        if self.mode == "truncated":
            return self._window.ppf(q)
        if self.mode == "continuous":
            return np.asarray(self.parent.ppf(q), float)
        unit = self.observation.step if self.mode == "grid" else 1.0
        first, last = self._cells if self.mode == "grid" else (self.support_min, math.inf)
        if not math.isfinite(first):
            first = math.floor(float(self.parent.support()[0]) / unit)
        if not math.isfinite(last):                             # far enough for every q
            reach = 1.0
            while reach < 2.0 ** 60 and float(self.cdf((first + reach) * unit)) < q.max(
                    initial=0.0):
                reach *= 2
            last = first + reach
        lo, hi = np.full(q.shape, first - 1.0), np.full(q.shape, float(last))   # F(lo) < q
        while np.any(hi - lo > 1):
            mid = np.floor((lo + hi) / 2)
            reached = self.cdf(mid * unit) >= q
            hi, lo = np.where(reached, mid, hi), np.where(reached, lo, mid)
        return hi * unit

    def mean(self) -> float:
        """E[a recorded value]."""
        if self.mode in ("rounded", "discrete"):
            return count_mean(self.parent, self.mode, self.support_min)
        if self.mode == "grid":
            return self._grid_mean()
        return latent_mean(self.parent, self.observation)

    def _cell_moment(self, a: float, b: float) -> float:
        """Σ j·P(D = j) over the cells a..b (finite), in blocks of CHUNK cells."""
        total = 0.0
        for start in np.arange(a, b + 1, CHUNK):
            j = np.arange(start - 1, min(start + CHUNK - 1, b) + 1)
            total += float(np.dot(j[1:], np.diff(self._grid_cdf(j))))
        return total

    def _grid_mean(self) -> float:
        """E[D·step | lo ≤ D ≤ hi] for the recorded cell D = ⌊U + G/step⌋: a finite sum over
        the window, or, with no upper end, E[D] = E[G]/step (E⌊U + y⌋ = y for every y) less
        the cells below the window; over more than ``MAX_CELLS`` cells, the latent law's mean
        in the window (a step is then far below the law's scale)."""
        lo, hi = self._cells
        step = self.observation.step
        first = float(np.floor(float(self.parent.support()[0]) / step))    # -inf: a normal's
        start = lo if math.isfinite(lo) else first
        summed = hi - start if math.isfinite(hi) else lo - first if math.isfinite(lo) else 0
        if summed > MAX_CELLS:          # microseconds over minutes: 6e8 cells
            return latent_mean(self.parent, self.observation)
        if math.isfinite(hi):
            moment = self._cell_moment(start, hi) if math.isfinite(start) else math.nan
        elif math.isfinite(lo) and lo > first:
            below = self._cell_moment(first, lo - 1) if math.isfinite(first) else math.nan
            moment = float(self.parent.mean()) / step - below
        else:
            moment = float(self.parent.mean()) / step
        return moment * step / self._mass if self._mass > 0 else math.nan

    def rvs(self, size: int, random_state: np.random.Generator) -> np.ndarray:
        """Values as the log would have recorded them."""
        return draw_observed(self.parent, self.observation, self.mode, self.support_min, size,
                             random_state)
