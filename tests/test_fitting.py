"""Fitting: parameters recovered, right family chosen, statistics against direct computations,
published reference fits, MLE optimality against scipy's numerical fits."""
from __future__ import annotations

import decimal
import math
import warnings
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from wagon.fitting import LAWS, fit, gof
from wagon.fitting.laws import Sample

# (family, frozen truth, parameters as fitting names them)
TRUTHS = [
    ("exponential", stats.expon(scale=30), {"scale": 30}),
    ("lognormal", stats.lognorm(s=1.1, scale=math.exp(3)), {"mu": 3, "sigma": 1.1}),
    ("weibull", stats.weibull_min(c=0.6, scale=20), {"shape": 0.6, "scale": 20}),
    ("pareto", stats.pareto(b=1.5, scale=1000), {"shape": 1.5, "scale": 1000}),
    ("inverse_gaussian", stats.invgauss(mu=5 / 3, scale=3), {"mu": 5, "lambda": 3}),
    ("gamma", stats.gamma(a=2.5, scale=4), {"shape": 2.5, "scale": 4}),
    ("loglogistic", stats.fisk(c=3, scale=10), {"shape": 3, "scale": 10}),
    ("normal", stats.norm(loc=-2, scale=5), {"mu": -2, "sigma": 5}),
]


@pytest.mark.parametrize("family, truth, params", TRUTHS, ids=[t[0] for t in TRUTHS])
def test_parameters_recovered_and_family_chosen(family, truth, params):
    n, seeds = 4000, range(6)
    chosen = 0
    for seed in seeds:
        x = truth.rvs(size=n, random_state=np.random.default_rng(seed))
        report = fit(x, name=family)
        got = next(c for c in report.candidates if c.name == family)
        assert got.ok, got.error
        for k, v in params.items():
            # MLEs are √n-consistent: 8/√n relative covers every parameter here at n=4000
            assert got.params[k] == pytest.approx(v, rel=8 / math.sqrt(n)), (k, got.params)
        chosen += report.best.name == family
    assert chosen >= 5, f"{family} chosen in {chosen}/6 seeds"


def test_exponential_sample_comes_out_exponential_not_weibull():
    picks = [fit(stats.expon(scale=7).rvs(size=3000, random_state=np.random.default_rng(s)))
             .best.name for s in range(10)]
    assert picks.count("exponential") >= 9, picks


@pytest.mark.parametrize("factor", [1e-3, 1.0, 1e6])
def test_fits_do_not_depend_on_the_scale_of_the_values(factor):
    x = stats.weibull_min(c=0.7, scale=1).rvs(size=2000, random_state=np.random.default_rng(3))
    ref = fit(x, candidates=["weibull", "gamma", "loglogistic", "lognormal"])
    scaled = fit(x * factor, candidates=["weibull", "gamma", "loglogistic", "lognormal"])
    for a, b in zip(ref.candidates, scaled.candidates):
        assert b.params.get("shape", b.params.get("sigma")) == pytest.approx(
            a.params.get("shape", a.params.get("sigma")), rel=1e-7)
        assert b.a2 == pytest.approx(a.a2, rel=1e-6)


@pytest.mark.parametrize("name, dist", [("weibull", stats.weibull_min), ("gamma", stats.gamma),
                                        ("loglogistic", stats.fisk),
                                        ("inverse_gaussian", stats.invgauss)])
def test_likelihood_at_least_scipys_numerical_fit(name, dist):
    x = stats.lognorm(s=0.8, scale=50).rvs(size=3000, random_state=np.random.default_rng(9))
    ours = next(c for c in fit(x, candidates=[name]).candidates)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = dist.fit(x, floc=0)
    assert ours.loglik >= np.sum(dist.logpdf(x, *theirs)) - 1e-6


