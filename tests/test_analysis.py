"""Analysis: Hurst estimators on exact fGn, the keep-alive advisor, comparisons, the commands."""
from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.analysis.compare import _zipf_slope, compare, ks_equivalence, stack_distances
from wagon.analysis.digest import digest
from wagon.analysis.selfsim import (MIN_POINTS, TooFewPoints, aggregated_variance, fgn,
                                    fgn_autocovariance, hurst_all, hurst_report, wavelet,
                                    wavelet_first_octave)
from wagon.analysis.workload import Workload, load_workload
from wagon.synth import Generator, SynthOptions, synthesize


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


def test_local_whittle_interval_covers(estimates):
    for H in (0.5, 0.75, 0.9):
        covered = [e.ci[0] - 0.02 <= H <= e.ci[1] + 0.02 for e in estimates[(H, "local_whittle")]]
        assert sum(covered) >= 3


def test_wavelet_interval_has_nominal_coverage():
    """The wavelet CI covers H in at least 85 of 100 exact fGn series (H = 0.7, n = 2¹⁴); with
    the first octave at 2, as before, it covered about 70 (bench/hurst_bench.py)."""
    covered = [wavelet(x).ci[0] <= 0.7 <= wavelet(x).ci[1]
               for x in (fgn(2 ** 14, 0.7, 500 + s) for s in range(100))]
    assert sum(covered) >= 85, sum(covered)
    assert wavelet_first_octave(2 ** 14) == 3 and wavelet_first_octave(2 ** 16) == 4


def test_no_estimate_from_too_few_points():
    """At 300 values the variance-time plot has fewer than MIN_POINTS block sizes: no H."""
    x = np.random.default_rng(2).standard_normal(300)
    estimates, notes = hurst_report(x)
    names = {e.estimator for e in estimates}
    assert "aggregated_variance" not in names and "wavelet" in names
    assert any(n.startswith("aggregated_variance not estimated") for n in notes), notes
    assert all(e.points >= MIN_POINTS or e.estimator == "wavelet" for e in estimates)
    with pytest.raises(TooFewPoints):
        aggregated_variance(x)


def test_bandwidth_warning_and_detrending():
    """Poisson counts per second whose mean changes hour by hour (a daily profile): local
    Whittle moves with its bandwidth and every estimator reads long memory; removing the
    hourly means brings them back to H = 0.5 and the warning goes."""
    rng = np.random.default_rng(3)
    hourly = 3 + 2 * np.sin(np.linspace(0, np.pi, 12)) + rng.random(12)
    x = rng.poisson(np.repeat(hourly, 3600)).astype(float)
    raw, notes = hurst_report(x)
    assert any("depends on its bandwidth" in n for n in notes)
    assert max(e.H for e in raw) > 0.8
    flat, notes = hurst_report(x, detrend_block=3600)
    assert not any("depends on its bandwidth" in n for n in notes), notes
    for e in flat:
        assert abs(e.H - 0.5) < 0.06, e


def test_estimates_of_one_or_more_are_flagged():
    """A replay that ramps up then saturates: requests per second climbing 0 → 400 over 500 s
    (Poisson around the ramp). Estimators read H ≥ 1, which no stationary series has: a note
    says so; exact fGn at H = 0.9 gets no such note."""
    rng = np.random.default_rng(5)
    ramp = rng.poisson(np.minimum(np.arange(600) * 0.8, 400)).astype(float)
    est, notes = hurst_report(ramp)
    assert max(e.H for e in est) >= 1
    assert any(n.startswith("H ≥ 1 (") and "--detrend" in n for n in notes), notes
    est, notes = hurst_report(fgn(2 ** 14, 0.9, np.random.default_rng(6)))
    assert max(e.H for e in est) < 1 and not any(n.startswith("H ≥ 1") for n in notes)


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
    # nothing differs; at 930 sessions every distribution is certified the same (margin 0.1)
    assert all(r["verdict"] in ("same", "close", "undecided", "n/a") for r in rows), rows
    assert [r["verdict"] for r in rows if r["test"] == "ks_2samp"] == ["same"] * 3
    other = compare(w, load_workload(str(nasa)))
    verdicts = {r["row"]: r["verdict"] for r in other}
    assert verdicts["session rate (/s)"] == "differs"
    assert verdicts["session inter-arrival (s)"] == verdicts["clicks per session"] == "differs"


