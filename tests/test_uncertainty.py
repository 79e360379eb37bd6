"""Standard errors and intervals of the fitted parameters: against closed forms of the observed
information, of the profile likelihood and of the sample minimum's law; against statsmodels'
numerical Hessian of likelihoods written here (exact, counts, whole seconds within a window);
the percentile bootstrap against the bootstrap law in closed form; and coverage on samples
simulated without wagon (tests/recorded.py), the true parameters the observer. The heavy
version of the last is bench/coverage_bench.py (docs/methods.md)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, special, stats
from statsmodels.base.model import GenericLikelihoodModel

from wagon.fitting import LAWS, Observation, fit
from wagon.fitting.laws import Sample
from wagon.fitting.likelihood import make_model
from wagon.fitting.uncertainty import profile_interval

from .recorded import timestamp_gaps
from .test_observation import _lognormal_lev_cells

N = 1000
Z = stats.norm.isf(0.025)
CUT = stats.chi2.ppf(0.95, 1)
THINK = Observation.grid(1.0, lower=2, upper=600)
GAPS = Observation.grid(1.0, lower=0)
CLICKS = Observation.counts(1)


def _one(x, law: str, observation: Observation | None = None, **kw):
    kw.setdefault("intervals", [law])                 # chosen or not (a normal may be refused)
    c = fit(x, candidates=[law], observation=observation, **kw).candidates[0]
    assert c.ok, c.error
    return c


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, 22])


# closed forms of the observed information at the MLE --------------------------------------

def test_exponential_scale_and_its_log_scale_interval():
    """SE(θ̂) = θ̂/√n; the Wald interval on log θ: θ̂·exp(±z/√n), asymmetric, positive."""
    x = stats.expon(scale=30).rvs(N, random_state=_rng(1))
    c = _one(x, "exponential")
    theta = x.mean()
    assert c.bse["scale"] == pytest.approx(theta / math.sqrt(N), rel=1e-6)
    for alpha in (0.05, 0.1, 0.01):
        z = stats.norm.isf(alpha / 2)
        assert c.conf_int(alpha)["scale"] == pytest.approx(
            (theta * math.exp(-z / math.sqrt(N)), theta * math.exp(z / math.sqrt(N))), rel=1e-6)
    assert c.ci_methods == {"scale": "wald"}


@pytest.mark.parametrize("law, values", [
    ("normal", lambda x: x), ("lognormal", np.log)])
def test_normal_and_lognormal(law, values):
    """SE(μ̂) = σ̂/√n, SE(σ̂) = σ̂/√(2n), no covariance; μ's interval symmetric."""
    x = stats.lognorm(1.1, scale=math.exp(3)).rvs(N, random_state=_rng(2))
    c = _one(x, law)
    v = values(x)
    sigma = v.std()
    assert c.bse["mu"] == pytest.approx(sigma / math.sqrt(N), rel=1e-6)
    assert c.bse["sigma"] == pytest.approx(sigma / math.sqrt(2 * N), rel=1e-6)
    assert abs(c.cov["mu"]["sigma"]) < 1e-6 * c.bse["mu"] * c.bse["sigma"]
    lo, hi = c.conf_int()["mu"]
    assert (lo, hi) == pytest.approx((v.mean() - Z * c.bse["mu"], v.mean() + Z * c.bse["mu"]),
                                     rel=1e-9)


def test_poisson_and_geometric_counts():
    """Poisson: SE(μ̂) = √(μ̂/n); geometric: SE(p̂) = p̂·√((1 − p̂)/n); the fixed loc has none."""
    k = stats.poisson(2.0, loc=1).rvs(N, random_state=_rng(3))
    c = _one(k, "poisson", CLICKS)
    mu = k.mean() - 1
    assert c.bse == {"mu": pytest.approx(math.sqrt(mu / N), rel=1e-6)}
    assert c.ci_methods == {"mu": "wald", "loc": "fixed"} and "loc" not in c.conf_int()
    g = stats.geom(0.3).rvs(N, random_state=_rng(4))
    p = 1 / g.mean()
    assert _one(g, "geometric", CLICKS).bse["p"] == pytest.approx(p * math.sqrt((1 - p) / N),
                                                                  rel=1e-6)


def test_pareto_shape_and_its_scale_from_the_minimum():
    """The shape: SE = α̂/√n. The scale is the sample minimum, X₍₁₎/xₘ ~ Pareto(nα): its
    interval [x₍₁₎·0.025^(1/nα̂), x₍₁₎·0.975^(1/nα̂)], one-sided below the estimate."""
    x = stats.pareto(1.5, scale=1000).rvs(N, random_state=_rng(5))
    c = _one(x, "pareto")
    alpha, xm = c.params["shape"], x.min()
    assert c.bse["shape"] == pytest.approx(alpha / math.sqrt(N), rel=1e-6)
    assert c.ci_methods["scale"] == "minimum"
    assert c.conf_int()["scale"] == pytest.approx(
        (xm * 0.025 ** (1 / (N * alpha)), xm * 0.975 ** (1 / (N * alpha))), rel=1e-12)


