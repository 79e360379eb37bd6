"""Coverage of the parameters' 95 % intervals, measured on simulated samples.

For every continuous law at representative parameters, and the count laws, R samples of n
values are simulated the ways wagon meets them — exact values; differences of timestamps
recorded to the second (gap-like laws); values kept only inside [2, 600], as think times are,
exact and on the one-second grid; counts (the count laws, and two continuous laws rounded) —
each is fitted with its true law as the only candidate, recorded as simulated, and the share
of samples whose interval holds each true parameter is counted. The samples are the bench's
own (SciPy's generators; the timestamps of a stream of gaps with a uniform first phase,
floored), not wagon's ``draw_observed``: the truth is an independent observer.

Beside each coverage: the mean standard error over the replicates against the standard
deviation of the estimates (a ratio near 1: the observed information measures the spread
that is there), the methods the intervals came from, and the fits that failed. With
``--bootstrap B`` each fit also runs B bootstrap replicates, and the percentile intervals'
coverage is a column of its own (R·B refits: give a few ``--laws`` and ``--recordings``).

    python bench/coverage_bench.py [--n 1000] [--replicates 500] [--workers 2]
                                   [--laws L ...] [--recordings R ...] [--bootstrap B]
                                   [--write docs/methods.md]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy: one BLAS thread a worker

import argparse
import math
import multiprocessing
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from wagon.fitting import Observation, fit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.recorded import inside, timestamp_gaps  # noqa: E402

EXACT = Observation()
GAPS = Observation.grid(1.0, lower=0)                 # inter-arrival times of whole-second logs
THINK = Observation.exact(2, 600)                     # think times of logs with sub-seconds
THINK_GRID = Observation.grid(1.0, lower=2, upper=600)    # and of whole-second logs
CLICKS = Observation.counts(1)


def scipy_law(name: str, p: dict):
    """The true law as SciPy's own distribution (not through ``wagon.fitting.laws``)."""
    return {
        "exponential": lambda: stats.expon(scale=p.get("scale")),
        "normal": lambda: stats.norm(p.get("mu"), p.get("sigma")),
        "lognormal": lambda: stats.lognorm(p.get("sigma"), scale=math.exp(p.get("mu", 0))),
        "weibull": lambda: stats.weibull_min(p.get("shape"), scale=p.get("scale")),
        "pareto": lambda: stats.pareto(p.get("shape"), scale=p.get("scale")),
        "lomax": lambda: stats.lomax(p.get("shape"), scale=p.get("scale")),
        "inverse_gaussian": lambda: stats.invgauss(p.get("mu", 1) / p.get("lambda", 1),
                                                   scale=p.get("lambda")),
        "gamma": lambda: stats.gamma(p.get("shape"), scale=p.get("scale")),
        "loglogistic": lambda: stats.fisk(p.get("shape"), scale=p.get("scale")),
        "geometric": lambda: stats.geom(p.get("p"), loc=p.get("loc")),
        "poisson": lambda: stats.poisson(p.get("mu"), loc=p.get("loc")),
        "negative_binomial": lambda: stats.nbinom(p.get("n"), p.get("p"), loc=p.get("loc")),
        "zt_poisson": lambda: stats.poisson(p.get("mu")),
        "zt_negative_binomial": lambda: stats.nbinom(p.get("n"), p.get("p")),
        "zipf": lambda: stats.zipf(p.get("a"), loc=p.get("loc")),
    }[name]()


@dataclass(frozen=True)
class Case:
    law: str
    params: dict
    recording: str              # exact | grid | truncated | grid, truncated | counts | rounded

    @property
    def observation(self) -> Observation:
        return {"exact": EXACT, "grid": GAPS, "truncated": THINK, "grid, truncated": THINK_GRID,
                "counts": CLICKS, "rounded": CLICKS}[self.recording]


