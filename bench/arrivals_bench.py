"""Session arrivals: Ljung–Box speed, the Poisson/renewal verdict on simulated days, NASA hour by
hour, and whether `wagon synth --profile model` gives a day the shape of the log's.

1. Ljung–Box over 10 lags: statsmodels' ``acorr_ljungbox`` (what wagon called before: its
   autocorrelation without the FFT is O(n²)) against ``fitting.arrivals.ljung_box`` (FFT), same
   Q to ~1e-12, for growing n; times and ratio in the same run.
2. Verdicts on ``--days`` simulated days recorded as a log records them (whole seconds, then
   spread inside the second as ``sessionize`` does): a Poisson process whose rate rises 4× over
   the day (should be Poisson), renewal Weibull processes of shape 0.6 and 1.5 (should not). The
   old verdict (Ljung–Box on the raw gaps) is shown beside.
3. NASA (tests/data): the verdict, and each hour's gaps against the exponential law.
4. NASA's model synthesized over the log's span with ``--profile constant`` and ``model``,
   exported to a log, against the log: KS distance of the recorded inter-arrival gaps, lag-1
   autocorrelation of sessions per minute, correlation of sessions per hour.

    python bench/arrivals_bench.py [--days 40] [--sizes 10000,30000,100000]
"""
from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

import numpy as np
from scipy import stats
from statsmodels.stats.diagnostic import acorr_ljungbox

from wagon import parse_bytes, sessionize
from wagon.analysis.compare import ks_equivalence
from wagon.fitting.arrivals import arrival_report, ljung_box
from wagon.formats.scenario import read_scenario
from wagon.modeling import fit_logs
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.export import export_clf

NASA = Path(__file__).resolve().parent.parent / "tests" / "data" / "nasa-aug95-morning.log.gz"


def ljung_box_speed(sizes: list[int]) -> None:
    print("1. Ljung-Box, 10 lags: statsmodels acorr_ljungbox vs FFT")
    for n in sizes:
        x = stats.expon.rvs(size=n, random_state=np.random.default_rng(n))
        t0 = time.perf_counter()
        ref = float(acorr_ljungbox(x, lags=[10])["lb_stat"].iloc[0])
        t1 = time.perf_counter()
        q, _ = ljung_box(x, 10)
        t2 = time.perf_counter()
        print(f"   n = {n:>9,}: statsmodels {t1 - t0:8.3f} s, FFT {t2 - t1:7.4f} s, ratio "
              f"{(t1 - t0) / (t2 - t1):8.0f}x, |dQ|/Q = {abs(q - ref) / ref:.1e}", flush=True)


def _spread(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.sort(np.floor(t) + rng.random(len(t)))


def _ramp(rng: np.random.Generator, span: float = 86_400, low: float = 0.03) -> np.ndarray:
    top = 4 * low
    t = np.sort(rng.uniform(0, span, rng.poisson(top * span)))
    return t[rng.random(len(t)) < low * (1 + 3 * t / span) / top]


def _weibull(rng: np.random.Generator, shape: float, n: int = 8000) -> np.ndarray:
    g = stats.weibull_min(shape).rvs(size=n, random_state=rng)
    return np.cumsum(10 * g / g.mean())


def verdicts(days: int) -> None:
    print(f"\n2. verdicts on {days} simulated days (whole seconds, spread)")
    for label, make in (("Poisson, rate x4 over the day", _ramp),
                        ("renewal Weibull(0.6)", lambda r: _weibull(r, 0.6)),
                        ("renewal Weibull(1.5)", lambda r: _weibull(r, 1.5))):
        poisson = renewal = old_renewal = 0
        for d in range(days):
            rng = np.random.default_rng(d)
            t = _spread(make(rng), rng)
            a = arrival_report(t)
            poisson += a["poisson"]
            renewal += a["renewal"]
            old_renewal += ljung_box(np.diff(t), 10)[1] >= 0.01
        print(f"   {label:32s} called Poisson {poisson:>3d}/{days}, renewal {renewal:>3d}/{days}"
              f"   (old verdict, Ljung-Box on the raw gaps: renewal {old_renewal}/{days})",
              flush=True)


def nasa_hours() -> None:
    fitted = fit_logs([str(NASA)])
    a = fitted.model.arrivals
    print(f"\n3. NASA: {'Poisson' if a['poisson'] else 'not Poisson'} over the morning "
          f"({a['rate_bins']} rate bins of {a['profile']['bin_s']:.0f} s, exponential p "
          f"{a['exponential_p']:.3g}, Ljung-Box p {a['ljung_box_p']:.3g}, dispersion "
          f"{a['dispersion_index']:.2f})")
    t = fitted.sessions.session_start
    hours = ((t - t[0]) // 3600).astype(int)
    passed = total = 0
    for h in np.unique(hours):
        gaps = np.diff(t[hours == h])
        if len(gaps) < 30:
            continue
        total += 1
        p = stats.goodness_of_fit(stats.expon, gaps, known_params={"loc": 0}, statistic="ad",
                                  n_mc_samples=999, rng=np.random.default_rng(h)).pvalue
        passed += p >= 0.01
    print(f"   hour by hour: exponential gaps (A², Monte Carlo p >= 0.01) in {passed}/{total} "
          "hours")
    return fitted


def synthetic_day(fitted) -> None:
    t = fitted.sessions.session_start
    span = float(t[-1] - t[0])
    recorded = np.diff(np.floor(t))
    print(f"\n4. NASA model synthesized over the log's {span / 3600:.1f} h, exported as a log, "
          "against the log")
    print(f"   {'profile':10s} {'sessions':>9s} {'KS D gaps':>10s} {'acf(1) per min':>15s} "
          f"{'corr per hour':>14s}")

    def per(x, width):
        return np.bincount(((x - x[0]) // width).astype(int))

    def row(label, starts):
        m = per(starts, 60)
        h_log, h_syn = per(t, 3600), per(starts, 3600)
        k = min(len(h_log), len(h_syn))
        d = ks_equivalence(recorded, np.diff(np.floor(starts)), 0.05, 0.05)["effect"]
        print(f"   {label:10s} {len(starts):>9,} {d:>10.3f} "
              f"{np.corrcoef(m[:-1], m[1:])[0, 1]:>15.3f} "
              f"{np.corrcoef(h_log[:k], h_syn[:k])[0, 1] if label != 'log' else 1.0:>14.3f}")
    row("log", t)
    for profile in ("constant", "model"):
        buf = io.StringIO()
        synthesize(Generator(fitted.model, SynthOptions(duration=span, profile=profile,
                                                         seed=7)), buf)
        path = Path("/tmp") / f"arrivals-bench-{profile}.jsonl"
        path.write_text(buf.getvalue())
        out = io.StringIO()
        export_clf(read_scenario(path), out)
        req, _ = parse_bytes(out.getvalue().encode(), "common")
        row(profile, sessionize(req).session_start)
        path.unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=40)
    ap.add_argument("--sizes", default="10000,30000,100000")
    args = ap.parse_args()
    ljung_box_speed([int(n) for n in args.sizes.split(",")])
    verdicts(args.days)
    synthetic_day(nasa_hours())


if __name__ == "__main__":
    main()