@pytest.mark.parametrize("x", [0.5, 9.3, 200.0, 46_835.0, 1e9])
def test_loglogistic_survival_exact_in_the_far_tail(x):
    """S(x) = 1 / (1 + (x/s)^c) to 1e-15, against 40-digit decimal arithmetic (SciPy's fisk is
    5e-12 off at 46,835 s: enough noise to stall the grid MLE on the NASA gaps)."""
    c, s = 1.3, 9.3
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        exact = 1 / (1 + ((Decimal(x) / Decimal(s)).ln() * Decimal(c)).exp())
    frozen = LAWS["loglogistic"].freeze({"shape": c, "scale": s})
    assert float(frozen.sf(x)) == pytest.approx(float(exact), rel=1e-15, abs=0)
    assert float(frozen.logsf(x)) == pytest.approx(float(exact.ln()), rel=1e-15, abs=0)
    assert float(frozen.cdf(x) + frozen.sf(x)) == pytest.approx(1.0, abs=1e-15)


def _frozen_at(name: str, first: float, second: float):
    """Law ``name`` frozen at parameters from two numbers: as they are for a real parameter
    (a location), their exponential for a positive one."""
    law = LAWS[name]
    return law.freeze({p: v if domain == "real" else math.exp(v)
                       for p, domain, v in zip(law.params, law.domain, (first, second))})


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from([n for n, law in LAWS.items() if law.median is not None]),
       first=st.floats(-12, 12), second=st.floats(-12, 12))
def test_closed_form_medians_are_scipys_to_the_bit(name, first, second):
    """The laws' closed-form medians (asked at every step of the cell likelihoods) are SciPy's
    own ppf(0.5) of the same frozen law, bit for bit, over shapes and scales from 6e-6 to 2e5
    (a location from -12 to 12)."""
    frozen = _frozen_at(name, first, second)
    with np.errstate(over="ignore"):
        assert frozen.median() == float(frozen.dist.median(*frozen.args, **frozen.kwds))


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from([n for n, law in LAWS.items() if law.kind == "continuous"]),
       first=st.floats(-12, 12), second=st.floats(-12, 12),
       x=st.lists(st.one_of(st.floats(-1e6, 1e6), st.floats(allow_nan=True, allow_infinity=True),
                            st.integers(-5, 50)), min_size=1, max_size=40),
       dtype=st.sampled_from([np.float64, np.float32]), inside=st.booleans(),
       shape=st.sampled_from(["1-D", "2-D", "scalar"]))
def test_distribution_functions_are_scipys_to_the_bit(name, first, second, x, dtype, inside,
                                                       shape):
    """The laws' cdf and sf (which skip SciPy's per-call checks for points inside the support)
    are those of SciPy's own frozen law, bit for bit, at any points: all inside the support
    (``inside``), or any, NaN and infinite included; float32, 2-D or scalar."""
    frozen = _frozen_at(name, first, second)
    scipys = frozen.dist(*frozen.args, **frozen.kwds)
    points = np.array(x, np.float64)
    if inside:
        lower = float(frozen.support()[0])
        lower = 0.0 if math.isinf(lower) else lower
        points = np.nan_to_num(np.abs(points), posinf=1e6) + lower + max(1e-3, 1e-9 * lower)
    with np.errstate(all="ignore"):
        points = points.astype(dtype)
        points = {"1-D": points, "2-D": np.stack([points, points[::-1]]),
                  "scalar": points[0]}[shape]
        for method in ("cdf", "sf"):
            ours, theirs = getattr(frozen, method)(points), getattr(scipys, method)(points)
            np.testing.assert_array_equal(ours, theirs, strict=True)


def test_fitdistrplus_reference_normal_fit():
    # fitdistrplus::fitdist(x1, "norm"): mean 10.411111, sd 4.747033, loglik -53.57625
    x1 = [6.4, 13.3, 4.1, 1.3, 14.1, 10.6, 9.9, 9.6, 15.3, 22.1, 13.4, 13.2, 8.4, 6.3, 8.9, 5.2,
          10.9, 14.4]
    c = fit(x1, candidates=["normal"]).candidates[0]
    assert c.params["mu"] == pytest.approx(10.411111, abs=1e-6)
    assert c.params["sigma"] == pytest.approx(4.747033, abs=1e-6)
    assert c.loglik == pytest.approx(-53.57625, abs=1e-5)


def test_fitdistrplus_reference_poisson_fit():
    # fitdistrplus example: x2 <- c(rep(4,1), rep(2,3), rep(1,7), rep(0,12)); lambda = 17/23
    x2 = [4] + [2] * 3 + [1] * 7 + [0] * 12
    c = fit(x2, candidates=["poisson"], discrete=True).candidates[0]
    assert c.params == {"mu": pytest.approx(17 / 23), "loc": 0}
    assert c.loglik == pytest.approx(stats.poisson(17 / 23).logpmf(x2).sum(), rel=1e-12)