# independent numerical Hessians (statsmodels) ----------------------------------------------

def _statsmodels_cov(loglike, params: list[float], n: int) -> np.ndarray:
    """The inverse of minus statsmodels' numerical Hessian of ``loglike`` (its own steps, on
    the parameters' own scale)."""
    model = GenericLikelihoodModel(np.zeros(n), loglike=loglike)
    return np.linalg.inv(-model.hessian(np.array(params, float)))


def _assert_cov(c, names: list[str], cov: np.ndarray, rel: float) -> None:
    se = np.sqrt(np.diag(cov))
    assert [c.bse[k] for k in names] == pytest.approx(se, rel=rel)
    corr = cov[0, 1] / (se[0] * se[1])
    assert c.cov[names[0]][names[1]] / (c.bse[names[0]] * c.bse[names[1]]) == pytest.approx(
        corr, abs=rel)


@pytest.mark.parametrize("law, dist, make", [
    ("gamma", stats.gamma(2.5, scale=4), lambda k, s: stats.gamma(k, scale=s)),
    ("weibull", stats.weibull_min(0.6, scale=20), lambda k, s: stats.weibull_min(k, scale=s)),
    ("loglogistic", stats.fisk(3, scale=10), lambda k, s: stats.fisk(k, scale=s)),
    ("inverse_gaussian", stats.invgauss(5 / 3, scale=3),
     lambda m, lam: stats.invgauss(m / lam, scale=lam))])
def test_exact_values_against_statsmodels(law, dist, make):
    x = dist.rvs(N, random_state=_rng(6))
    c = _one(x, law)
    names = list(LAWS[law].params)
    cov = _statsmodels_cov(lambda t: make(*t).logpdf(x).sum(), [c.params[k] for k in names], N)
    _assert_cov(c, names, cov, 1e-4)


def test_counts_against_statsmodels():
    """The negative binomial from 1 and the zero-truncated one, on their pmf."""
    k = stats.nbinom(0.5, 0.15, loc=1).rvs(N, random_state=_rng(7))
    c = _one(k, "negative_binomial", CLICKS)
    cov = _statsmodels_cov(lambda t: stats.nbinom.logpmf(k, *t, loc=1).sum(),
                           [c.params["n"], c.params["p"]], N)
    _assert_cov(c, ["n", "p"], cov, 1e-4)
    k = stats.nbinom(1.5, 0.3).rvs(2 * N, random_state=_rng(7))
    k = k[k > 0][:N]
    c = _one(k, "zt_negative_binomial", CLICKS)
    cov = _statsmodels_cov(lambda t: (stats.nbinom.logpmf(k, *t)
                                      - np.log1p(-stats.nbinom.pmf(0, *t))).sum(),
                           [c.params["n"], c.params["p"]], N)
    _assert_cov(c, ["n", "p"], cov, 1e-4)


def test_whole_seconds_in_a_window_against_statsmodels():
    """Think times on the second within [2, 600]: the cell likelihood written independently
    (closed-form limited expected values, test_observation), its Hessian by statsmodels; ours
    comes from the quadrature of the cells, whose noise (1e-11) bounds the agreement."""
    x = timestamp_gaps(stats.lognorm(1.1, scale=math.exp(3)), N, _rng(8), (2, 600))
    c = _one(x, "lognormal", THINK)
    values, counts = np.unique(x, return_counts=True)

    def loglike(t):
        z = _lognormal_lev_cells(*t, np.arange(2, 601)).sum()
        return counts @ np.log(_lognormal_lev_cells(*t, values)) - N * np.log(z)
    cov = _statsmodels_cov(loglike, [c.params["mu"], c.params["sigma"]], N)
    _assert_cov(c, ["mu", "sigma"], cov, 2e-3)


def test_zipf_exponent_stays_above_one():
    """Zipf's exponent lives above 1: its interval is on log(a − 1)."""
    k = stats.zipf(1.15).rvs(300, random_state=_rng(9))
    c = _one(k, "zipf", CLICKS)
    lo, hi = c.conf_int(0.001)["a"]
    assert 1 < lo < c.params["a"] < hi
    cov = _statsmodels_cov(lambda t: stats.zipf.logpmf(k, t[0]).sum(), [c.params["a"]], 300)
    assert c.bse["a"] == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-4)