def test_every_compared_number_has_an_interval_or_a_reason(sample, tmp_path):
    """No zero-width interval: shares at 0 or 1 get Agresti–Coull's error; a row one side
    cannot give says why."""
    w = load_workload(str(sample))
    scenario = tmp_path / "s.jsonl"
    with open(scenario, "w") as f:
        synthesize(Generator(None, SynthOptions(sessions=300, seed=1, rate=1.0)), f)
    for rows in (compare(w, w), compare(w, load_workload(str(scenario)))):
        for r in rows:
            if r["verdict"] == "n/a":
                assert r["why"], r
            else:
                assert r["interval"][1] > r["interval"][0] and r["margin"] > 0, r
    why = {r["row"]: r["why"] for r in rows}
    assert why["success rate"] == "B: a scenario has no status codes"


def test_zipf_slope_error_is_the_spread_of_the_slope_over_samples():
    """The bootstrap standard error of the rank–frequency slope against the spread of slopes
    over independent samples of the same Zipf popularity (a simulation)."""
    rng = np.random.default_rng(3)
    p = 1.0 / np.arange(1, 401) ** 0.9
    p /= p.sum()

    def workload(urls: np.ndarray) -> Workload:
        n = len(urls)
        return Workload("z", "log", np.arange(n, dtype=float), urls, [f"/{i}" for i in range(400)],
                        np.ones(n, bool), None, None, np.zeros(0), np.zeros(0), np.zeros(0), 1.0)
    slopes = [_zipf_slope(digest(workload(rng.choice(400, 5000, p=p))).page_hits)[0]
              for _ in range(150)]
    se = _zipf_slope(digest(workload(rng.choice(400, 5000, p=p))).page_hits)[1]
    assert se == pytest.approx(np.std(slopes, ddof=1), rel=0.3)


@pytest.mark.parametrize("n", [20_000, 200_000])
def test_a_small_shift_is_the_same_whatever_n(n):
    """A 2 % scale shift of a lognormal: KS D about 0.008 — the two-sample p-value says
    "different" at 200,000 (it goes to 0 with n), the equivalence verdict says "same" at both."""
    rng = np.random.default_rng(n)
    a = np.exp(rng.normal(3, 1.1, n))
    b = 1.02 * np.exp(rng.normal(3, 1.1, n))
    r = ks_equivalence(a, b, margin=0.05, alpha=0.05)
    assert r["effect"] < 0.015 and r["verdict"] == "same", r
    if n == 200_000:
        assert r["p"] < 0.01
    big = ks_equivalence(a, 1.5 * b, margin=0.05, alpha=0.05)
    assert big["verdict"] == "differs" and big["interval"][0] > 0.05
    few = ks_equivalence(a[:60], b[:60], margin=0.05, alpha=0.05)
    assert few["verdict"] == "undecided"


def test_distributions_are_compared_at_the_common_resolution():
    """Poisson starts recorded to the second (a log) against exact ones (a scenario): compared
    as they are, the whole-second gaps and the continuous ones differ; once the scenario's
    starts are floored too, they are the same process."""
    rng = np.random.default_rng(5)
    log_starts = np.floor(np.cumsum(rng.exponential(2.0, 30_000)))
    exact = np.cumsum(rng.exponential(2.0, 30_000))
    assert ks_equivalence(np.diff(log_starts), np.diff(exact), 0.05, 0.05)["verdict"] == "differs"
    floored = np.diff(np.floor(exact))
    assert ks_equivalence(np.diff(log_starts), floored, 0.05, 0.05)["verdict"] == "same"


def _strict(text: str) -> dict:
    """JSON that a strict reader accepts: no NaN or Infinity."""
    def refuse(name):
        raise ValueError(f"non-finite number {name} in JSON")
    return json.loads(text, parse_constant=refuse)