def test_discrete_laws_recover_parameters():
    rng = np.random.default_rng(4)
    k = stats.nbinom(2.0, 0.3).rvs(size=20000, random_state=rng) + 1     # support from 1
    c = next(c for c in fit(k, discrete=True).candidates if c.name == "negative_binomial")
    assert c.params["n"] == pytest.approx(2.0, rel=0.08)
    assert c.params["p"] == pytest.approx(0.3, rel=0.05) and c.params["loc"] == 1
    z = stats.zipf(1.8).rvs(size=20000, random_state=rng)
    rep = fit(z[z <= 100], discrete=True, candidates=["zipf", "geometric"])
    assert rep.candidates[0].params["a"] == pytest.approx(1.8, rel=0.05)
    g = stats.geom(0.25).rvs(size=20000, random_state=rng)
    rep = fit(g, discrete=True)
    assert rep.best.name == "geometric"
    assert rep.best.params["p"] == pytest.approx(0.25, rel=0.03)


def test_continuous_statistics_against_direct_computation():
    x = np.sort(stats.gamma(a=2).rvs(size=500, random_state=np.random.default_rng(5)))
    frozen = stats.gamma(a=2.1, scale=0.95)
    w2, a2 = gof.cvm_ad(x, frozen)
    assert w2 == pytest.approx(stats.cramervonmises(x, frozen.cdf).statistic, rel=1e-10)
    n = len(x)
    direct = -n - sum((2 * i - 1) * (math.log(frozen.cdf(x[i - 1])) + math.log(1 - frozen.cdf(
        x[n - i]))) for i in range(1, n + 1)) / n
    assert a2 == pytest.approx(direct, rel=1e-9)


def test_lambda2_against_direct_computation():
    x = stats.expon(scale=2).rvs(size=1000, random_state=np.random.default_rng(6))
    rep = fit(x, candidates=["exponential"])
    c = rep.candidates[0]
    s = Sample(x)
    edges = gof.bin_edges(s)
    cuts = [-np.inf, *edges, np.inf]
    x2 = k = 0.0
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        y = np.sum((x >= lo) & (x < hi))
        e = len(x) * (stats.expon(scale=c.params["scale"]).cdf(hi)
                      - stats.expon(scale=c.params["scale"]).cdf(lo))
        x2 += (y - e) ** 2 / e
        k += (y - e) / e
    df = len(cuts) - 2 - 1
    assert c.lambda2 == pytest.approx((x2 - k - df) / (len(x) - 1), rel=1e-9)
    assert c.df == df


def test_discrete_statistics_against_direct_computation():
    k = stats.poisson(3).rvs(size=400, random_state=np.random.default_rng(7))
    law = stats.poisson(3.1)
    cells = np.arange(0, k.max() + 1)
    obs = np.bincount(k).astype(float)
    loglik = float(obs[obs > 0] @ law.logpmf(cells[obs > 0]))
    w2, a2 = gof.cell_cvm_ad(obs, law.pmf(cells), law.cdf(cells))
    n, w_direct, a_direct, cum_o, cum_e = len(k), 0.0, 0.0, 0, 0.0
    for j in range(0, int(k.max()) + 1):
        cum_o += np.sum(k == j)
        cum_e += n * law.pmf(j)
        h = law.cdf(j)
        z = cum_o - cum_e
        w_direct += z * z * law.pmf(j) / n
        a_direct += z * z * law.pmf(j) / (h * (1 - h)) / n
    assert w2 == pytest.approx(w_direct, rel=1e-9)
    assert a2 == pytest.approx(a_direct, rel=1e-9)
    assert loglik == pytest.approx(law.logpmf(k).sum(), rel=1e-12)


def test_stephens_normal_p_value_agrees_with_statsmodels():
    """Stephens' tables are for A² computed with the n − 1 standard deviation, as statsmodels'
    normal_ad (and R's nortest) compute it."""
    from statsmodels.stats.diagnostic import normal_ad
    for seed in range(5):
        x = stats.norm(10, 2).rvs(size=300, random_state=np.random.default_rng(seed))
        c = fit(x, candidates=["normal"]).candidates[0]
        _, p = normal_ad(x)
        assert c.p_a2 == pytest.approx(p, rel=1e-9)


