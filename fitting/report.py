"""``fit()``: every candidate law fitted, measured and ranked; the results object it returns.

Selection rule (docs/methods.md): rank the fitted candidates on each of λ², W² and A² (lower is
better) and take the mean rank; the candidate with the best mean rank (ties: lower A²) leads.
Every candidate the three statistics cannot tell from the leader — A² within 2.492 and W² within
0.461 of it (the 5 % points of the fully specified tests) and λ² within two standard deviations
of its null noise, 2·√(2·df)/(n − 1) — is a contender; the contender with the fewest parameters
wins (ties: mean rank). So an exponential sample comes out exponential, not Weibull(1.00).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from . import gof
from .laws import CONTINUOUS, DISCRETE, LAWS, FitFailed, Law, Sample

__all__ = ["fit", "FitReport", "CandidateFit", "is_discrete"]

MAX_AUTO_DISCRETE_VALUES = 100


@dataclass
class CandidateFit:
    """One law fitted to the sample, with its statistics (``error`` set when it could not be)."""

    law: Law
    mode: str                                    # continuous | discrete | rounded
    params: dict = field(default_factory=dict)
    loglik: float = math.nan
    lambda2: float = math.nan
    df: int = 0
    w2: float = math.nan
    a2: float = math.nan
    p_w2: float | None = None
    p_a2: float | None = None
    p_method: str | None = None
    error: str | None = None
    score: float = math.nan                      # mean rank over λ², W², A²

    @property
    def name(self) -> str:
        return self.law.name

    @property
    def nparams(self) -> int:
        return self.law.nparams

    @property
    def aic(self) -> float:
        return 2 * self.nparams - 2 * self.loglik

    @property
    def ok(self) -> bool:
        return self.error is None and all(map(math.isfinite, (self.lambda2, self.w2, self.a2)))

    @property
    def frozen(self):
        """The fitted law as a frozen ``scipy.stats`` distribution (.cdf, .ppf, .rvs, .mean)."""
        return self.law.freeze(self.params)

    def row(self) -> dict:
        """One row of the fit table (JSON-ready)."""
        def num(v):
            return None if v is None or not math.isfinite(v) else float(v)
        return {"law": self.name, "kind": self.law.kind, "params": dict(self.params),
                "nparams": self.nparams, "loglik": num(self.loglik), "aic": num(self.aic),
                "lambda2": num(self.lambda2), "w2": num(self.w2), "a2": num(self.a2),
                "p_w2": num(self.p_w2), "p_a2": num(self.p_a2), "p_method": self.p_method,
                "mean_rank": num(self.score), "error": self.error}


@dataclass
class FitReport:
    """Result of ``fit``: the chosen law (``.best``), every candidate (``.table``), a summary."""

    name: str
    n: int
    mean: float
    std: float
    minimum: float
    maximum: float
    discrete: bool
    candidates: list[CandidateFit]
    best: CandidateFit | None

    @property
    def table(self) -> list[dict]:
        return [c.row() for c in self.candidates]

    def _best_of(self, kind: str) -> CandidateFit | None:
        pool = [c for c in self.candidates if c.ok and c.law.kind == kind]
        return min(pool, key=lambda c: (c.score, c.a2)) if pool else None

    @property
    def best_discrete(self) -> CandidateFit | None:
        return self._best_of("discrete")

    @property
    def best_continuous(self) -> CandidateFit | None:
        return self._best_of("continuous")

    def to_dict(self) -> dict:
        best = self.best
        return {"n": self.n, "mean": self.mean, "std": self.std, "min": self.minimum,
                "max": self.maximum, "discrete": self.discrete,
                "best": best.name if best else None, "params": dict(best.params) if best else None,
                "table": self.table}

    def summary(self) -> str:
        """The fit table as text, best law marked with '*'."""
        head = (f"{self.name}: n={self.n:,} mean={_g(self.mean)} sd={_g(self.std)} "
                f"min={_g(self.minimum)} max={_g(self.maximum)}"
                f"{' (integer cells)' if self.discrete else ''}")
        lines = [head, f"  {'law':19s} {'λ²':>9s} {'W²':>9s} {'A²':>10s} {'AIC':>12s} "
                       f"{'p(A²)':>7s}  parameters"]
        order = sorted(self.candidates, key=lambda c: (not c.ok, c.score if c.ok else 0))
        for c in order:
            mark = "*" if c is self.best else " "
            if not c.ok:
                lines.append(f" {mark}{c.name:19s} not fitted: {c.error}")
                continue
            p = "" if c.p_a2 is None else f"{c.p_a2:.3f}"
            lines.append(f" {mark}{c.name:19s} {_g(c.lambda2):>9s} {_g(c.w2):>9s} {_g(c.a2):>10s} "
                         f"{_g(c.aic):>12s} {p:>7s}  {format_params(c.params)}")
        return "\n".join(lines)


def _g(v: float) -> str:
    return f"{v:.4g}" if math.isfinite(v) else "inf"


def format_params(params: dict) -> str:
    return " ".join(f"{k}={_g(v)}" for k, v in params.items())


def is_discrete(x: np.ndarray) -> bool:
    """Auto rule: integer values with at most 100 distinct ones."""
    return bool(np.all(x == np.round(x)) and len(np.unique(x)) <= MAX_AUTO_DISCRETE_VALUES)


def _measure(c: CandidateFit, s: Sample, edges: np.ndarray, obs: np.ndarray) -> None:
    frozen = c.frozen
    if c.mode == "continuous":
        c.loglik = float(np.sum(frozen.logpdf(s.x)))
        c.w2, c.a2 = gof.cvm_ad(s.x, frozen)
    else:
        c.loglik, c.w2, c.a2 = gof.cell_stats(s, frozen, c.mode)
    below = gof.prob_below(frozen, edges, c.mode, s.support_min)
    c.lambda2, c.df = gof.lambda2(obs, below, s.n, c.nparams)
    if c.mode == "continuous" and c.name in ("normal", "lognormal"):
        c.p_w2, c.p_a2 = gof.stephens_normal_p(c.w2, c.a2, s.n)
        c.p_method = "stephens"


def _fit_one(law: Law, s: Sample, edges: np.ndarray, obs: np.ndarray) -> CandidateFit:
    mode = "continuous" if not s.discrete else ("discrete" if law.kind == "discrete" else "rounded")
    c = CandidateFit(law=law, mode=mode)
    if s.x[0] == s.x[-1]:
        c.error = "all values are equal"
    elif law.kind == "discrete" and not s.discrete:
        c.error = "needs integer values"
    elif law.positive and not s.positive:
        c.error = "needs values > 0"
    elif law.kind == "discrete" and s.x[0] < 0:
        c.error = "needs values >= 0"
    else:
        try:
            c.params = {k: int(v) if k == "loc" else float(v) for k, v in law.estimate(s).items()}
            with np.errstate(all="ignore"):
                _measure(c, s, edges, obs)
        except (FitFailed, ValueError, FloatingPointError, ZeroDivisionError) as e:
            c.error = str(e) or type(e).__name__
    if c.error is None and not c.ok:
        c.error = "statistics not finite"
    return c


def _select(cands: list[CandidateFit], n: int) -> CandidateFit | None:
    ok = [c for c in cands if c.ok]
    if not ok:
        return None
    ranks = np.mean([stats.rankdata([getattr(c, m) for c in ok]) for m in ("lambda2", "w2", "a2")],
                    axis=0)
    for c, r in zip(ok, ranks):
        c.score = float(r)
    lead = min(ok, key=lambda c: (c.score, c.a2))
    tol = 2 * math.sqrt(2 * lead.df) / max(n - 1, 1)
    close = [c for c in ok if c.a2 - lead.a2 <= gof.A2_CRIT_5 and c.w2 - lead.w2 <= gof.W2_CRIT_5
             and c.lambda2 - lead.lambda2 <= tol]
    return min(close, key=lambda c: (c.nparams, c.score, c.a2))


def _bootstrap(c: CandidateFit, s: Sample, replicates: int, rng: np.random.Generator) -> None:
    """Parametric bootstrap p-values of W² and A² (refit on every replicate)."""
    frozen = c.frozen
    w2s, a2s = np.empty(replicates), np.empty(replicates)
    for b in range(replicates):
        sim = Sample(frozen.rvs(size=s.n, random_state=rng), discrete=s.discrete)
        edges = gof.bin_edges(sim)
        r = _fit_one(c.law, sim, edges, gof.observed(sim, edges))
        w2s[b], a2s[b] = (r.w2, r.a2) if r.ok else (np.inf, np.inf)
    c.p_w2 = float((1 + np.sum(w2s >= c.w2)) / (replicates + 1))
    c.p_a2 = float((1 + np.sum(a2s >= c.a2)) / (replicates + 1))
    c.p_method = f"bootstrap({replicates})"


def fit(sample, candidates=None, discrete: bool | None = None, bootstrap: int = 0,
        seed: int = 0, name: str = "sample") -> FitReport:
    """Fit candidate laws by maximum likelihood and pick one (rule in the module docstring).

    ``candidates``: law names (default: the continuous laws, plus the discrete ones for integer
    samples). ``discrete``: treat the sample as integer counts (None: integer values with at most
    100 distinct ones). ``bootstrap``: replicates of the parametric bootstrap for p-values (0: off).
    """
    x = np.asarray(sample, dtype=np.float64).ravel()
    if x.size < 2:
        raise ValueError(f"{name}: need at least 2 values to fit, got {x.size}")
    if discrete is None:
        discrete = is_discrete(x)
    elif discrete and not np.all(x == np.round(x)):
        raise ValueError(f"{name}: discrete=True but the values are not integers")
    s = Sample(x, discrete=discrete)
    names = candidates or ((DISCRETE + CONTINUOUS) if discrete else CONTINUOUS)
    unknown = [c for c in names if c not in LAWS]
    if unknown:
        raise ValueError(f"unknown law(s) {', '.join(unknown)}; known: {', '.join(LAWS)}")
    edges = gof.bin_edges(s)
    obs = gof.observed(s, edges)
    cands = [_fit_one(LAWS[c], s, edges, obs) for c in names]
    best = _select(cands, s.n)
    if bootstrap:
        rng = np.random.default_rng(seed)
        for c in cands:
            if c.ok and c.p_method is None:
                _bootstrap(c, s, bootstrap, rng)
    return FitReport(name=name, n=s.n, mean=s.mean, std=float(np.sqrt(s.var)),
                     minimum=float(s.x[0]), maximum=float(s.x[-1]), discrete=discrete,
                     candidates=cands, best=best)
