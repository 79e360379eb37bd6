"""Clustered arrivals: the Hawkes process's likelihood against its definition (a double sum and
quadrature), its draws against the published moments of the process, the fit's intervals
against known parameters, the arrival check choosing it for clustered starts only, and
``wagon synth`` drawing it by default."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, stats

from wagon.fitting.arrivals import arrival_report, arrival_verdict
from wagon.fitting.hawkes import Hawkes, HawkesStream, fit_hawkes
from wagon.formats.model import Model
from wagon.synth import Generator, SynthError, SynthOptions

TRUE = Hawkes(mu=0.5, eta=0.6, beta=2.0)


def _intensity(p: Hawkes, t: np.ndarray, s: float) -> float:
    """λ(s) from its definition: μ + Σ_{tⱼ<s} α e^{−β(s − tⱼ)}."""
    before = t[t < s]
    return p.mu + p.eta * p.beta * float(np.sum(np.exp(-p.beta * (s - before))))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0, 50, allow_nan=False), min_size=10, max_size=40, unique=True),
       st.floats(0.05, 5), st.floats(0.05, 0.95), st.floats(0.01, 3))
def test_the_likelihood_is_the_definitions(times, beta, eta, mu):
    """ℓ = Σ log λ(tᵢ) − ∫₀ᵀ λ, with λ summed term by term and its integral by quadrature
    between arrivals; the compensator between arrivals is that integral piece by piece."""
    t = np.sort(np.asarray(times))
    t -= t[0]
    span = float(t[-1]) + 1.0
    p = Hawkes(mu, eta, beta)
    edges = np.concatenate((t, [span]))
    pieces = np.array([integrate.quad(lambda s: _intensity(p, t, s), a, b, epsabs=1e-12)[0]
                       for a, b in zip(edges[:-1], edges[1:])])
    direct = sum(np.log(p.mu + p.eta * p.beta * np.sum(np.exp(-p.beta * (x - t[:i]))))
                 for i, x in enumerate(t)) - p.mu * t[0] - pieces.sum()
    assert p.loglik(t, span) == pytest.approx(direct, rel=1e-8, abs=1e-8)
    assert np.allclose(p.rescaled(t), pieces[:-1], rtol=1e-8, atol=1e-10)


def _stream(p: Hawkes, n: int, seed: int, chunk: int = 1000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    s = HawkesStream(p, rng)
    return np.concatenate([s.next(chunk, np.random.default_rng([seed, k]))
                           for k in range(n // chunk)])


def test_drawn_in_chunks_it_has_the_process_moments():
    """Rate μ/(1 − η), and counts over windows much longer than a cluster with variance/mean
    1/(1 − η)² (Hawkes 1971); the compensator of the draws, with the true parameters, is
    Exp(1) with no correlation left."""
    t = _stream(TRUE, 60_000, 1)
    assert np.all(np.diff(t) >= 0)
    rate = len(t) / t[-1]
    assert rate == pytest.approx(TRUE.rate, rel=0.05)
    counts = np.bincount((t // 200.0).astype(np.int64))[:-1]
    assert counts.var() / counts.mean() == pytest.approx(1 / (1 - TRUE.eta) ** 2, rel=0.25)
    gaps = TRUE.rescaled(t)
    assert stats.kstest(gaps, "expon").pvalue > 0.01
    assert abs(np.corrcoef(gaps[:-1], gaps[1:])[0, 1]) < 0.02


def test_the_fit_recovers_known_parameters_within_its_intervals():
    covered = []
    for seed in range(3):
        fit = fit_hawkes(_stream(TRUE, 4000, 10 + seed))
        ci = fit.conf_int()
        covered += [ci[k][0] <= getattr(TRUE, k) <= ci[k][1] for k in ("mu", "eta", "beta")]
        assert fit.better_than_poisson and fit.ljung_box_p > 0.001
        assert [r["parameter"] for r in fit.table()] == ["mu", "eta", "beta"]
        assert "Hawkes: mu" in fit.summary()
    assert sum(covered) >= 8, covered


@pytest.mark.parametrize("times", [
    pytest.param(lambda: _stream(TRUE, 3000, 7), id="hawkes"),
    pytest.param(lambda: _stream(Hawkes(0.2, 0.3, 0.05), 3000, 8), id="slow-decay"),
    pytest.param(lambda: np.cumsum(np.random.default_rng(5).exponential(1.0, 2000)),
                 id="poisson")])
def test_the_fit_is_the_most_likely_process(times):
    """The profile search finds a likelihood at least as high as SciPy's L-BFGS-B over
    (μ, η, β) from a grid of 12 starts (the likelihood itself checked above)."""
    t = np.sort(times())
    t -= t[0]
    span = float(t[-1])
    fit = fit_hawkes(t)
    rate = len(t) / span

    def negative(x: np.ndarray) -> float:
        return -Hawkes(*x).loglik(t, span)
    starts = [[(1 - eta) * rate, eta, d * rate] for eta in (0.1, 0.5, 0.9)
              for d in (0.01, 0.3, 10.0, 100.0)]
    best = min(optimize.minimize(negative, x0, method="L-BFGS-B",
                                 bounds=[(1e-9, None), (0.0, 0.999999), (1e-9, None)]).fun
               for x0 in starts)
    assert fit.loglik >= -best - 1e-6 * abs(best)


def test_poisson_processes_are_not_called_clustered():
    """The likelihood-ratio rule keeps the Poisson process on Poisson draws (AIC's called
    12–14 % of them clustered once the fit found the maximum: bench/hawkes_null_bench.py)."""
    calls = [fit_hawkes(np.cumsum(np.random.default_rng(s).exponential(1.0, 2000)))
             .better_than_poisson for s in range(20)]
    assert sum(calls) <= 1, calls


def test_the_arrival_check_fits_a_process_to_clustered_starts_only():
    clustered = arrival_report(_stream(TRUE, 3000, 5) * 30.0)
    assert clustered["poisson"] is False and clustered["process"]["chosen"]
    assert 0.45 < clustered["process"]["eta"] < 0.75
    assert "clustered: Hawkes" in arrival_verdict(clustered)
    poisson = arrival_report(np.cumsum(np.random.default_rng(4).exponential(30.0, 3000)))
    assert poisson["poisson"] is True and "process" not in poisson


def _model(process: dict | None) -> Model:
    arrivals = {"sessions": 3000, "rate_per_s": 0.1}
    if process is not None:
        arrivals["process"] = process
    return Model({"format": "wagon-model", "version": 4, "variables": {}, "arrivals": arrivals})


def _starts(model: Model, **options) -> tuple[np.ndarray, str]:
    g = Generator(model, SynthOptions(duration=40_000, seed=2, **options))
    return (np.concatenate([b.starts for b in g.batches()]),
            g.header()["laws"]["arrivals"])


def test_synth_draws_the_model_process_by_default_and_poisson_on_request():
    """The model's process (η = 0.6) makes counts over 600 s windows over-dispersed about as
    1/(1 − η)² = 6.25 says; ``--arrivals poisson`` gives dispersion 1; both at the log's rate."""
    process = {**TRUE.as_dict(), "chosen": True}
    for arrivals, law, low, high in [("model", "hawkes", 3.0, 10.0),
                                     ("poisson", "poisson", 0.7, 1.4)]:
        starts, said = _starts(_model(process), arrivals=arrivals)
        counts = np.bincount((starts // 600).astype(np.int64))[:-1]
        assert said == law and low < counts.var() / counts.mean() < high
        assert len(starts) == pytest.approx(4000, rel=0.25)


def test_hawkes_needs_a_fitted_process_and_model_falls_back_to_poisson():
    _, said = _starts(_model(None))
    assert said == "poisson"
    _, said = _starts(_model({**TRUE.as_dict(), "chosen": False}))
    assert said == "poisson"
    with pytest.raises(SynthError, match="--arrivals hawkes needs a model"):
        Generator(_model(None), SynthOptions(duration=10, arrivals="hawkes"))
    with pytest.raises(SynthError, match="--arrivals is one of"):
        Generator(_model(None), SynthOptions(duration=10, arrivals="bursty"))


def test_a_model_keeps_the_process_and_the_reader_checks_it(tmp_path):
    from wagon.formats.model import ModelError, load_model, save_model
    path = tmp_path / "m.json"
    good = {**TRUE.as_dict(), "chosen": True}
    save_model(_model(good), path)
    assert load_model(path).arrivals["process"]["eta"] == TRUE.eta
    data = json.loads(path.read_text())
    data["arrivals"]["process"]["eta"] = 1.0
    path.write_text(json.dumps(data))
    with pytest.raises(ModelError, match="arrivals.process"):
        load_model(path)