@pytest.mark.parametrize("stat, x, p", [("a2", 2.492, 0.05), ("a2", 3.857, 0.01),
                                        ("w2", 0.461, 0.05), ("w2", 0.743, 0.01)])
def test_asymptotic_p_values_fully_specified(stat, x, p):
    """No estimated parameter: the published upper percentage points (Stephens 1974)."""
    t, dy = gof.logit_grid()
    weights = np.full(len(t), dy) if stat == "a2" else t * (1 - t) * dy
    lam = gof.edf_eigenvalues(t, np.zeros((len(t), 0)), np.zeros((0, 0)), weights)
    assert gof.weighted_chi2_sf(x, lam) == pytest.approx(p, abs=0.001)


def test_asymptotic_p_values_with_estimated_parameters():
    """The covariance-kernel eigenvalues with estimated parameters against published values:
    Stephens' asymptotic points for the exponential (estimated scale) and his p-value formula
    for the normal (mean and variance estimated; the formula fits tables to a few per cent)."""
    from wagon.fitting.likelihood import law_null_kernel
    t, psi, info, w_w2, w_a2 = law_null_kernel(LAWS["exponential"], {"scale": 1.0})
    lam = gof.edf_eigenvalues(t, psi, info, w_a2)
    for x, p in ((1.078, 0.10), (1.341, 0.05), (1.957, 0.01)):
        assert gof.weighted_chi2_sf(x, lam) == pytest.approx(p, abs=0.005)
    t, psi, info, w_w2, w_a2 = law_null_kernel(LAWS["normal"], {"mu": 0.0, "sigma": 1.0})
    lam_a, lam_w = (gof.edf_eigenvalues(t, psi, info, w) for w in (w_a2, w_w2))
    for a2 in (0.4, 0.7, 1.0, 1.5):
        _, p = gof.stephens_normal_p(0.0, a2, 10 ** 9)
        assert gof.weighted_chi2_sf(a2, lam_a) == pytest.approx(p, rel=0.08), a2
    for w2 in (0.06, 0.1, 0.15):
        p, _ = gof.stephens_normal_p(w2, 0.0, 10 ** 9)
        assert gof.weighted_chi2_sf(w2, lam_w) == pytest.approx(p, rel=0.05), w2


@pytest.mark.parametrize("frozen", [stats.invgauss(0.001, scale=500), stats.weibull_min(0.7),
                                    stats.norm(-3, 2), stats.pareto(1.5, scale=2)],
                         ids=["invgauss small mu", "weibull", "normal", "pareto"])
def test_grid_quantiles_are_scipys(frozen):
    """The kernel's quantiles, found all at once by halving brackets, are SciPy's ppf below the
    median and isf above it (SciPy's own root search for the inverse Gaussian of mu 0.001,
    one point at a time: every 16th point of the grid)."""
    from wagon.fitting.likelihood import grid_quantiles
    t, _ = gof.logit_grid()
    x = grid_quantiles(frozen, t)
    at = np.arange(0, len(t), 16)
    want = np.where(t[at] > 0.5, frozen.isf(1 - t[at]), frozen.ppf(t[at]))
    assert x[at] == pytest.approx(want, rel=1e-8)
    assert np.all(np.diff(x) > 0)


def test_weighted_chi2_against_simulation():
    lam = np.array([0.5, 0.2, 0.05, 0.01])
    q = (np.random.default_rng(1).standard_normal((400_000, 4)) ** 2) @ lam
    for x in (0.1, 0.5, 1.0, 2.0, 4.0):
        assert gof.weighted_chi2_sf(x, lam) == pytest.approx(np.mean(q > x), abs=0.003)
    assert gof.weighted_chi2_sf(40.0, lam) == 0.0