def simulate(case: Case, n: int, rng: np.random.Generator) -> np.ndarray:
    """A sample of ``case``'s law recorded its way."""
    dist = scipy_law(case.law, case.params)
    if case.recording == "grid":
        return timestamp_gaps(dist, n, rng, None)
    if case.recording == "grid, truncated":
        return timestamp_gaps(dist, n, rng, (2, 600))
    if case.recording == "truncated":
        return inside(dist, n, rng, 2, 600)
    if case.recording == "rounded":
        return np.maximum(1, np.round(dist.rvs(size=n, random_state=rng)))
    if case.law.startswith("zt_"):
        return inside(dist, n, rng, 1, math.inf)
    return np.asarray(dist.rvs(size=n, random_state=rng), float)


CASES = [
    *(Case(law, p, "exact") for law, p in (
        ("exponential", {"scale": 30.0}), ("normal", {"mu": 50.0, "sigma": 20.0}),
        ("lognormal", {"mu": 3.0, "sigma": 1.1}), ("weibull", {"shape": 0.6, "scale": 20.0}),
        ("pareto", {"shape": 1.5, "scale": 1000.0}), ("lomax", {"shape": 2.5, "scale": 40.0}),
        ("inverse_gaussian", {"mu": 5.0, "lambda": 3.0}),
        ("gamma", {"shape": 2.5, "scale": 4.0}), ("loglogistic", {"shape": 3.0, "scale": 10.0}))),
    *(Case(law, p, "grid") for law, p in (
        ("exponential", {"scale": 4.0}), ("lognormal", {"mu": 1.0, "sigma": 1.0}),
        ("weibull", {"shape": 0.8, "scale": 5.0}), ("pareto", {"shape": 2.5, "scale": 3.0}),
        ("lomax", {"shape": 3.0, "scale": 10.0}),
        ("inverse_gaussian", {"mu": 4.0, "lambda": 6.0}),
        ("gamma", {"shape": 0.7, "scale": 6.0}), ("loglogistic", {"shape": 2.0, "scale": 4.0}))),
    *(Case(law, p, rec) for rec in ("truncated", "grid, truncated") for law, p in (
        ("exponential", {"scale": 40.0}), ("normal", {"mu": 60.0, "sigma": 50.0}),
        ("lognormal", {"mu": 3.0, "sigma": 1.1}), ("weibull", {"shape": 0.6, "scale": 30.0}),
        ("pareto", {"shape": 1.2, "scale": 3.0}), ("lomax", {"shape": 1.5, "scale": 30.0}),
        ("inverse_gaussian", {"mu": 40.0, "lambda": 20.0}),
        ("gamma", {"shape": 0.8, "scale": 50.0}),
        ("loglogistic", {"shape": 1.5, "scale": 25.0}))),
    *(Case(law, p, "counts") for law, p in (
        ("geometric", {"p": 0.3, "loc": 0}), ("poisson", {"mu": 2.0, "loc": 1}),
        ("negative_binomial", {"n": 0.5, "p": 0.15, "loc": 1}),
        ("zt_poisson", {"mu": 1.5}), ("zt_negative_binomial", {"n": 1.5, "p": 0.3}),
        ("zipf", {"a": 2.2, "loc": 0}))),
    *(Case(law, p, "rounded") for law, p in (
        ("inverse_gaussian", {"mu": 5.0, "lambda": 3.0}),
        ("lognormal", {"mu": 0.8, "sigma": 1.0}))),
]


def replicate(job: tuple[int, int, int, int]) -> tuple[int, dict | None]:
    """One sample of case ``i`` (seed ``[i, r]``) fitted (with B bootstrap replicates):
    each parameter's estimate, standard error, interval, method and percentile interval
    (None: the fit failed)."""
    i, r, n, boot = job
    case = CASES[i]
    x = simulate(case, n, np.random.default_rng([i, r]))
    c = fit(x, candidates=[case.law], observation=case.observation, bootstrap=boot,
            seed=r).candidates[0]
    if not c.ok or c.uncertainty is None:
        return i, None
    percentile = c.conf_int(bootstrap=True) if c.bootstrap_params is not None else {}
    return i, {k: (c.params[k], p.se, p.interval(), p.method, percentile.get(k))
               for k, p in c.uncertainty.params.items() if p.method != "fixed"}


