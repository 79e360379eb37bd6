"""Likelihoods of the data as observed: whole-second gaps (interval-censored, triangular kernel),
truncation to [Tmin, Tmax], counts by cells; checked against independent computations (the
kernel integrated by quadrature, closed-form limited expected values, scipy.optimize on the
exact likelihood), and by simulation: the true family is picked, the null p-values are
uniform, the bootstrap draws the way the data were recorded. The heavy version of the last two
is bench/fit_calibration.py (docs/benchmarks.md)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from wagon.fitting import LAWS, Observation, fit
from wagon.fitting.laws import Sample
from wagon.fitting.likelihood import (Truncated, count_mean, draw_latent, draw_observed,
                                      grid_cdf, latent_mean, make_model)

THINK = Observation.grid(1.0, lower=2, upper=600)        # how sessions record think times
GAPS = Observation.grid(1.0, lower=0)                     # and inter-arrival times
CLICKS = Observation.counts(1)


def _kernel_probability(frozen, d: int) -> float:
    """P(D = d) = ∫ max(0, 1 − |g − d|) f(g) dg by adaptive quadrature (the oracle)."""
    lo, hi = d - 1.0, d + 1.0
    bound = float(frozen.support()[0])
    points = [p for p in (bound, float(d)) if lo < p < hi] or None
    return integrate.quad(lambda g: max(0.0, 1 - abs(g - d)) * frozen.pdf(g), lo, hi,
                          points=points, limit=200, epsabs=0, epsrel=1e-12)[0]


@pytest.mark.parametrize("name, params", [
    ("gamma", {"shape": 0.3, "scale": 2.0}), ("gamma", {"shape": 2.5, "scale": 40.0}),
    ("weibull", {"shape": 0.5, "scale": 3.0}), ("lognormal", {"mu": 3.0, "sigma": 1.1}),
    ("exponential", {"scale": 0.05}), ("inverse_gaussian", {"mu": 5.0, "lambda": 3.0}),
    ("loglogistic", {"shape": 0.8, "scale": 2.0}), ("pareto", {"shape": 1.2, "scale": 0.37}),
    ("lomax", {"shape": 1.5, "scale": 4.0}), ("normal", {"mu": 3.0, "sigma": 2.0})])
def test_grid_cells_against_the_integrated_kernel(name, params):
    frozen = LAWS[name].freeze(params)
    d = np.concatenate((np.arange(-1, 40), [255, 300, 1000, 5000]))              # and far cells
    cdf, sf, right = grid_cdf(frozen, np.concatenate((d - 1, d)), 1.0)
    m = len(d)
    p = np.where(right[:m], sf[:m] - sf[m:], cdf[m:] - cdf[:m])
    oracle = np.array([_kernel_probability(frozen, k) for k in d])
    live = oracle > 1e-12
    assert np.allclose(p[live], oracle[live], rtol=1e-6, atol=0), name


def test_millisecond_cells_integrated_in_blocks_against_the_integrated_kernel(monkeypatch):
    """Gaps of a 25/s process on a 1 ms grid: 30,000 cells (60,000 knots), integrated a block
    of 4,096 unit intervals at a time, are the cells integrated at once (to their last bits:
    NumPy's sums may group differently) and, on a sample of them, the kernel integrated by
    adaptive quadrature in cell units (the oracle)."""
    import wagon.fitting.likelihood as lik
    step, d = 0.001, np.arange(0, 30_000, dtype=float)
    knots = np.concatenate((d - 1, d))
    laws = {"lognormal": ({"mu": -3.5, "sigma": 1.0}, {"mu": -3.5 - math.log(step)}),
            "weibull": ({"shape": 0.8, "scale": 0.04}, {"scale": 40.0})}
    monkeypatch.setattr(lik, "BLOCK_ROWS", len(knots))
    at_once = {name: grid_cdf(LAWS[name].freeze(p), knots, step) for name, (p, _) in laws.items()}
    monkeypatch.setattr(lik, "BLOCK_ROWS", 4_096)
    picked = np.concatenate((np.arange(6), np.random.default_rng(1).integers(6, 400, 20)))
    for name, (params, in_cells) in laws.items():
        cdf, sf, right = grid_cdf(LAWS[name].freeze(params), knots, step)
        for mine, theirs in zip((cdf, sf), at_once[name]):   # the same to the last bits
            assert np.allclose(mine, theirs, rtol=1e-13, atol=0)
        m = len(d)
        p = np.where(right[:m], sf[:m] - sf[m:], cdf[m:] - cdf[:m])
        oracle = np.array([_kernel_probability(LAWS[name].freeze({**params, **in_cells}), int(k))
                           for k in d[picked]])
        assert np.allclose(p[picked], oracle, rtol=1e-6, atol=0), name


@pytest.mark.parametrize("step", [1e-3, 1e-6])
def test_gamma_cells_far_out_on_a_fine_grid_do_not_cancel(step):
    """The gamma's closed form ∫₀ˣF = x·P(k, x/θ) − kθ·P(k + 1, x/θ) gives a cell as the
    difference of two values of x: on a millisecond grid, 100,000 cells out, that difference
    lost 8e-5 of the cell (gamma(0.7) think times on a ms grid fitted shape 0.691 after 176
    likelihood evaluations; 0.697 after 39 now). Beyond the 1,000th cell a cell is F at its
    start plus the density integrated over it, and matches the integrated kernel, out to 600 s
    on a millisecond and a microsecond grid."""
    params = {"shape": 0.7, "scale": 46.0}
    d = np.array([1.0, 10, 999, 1000, 5_000, 50_000, 300_000, 3e6, 3e7, 3e8])
    d = d[d * step < 600]
    cdf, sf, right = grid_cdf(LAWS["gamma"].freeze(params), np.concatenate((d - 1, d)), step)
    m = len(d)
    p = np.where(right[:m], sf[:m] - sf[m:], cdf[m:] - cdf[:m])
    in_cells = LAWS["gamma"].freeze({"shape": 0.7, "scale": 46.0 / step})
    oracle = np.array([_kernel_probability(in_cells, int(k)) for k in d])
    assert np.allclose(p, oracle, rtol=1e-7, atol=0)


def _lognormal_lev_cells(mu: float, sigma: float, d: np.ndarray) -> np.ndarray:
    """Independent oracle: P(D = d) = C(d + 1) − 2C(d) + C(d − 1) with C(x) = ∫₀ˣ F, in closed
    form for the lognormal: C(x) = x·Φ(z) − e^(μ + σ²/2)·Φ(z − σ), z = (ln x − μ)/σ."""
    def c(x):
        x = np.asarray(x, float)
        z = (np.log(np.maximum(x, 1e-300)) - mu) / sigma
        return np.where(x > 0, x * special.ndtr(z) - math.exp(mu + sigma ** 2 / 2)
                        * special.ndtr(z - sigma), 0.0)
    return c(d + 1) - 2 * c(d) + c(d - 1)


def _weibull_lev_cells(k: float, lam: float, d: np.ndarray) -> np.ndarray:
    """The same for the Weibull: C(x) = x(1 − e^(−z)) − λΓ(1 + 1/k)·P(1 + 1/k, z), z = (x/λ)^k."""
    def c(x):
        x = np.maximum(np.asarray(x, float), 0.0)
        z = (x / lam) ** k
        return x * -np.expm1(-z) - lam * special.gamma(1 + 1 / k) * special.gammainc(1 + 1 / k, z)
    return c(d + 1) - 2 * c(d) + c(d - 1)


def _oracle_fit(cells_fn, values, counts, start, lo=2, hi=600):
    """scipy's Nelder–Mead on the exact truncated grid likelihood, from its own start."""
    def nll(theta):
        p = cells_fn(*theta, values)
        z = cells_fn(*theta, np.arange(lo, hi + 1)).sum()
        if np.any(p <= 0) or not z > 0:
            return 1e300
        return -(counts @ np.log(p) - counts.sum() * np.log(z))
    res = optimize.minimize(nll, start, method="Nelder-Mead",
                            options={"xatol": 1e-9, "fatol": 1e-9, "maxiter": 4000})
    return res.x, -res.fun


def _think_sample(frozen, n: int, seed: int) -> np.ndarray:
    return draw_observed(frozen, THINK, "grid", 0, n, np.random.default_rng(seed))


def test_grid_truncated_mle_equals_the_oracle():
    """Whole-second think times within [2, 600]: our MLE is scipy's on the exact likelihood,
    computed independently (closed-form limited expected values, not our quadrature)."""
    for name, truth, cells, start in (
            ("lognormal", {"mu": 3.0, "sigma": 1.1}, _lognormal_lev_cells, [2.5, 1.5]),
            ("weibull", {"shape": 0.7, "scale": 25.0}, _weibull_lev_cells, [1.0, 20.0])):
        x = _think_sample(LAWS[name].freeze(truth), 3000, 11)
        values, counts = np.unique(x, return_counts=True)
        theta, oracle_ll = _oracle_fit(cells, values, counts, start)
        ours = fit(x, candidates=[name], observation=THINK).candidates[0]
        got = [ours.params[k] for k in LAWS[name].params]
        assert np.allclose(got, theta, rtol=2e-5), (name, got, theta)
        assert ours.loglik >= oracle_ll - 1e-6, (ours.loglik, oracle_ll)


def test_rounded_counts_mle_equals_the_oracle():
    """Clicks N = max(1, round X), X inverse Gaussian: the cell likelihood maximised by scipy."""
    x = draw_observed(LAWS["inverse_gaussian"].freeze({"mu": 5.0, "lambda": 3.0}), CLICKS,
                      "rounded", 1, 20_000, np.random.default_rng(2))
    values, counts = np.unique(x, return_counts=True)

    def nll(theta):
        mu, lam = theta
        if mu <= 0 or lam <= 0:
            return 1e300
        ig = stats.invgauss(mu / lam, scale=lam)
        p = np.where(values == 1, ig.cdf(1.5), ig.cdf(values + 0.5) - ig.cdf(values - 0.5))
        return -(counts @ np.log(p))
    res = optimize.minimize(nll, [4.0, 2.0], method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-10, "maxiter": 4000})
    rep = fit(x, observation=CLICKS, name="clicks")
    ours = next(c for c in rep.candidates if c.name == "inverse_gaussian")
    assert [ours.params["mu"], ours.params["lambda"]] == pytest.approx(res.x, rel=2e-5)
    assert ours.loglik == pytest.approx(-res.fun, abs=1e-6)
    # WAGON's own click law is recognised: the fit on the integers picked the negative binomial
    assert rep.best.name == "inverse_gaussian"
    assert ours.params["mu"] == pytest.approx(5.0, rel=0.05)
    assert ours.params["lambda"] == pytest.approx(3.0, rel=0.05)