# profile likelihood ------------------------------------------------------------------------

def _objective(law: str, x, observation=None):
    s = Sample(x, observation=observation)
    c = _one(x, law, observation)
    model = make_model(LAWS[law], s)
    obj = model.objective(c.params)
    return obj, [c.params[k] for k in obj.names]


def test_profile_interval_of_one_parameter_closed_form():
    """Exponential: 2n(log(θ/θ̂) + θ̂/θ − 1) = χ²₁(0.95) at both ends."""
    x = stats.expon(scale=30).rvs(200, random_state=_rng(10))
    obj, values = _objective("exponential", x)
    theta = x.mean()

    def drop(t):
        return 2 * 200 * (math.log(t / theta) + theta / t - 1) - CUT
    exact = (optimize.brentq(drop, theta / 3, theta), optimize.brentq(drop, theta, theta * 3))
    assert profile_interval(obj, values, 0, 200, 0.05) == pytest.approx(exact, rel=1e-6)


def test_profile_interval_over_a_second_parameter_closed_form():
    """Normal: the profile of μ (σ maximised) falls by n·log(1 + (μ − μ̂)²/σ̂²), that of σ by
    n(log(σ²/σ̂²) + σ̂²/σ² − 1)."""
    x = stats.norm(5, 2).rvs(300, random_state=_rng(11))
    obj, values = _objective("normal", x)
    mu, sigma, n = x.mean(), x.std(), 300
    half = sigma * math.sqrt(math.exp(CUT / n) - 1)
    assert profile_interval(obj, values, 0, n, 0.1) == pytest.approx((mu - half, mu + half),
                                                                      rel=1e-6)

    def drop(s):
        return n * (2 * math.log(s / sigma) + sigma ** 2 / s ** 2 - 1) - CUT
    exact = (optimize.brentq(drop, sigma / 2, sigma), optimize.brentq(drop, sigma, 2 * sigma))
    assert profile_interval(obj, values, 1, n, 0.1) == pytest.approx(exact, rel=1e-6)


def test_boundary_estimate_falls_back_to_the_profile():
    """A logarithmic-series sample is the zero-truncated negative binomial's limit n → 0: the
    likelihood flattens toward it, so a Wald interval of n (its information tiny but positive)
    says nothing; n gets a profile interval from 0, and says why; p keeps its Wald interval."""
    k = stats.logser(0.8).rvs(2000, random_state=_rng(0))
    c = _one(k, "zt_negative_binomial", CLICKS)
    assert c.params["n"] < 1e-4
    assert c.ci_methods == {"n": "profile", "p": "wald"}
    assert c.bse["n"] is None and c.bse["p"] > 0
    assert "far from quadratic" in c.notes["n"]
    lo, hi = c.conf_int()["n"]
    assert lo == 0.0 and c.params["n"] < hi < 0.1
    lo, hi = c.conf_int()["p"]
    assert lo < c.params["p"] < hi
    assert list(c.cov) == ["p"]
    with pytest.raises(ValueError, match="at 95% only"):
        c.conf_int(0.1)


def test_a_limit_law_gets_a_profile_too():
    """A normal fitted to whole-second gaps of a heavy-tailed law runs along a ridge (a normal
    truncated far from its mean tends to the exponential): no stationary point, a profile."""
    x = timestamp_gaps(stats.weibull_min(0.7, scale=10), 2000, _rng(0), None)
    c = _one(x, "normal", GAPS)
    assert c.ci_methods == {"mu": "profile", "sigma": "profile"}
    assert "not a stationary point" in c.notes["mu"]
    for k, (lo, hi) in c.conf_int().items():
        assert lo <= c.params[k] <= hi, k


# the percentile bootstrap ------------------------------------------------------------------

def test_percentile_bootstrap_against_its_law():
    """Exponential: a replicate's MLE is θ̂·Gamma(n)/n, so the percentile interval's ends are
    θ̂·G⁻¹(0.025)/n and θ̂·G⁻¹(0.975)/n; 400 replicates put them within 0.5 SE."""
    x = stats.expon(scale=30).rvs(N, random_state=_rng(14))
    c = _one(x, "exponential", bootstrap=400, seed=3)
    theta = c.params["scale"]
    lo, hi = c.conf_int(bootstrap=True)["scale"]
    exact = stats.gamma(N, scale=theta / N).ppf([0.025, 0.975])
    assert abs(lo - exact[0]) < 0.5 * c.bse["scale"] and abs(hi - exact[1]) < 0.5 * c.bse["scale"]
    assert c.interval_fields()["bootstrap_replicates"] == 400
    assert c.p_method == "bootstrap(400)"