def test_weighted_chi2_exact_to_1e_9():
    """Eigenvalues in pairs: λⱼ(Z² + Z'²) is exponential with mean 2λⱼ, and the sum of
    independent exponentials of distinct means has a closed-form tail (hypoexponential):
    P(Q > x) = Σⱼ e^(−x/aⱼ) Πᵢ≠ⱼ aⱼ/(aⱼ − aᵢ). Absolute accuracy 1e-9, tails included; the
    same with 40 eigenvalues (20 pairs of ratio 0.6: the 10 smallest enter as one scaled χ²)."""
    a = 2 * np.array([1.0, 0.5, 0.25, 0.1])
    lam = np.repeat(a / 2, 2)
    for x in (0.05, 0.3, 1.0, 3.0, 8.0, 20.0, 40.0):
        exact = sum(np.exp(-x / aj) * np.prod([aj / (aj - ai) for ai in a if ai != aj])
                    for aj in a)
        assert gof.weighted_chi2_sf(x, lam) == pytest.approx(exact, abs=1e-9), x
    a = 2 * 0.6 ** np.arange(20.0)
    lam = np.repeat(a / 2, 2)
    for x in (0.5, 2.0, 6.0, 15.0):
        exact = sum(np.exp(-x / aj) * np.prod([aj / (aj - ai) for ai in a if ai != aj])
                    for aj in a)
        assert gof.weighted_chi2_sf(x, lam) == pytest.approx(exact, abs=1e-9), x


def test_bootstrap_is_seeded_and_accepts_the_true_law():
    x = stats.weibull_min(c=1.5, scale=3).rvs(size=300, random_state=np.random.default_rng(8))
    a = fit(x, candidates=["weibull"], bootstrap=99, seed=1).candidates[0]
    b = fit(x, candidates=["weibull"], bootstrap=99, seed=1).candidates[0]
    assert (a.p_a2, a.p_w2) == (b.p_a2, b.p_w2)
    assert a.p_method == "bootstrap(99)" and a.p_a2 > 0.01
    wrong = fit(x, candidates=["exponential"], bootstrap=99, seed=1).candidates[0]
    assert wrong.p_a2 <= 0.02


def test_unfit_candidates_say_why():
    rep = fit([-1.0, 2.0, 3.5, 4.0])
    errors = {c.name: c.error for c in rep.candidates}
    assert errors["lognormal"] == "needs values > 0" and errors["normal"] is None
    assert rep.best.name == "normal"
    flat = fit([5.0, 5.0, 5.0])
    assert flat.best is None and all(c.error for c in flat.candidates)
    with pytest.raises(ValueError, match="at least 2"):
        fit([1.0])


def test_report_table_and_summary():
    x = stats.lognorm(s=1.1, scale=math.exp(3)).rvs(size=2000,
                                                    random_state=np.random.default_rng(0))
    rep = fit(x, name="think")
    assert {r["law"] for r in rep.table} == {n for n, law in LAWS.items()
                                             if law.kind == "continuous"} | {"spliced"}
    row = next(r for r in rep.table if r["law"] == "lognormal")
    assert set(row) >= {"lambda2", "w2", "a2", "loglik", "aic", "p_a2", "params"}
    text = rep.summary()
    assert text.splitlines()[0].startswith("think: n=2,000")
    assert any(line.startswith(" *lognormal") for line in text.splitlines())
    frozen = rep.best.frozen
    assert frozen.mean() == pytest.approx(math.exp(3 + 1.1 ** 2 / 2), rel=0.05)
    assert 0 < frozen.cdf(20) < 1 and frozen.ppf(0.5) == pytest.approx(math.exp(3), rel=0.05)


FAMILY_SPACE = {
    "exponential": (lambda a, b: stats.expon(scale=a), lambda a, b: {"scale": a}),
    "lognormal": (lambda a, b: stats.lognorm(s=b, scale=a), lambda a, b: {"mu": math.log(a),
                                                                           "sigma": b}),
    "weibull": (lambda a, b: stats.weibull_min(c=b, scale=a),
                lambda a, b: {"shape": b, "scale": a}),
    "gamma": (lambda a, b: stats.gamma(b, scale=a), lambda a, b: {"shape": b, "scale": a}),
    "loglogistic": (lambda a, b: stats.fisk(c=2 * b + 1, scale=a),
                    lambda a, b: {"shape": 2 * b + 1, "scale": a}),
    "inverse_gaussian": (lambda a, b: stats.invgauss(mu=1 / b, scale=a * b),
                         lambda a, b: {"mu": a, "lambda": a * b}),
}


