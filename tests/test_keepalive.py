"""The keep-alive advisor: the paper's Theorem 1 values, closed forms, and both E[W] formulas
against a Monte Carlo simulation of the server (sessions arriving at random, each click holding a
server process for its transfer and for the time its connection is kept)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import integrate, optimize, stats

from wagon.analysis.keepalive import (LawSyntaxError, advise, corrected_work, delta_from_gain,
                                      paper_work, parse_law)
from wagon.cli import main

THINK = stats.lognorm(s=1.1, scale=math.exp(3))          # WAGON's think-time law


@pytest.mark.parametrize("delta, expected", [(0.1, 0.3554), (0.4, 1.0790), (1.0, 2.1745)])
def test_theorem_1_values_from_the_cli(delta, expected):
    """The paper's δ with lognormal(3, 1.1) think times: its Theorem 1 optima."""
    r = CliRunner().invoke(main, ["advise", "keepalive", "--think", "lognormal(mu=3, sigma=1.1)",
                                  "--delta", str(delta), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["optimal_timeout"] == pytest.approx(expected, abs=5e-5)
    assert out["delta"] == pytest.approx(delta)
    assert out["gain"] == pytest.approx(delta * 5 / 4)          # E[N] = 5 by default


def test_gain_and_transfer_times_give_the_same_advice():
    by_gain = CliRunner().invoke(main, ["advise", "keepalive", "--think", "exponential(scale=10)",
                                        "--gain", "1", "--clicks-mean", "5", "--json"])
    by_x = CliRunner().invoke(main, ["advise", "keepalive", "--think", "exponential(scale=10)",
                                     "--x1", "1.5", "--x2", "0.5", "--clicks-mean", "5", "--json"])
    a, b = json.loads(by_gain.stdout), json.loads(by_x.stdout)
    # F(Δ) − δ f(Δ) = 0 for Exp(mean 10), δ = 4/5 · 1: Δ* = 10·ln(1 + δ/10)
    assert a["optimal_timeout"] == pytest.approx(10 * math.log(1.08), rel=1e-6)
    assert b["optimal_timeout"] == pytest.approx(a["optimal_timeout"], rel=1e-9)
    for args, message in ((["--delta", "0.4", "--gain", "1"], "one of"),
                          (["--x1", "1"], "one of"), (["--gain", "-1"], ">= 0"),
                          (["--delta", "0.4", "--clicks-mean", "1"], "E[N] > 1")):
        r = CliRunner().invoke(main, ["advise", "keepalive", "--think", "exponential(scale=10)",
                                      *args])
        assert r.exit_code == 2 and message in r.stderr, (args, r.output)


def test_corrected_optimum_closed_form():
    """Exp(mean μ) think times: (E[N] − 1)·e^(−Δ/μ)·(1 − gain/μ) + 1 = 0, so
    Δ* = μ·ln((E[N] − 1)(gain/μ − 1)) when that is positive, else 0."""
    a = advise(stats.expon(scale=1.0), clicks_mean=6, x1=2.0, x2=0.0)
    assert a.corrected_timeout == pytest.approx(math.log(5 * (2 - 1)), rel=1e-6)
    ws = [w for _, w in a.corrected_curve]
    assert a.corrected_work_at_optimum <= min(ws) + 1e-9
    # human think times (hazard ≤ 0.04/s) never pay a gain of half a second back
    b = advise(THINK, clicks_mean=5, x1=0.5, x2=0.0)
    assert b.corrected_timeout == 0 and b.optimal_timeout == pytest.approx(1.0790, abs=1e-4)
    assert b.corrected_work_at_paper_timeout > b.corrected_work_at_optimum + 5


def test_no_gain_means_no_timeout():
    a = advise(THINK, clicks_mean=1, x1=0.3, x2=0.1)
    assert a.delta == 0 and a.optimal_timeout == 0 and a.corrected_timeout == 0


def _simulate(timeout: float, rule: str, sessions: int, rng: np.random.Generator,
              rate: float = 2.0, p_clicks: float = 0.25, x1: float = 0.6, x2: float = 0.1
              ) -> tuple[np.ndarray, float]:
    """Sessions arriving as a Poisson process; geometric clicks (E[N] = 1/p); exponential
    transfer times of mean x1 on a new connection and x2 on a kept one; lognormal think times.
    A click holds a process for its transfer, then its connection for min(Y, Δ) ("real"), or —
    the paper's accounting — for Y only when the user comes back within Δ ("paper"). After the
    last click the real server waits the whole Δ; the paper's accounting draws a think time as
    for every other click. Returns each session's work and the time-average number of busy
    processes over the middle of the run (λ·E[W] by Little's law)."""
    n = rng.geometric(p_clicks, sessions)
    total = int(n.sum())
    session = np.repeat(np.arange(sessions), n)
    first = np.r_[0, np.cumsum(n)[:-1]]
    last = np.cumsum(n) - 1
    y = THINK.rvs(size=total, random_state=rng)                 # think time after each click
    kept = np.zeros(total, bool)
    kept[1:] = y[:-1] <= timeout                                 # previous gap within Δ
    kept[first] = False
    transfer = rng.exponential(np.where(kept, x2, x1))
    if rule == "real":
        hold = np.minimum(y, timeout)
        hold[last] = timeout
    else:
        hold = np.where(y <= timeout, y, 0.0)
    busy = transfer + hold
    work = np.bincount(session, weights=busy, minlength=sessions)
    # request times: session start, then transfer + think between clicks
    starts = np.cumsum(rng.exponential(1 / rate, sessions))
    step = np.r_[0.0, (transfer + y)[:-1]]
    step[first] = 0.0
    t = starts[session] + np.cumsum(step) - np.repeat(np.cumsum(step)[first], n)
    a, b = starts[sessions // 5], starts[4 * sessions // 5]
    overlap = np.clip(np.minimum(t + busy, b) - np.maximum(t, a), 0, None)
    return work, float(overlap.sum() / (b - a))


@pytest.mark.parametrize("timeout", [1.079, 5.0, 15.0])
def test_both_work_formulas_against_a_simulated_server(timeout):
    rng = np.random.default_rng(int(timeout * 1000))
    clicks_mean, x1, x2, rate = 4.0, 0.6, 0.1, 2.0
    gain = x1 - x2
    for rule, formula in (("real", corrected_work), ("paper", None)):
        work, busy = _simulate(timeout, rule, 200_000, rng, rate, 1 / clicks_mean, x1, x2)
        se = work.std() / math.sqrt(len(work))
        if rule == "real":
            expected = formula(THINK, timeout, clicks_mean, x1, gain)
        else:
            # the paper's double integral ∫₀^Δ∫ₓ^Δ f(y) dy dx = ∫₀^Δ y f(y) dy, per click
            held = integrate.quad(lambda v: v * THINK.pdf(v), 0, timeout)[0]
            expected = clicks_mean * x1 + clicks_mean * held - (clicks_mean - 1) * float(
                THINK.cdf(timeout)) * gain
            # ... which is not the ∫₀^Δ F(y) dy that Theorem 1 differentiates (told apart once
            # F(Δ) is large enough for the holding to matter)
            if THINK.cdf(timeout) > 0.1:
                assert abs(paper_work(THINK, timeout, clicks_mean, x1, gain)
                           - work.mean()) > 4 * se
        assert work.mean() == pytest.approx(expected, abs=4 * se), rule
        # the server's time-average load is λ·E[W] (Little), within the window's noise
        assert busy == pytest.approx(rate * expected, rel=0.03), rule


def test_delta_from_gain():
    assert delta_from_gain(0.5, 5) == pytest.approx(0.4)
    assert delta_from_gain(1.0, 1) == 0


def test_law_parser():
    f = parse_law("lognormal(mu=3, sigma=1.1)")
    assert f.mean() == pytest.approx(math.exp(3 + 1.1 ** 2 / 2))
    for bad, msg in (("cauchy(a=1)", "LAW one of"), ("lognormal(mu=3)", "missing sigma"),
                     ("lognormal(mu=3, sigma=-1)", "out of range"),
                     ("weibull(shape=x)", "k=number")):
        with pytest.raises(LawSyntaxError, match=msg):
            parse_law(bad)


def test_a_count_law_is_no_think_time(tmp_path, sample_model):
    """A discrete law, given or in a model, is refused in one line (it had no pdf: a
    traceback for the zero-truncated ones, "out of range" for the others)."""
    model = json.loads(sample_model[0].read_text())
    think = model["variables"]["think"] = json.loads(json.dumps(model["variables"]["clicks"]))
    think.update(best="zt_poisson", params={"mu": 5.0}, se={"mu": None}, ci={"mu": None},
                 ci_method={})
    (tmp_path / "m.json").write_text(json.dumps(model))
    for args in (["--think", "zt_poisson(mu=3)"], ["--think", "poisson(mu=3)"],
                 ["--model", str(tmp_path / "m.json")]):
        r = CliRunner().invoke(main, ["advise", "keepalive", *args, "--gain", "1"])
        assert r.exit_code == 2 and isinstance(r.exception, SystemExit), r.output
        assert "duration" in r.output and len(r.output.strip().splitlines()) == 1, r.output


@pytest.mark.parametrize("mean", [1e-3, 1e-4, 1e-6, 1e-300])
def test_optima_beyond_the_999_quantile_are_found_without_warnings(mean):
    """Exp(mean μ) think times of a millisecond or less and a gain of 1 s: both optima (the
    closed forms of the tests above) lie past the 0.999 quantile, where the search stopped: it
    said 0 (no keep-alive, E[W] 5 s instead of ~1 s) from μ = 1e-4 for the paper's model and
    1e-3 for the corrected one; at 1e-300 it also printed overflow warnings."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = advise(parse_law(f"exponential(scale={mean})"), clicks_mean=5, x1=1.0, x2=0.0)
    assert a.optimal_timeout == pytest.approx(mean * math.log(1 + 0.8 / mean), rel=1e-9)
    assert a.corrected_timeout == pytest.approx(mean * math.log(4 * (1 / mean - 1)), rel=1e-9)


def test_a_law_whose_mean_overflows_is_out_of_range_without_warnings():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(LawSyntaxError, match="out of range"):
            parse_law("lognormal(mu=3, sigma=50)")


def test_a_slope_negative_for_more_than_forty_decades_past_the_quantile_is_followed():
    """lognormal(μ=−300, σ=20): 0.999 quantile 3.6e−104 s, yet F − δ·f < 0 up to ~1e−30 s (its
    density ∝ 1/y for decades): the widening stopped after 40 decades and said 0 (no
    keep-alive, E[W] 5 s). SciPy's brentq on the law's own cdf and pdf finds the root."""
    think = parse_law("lognormal(mu=-300, sigma=20)")
    a = advise(think, clicks_mean=5, x1=1.0, x2=0.0)
    root = optimize.brentq(lambda d: think.cdf(d) - 0.8 * think.pdf(d), 1e-50, 1e-10,
                           xtol=1e-300, rtol=1e-12)
    assert a.optimal_timeout == pytest.approx(root, rel=1e-9)
    assert a.work_at_optimum < a.work_without_keepalive - 3


@pytest.mark.parametrize("law", ["exponential(scale=1e-318)", "exponential(scale=5e-324)",
                                 "normal(mu=-5, sigma=1)"])
def test_think_times_below_the_floats_the_search_reaches_are_one_line(law):
    """Subnormal think times: 'xtol too small (0 <= 0)' with SciPy's warnings, and a
    ZeroDivisionError traceback at the smallest float; a law of negative durations (a 0.999
    quantile of −1.9 s) was searched on a grid of negative timeouts."""
    r = CliRunner().invoke(main, ["advise", "keepalive", "--think", law, "--gain", "1"])
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), r.output
    assert "needs at least 1e-300 s" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1, r.output


def test_a_law_narrower_than_the_grid_has_its_optimum_found():
    """Think times of 10 s ± 1 ns: keeping the connection just past 10 s saves 4 of the 5
    transfers (E[W] 1 s); its slope is negative within nanoseconds of 10 s, between two points
    of the log grid (3.5 % apart), and the search said 0 (E[W] 5 s). SciPy's brentq on the
    law's own cdf and pdf, right of the peak, finds the root."""
    think = parse_law("normal(mu=10, sigma=1e-9)")
    a = advise(think, clicks_mean=5, x1=1.0, x2=0.0)
    root = optimize.brentq(lambda d: think.cdf(d) - 0.8 * think.pdf(d), 10, 10 + 1e-8,
                           xtol=1e-15, rtol=1e-15)
    assert a.optimal_timeout == pytest.approx(root, abs=4e-12)        # Brent: 2e-12
    assert a.work_at_optimum == pytest.approx(1.0, abs=1e-6)


def test_a_law_overflowing_in_its_tail_is_answered_without_warnings():
    """loglogistic(shape=100): SciPy's cdf overflows at small times (x**-100) but its limit, 0,
    is right; the command prints the advice alone, the optimum F = δ·f found by brentq on
    SciPy's own fisk law."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")                          # a warning would be printed
        r = CliRunner().invoke(main, ["advise", "keepalive", "--think", "loglogistic(shape="
                                      "100, scale=1)", "--gain", "1", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    law = stats.fisk(c=100, scale=1)
    root = optimize.brentq(lambda d: law.cdf(d) - 0.8 * law.pdf(d), 1.0, 1.1)
    assert json.loads(r.stdout)["optimal_timeout"] == pytest.approx(root, rel=1e-9)


def test_optima_below_the_grid_of_a_law_dense_near_zero_are_found():
    """weibull(shape=0.2, scale=10): a density that diverges at 0, and a 0.999 quantile of
    1.6e5 s, whose millionth (0.16 s) was the search's first point; both slopes change sign
    below it (0.13 s, 0.05 s) and both optima were said 0 (no keep-alive, E[W] 5 s). SciPy's
    brentq on its own weibull_min finds the roots."""
    law = stats.weibull_min(c=0.2, scale=10)
    a = advise(parse_law("weibull(shape=0.2, scale=10)"), clicks_mean=5, x1=1.0, x2=0.0)
    paper = optimize.brentq(lambda d: law.cdf(d) - 0.8 * law.pdf(d), 0.01, 0.15, xtol=1e-15)
    corrected = optimize.brentq(lambda d: 4 * (law.sf(d) - law.pdf(d)) + 1, 0.01, 0.15,
                                xtol=1e-15)
    assert a.optimal_timeout == pytest.approx(paper, rel=1e-9)
    assert a.corrected_timeout == pytest.approx(corrected, rel=1e-9)
    assert a.work_at_optimum < a.work_without_keepalive - 0.1


def test_a_law_whose_low_quantile_underflows_to_zero_is_searched_from_the_floats_floor():
    """gamma(shape=0.005, scale=1000): its 1e-12 quantile underflows to 0, so the search
    starts at MIN_QUANTILE's millionth (1e-306), and its 0.999 quantile is 1,059 s: the grid
    spans more decades than a float's ratio holds (an OverflowError, a traceback from the
    CLI). SciPy's brentq on its own gamma finds both roots."""
    law = stats.gamma(a=0.005, scale=1000)
    r = CliRunner().invoke(main, ["advise", "keepalive", "--think", "gamma(shape=0.005, "
                                  "scale=1000)", "--clicks-mean", "5", "--gain", "1", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    got = json.loads(r.stdout)
    paper = optimize.brentq(lambda d: law.cdf(d) - 0.8 * law.pdf(d), 1e-9, 1, xtol=1e-15)
    corrected = optimize.brentq(lambda d: 4 * (law.sf(d) - law.pdf(d)) + 1, 1e-9, 1,
                                xtol=1e-15)
    assert got["optimal_timeout"] == pytest.approx(paper, rel=1e-9)
    assert got["corrected"]["optimal_timeout"] == pytest.approx(corrected, rel=1e-9)
