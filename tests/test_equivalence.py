"""``wagon compare``'s equivalence tests hold their error rate and decide at real sizes:
simulations with known truth (one law on both sides, laws apart by more than the margin), the
upper bound's size from SciPy's exact binomial laws, the lower bound's quantile against
simulated empirical processes, Kolmogorov's limit against SciPy's exact law."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
from scipy import stats

from wagon.analysis.equivalence import (SAME_POWER, differs_bound, ks_equivalence, n_same,
                                        same_bound)

MARGIN, ALPHA, SEEDS = 0.1, 0.05, 50


Pair = tuple[Callable, Callable]       # samplers (rng, n) → values of side A, of side B


def verdicts(pair: Pair, n: int, seeds: int = SEEDS) -> list[str]:
    """The verdicts of ``seeds`` pairs of samples of ``n`` values a side."""
    out = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        a, b = (draw(rng, n) for draw in pair)
        out.append(ks_equivalence(a, b, MARGIN, ALPHA)["verdict"])
    return out


LOGNORMAL = (lambda r, n: r.lognormal(3.0, 1.1, n),) * 2
GEOMETRIC = (lambda r, n: r.geometric(0.25, n).astype(float),) * 2     # clicks: ties


@pytest.mark.parametrize("pair", [LOGNORMAL, GEOMETRIC], ids=["continuous", "discrete"])
def test_one_law_is_same_at_a_thousand_values_a_side(pair):
    """Two samples of one law, 1,000 values a side: ``same`` in at least 90 % of 50 seeds (the
    former DKW–Massart interval, at its margin of 0.05, could not below ~3,500), never
    ``differs``."""
    got = verdicts(pair, 1000)
    assert got.count("same") >= 0.9 * SEEDS and "differs" not in got, got


def _shift(delta: float) -> Pair:
    """Normal laws whose Kolmogorov distance is ``delta`` (SciPy's normal CDF): unit normals
    d apart are 2Φ(d/2) − 1 apart."""
    d = 2 * stats.norm.ppf(0.5 + delta / 2)
    assert stats.norm.cdf(d / 2) - stats.norm.cdf(-d / 2) == pytest.approx(delta)
    return (lambda r, n: r.normal(0.0, 1.0, n)), (lambda r, n: r.normal(d, 1.0, n))


def _poissons() -> Pair:
    """Poisson(4) against Poisson(4.8): Kolmogorov distance 0.153, just beyond 1.5 × the margin
    (SciPy's CDFs)."""
    k = np.arange(40)
    assert np.max(np.abs(stats.poisson.cdf(k, 4.0) - stats.poisson.cdf(k, 4.8))) >= 1.5 * MARGIN
    return ((lambda r, n: r.poisson(4.0, n).astype(float)),
            (lambda r, n: r.poisson(4.8, n).astype(float)))


@pytest.mark.parametrize("pair", [_shift(1.5 * MARGIN), _poissons()],
                         ids=["continuous", "discrete"])
def test_laws_beyond_the_margin_are_not_said_same(pair):
    """True Kolmogorov distance 1.5 × the margin: ``same`` in at most α of the seeds, at 1,000
    values a side and at 100."""
    for n in (100, 1000):
        assert verdicts(pair, n).count("same") <= ALPHA * SEEDS


def _pointwise_size(n: int, m: int, margin: float) -> float:
    """The largest probability, over the binomial proportions p − q = margin at the point
    where |F − G| is largest, that F̂ − Ĝ there is at most margin − ``same_bound``: exact sums
    over SciPy's binomial laws (D is at least that gap, so this bounds the test's size)."""
    t = margin - same_bound(n, m, ALPHA)
    x = np.arange(n + 1)
    worst = 0.0
    for c in np.linspace(margin / 2, 1 - margin / 2, 61):
        p, q = c + margin / 2, c - margin / 2
        need = np.ceil(m * (x / n - t) - 1e-9)            # Y ≥ need ⇔ x/n − Y/m ≤ t
        worst = max(worst, float(stats.binom.pmf(x, n, p) @ stats.binom.sf(need - 1, m, q)))
    return worst


@pytest.mark.parametrize("n,m", [(150, 150), (300, 300), (1000, 1000), (200, 1000)])
def test_the_same_bound_errs_at_most_alpha(n, m):
    """At the margin itself (the worst case of H0: Δ ≥ margin), the exact chance that the upper
    bound comes out within the margin is at most α, for margins 0.1 and 0.2."""
    for margin in (0.1, 0.2):
        assert _pointwise_size(n, m, margin) <= ALPHA


def _sups(rng: np.random.Generator, n: int, reps: int) -> np.ndarray:
    """sup |F̂ − F| of ``reps`` uniform samples of ``n`` values (exactly, at the order
    statistics)."""
    u = np.sort(rng.random((reps, n)), axis=1)
    i = np.arange(1, n + 1)
    return np.maximum(i / n - u, u - (i - 1) / n).max(axis=1)


@pytest.mark.parametrize("n,m", [(20, 400), (1000, 1000)])
def test_the_differs_bound_is_the_quantile_of_the_two_sups(n, m):
    """P(sup|F̂ − F| + sup|Ĝ − G| > ``differs_bound``) against 4,000 simulated pairs of
    uniform samples: at most α (plus three Monte Carlo standard errors), and not far below it
    (the bound is Kolmogorov's limit law, slightly above the exact one at finite n)."""
    rng = np.random.default_rng(7)
    reps = 4000
    beyond = np.mean(_sups(rng, n, reps) + _sups(rng, m, reps) > differs_bound(n, m, ALPHA))
    assert 0.02 <= beyond <= ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / reps), beyond


def test_kolmogorovs_limit_bounds_the_exact_law():
    """√n·sup|F̂ − F| is stochastically below Kolmogorov's limit law at the sizes compare sees
    (from 8 values): SciPy's exact ``kstwo`` tail below ``kstwobign``'s."""
    x = np.linspace(0.3, 2.5, 23)
    for n in (8, 30, 100, 1000):
        assert np.all(stats.kstwo.sf(x / np.sqrt(n), n) <= stats.kstwobign.sf(x))


def test_n_same_is_where_nine_draws_in_ten_are_same():
    """At ``n_same`` values a side, 120 pairs of samples of one continuous law are said
    ``same`` about ``SAME_POWER`` of the time; with fewer values a side, the row says how many
    it would need."""
    n = n_same(MARGIN, ALPHA)
    share = verdicts(LOGNORMAL, n, 120).count("same") / 120
    assert SAME_POWER - 0.07 <= share <= 0.99, (n, share)
    rng = np.random.default_rng(1)
    few = ks_equivalence(rng.lognormal(size=300), rng.lognormal(size=300), MARGIN, ALPHA)
    assert few["verdict"] == "undecided" and few["n_same"] == n
    assert f"about {n:,} a side needed" in few["why"]