def _standard_errors(law, params: dict, x: np.ndarray) -> dict:
    """Standard errors from the observed information: the inverse of minus the log-likelihood's
    Hessian at the estimate (central differences, steps relative to each parameter)."""
    names = list(params)
    theta = np.array([params[k] for k in names], float)
    step = 1e-4 * np.maximum(np.abs(theta), 1e-8)

    def ll(t):
        return float(law.freeze(dict(zip(names, t))).logpdf(x).sum())
    n = len(theta)
    hess = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * step[i], np.eye(n)[j] * step[j]
            hess[i, j] = (ll(theta + e_i + e_j) - ll(theta + e_i - e_j) - ll(theta - e_i + e_j)
                          + ll(theta - e_i - e_j)) / (4 * step[i] * step[j])
    return dict(zip(names, np.sqrt(np.diag(np.linalg.inv(-hess)))))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(FAMILY_SPACE)), st.floats(1e-3, 1e6), st.floats(0.3, 3.0),
       st.integers(0, 2**31))
def test_estimators_recover_random_parameters(family, scale, shape, seed):
    """Each estimate within 5 standard errors of the truth (the error of a small shape's scale
    is large: its relative standard error is about 1.05/(shape·√n) for a Weibull)."""
    make, expected = FAMILY_SPACE[family]
    x = make(scale, shape).rvs(size=3000, random_state=np.random.default_rng(seed))
    got = fit(x, candidates=[family]).candidates[0]
    assert got.ok, got.error
    se = _standard_errors(got.law, got.params, x)
    for k, v in expected(scale, shape).items():
        assert abs(got.params[k] - v) <= 5 * se[k], (k, got.params, v, se)


def test_numerical_mle_stops_at_the_likelihoods_noise():
    """A concave function of (log a, log b) with a maximum at (1, 2) and 2e-10 of deterministic
    jitter (what quadrature leaves in a grid likelihood): Newton gets within 1e-4 of the
    maximum in a few tens of evaluations instead of chasing the jitter (BFGS spent 314 on the
    gamma's whole-second gaps)."""
    from wagon.fitting.mle import maximize
    calls = []

    def f(v):
        calls.append(v)
        x, y = math.log(v[0]) - 1, math.log(v[1]) - 2
        return -(x * x + 2 * y * y + 0.5 * x * y) + 2e-10 * math.sin(1e9 * (v[0] + v[1]))
    a, b = maximize(f, [0.3, 40.0], ("positive", "positive"))
    assert math.log(a) == pytest.approx(1, abs=1e-4) and math.log(b) == pytest.approx(2, abs=1e-4)
    assert len(calls) <= 60


def test_a_fit_runs_blas_on_one_thread_whoever_calls_it(monkeypatch):
    """The library limits BLAS itself (``fitting.threads``): at a fit's eigenvalue problems,
    seen by threadpoolctl from inside, every BLAS library runs one thread although the caller
    allowed two; the caller's setting is back once the fit returns."""
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    seen = []
    eigvalsh = np.linalg.eigvalsh

    def spy(a):
        seen.append(blas_threads())
        return eigvalsh(a)
    monkeypatch.setattr(np.linalg, "eigvalsh", spy)
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        fit(np.random.default_rng(1).gamma(2.0, 3.0, 300), candidates=["gamma"])
        after = blas_threads()
    assert max(before) == 2 and after == before
    assert seen and all(threads == [1] * len(before) for threads in seen)


def test_integers_below_zero_are_not_counts():
    """[-1, 2, 3, 4] was taken for counts: the positive laws were 'fitted' (the -1 at a
    likelihood of 1e-300, AIC 1428) and a Weibull chosen. Values below 0 are no counts: the
    positive laws are refused and the normal is the sample's mean and (divisor n) sd."""
    x = np.array([-1.0, 2.0, 3.0, 4.0])
    r = fit(x)
    assert r.best.name == "normal"
    assert r.best.params == pytest.approx({"mu": x.mean(), "sigma": x.std()})
    refused = {c.name: c.error for c in r.candidates if c.error}
    assert refused["weibull"] == refused["lognormal"] == "needs values > 0"
    with pytest.raises(ValueError, match="counts must be ≥ 0"):
        fit(x, discrete=True)
