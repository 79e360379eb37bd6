"""A law for every variable: the spliced law when no candidate fits, no degenerate law chosen,
the mean of the law as recorded everywhere it is shown.

Observers: SciPy's generalized Pareto and mixtures of SciPy laws (the truth the samples are
drawn from), the data's own counts and mean, the Dvoretzky–Kiefer–Wolfowitz bound, and
``wagon synth`` loading the models the real traces give."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from wagon import load_model
from wagon.cli import main
from wagon.fitting import Observation, fit
from wagon.fitting.spliced import Spliced, _isf, _log_pdf, _log_sf
from wagon.report.plots import fit_figure
from wagon.synth.generate import _Law

WHOLE_SECONDS = Observation.grid(1.0, lower=2.0, upper=600.0)


def _dkw(n: int, p: float = 1e-4) -> float:
    """ε with P(sup |F_n − F| > ε) ≤ p for n draws (Massart's constant)."""
    return float(np.sqrt(np.log(2 / p) / (2 * n)))


def _recorded(g: np.ndarray, rng: np.random.Generator, obs: Observation) -> np.ndarray:
    """True gaps as a log records them: two timestamps floored to the second, the first at a
    uniform phase, the difference kept inside the window."""
    t0 = rng.uniform(0, 1000, len(g))
    d = np.floor(t0 + g) - np.floor(t0)
    return d[(d >= obs.lower) & (d <= obs.upper)]


@pytest.mark.parametrize("xi", [0.4, 0.0, -0.3])
def test_the_tail_is_scipys_generalized_pareto(xi):
    e = np.array([0.0, 0.3, 2.0, 9.0, 30.0])
    g = stats.genpareto(c=xi, scale=4.0)
    inside = g.sf(e) > 0
    assert np.allclose(np.exp(_log_sf(e, xi, 4.0)), g.sf(e), rtol=1e-12, atol=0)
    assert np.allclose(_log_pdf(e[inside], xi, 4.0), g.logpdf(e[inside]), rtol=1e-12)
    p = np.array([0.9, 0.5, 1e-3, 1e-9])
    assert np.allclose(_isf(p, xi, 4.0), g.isf(p), rtol=1e-10)


def test_a_body_and_a_tail_are_the_mixture_they_stand_for():
    """A body uniform on [0, 10] with weight 0.8, 10 + GPD(0.3, 5) with 0.2: SciPy's mixture
    of the two, in every function."""
    law = Spliced(np.array([0.0, 10.0]), np.array([0.0, 1.0]), np.inf, 10.0, 0.2, 0.3, 5.0)
    body, tail = stats.uniform(0, 10), stats.genpareto(c=0.3, loc=10, scale=5)
    x = np.array([0.5, 4.0, 9.9, 10.5, 17.0, 60.0])
    cdf = 0.8 * body.cdf(x) + 0.2 * tail.cdf(x)
    assert np.allclose(law.cdf(x), cdf, rtol=1e-12) and np.allclose(law.sf(x), 1 - cdf)
    assert np.allclose(law.pdf(x), 0.8 * body.pdf(x) + 0.2 * tail.pdf(x), rtol=1e-12)
    assert np.allclose(law.cdf(law.ppf(cdf)), cdf, rtol=1e-12)
    assert law.mean() == pytest.approx(0.8 * 5 + 0.2 * tail.mean(), rel=1e-12)
    ended = Spliced(np.array([0.0, 10.0]), np.array([0.0, 1.0]), 40.0, 10.0, 0.2, 0.3, 5.0)
    inside = tail.expect(lambda v: v, ub=40.0, conditional=True)
    assert ended.mean() == pytest.approx(0.8 * 5 + 0.2 * inside, rel=1e-9)
    assert float(ended.sf(40.0)) == 0.0 and ended.support()[1] == 40.0


def test_a_mixture_no_law_fits_gets_the_spliced_law_that_draws_it():
    """Think times from two populations, recorded to the second within [2, 600]: A² rejects
    every candidate, the spliced law is chosen, its mean as recorded is the data's and its
    draws (what synthesis gets) are the generating law's, recorded, within the DKW bound."""
    rng = np.random.default_rng(7)
    mix = [stats.lognorm(0.5, scale=np.exp(2)), stats.lognorm(0.8, scale=np.exp(4.5))]
    g = np.concatenate([mix[0].rvs(3000, random_state=rng), mix[1].rvs(2000, random_state=rng)])
    d = _recorded(g, rng, WHOLE_SECONDS)
    rep = fit(d, observation=WHOLE_SECONDS, name="think")
    assert rep.best.spliced and not any(c.fits() for c in rep.candidates if not c.spliced)
    assert rep.law_mean == pytest.approx(d.mean(), abs=3 * d.std() / np.sqrt(len(d)))
    cells = np.arange(1, 601)                 # P(D ≤ j) = ∫_j^{j+1} F (the phase's kernel)
    nodes, weights = np.polynomial.legendre.leggauss(20)
    u = cells[:, None] + (nodes + 1) / 2
    below = (0.6 * mix[0].cdf(u) + 0.4 * mix[1].cdf(u)) @ weights / 2
    truth = (below[1:] - below[0]) / (below[-1] - below[0])            # cells 2..600
    drawn = np.floor(rng.uniform(0, 1, 50_000)
                     + rep.recorded().latent.rvs(50_000, rng))       # recorded again
    seen = np.searchsorted(np.sort(drawn), cells[1:], side="right") / len(drawn)
    ks = np.max(np.abs(seen - truth))
    assert ks < _dkw(len(d)) + _dkw(len(drawn)) + 2 / 255, ks


def test_a_textbook_sample_keeps_its_law():
    x = stats.gamma(2.5, scale=4).rvs(5000, random_state=np.random.default_rng(3))
    rep = fit(x, name="sizes")
    assert rep.best.name == "gamma" and rep.best.fits()
    assert next(c for c in rep.candidates if c.spliced).ok       # reported, not chosen


def test_counts_below_the_threshold_come_back_exactly():
    """Clicks from a mixture: the spliced law recorded as counts gives each click count of its
    body the data's share."""
    rng = np.random.default_rng(4)
    k = np.concatenate([rng.geometric(0.6, 3000), rng.geometric(0.05, 1000)])
    rep = fit(k, observation=Observation.counts(1), name="clicks")
    law = next(c for c in rep.candidates if c.spliced)
    recorded = rep.recorded(law)
    top = int(law.params["threshold"])
    cells = np.arange(1, top + 1)
    shares = recorded.cdf(cells) - recorded.cdf(cells - 1)
    assert np.allclose(shares, np.bincount(k, minlength=top + 1)[1:top + 1] / len(k),
                       atol=1e-12)


def test_no_degenerate_law_is_chosen_and_the_table_says_why():
    """Sizes of a site, every value positive: a normal with σ > μ puts mass below 0. It
    stays in the table, refused, and is never the law."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.lognormal(7, 0.3, 2000), rng.lognormal(10, 0.2, 300)])
    rep = fit(x, name="page_size", candidates=["normal", "exponential"])
    normal = rep.candidates[0]
    assert normal.ok and float(stats.norm(normal.params["mu"], normal.params["sigma"]).cdf(0)) \
        > 0.05
    assert normal.refused.startswith("puts") and rep.best is not normal
    assert "refused: puts" in rep.summary()
    assert next(r for r in rep.table if r["law"] == "normal")["refused"] == normal.refused


def test_near_ties_are_the_laws_that_fit_within_two_bic():
    x = stats.lognorm(0.25, scale=20).rvs(400, random_state=np.random.default_rng(1))
    rep = fit(x, name="x")
    rows = [r for r in rep.table if r["law"] != rep.best.name and r["p_a2"] is not None
            and r["p_a2"] >= 0.01 and not r["refused"]]
    expected = {r["law"] for r in rows if r["bic"] - rep.best.bic <= 2}
    assert expected and set(rep.near_ties) == expected
    assert "near ties (ΔBIC ≤ 2)" in rep.summary()


def test_the_plot_draws_the_law_as_recorded():
    """A lognormal seen only inside [10, 100]: the plotted law follows the data's CDF, which
    the untruncated parent (16 % of its mass below 10) does not."""
    obs = Observation.exact(10.0, 100.0)
    g = stats.lognorm(1.1, scale=np.exp(3)).rvs(60_000, random_state=np.random.default_rng(2))
    x = g[(g >= 10) & (g <= 100)][:5000]
    rep = fit(x, observation=obs, name="think", candidates=["lognormal"])
    curve = fit_figure(rep, x).axes[0].lines[1]
    at, plotted = curve.get_xdata(), curve.get_ydata()
    data = np.searchsorted(np.sort(x), at, side="right") / len(x)
    assert np.max(np.abs(plotted - data)) < _dkw(len(x))
    assert float(rep.best.frozen.cdf(10.0)) > 0.15


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["exact", "grid", "counts"]))
def test_the_spliced_law_is_a_distribution(seed, kind):
    """Whatever the sample: a CDF rising from 0 to 1, whose quantiles it inverts, with the
    sample's range inside its support."""
    rng = np.random.default_rng(seed)
    x = rng.pareto(rng.uniform(0.8, 3), int(rng.integers(50, 2000))) * 10
    obs = {"exact": Observation.exact(), "grid": Observation.grid(1.0, lower=0.0),
           "counts": Observation.counts(0)}[kind]
    if kind != "exact":
        x = np.round(x)
    if np.ptp(x) == 0:
        return
    rep = fit(x, observation=obs, candidates=["spliced"])
    law = rep.candidates[0]
    assert law.ok, law.error
    f = law.frozen
    grid = np.linspace(x.min() - 1, x.max() * 2 + 1, 400)
    cdf = f.cdf(grid)
    assert np.all(np.diff(cdf) >= -1e-15) and cdf[0] >= 0 and cdf[-1] <= 1
    q = np.linspace(0.001, 0.999, 50)
    assert np.allclose(f.cdf(f.ppf(q)), q, atol=1e-9)
    low, high = f.support()
    assert low <= x.min() and high >= x.max() - 0.5


def _check_model(path, printed_means: dict[str, str]):
    """Every chosen law loads, is not degenerate, draws through ``wagon synth``'s own class,
    and its mean as recorded is the JSON's, the console's, and the data's (to 5 standard
    errors)."""
    doc = json.loads(path.read_text())
    model = load_model(path)
    for name, var in model.variables.items():
        entry = doc["variables"][name]
        assert float(var.parent.cdf(-1.0 if var.kind == "discrete" else 0.0)) <= 1e-3, name
        mean = float(var.observed.mean())
        assert mean == pytest.approx(entry["law_mean"], rel=1e-9), name
        assert printed_means[name] == f"{mean:.4g}", name
        sd = entry["std"] / np.sqrt(entry["n"])
        assert abs(mean - entry["mean"]) < 5 * sd, (name, mean, entry["mean"])
        if name in ("clicks", "think"):
            draws = _Law(model, name).draw(20_000, np.random.default_rng(0))
            assert np.all(np.isfinite(draws)) and draws.min() > 0, name
    r = CliRunner().invoke(main, ["synth", str(path), "--sessions", "50", "-o",
                                  str(path.with_suffix(".jsonl"))])
    assert r.exit_code == 0, r.output


def _means(printed: str) -> dict[str, str]:
    lines = printed.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("variable "))
    return {w[0]: w[3] for w in (line.split() for line in lines[at + 1:at + 7])}


def test_the_real_traces_get_laws_that_load_and_draw(nasa_model, epa_model, sample_model):
    path, printed = nasa_model
    _check_model(path, _means(printed))
    assert json.loads(path.read_text())["variables"]["think"]["best"] == "spliced"
    for path, summary, *_ in (epa_model, sample_model):
        _check_model(path, {k: f"{v['law_mean']:.4g}" for k, v in summary["variables"].items()})