def test_bootstrap_keeps_stephens_p_values_and_leaves_out_the_minimum():
    """Normal values: Stephens' p-values stay, the bootstrap gives the intervals only; the
    Pareto's scale, every replicate's minimum above the estimate, has no percentile interval."""
    x = stats.norm(5, 2).rvs(300, random_state=_rng(15))
    c = _one(x, "normal", bootstrap=50)
    assert c.p_method == "stephens" and set(c.conf_int(bootstrap=True)) == {"mu", "sigma"}
    p = _one(stats.pareto(2, scale=3).rvs(300, random_state=_rng(15)), "pareto", bootstrap=50)
    assert set(p.conf_int(bootstrap=True)) == {"shape"}
    assert "n/a" in p.interval_table()[2]


# coverage ----------------------------------------------------------------------------------

COVERAGE = [
    ("gamma", {"shape": 2.5, "scale": 4.0}, None,
     lambda rng: stats.gamma(2.5, scale=4).rvs(N, random_state=rng)),
    ("exponential", {"scale": 4.0}, GAPS,
     lambda rng: timestamp_gaps(stats.expon(scale=4), N, rng, None)),
    ("lognormal", {"mu": 3.0, "sigma": 1.1}, THINK,
     lambda rng: timestamp_gaps(stats.lognorm(1.1, scale=math.exp(3)), N, rng, (2, 600))),
    ("negative_binomial", {"n": 0.5, "p": 0.15}, CLICKS,
     lambda rng: stats.nbinom(0.5, 0.15, loc=1).rvs(N, random_state=rng)),
]


@pytest.mark.parametrize("law, truth, observation, draw", COVERAGE,
                         ids=[c[0] for c in COVERAGE])
def test_coverage_of_95_percent_intervals(law, truth, observation, draw):
    """100 samples of 1,000: each true parameter inside its interval at least as often as
    Bin(100, 0.95) allows at 1e-3 (87 times), and the mean standard error within a third of
    the estimates' standard deviation (a spread that is there, not an interval too wide)."""
    replicates = 100
    fits = [_one(draw(np.random.default_rng([s, 23])), law, observation)
            for s in range(replicates)]
    least = stats.binom(replicates, 0.95).ppf(1e-3)
    for k, v in truth.items():
        covered = sum(lo <= v <= hi for lo, hi in (c.conf_int()[k] for c in fits))
        assert covered >= least, (k, covered)
        ratio = np.mean([c.bse[k] for c in fits]) / np.std([c.params[k] for c in fits], ddof=1)
        assert 0.75 < ratio < 1.33, (k, ratio)


# the API -----------------------------------------------------------------------------------

def test_whose_intervals_are_computed():
    x = stats.gamma(2.5, scale=4).rvs(500, random_state=_rng(16))
    default = fit(x)
    assert [c.name for c in default.candidates if c.uncertainty] == [default.best.name]
    other = next(c for c in default.candidates if c is not default.best)
    with pytest.raises(ValueError, match="intervals were not computed"):
        other.bse
    named = fit(x, intervals=["weibull"])
    assert {c.name for c in named.candidates if c.uncertainty} == {"weibull", named.best.name}
    every = fit(x, intervals="all")
    assert all(c.uncertainty for c in every.candidates if c.ok and not c.spliced)
    assert next(c for c in every.candidates if c.spliced).uncertainty is None   # the data
    for bad, message in (("some", "intervals must be"), (["cauchy"], "unknown law")):
        with pytest.raises(ValueError, match=message):
            fit(x, intervals=bad)


def test_summary_and_dict_show_the_chosen_laws_intervals():
    x = stats.weibull_min(0.6, scale=20).rvs(N, random_state=_rng(17))
    rep = fit(x, name="think", candidates=["weibull", "exponential"])
    best = rep.best
    text = rep.summary().splitlines()
    at = next(i for i, t in enumerate(text) if t.startswith("  weibull, the chosen law: "))
    rows = {line.split()[0]: line.split() for line in text[at + 2:]}
    for k in ("shape", "scale"):
        lo, hi = best.conf_int()[k]
        assert rows[k][1:6] == [f"{best.params[k]:.4g}", f"{best.bse[k]:.4g}", f"{lo:.4g}",
                                f"{hi:.4g}", "wald"]
    d = rep.to_dict()
    assert d["se"] == best.bse and d["ci"] == {k: list(v) for k, v in best.conf_int().items()}
    assert d["ci_method"] == {"shape": "wald", "scale": "wald"}
    row = next(r for r in d["table"] if r["law"] == "weibull")
    assert row["se"] == d["se"] and "se" not in next(r for r in d["table"]
                                                     if r["law"] == "exponential")
