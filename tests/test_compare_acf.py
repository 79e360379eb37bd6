"""The acf(1) row's interval covers as it says: two independent runs of one workload process
(simulated here: WAGON's sessions, each click a page and its objects over the next seconds)
give lag-1 correlations of requests per second that differ by less than z · √(s_A² + s_B²)
about as often as the level says (90 %). The white-noise error 1/√seconds, which the row used
to give, covers such runs three times in four; for independent seconds the two agree."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from wagon.analysis.digest import _acf1

SPAN = 20_000                               # seconds a run
Z = stats.norm.ppf(0.95)                    # the row's 90 % interval


def _sessions(rng: np.random.Generator) -> np.ndarray:
    """Requests per second of WAGON's sessions: Poisson starts (0.2/s), clicks inverse Gaussian
    (μ = 5, λ = 3, rounded up), think times lognormal (3, 1.1), each click 1 + Poisson(2)
    requests (a page and its objects) an exponential time (mean 2 s) after it."""
    starts = rng.uniform(0, SPAN, rng.poisson(0.2 * SPAN))
    clicks = np.ceil(rng.wald(5.0, 3.0, len(starts))).astype(np.int64)
    gaps = np.cumsum(rng.lognormal(3.0, 1.1, int(clicks.sum())))
    first = np.cumsum(clicks) - clicks                  # each session's first click
    t = np.repeat(starts, clicks) + gaps - np.repeat(gaps[first], clicks)
    per_click = 1 + rng.poisson(2.0, len(t))
    t = np.repeat(t, per_click) + rng.exponential(2.0, int(per_click.sum()))
    return np.bincount(t[t < SPAN].astype(np.int64), minlength=SPAN).astype(float)


def _independent(rng: np.random.Generator) -> np.ndarray:
    """Poisson requests per second, independent from second to second."""
    return rng.poisson(3.0, SPAN).astype(float)


def _coverage(draw, runs: int = 300) -> tuple[float, float]:
    """Share of pairs of runs whose acf(1) differ by less than Z times the row's error, and by
    less than Z times the white-noise error."""
    rng = np.random.default_rng(5)
    ours = white = 0
    for _ in range(runs):
        (ra, sa), (rb, sb) = (_acf1(draw(rng)) for _ in range(2))
        ours += abs(rb - ra) <= Z * np.hypot(sa, sb)
        white += abs(rb - ra) <= Z * np.sqrt(2 / SPAN)
    return ours / runs, white / runs


def test_sessions_widen_the_acf_interval_to_its_level():
    ours, white = _coverage(_sessions)
    assert 0.85 <= ours <= 0.95, ours
    assert white < 0.8, white


def test_independent_seconds_keep_the_white_noise_interval():
    ours, white = _coverage(_independent)
    assert 0.85 <= ours <= 0.95 and 0.85 <= white <= 0.95, (ours, white)
    assert _acf1(_independent(np.random.default_rng(1)))[1] == pytest.approx(
        1 / np.sqrt(SPAN), rel=0.25)