def _share(bounds: list, truth: float) -> str:
    """How often ``truth`` is inside the intervals (a None one misses), in per cent; n/a when
    there is none (the percentile bootstrap of a scale at the sample minimum)."""
    if all(b is None for b in bounds):
        return "n/a"
    covered = sum(b is not None and b[0] <= truth <= b[1] for b in bounds)
    return f"{100 * covered / len(bounds):.1f} %"


def tabulate(results: dict[int, list], replicates: int, boot: int) -> list[str]:
    """The coverage table (markdown), a row per case and parameter."""
    extra = f" percentile bootstrap (B = {boot}) |" if boot else ""
    rows = ["| law | recorded | parameter | true | coverage | mean SE / sd of estimates | "
            "method | failed fits |" + extra, "|---|---|---|---|---|---|---|---|"
            + ("---|" if boot else "")]
    for i, case in enumerate(CASES):
        done = [d for d in results.get(i, []) if d is not None]
        failed = replicates - len(done)
        for k, truth in case.params.items():
            if k == "loc" or not done:
                continue
            est = np.array([d[k][0] for d in done])
            se = np.array([np.nan if d[k][1] is None else d[k][1] for d in done])
            methods = Counter(d[k][3] for d in done)
            said = ", ".join(f"{m} {c}" for m, c in methods.most_common())
            ratio = (f"{np.nanmean(se) / np.std(est, ddof=1):.2f}"
                     if np.isfinite(se).any() else "n/a")
            rows.append(f"| {case.law} | {case.recording} | {k} | {truth:g} | "
                        f"{_share([d[k][2] for d in done], truth)} | {ratio} | {said} | "
                        f"{failed} |" + (f" {_share([d[k][4] for d in done], truth)} |"
                                         if boot else ""))
    return rows


def write_into(path: Path, name: str, block: str) -> None:
    """Replace what is between the markers ``<!-- name: begin -->`` and ``<!-- name: end -->``
    in ``path`` by ``block``."""
    begin, end = f"<!-- {name}: begin -->", f"<!-- {name}: end -->"
    text = path.read_text()
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: no {begin} ... {end} block to write into")
    path.write_text(pattern.sub(lambda _: f"{begin}\n{block}\n{end}", text))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--replicates", type=int, default=500)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--laws", nargs="*", help="only these laws")
    ap.add_argument("--recordings", nargs="*", help="only these recordings (exact, grid, "
                    "truncated, 'grid, truncated', counts, rounded)")
    ap.add_argument("--bootstrap", type=int, default=0, help="bootstrap replicates a fit")
    ap.add_argument("--write", type=Path, help="write the table into this markdown file (its "
                    "block <!-- coverage_bench[ bootstrap]: begin/end -->)")
    args = ap.parse_args()
    jobs = [(i, r, args.n, args.bootstrap) for i, c in enumerate(CASES)
            if (not args.laws or c.law in args.laws)
            and (not args.recordings or c.recording in args.recordings)
            for r in range(args.replicates)]
    t0 = time.perf_counter()
    results: dict[int, list] = {}
    with multiprocessing.Pool(args.workers) as pool:
        for i, d in pool.imap_unordered(replicate, jobs, chunksize=8):
            results.setdefault(i, []).append(d)
    seconds = time.perf_counter() - t0
    rows = tabulate(results, args.replicates, args.bootstrap)
    said = (f"n = {args.n:,}, R = {args.replicates} samples a case, {args.workers} workers: "
            f"{seconds:.0f} s")
    print("\n".join(rows))
    print(said)
    if args.write:
        name = "coverage_bench bootstrap" if args.bootstrap else "coverage_bench"
        write_into(args.write, name, "\n".join([*rows, "", said]))


if __name__ == "__main__":
    main()