def test_cli_hurst_advise_compare(tmp_path, nasa, sample):
    r = CliRunner().invoke(main, ["hurst", str(nasa), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert {e["estimator"] for e in out["estimates"]} == {
        "aggregated_variance", "rescaled_range", "periodogram", "dfa", "local_whittle", "wavelet"}
    assert all(0 < e["H"] < 1.2 for e in out["estimates"])
    assert any("finer than" in s for s in out["notes"])
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
    r = CliRunner().invoke(main, ["compare", str(sample), str(nasa), "--json"])
    loose = CliRunner().invoke(main, ["compare", str(sample), str(nasa), "--json", "--tolerance",
                                      "100", "--margin", "1"])
    count = [sum(row["verdict"] in ("same", "close") for row in _strict(x.stdout)["rows"])
             for x in (r, loose)]
    assert count[1] > count[0]
    assert all(row["verdict"] in ("same", "close", "n/a") for row in _strict(loose.stdout)["rows"])
    rows = _strict(r.stdout)["rows"]
    assert len(rows) >= 15 and all({"effect", "interval", "margin", "p"} <= set(x) for x in rows)
    # two sites apart: the verdict names the rows that differ, and the exit status stays 0
    assert r.exit_code == 0 and _strict(r.stdout)["verdict"]["decision"] == "differs"
    assert _strict(r.stdout)["verdict"]["rows"] == [x["row"] for x in rows
                                                    if x["verdict"] == "differs"]
    r = CliRunner().invoke(main, ["hurst", str(tmp_path / "none.log")])
    assert r.exit_code == 2 and "No such file" in r.stderr


def test_a_logs_workload_has_the_grid_of_its_timestamps(tmp_path, sample):
    """The finest meaningful bin of a log is its timestamps' grid, as the parser read it: 1 s
    for the bundled combined log, 1 ms for nginx's $msec, 1 µs for Apache's usec_frac."""
    assert load_workload(str(sample)).resolution == 1.0
    for fmt, stamp, step in (('%h "%r" %>s %{msec}t', "1709632800123", 0.001),
                             ('%h "%r" %>s [%{%d/%b/%Y:%H:%M:%S}t.%{usec_frac}t]',
                              "[05/Mar/2024:10:00:00.000001]", 1e-6)):
        log = tmp_path / f"{step}.log"
        log.write_text(f'192.0.2.1 "GET / HTTP/1.1" 200 {stamp}\n')
        assert load_workload(str(log), fmt).resolution == step


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_hurst_counts_that_are_not_finite_are_one_line(tmp_path, bad):
    """A series with a NaN or an infinity: estimates of nan and NumPy's RuntimeWarnings on
    stderr, exit 0; now one line naming the value, exit 2."""
    counts = tmp_path / "c.txt"
    values = [str(v) for v in np.random.default_rng(1).poisson(20, 300)]
    values[123] = bad
    counts.write_text("\n".join(values) + "\n")
    r = CliRunner().invoke(main, ["hurst", "--counts", str(counts)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert f"value 124 is {bad}: counts are finite numbers" in r.output, r.output


def test_hurst_counts_not_a_number_names_the_files_line(tmp_path):
    """NumPy counts rows from 0: 'x' on the second line was reported 'at row 1'."""
    counts = tmp_path / "c.txt"
    counts.write_text("1\nx\n3\n")
    r = CliRunner().invoke(main, ["hurst", "--counts", str(counts)])
    assert r.exit_code == 2 and "'x'" in r.output and "on line 2" in r.output, r.output


@pytest.mark.parametrize("text, line", [("1\n\nx\n", 3), ("# counts\n1\n2 # two\n\n  \nx\n", 6)])
def test_hurst_counts_not_a_number_names_its_line_past_blank_and_comment_lines(tmp_path, text,
                                                                               line):
    """NumPy's row counts the values' rows: blank and comment lines are not rows ('1', '',
    'x' was reported on line 2); gzip'd the same."""
    for name, write in (("c.txt", lambda p: p.write_text(text)),
                        ("c.txt.gz", lambda p: p.write_bytes(gzip.compress(text.encode())))):
        counts = tmp_path / name
        write(counts)
        r = CliRunner().invoke(main, ["hurst", "--counts", str(counts)])
        assert r.exit_code == 2 and f"'x' to float64 on line {line}." in r.output, r.output
