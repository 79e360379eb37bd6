"""Analysis: Hurst estimators on exact fGn, the keep-alive advisor, comparisons, the commands."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from wagon.cli import main
from wagon.analysis.compare import compare, stack_distances
from wagon.analysis.selfsim import fgn, fgn_autocovariance, hurst_all
from wagon.analysis.workload import load_workload


@pytest.fixture(scope="module")
def estimates():
    """Every estimator on 4 seeds of exact fGn, n = 2^15, for each H."""
    out = {}
    for H in (0.5, 0.6, 0.75, 0.9):
        for seed in range(4):
            for e in hurst_all(fgn(2 ** 15, H, seed)):
                out.setdefault((H, e.estimator), []).append(e)
    return out


@pytest.mark.parametrize("H", [0.5, 0.6, 0.75, 0.9])
@pytest.mark.parametrize("name, tol", [("local_whittle", 0.03), ("wavelet", 0.03),
                                       ("aggregated_variance", 0.08)])
def test_estimators_on_exact_fgn(estimates, H, name, tol):
    got = np.mean([e.H for e in estimates[(H, name)]])
    assert abs(got - H) <= tol, (name, H, got)


@pytest.mark.parametrize("H", [0.5, 0.75, 0.9])
def test_confidence_intervals_cover(estimates, H):
    for name in ("local_whittle", "wavelet"):
        covered = [e.ci[0] - 0.02 <= H <= e.ci[1] + 0.02 for e in estimates[(H, name)]]
        assert sum(covered) >= 3, name


@pytest.mark.parametrize("H", [0.5, 0.6, 0.75, 0.9])
def test_generator_lag_one_correlation(H):
    """ρ(1) = 2^(2H−1) − 1: the exact covariance, and the sample (known mean 0, variance 1)."""
    assert fgn_autocovariance(H, 2)[1] == pytest.approx(2 ** (2 * H - 1) - 1, abs=1e-12)
    # an ensemble of independent realisations: under long memory one long series' moments
    # converge too slowly to test against
    xs = np.array([fgn(256, H, s) for s in range(2000)])
    assert np.mean(xs * xs) == pytest.approx(1.0, abs=0.02)
    assert np.mean(xs[:, :-1] * xs[:, 1:]) == pytest.approx(2 ** (2 * H - 1) - 1, abs=0.02)
    assert np.mean(xs[:, :-5] * xs[:, 5:]) == pytest.approx(fgn_autocovariance(H, 6)[5], abs=0.02)


def test_white_noise_and_short_series():
    x = np.random.default_rng(0).standard_normal(4096)
    for e in hurst_all(x):
        assert abs(e.H - 0.5) < 0.12, e
    with pytest.raises(ValueError, match="too short"):
        hurst_all(np.ones(100))
    with pytest.raises(ValueError, match="constant"):
        hurst_all(np.ones(1000))


def test_stack_distances_against_the_definition():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 30, 2000)
    brute = []
    for i, c in enumerate(codes):
        prev = np.flatnonzero(codes[:i] == c)
        if len(prev):
            brute.append(len(set(codes[prev[-1] + 1:i].tolist())))
    assert stack_distances(codes).tolist() == brute


def test_compare_a_workload_with_itself_and_with_another(sample, nasa):
    w = load_workload(str(sample))
    rows = compare(w, w)
    assert all(r["verdict"] in ("same", "close", "n/a") for r in rows), rows
    other = compare(w, load_workload(str(nasa)))
    verdicts = {r["row"]: r["verdict"] for r in other}
    assert verdicts["session rate (/s)"] == "differs"
    assert verdicts["think time (s)"] == "differs"


def test_cli_hurst_advise_compare(tmp_path, nasa, sample):
    r = CliRunner().invoke(main, ["hurst", str(nasa), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert {e["estimator"] for e in out["estimates"]} == {
        "aggregated_variance", "rescaled_range", "periodogram", "dfa", "local_whittle", "wavelet"}
    assert all(0 < e["H"] < 1.2 for e in out["estimates"])
    assert any("finer than" in s for s in out["skipped"])
    counts = tmp_path / "c.txt"
    np.savetxt(counts, fgn(4096, 0.8, 1) + 10)
    r = CliRunner().invoke(main, ["hurst", "--counts", str(counts), "--json"])
    h = {e["estimator"]: e["H"] for e in json.loads(r.stdout)["estimates"]}
    assert abs(h["wavelet"] - 0.8) < 0.1
    r = CliRunner().invoke(main, ["advise", "keepalive", "--think", "expon(scale=1)" , "--delta",
                                  "1"])
    assert r.exit_code == 2 and "LAW one of" in r.stderr
    r = CliRunner().invoke(main, ["advise", "keepalive", "--think", "exponential(scale=10)",
                                  "--x1", "1", "--x2", "0", "--clicks-mean", "5", "--json"])
    assert json.loads(r.stdout)["optimal_timeout"] == pytest.approx(10 * math.log(1.08), rel=1e-6)
    r = CliRunner().invoke(main, ["compare", str(sample), str(sample), "--json"])
    assert r.exit_code == 0 and len(json.loads(r.stdout)["rows"]) >= 15
    r = CliRunner().invoke(main, ["compare", str(sample), str(nasa), "--json"])
    loose = CliRunner().invoke(main, ["compare", str(sample), str(nasa), "--json", "--tolerance",
                                      "100", "--alpha", "0"])
    count = [sum(row["verdict"] in ("same", "close") for row in json.loads(x.stdout)["rows"])
             for x in (r, loose)]
    assert count[1] > count[0]
    assert all(row["verdict"] in ("same", "close", "n/a") for row in json.loads(loose.stdout)["rows"])
    r = CliRunner().invoke(main, ["hurst", str(tmp_path / "none.log")])
    assert r.exit_code == 2 and "No such file" in r.stderr