def test_truncated_exact_mle_equals_the_oracle():
    """Sub-second think times kept within [2, 600]: density / (F(600) − F(2))."""
    frozen = LAWS["gamma"].freeze({"shape": 0.8, "scale": 40.0})
    obs = Observation.exact(2.0, 600.0)
    x = draw_observed(frozen, obs, "truncated", 0, 4000, np.random.default_rng(4))

    def nll(theta):
        k, th = theta
        if k <= 0 or th <= 0:
            return 1e300
        g = stats.gamma(k, scale=th)
        return -(np.sum(g.logpdf(x)) - len(x) * np.log(g.cdf(600) - g.cdf(2)))
    res = optimize.minimize(nll, [1.0, 30.0], method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-10, "maxiter": 4000})
    ours = fit(x, candidates=["gamma"], observation=obs).candidates[0]
    assert [ours.params["shape"], ours.params["scale"]] == pytest.approx(res.x, rel=2e-5)
    assert ours.loglik == pytest.approx(-res.fun, abs=1e-6)


def test_zero_truncated_laws_against_scipy():
    rng = np.random.default_rng(6)
    k = stats.poisson(1.7).rvs(size=30_000, random_state=rng)
    k = k[k > 0]
    zt = fit(k, candidates=["zt_poisson"], observation=CLICKS).candidates[0]
    mu = optimize.minimize_scalar(lambda m: -(np.sum(stats.poisson.logpmf(k, m))
                                              - len(k) * np.log(-np.expm1(-m))),
                                  bounds=(0.01, 10), method="bounded",
                                  options={"xatol": 1e-12}).x
    assert zt.params["mu"] == pytest.approx(mu, rel=1e-7)
    assert zt.params["mu"] == pytest.approx(1.7, rel=0.03)
    frozen = zt.frozen
    j = np.arange(0, 30)
    assert frozen.pmf(0) == 0 and frozen.pmf(j).sum() == pytest.approx(1.0)
    assert frozen.mean() == pytest.approx(mu / -math.expm1(-mu))
    nb = stats.nbinom(1.5, 0.3).rvs(size=30_000, random_state=rng)
    nb = nb[nb > 0]
    ztnb = fit(nb, candidates=["zt_negative_binomial"], observation=CLICKS).candidates[0]
    assert ztnb.params["n"] == pytest.approx(1.5, rel=0.08)
    assert ztnb.params["p"] == pytest.approx(0.3, rel=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ll = lambda t: -(np.sum(stats.nbinom.logpmf(nb, *t)) - len(nb) * np.log(1 - t[1] ** t[0]))
        res = optimize.minimize(ll, [1.0, 0.5], method="Nelder-Mead",
                                options={"xatol": 1e-10, "fatol": 1e-10, "maxiter": 4000})
    assert ztnb.loglik >= -res.fun - 1e-6


def test_lomax_for_data_that_start_near_zero():
    """Pareto II where the Pareto's scale would be the smallest value (a tie near zero)."""
    x = stats.lomax(c=2.5, scale=10).rvs(size=20_000, random_state=np.random.default_rng(8))
    rep = fit(x, candidates=["pareto", "lomax", "exponential"])
    lomax = next(c for c in rep.candidates if c.name == "lomax")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c, _, scale = stats.lomax.fit(x, floc=0)
    assert lomax.loglik >= np.sum(stats.lomax.logpdf(x, c, scale=scale)) - 1e-6
    assert rep.best.name == "lomax"
    light = fit(stats.expon.rvs(size=2000, random_state=np.random.default_rng(1)),
                candidates=["lomax"]).candidates[0]
    assert "exponential limit" in light.error


def test_observation_checks_its_values():
    with pytest.raises(ValueError, match="multiples"):
        fit([1.5, 2.0, 3.0], observation=GAPS)
    with pytest.raises(ValueError, match="below the truncation"):
        fit([1.0, 2.0, 3.0], observation=THINK)
    with pytest.raises(ValueError, match="integers"):
        fit([1.5, 2.0, 3.0], observation=CLICKS)
    assert Observation.from_dict(THINK.as_dict()) == THINK
    for bad in ({"kind": "fuzzy"}, {"kind": "grid", "step": "x"}, {"kind": "grid", "lower": 5,
                                                                   "upper": 1}, {"extra": 1}):
        with pytest.raises(ValueError):
            Observation.from_dict(bad)


def test_whole_seconds_change_the_think_law():
    """A lognormal recorded to the second and kept within [2, 600]: fitted as exact values the
    lognormal is rejected (Stephens' test) and its parameters are off; fitted as recorded, it
    is the law picked, with its parameters."""
    truth = {"mu": 3.0, "sigma": 1.1}
    x = _think_sample(LAWS["lognormal"].freeze(truth), 7042, 1)
    exact = next(c for c in fit(x).candidates if c.name == "lognormal")
    assert exact.p_a2 < 0.01
    rep = fit(x, observation=THINK)
    assert rep.best.name == "lognormal" and rep.best.p_a2 > 0.01
    assert rep.best.params["mu"] == pytest.approx(3.0, abs=0.06)
    assert rep.best.params["sigma"] == pytest.approx(1.1, abs=0.05)


@pytest.mark.parametrize("name, params, obs, mode", [
    ("inverse_gaussian", {"mu": 5.0, "lambda": 3.0}, CLICKS, "rounded"),
    ("lognormal", {"mu": 3.0, "sigma": 1.1}, THINK, "grid"),
    ("exponential", {"scale": 4.0}, GAPS, "grid")])
def test_true_family_picked_and_null_p_values_uniform(name, params, obs, mode):
    """Light version of bench/fit_calibration.py: the family picked in 4 of 5 samples of
    5,000; A² p-values of 50 null samples of 1,500 uniform (KS p > 0.01)."""
    frozen = LAWS[name].freeze(params)
    picks = [fit(draw_observed(frozen, obs, mode, 1, 5000, np.random.default_rng(s)),
                 observation=obs).best.name for s in range(5)]
    assert picks.count(name) >= 4, picks
    p = [fit(draw_observed(frozen, obs, mode, 1, 1500, np.random.default_rng([s, 9])),
             candidates=[name], observation=obs).candidates[0].p_a2 for s in range(50)]
    assert stats.kstest(p, "uniform").pvalue > 0.01, np.round(np.sort(p), 3)


def test_bootstrap_draws_the_way_the_data_were_recorded():
    """Rounded inverse Gaussian clicks: a bootstrap simulating without rounding gave p = 1 in
    150 of 150 null samples; recorded as the data, the p-values spread over (0, 1]."""
    frozen = LAWS["inverse_gaussian"].freeze({"mu": 5.0, "lambda": 3.0})
    p = []
    for s in range(12):
        x = draw_observed(frozen, CLICKS, "rounded", 1, 400, np.random.default_rng([s, 3]))
        c = fit(x, candidates=["inverse_gaussian"], observation=CLICKS, bootstrap=19,
                seed=s).candidates[0]
        assert c.p_method == "bootstrap(19)"
        p.append(c.p_a2)
    assert sum(v == 1.0 for v in p) <= 4 and min(p) < 0.6, p
    again = fit(x, candidates=["inverse_gaussian"], observation=CLICKS, bootstrap=19,
                seed=11).candidates[0]
    assert again.p_a2 == p[-1]


def test_draws_for_synthesis_keep_the_recording_window():
    frozen = LAWS["lognormal"].freeze({"mu": 3.0, "sigma": 1.1})
    g = draw_latent(frozen, THINK, 50_000, np.random.default_rng(1))
    assert g.min() > 1.0 and g.max() < 601.0          # recorded cells 2..600: g in (1, 601)
    assert g.mean() == pytest.approx(latent_mean(frozen, THINK), rel=0.02)
    assert latent_mean(frozen, THINK) < frozen.mean()
    ig = LAWS["inverse_gaussian"].freeze({"mu": 5.0, "lambda": 3.0})
    n = draw_observed(ig, CLICKS, "rounded", 1, 200_000, np.random.default_rng(2))
    assert count_mean(ig, "rounded", 1) == pytest.approx(n.mean(), rel=0.01)


@pytest.mark.parametrize("name, params, a, b", [
    ("inverse_gaussian", {"mu": 36.8, "lambda": 20.0}, 1.0, 601.0),    # most of the law: rejection
    ("gamma", {"shape": 0.7, "scale": 50.0}, 1.0, 601.0),
    ("inverse_gaussian", {"mu": 5.0, "lambda": 3.0}, 100.0, 300.0)])    # far tail: inverse
def test_truncated_draws_follow_the_truncated_law(name, params, a, b):
    """Draws of a law conditioned on [a, b], whichever way they are made, against that law's
    distribution function computed from SciPy's (Kolmogorov–Smirnov)."""
    frozen = LAWS[name].freeze(params)
    t = Truncated(frozen, a, b)
    x = t.rvs(20_000, np.random.default_rng(4))
    assert len(x) == 20_000 and x.min() >= a and x.max() <= b
    fa, z = _scipy_cdf(frozen, a), _scipy_cdf(frozen, b) - _scipy_cdf(frozen, a)
    assert stats.kstest(x, lambda v: (_scipy_cdf(frozen, v) - fa) / z).pvalue > 0.01


def _scipy_cdf(frozen, v):
    """F from SciPy's own distribution object, not through ``Truncated``."""
    return frozen.dist.cdf(v, *frozen.args, **frozen.kwds)


def test_cells_model_uses_distinct_values():
    """The likelihood works on (value, count) pairs: a sample and the same values repeated give
    the same estimates."""
    x = _think_sample(LAWS["lognormal"].freeze({"mu": 3.0, "sigma": 1.1}), 1000, 5)
    a = fit(x, candidates=["lognormal"], observation=THINK).candidates[0]
    b = fit(np.repeat(x, 3), candidates=["lognormal"], observation=THINK).candidates[0]
    assert a.params["mu"] == pytest.approx(b.params["mu"], rel=1e-5)
    assert 3 * a.loglik == pytest.approx(b.loglik, rel=1e-7)
    model = make_model(LAWS["lognormal"], Sample(x, observation=THINK))
    assert len(model.values) == len(np.unique(x))
