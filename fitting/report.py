"""``fit()``: every candidate law fitted, measured and ranked; the results object it returns.

Each candidate is fitted by maximum likelihood *of the data as they were observed*
(``observation``: exact, counts, a timestamp grid, a truncation window; see ``likelihood``), so
every candidate's log-likelihood is computed on the same data and the likelihoods compare.

Selection rule (docs/methods.md): a law that puts mass where the variable cannot be (below 0
for a sample without negative values) or whose mean as recorded is infinite is refused, and
stays in the table marked why. A²'s p-value (Stephens', asymptotic, or the bootstrap's) says
which of the others fit; among them the smallest BIC = k·ln n − 2·log-likelihood wins, and
those within ``NEAR_TIE`` of it are near ties. When A² rejects every law — the rule on large
samples of real data — the spliced law (``spliced``: the data up to a threshold, a generalized
Pareto tail beyond) wins; without one (not among the candidates named, or its fit failed), the
smallest λ² (Paxson's discrepancy per observation, which does not grow with n). AIC and W² are
reported.

The chosen law's parameters (every candidate's with ``intervals="all"``) carry standard errors
and 95 % intervals (``uncertainty``), and with ``bootstrap`` percentile intervals too.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Collection

import numpy as np

from . import gof
from .laws import CONTINUOUS, DISCRETE, LAWS, FitFailed, Law, Sample
from .likelihood import draw_observed, make_model, mode_of
from .observation import Observation
from .observed import Observed
from .spliced import NO_BODY, SPLICED, spliced_law
from .threads import one_blas_thread
from .uncertainty import Uncertainty, percentile_intervals, uncertainty

__all__ = ["fit", "FitReport", "CandidateFit", "is_discrete", "default_candidates",
           "BootstrapTask", "bootstrap_tasks", "run_bootstrap", "apply_bootstrap",
           "add_intervals"]

MAX_AUTO_DISCRETE_VALUES = 100
BOOTSTRAP_CHUNK = 25            # replicates per bootstrap task
SELECT_ALPHA = 0.01             # a law "fits" while its A² p-value is at least this
NEAR_TIE = 2.0                  # ΔBIC at most this from the chosen law's: a near tie (Kass &
                                # Raftery 1995: "not worth more than a bare mention")
BELOW_FLOOR = 1e-3              # a law putting more of its mass below 0 than this is refused
                                # for a sample without negative values


@dataclass
class CandidateFit:
    """One law fitted to the sample, with its statistics (``error`` set when it could not be)."""

    law: Law
    mode: str                                    # continuous | truncated | discrete | rounded
                                                 # | grid (likelihood.py)
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
    refused: str | None = None                   # why it cannot stand for the variable
    n: int = 0
    p_floor: float = 0.0                         # the smallest p-value the method can give
    uncertainty: Uncertainty | None = None       # SEs and intervals (None: not computed)
    bootstrap_params: np.ndarray | None = None   # the bootstrap's refitted parameters, a row
                                                 # per replicate (NaN: not refitted), a column
                                                 # per name of ``bootstrapped``

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
    def bic(self) -> float:
        return self.nparams * math.log(max(self.n, 1)) - 2 * self.loglik

    @property
    def ok(self) -> bool:
        return self.error is None and all(map(math.isfinite, (self.lambda2, self.w2, self.a2)))

    @property
    def usable(self) -> bool:
        """Fitted, and not refused: a law that can be chosen."""
        return self.ok and self.refused is None

    @property
    def spliced(self) -> bool:
        return self.law.name == SPLICED

    def fits(self, alpha: float = SELECT_ALPHA) -> bool:
        """A² does not reject it: p ≥ ``alpha`` and above the smallest p-value its method can
        give (1/(B + 1) for a bootstrap of B replicates: beyond all of them is a rejection)."""
        return self.p_a2 is not None and self.p_a2 >= alpha and self.p_a2 > self.p_floor

    @property
    def frozen(self):
        """The fitted law as a frozen ``scipy.stats`` distribution (.cdf, .ppf, .rvs, .mean)."""
        return self.law.freeze(self.params)

    @property
    def bootstrapped(self) -> list[str]:
        """The parameters the percentile bootstrap gives intervals for: the estimated ones but
        a scale at the sample minimum (every replicate's minimum is above it)."""
        held = self.law.scale_at_min and self.mode in ("continuous", "truncated")
        return [p for p in self.law.params if not (held and p == "scale")]

    def _intervals(self) -> Uncertainty:
        if self.uncertainty is None:
            raise ValueError(f"{self.name}: its intervals were not computed (fit(..., "
                             f"intervals='all') or a list naming it)")
        return self.uncertainty

    @property
    def bse(self) -> dict[str, float | None]:
        """Standard errors of the estimated parameters (None where there is none: ``notes``
        says why)."""
        return {k: p.se for k, p in self._intervals().params.items() if p.method != "fixed"}

    @property
    def ci_methods(self) -> dict[str, str]:
        """How each parameter's interval was found: wald (observed information), profile,
        minimum (the sample minimum's law), fixed (not estimated) or n/a."""
        return {k: p.method for k, p in self._intervals().params.items()}

    @property
    def notes(self) -> dict[str, str]:
        """Why a parameter has no standard error or interval, or why it is a profile's."""
        return {k: p.note for k, p in self._intervals().params.items()
                if p.note and p.method != "fixed"}

    def conf_int(self, alpha: float = 0.05, bootstrap: bool = False
                 ) -> dict[str, tuple[float, float] | None]:
        """1 − ``alpha`` intervals of the estimated parameters: from the likelihood
        (``ci_methods``), or the percentile bootstrap's (``fit(..., bootstrap=B)``)."""
        if bootstrap:
            if self.bootstrap_params is None:
                raise ValueError(f"{self.name}: no bootstrap was run (fit(..., bootstrap=B))")
            return percentile_intervals(self.bootstrap_params, self.bootstrapped, alpha)
        return {k: p.interval(alpha) for k, p in self._intervals().params.items()
                if p.method != "fixed"}

    @property
    def cov(self) -> dict[str, dict[str, float]]:
        """The covariance of the parameters with Wald intervals (the inverse observed
        information, on the parameters' scale by the delta method), as nested dicts."""
        u = self._intervals()
        names = u.cov_names
        return {a: {b: float(u.cov[i, j]) for j, b in enumerate(names)}
                for i, a in enumerate(names)}

    def interval_table(self) -> list[str]:
        """Each parameter's estimate, standard error and interval, a line each, with a header
        (and the percentile bootstrap's interval beside when there is one)."""
        u = self._intervals()
        boot = self.conf_int(bootstrap=True) if self.bootstrap_params is not None else None
        head = (f"{'parameter':10s} {'estimate':>11s} {'std err':>10s} {'[2.5 %':>11s} "
                f"{'97.5 %]':>11s}  {'method':8s}")
        if boot is not None:
            head += f" {'bootstrap [2.5 %':>17s} {'97.5 %]':>11s}"
        lines = [head]
        for k, p in u.params.items():
            lo, hi = p.interval() or (math.nan, math.nan)
            se = "" if p.method == "fixed" else _g(p.se)
            bounds = f"{_g(lo):>11s} {_g(hi):>11s}" if p.method != "fixed" else f"{'':23s}"
            line = f"{k:10s} {_g(p.value):>11s} {se:>10s} {bounds}  {p.method:8s}"
            if boot is not None and p.method != "fixed":
                lo, hi = boot.get(k, (None, None))
                line += f" {_g(lo):>17s} {_g(hi):>11s}"
            lines.append(line.rstrip())
        return [lines[0].rstrip(), *lines[1:]]

    def row(self) -> dict:
        """One row of the fit table (JSON-ready)."""
        def num(v):
            return None if v is None or not math.isfinite(v) else float(v)
        out = {"law": self.name, "kind": self.law.kind, "mode": self.mode,
               "params": dict(self.params), "nparams": self.nparams,
               "loglik": num(self.loglik), "aic": num(self.aic), "bic": num(self.bic),
               "lambda2": num(self.lambda2), "w2": num(self.w2), "a2": num(self.a2),
               "p_w2": num(self.p_w2), "p_a2": num(self.p_a2), "p_method": self.p_method,
               "error": self.error, "refused": self.refused}
        if self.spliced and self.error is None:
            out["body"] = self.law.body
        return {**out, **self.interval_fields()}

    def interval_fields(self) -> dict:
        """The parameters' standard errors and intervals as the model and ``--json`` hold
        them (empty when they were not computed): ``se``, ``ci`` ([lower, upper], null where
        there is none), ``ci_method``, ``ci_note`` (only the parameters with a note), and
        with a bootstrap ``ci_bootstrap`` and ``bootstrap_replicates``."""
        out: dict = {}
        if self.uncertainty is not None:
            ci = self.conf_int()
            out = {"se": self.bse,
                   "ci": {k: None if v is None else list(v) for k, v in ci.items()},
                   "ci_method": self.ci_methods, "ci_note": self.notes}
        if self.bootstrap_params is not None:
            done = self.bootstrap_params[np.all(np.isfinite(self.bootstrap_params), axis=1)]
            out["ci_bootstrap"] = {k: list(v) for k, v in self.conf_int(bootstrap=True).items()}
            out["bootstrap_replicates"] = len(done)
        return out


@dataclass
class FitReport:
    """Result of ``fit``: the chosen law (``.best``), every candidate (``.table``), a summary.

    Example:

    >>> import numpy as np
    >>> from wagon.fitting import fit
    >>> report = fit(np.random.default_rng(1).exponential(2.0, 2000), name="gaps")
    >>> report.best.name, round(report.best.params["scale"], 1)
    ('exponential', 2.0)
    >>> report.table[0]["law"] == report.best.name
    True
    """

    name: str
    n: int
    mean: float
    std: float
    minimum: float
    maximum: float
    discrete: bool
    candidates: list[CandidateFit]
    best: CandidateFit | None
    observation: Observation = field(default_factory=Observation)
    support_min: int = 0                         # counts: the first possible value

    @property
    def table(self) -> list[dict]:
        return [c.row() for c in self.candidates]

    def _best_of(self, kind: str) -> CandidateFit | None:
        pool = [c for c in self.candidates if c.ok and c.law.kind == kind]
        return min(pool, key=lambda c: c.bic) if pool else None

    @property
    def best_discrete(self) -> CandidateFit | None:
        return self._best_of("discrete")

    @property
    def best_continuous(self) -> CandidateFit | None:
        return self._best_of("continuous")

    def recorded(self, c: CandidateFit | None = None) -> Observed:
        """Candidate ``c``'s law (the chosen one's by default) as the sample was recorded:
        inside the window, on the grid, as counts."""
        c = c or self.best
        if c is None:
            raise ValueError(f"{self.name}: no law was chosen")
        return Observed(c.frozen, self.observation, c.mode, self.support_min)

    @property
    def law_mean(self) -> float | None:
        """The chosen law's mean as recorded: what the sample's mean estimates (None without
        a law)."""
        if self.best is None:
            return None
        with np.errstate(all="ignore"):
            return float(self.recorded().mean())

    @property
    def near_ties(self) -> dict[str, float]:
        """The other laws that fit within ``NEAR_TIE`` of the chosen law's BIC, with their
        ΔBIC (none when BIC did not choose)."""
        best = self.best
        if best is None or best.spliced or not best.fits():
            return {}
        return {c.name: c.bic - best.bic for c in self.candidates
                if c is not best and c.usable and not c.spliced and c.fits()
                and c.bic - best.bic <= NEAR_TIE}

    def choice(self) -> str:
        """Why the chosen law was chosen, and its mean as recorded, in a line."""
        best = self.best
        if best is None:
            return "no law could be chosen"
        if best.spliced:
            why = f"no law fits (p(A²) < {SELECT_ALPHA:g} or refused): the spliced law"
        elif best.fits():
            ties = ", ".join(f"{k} {_g(v)}" for k, v in self.near_ties.items())
            why = f"{best.name}, the smallest BIC of the laws that fit" + (
                f"; near ties (ΔBIC ≤ {NEAR_TIE:g}): {ties}" if ties else "")
        else:
            why = f"no law fits and no spliced law: {best.name}, the smallest λ²"
        return f"chosen: {why}; mean as recorded {_g(self.law_mean)}"

    def to_dict(self) -> dict:
        best = self.best
        return {"n": self.n, "mean": self.mean, "std": self.std, "min": self.minimum,
                "max": self.maximum, "discrete": self.discrete,
                "observation": self.observation.as_dict(),
                "best": best.name if best else None, "params": dict(best.params) if best else None,
                **({"body": best.law.body} if best and best.spliced else {}),
                "law_mean": self.law_mean, "near_ties": self.near_ties,
                **(best.interval_fields() if best else {}), "table": self.table}

    def summary(self) -> str:
        """The fit table as text, the chosen law marked with '*' (its near ties with '≈'),
        the spliced law last, then why it was chosen, and its parameters with their standard
        errors and intervals."""
        head = (f"{self.name}: n={self.n:,} mean={_g(self.mean)} sd={_g(self.std)} "
                f"min={_g(self.minimum)} max={_g(self.maximum)} "
                f"({self.observation.describe()})")
        lines = [head, f"  {'law':21s} {'AIC':>11s} {'BIC':>11s} {'ΔBIC':>8s} {'λ²':>9s} "
                       f"{'W²':>9s} {'A²':>10s} {'p(A²)':>7s}  parameters"]
        order = sorted(self.candidates, key=lambda c: (c.spliced, not c.ok,
                                                        c.bic if c.ok else 0))
        top = min((c.bic for c in self.candidates if c.ok and not c.spliced), default=0.0)
        ties = self.near_ties
        for c in order:
            mark = "*" if c is self.best else "≈" if c.name in ties else " "
            if not c.ok:
                lines.append(f" {mark}{c.name:21s} not fitted: {c.error}")
                continue
            p = "" if c.p_a2 is None else f"{c.p_a2:.3f}"
            lines.append(f" {mark}{c.name:21s} {_g(c.aic):>11s} {_g(c.bic):>11s} "
                         f"{_g(c.bic - top):>8s} {_g(c.lambda2):>9s} {_g(c.w2):>9s} "
                         f"{_g(c.a2):>10s} {p:>7s}  {format_params(c.params)}"
                         + (f"  refused: {c.refused}" if c.refused else ""))
        lines.append("  " + self.choice())
        best = self.best
        if best is not None and best.uncertainty is not None:
            lines += ["", f"  {best.name}, the chosen law: {INTERVALS_SAID}"]
            lines += ["  " + line for line in best.interval_table()]
        return "\n".join(lines)


INTERVALS_SAID = ("95 % intervals (wald: observed information; profile: profile likelihood; "
                  "minimum: the sample minimum's law; bootstrap: percentile)")


def _g(v: float | None) -> str:
    """4 significant digits; n/a for None, inf for NaN (a statistic that is not finite)."""
    if v is None:
        return "n/a"
    return f"{v:.4g}" if not math.isnan(v) else "inf"


def format_params(params: dict) -> str:
    return " ".join(f"{k}={_g(v)}" for k, v in params.items())


def _distinct(sample) -> tuple[np.ndarray, np.ndarray]:
    """The sample's distinct values (float64, sorted) and their counts, found in its own dtype:
    sizes and counts held as integers are sorted as such, not as a float64 copy (a month's 18M
    object sizes: 70 MB sorted instead of 290 MB), and every check that follows reads the
    distinct values only."""
    a = np.asarray(sample).ravel()
    if a.dtype.kind not in "iu":
        a = a.astype(np.float64, copy=False)
    v, w = np.unique(a, return_counts=True)
    return v.astype(np.float64), w


def is_discrete(x: np.ndarray) -> bool:
    """Auto rule: integer values ≥ 0 (counts) with at most 100 distinct ones."""
    return bool(np.all(x == np.round(x)) and (x.size == 0 or x.min() >= 0)
                and len(np.unique(x)) <= MAX_AUTO_DISCRETE_VALUES)


def _stephens(c: CandidateFit, s: Sample) -> None:
    """Stephens' p-values (normal and lognormal, exact values): his tables are for the statistics
    computed with the sample standard deviation (divisor n − 1), as in R's nortest."""
    sigma = c.params["sigma"] * math.sqrt(s.n / max(s.n - 1, 1))
    values = s.log if c.name == "lognormal" else s.v
    w2, a2 = gof.normal_cvm_ad((values - c.params["mu"]) / sigma, s.w)
    c.p_w2, c.p_a2 = gof.stephens_normal_p(w2, a2, s.n)
    c.p_method = "stephens"


def _why_refused(c: CandidateFit, s: Sample) -> str | None:
    """Why a fitted law cannot stand for the variable (None: it can), what the model reader
    and synthesis refuse or should: mass below 0 for a sample without negative values (a
    normal with σ near μ; one run along a ridge toward a limit law, its mean far below 0), or
    an infinite mean when nothing bounds the values as recorded."""
    with np.errstate(all="ignore"):
        frozen = c.frozen
        below = 0.0 if s.v[0] < 0 else float(frozen.cdf(-1.0 if c.law.kind == "discrete"
                                                         else 0.0))      # P(X < 0)
        mean = 0.0 if s.obs.upper is not None else float(frozen.mean())
    if not below <= BELOW_FLOOR:
        return f"puts {100 * below:.3g} % of its mass below 0"
    if not math.isfinite(mean):
        return "its mean is infinite"
    return None


def _refuse(law: Law, s: Sample) -> str | None:
    """Why ``law`` cannot describe this sample at all (None: it can)."""
    if s.v[0] == s.v[-1]:
        return "all values are equal"
    if law.kind == "discrete" and not s.discrete:
        return "needs counts"
    if law.positive and not s.positive and mode_of(law, s) in ("continuous", "truncated"):
        return "needs values > 0"
    if law.kind == "discrete" and s.v[0] < 0:
        return "needs values >= 0"
    if law.support_from is not None and s.support_min < law.support_from:
        return f"needs counts >= {law.support_from}"
    return None


def _fit_one(law: Law, s: Sample, edges: np.ndarray, obs: np.ndarray,
             start: dict | None = None, p_values: bool = True) -> CandidateFit:
    c = CandidateFit(law=law, mode=mode_of(law, s), n=s.n)
    c.error = _refuse(law, s)
    if c.error is None:
        try:
            model = make_model(law, s)
            with np.errstate(all="ignore"):
                params = model.estimate(start)
                c.params = {k: int(params[k]) if k == "loc" else float(params[k])
                            for k in law.takes()}
                c.loglik, c.w2, c.a2, below = model.measure(c.params, edges)
            c.lambda2, c.df = gof.lambda2(obs, below, s.n, c.nparams)
            if c.mode == "continuous" and law.name in ("normal", "lognormal"):
                _stephens(c, s)
            elif p_values:
                with np.errstate(all="ignore"):
                    c.p_w2, c.p_a2 = gof.asymptotic_p(c.w2, c.a2, *model.null_kernel(c.params))
                c.p_method = "asymptotic"
        except (FitFailed, ValueError, FloatingPointError, ZeroDivisionError) as e:
            c.error = str(e) or type(e).__name__
    if c.error is None and not (c.ok and math.isfinite(c.loglik)):
        c.error = "statistics not finite"
    return c


def _fit_spliced(s: Sample, edges: np.ndarray, obs: np.ndarray) -> CandidateFit:
    """The spliced law's candidate: its body from the sample, its tail fitted and measured as
    every law is; no p-value (its body is the data). A tail whose mean is infinite where
    nothing bounds the values (ξ ≥ 1) is ended at the largest value recorded, and fitted
    again."""
    try:
        c = _fit_one(spliced_law(s), s, edges, obs, p_values=False)
        if c.ok and c.law.params and not math.isfinite(c.frozen.mean()):
            c = _fit_one(spliced_law(s, bounded=True), s, edges, obs, p_values=False)
        return c
    except FitFailed as e:
        return CandidateFit(law=NO_BODY, mode=mode_of(NO_BODY, s), n=s.n, error=str(e))


def _select(cands: list[CandidateFit], alpha: float = SELECT_ALPHA) -> CandidateFit | None:
    """Of the laws not refused: among those A² does not reject (``CandidateFit.fits``), the
    smallest BIC; when it rejects them all (large samples of real data), the spliced law;
    without one, the smallest λ²."""
    usable = [c for c in cands if c.usable]
    fitting = [c for c in usable if not c.spliced and c.fits(alpha)]
    if fitting:
        return min(fitting, key=lambda c: (c.bic, c.nparams))
    spliced = [c for c in usable if c.spliced]
    if spliced:
        return spliced[0]
    return min(usable, key=lambda c: (c.lambda2, c.nparams)) if usable else None


@dataclass(frozen=True)
class BootstrapTask:
    """``replicates`` replicates of the parametric bootstrap of candidate ``candidate`` of a
    fit: all they need (no data), so that they can run anywhere, in any order."""

    candidate: int
    law: str
    params: dict
    mode: str
    observation: Observation
    support_min: int
    n: int
    replicates: int
    seed: np.random.SeedSequence


def bootstrap_tasks(report: "FitReport", replicates: int, seed: int = 0
                    ) -> list[BootstrapTask]:
    """The bootstrap of every candidate of ``report`` (for the p-values of those without
    Stephens' and the percentile intervals of all), in chunks of ``BOOTSTRAP_CHUNK``
    replicates, each with its own seed (``SeedSequence.spawn``: candidate then chunk), so the
    results do not depend on where or in what order the chunks run."""
    tasks = []
    per_candidate = np.random.SeedSequence(seed).spawn(len(report.candidates))
    for i, (c, ss) in enumerate(zip(report.candidates, per_candidate)):
        if not c.ok or c.spliced:
            continue
        chunks = -(-replicates // BOOTSTRAP_CHUNK)
        for j, child in enumerate(ss.spawn(chunks)):
            tasks.append(BootstrapTask(i, c.name, dict(c.params), c.mode, report.observation,
                                       report.support_min, report.n,
                                       min(BOOTSTRAP_CHUNK, replicates - j * BOOTSTRAP_CHUNK),
                                       child))
    return tasks


@one_blas_thread
def run_bootstrap(task: BootstrapTask) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W², A², parameters) of the task's replicates: samples of the fitted law recorded the
    way the data were (rounded, on the grid, truncated), each refitted from the fitted
    parameters; NaN for a replicate that could not be drawn or refitted. The parameters are a
    row per replicate, a column per estimated parameter (the law's, in its order)."""
    law = LAWS[task.law]
    frozen = law.freeze(task.params)
    rng = np.random.default_rng(task.seed)
    w2s, a2s = np.full(task.replicates, np.nan), np.full(task.replicates, np.nan)
    params = np.full((task.replicates, law.nparams), np.nan)
    for b in range(task.replicates):
        try:
            values = draw_observed(frozen, task.observation, task.mode, task.support_min,
                                   task.n, rng)
            sim = Sample(values, observation=task.observation)
        except (FitFailed, ValueError):
            continue
        edges = gof.bin_edges(sim)
        r = _fit_one(law, sim, edges, gof.observed(sim, edges), task.params, p_values=False)
        if r.ok:
            w2s[b], a2s[b] = r.w2, r.a2
            params[b] = [r.params[p] for p in law.params]
    return w2s, a2s, params


def apply_bootstrap(report: "FitReport", tasks: list[BootstrapTask],
                    results: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
    """Bootstrap p-values (but where Stephens' are) and replicates of the parameters from the
    tasks' results, and the choice made again; replicates that could not be drawn or refitted
    are left out (more than half: the asymptotic p-values stay, and no interval)."""
    by_candidate: dict[int, list] = {}
    for t, r in zip(tasks, results):
        by_candidate.setdefault(t.candidate, []).append(r)
    for i, parts in by_candidate.items():
        c = report.candidates[i]
        w2s, a2s, params = (np.concatenate(column) for column in zip(*parts))
        done = int(np.sum(np.isfinite(a2s)))
        if done < len(a2s) / 2:
            continue
        names = list(c.law.params)
        c.bootstrap_params = params[:, [names.index(p) for p in c.bootstrapped]]
        if c.p_method == "stephens":
            continue
        c.p_w2 = float((1 + np.sum(w2s >= c.w2)) / (done + 1))
        c.p_a2 = float((1 + np.sum(a2s >= c.a2)) / (done + 1))
        c.p_method = f"bootstrap({done})"
        c.p_floor = 1 / (done + 1)
    report.best = _select(report.candidates)


def add_intervals(report: "FitReport", s: Sample, intervals: str | Collection[str] = "best"
                  ) -> None:
    """Standard errors and intervals (``uncertainty``) of the chosen law's parameters, of every
    candidate's (``intervals`` "all") or of the named laws' and the chosen one's; never the
    spliced law's (its body is the data: docs/methods.md)."""
    for c in report.candidates:
        if c.ok and not c.spliced and c.uncertainty is None and (
                c is report.best or intervals == "all"
                or (not isinstance(intervals, str) and c.name in intervals)):
            with np.errstate(all="ignore"):
                c.uncertainty = uncertainty(make_model(c.law, s), c.params)


def default_candidates(obs: Observation, support_min: int = 0) -> tuple[str, ...]:
    """Every law that can describe samples observed this way."""
    if obs.kind != "counts":
        return CONTINUOUS
    discrete = tuple(d for d in DISCRETE if LAWS[d].support_from is None
                     or support_min >= LAWS[d].support_from)
    return discrete + CONTINUOUS


@one_blas_thread
def fit(sample, candidates=None, discrete: bool | None = None, bootstrap: int = 0,
        seed: int = 0, name: str = "sample", observation: Observation | None = None,
        intervals: str | Collection[str] = "best") -> FitReport:
    """Fit candidate laws by maximum likelihood and pick one (rule in the module docstring).

    ``observation``: how the values were recorded (default: exact values, or counts when
    ``discrete`` — None: integer values ≥ 0 with at most 100 distinct ones). ``candidates``: law
    names, ``"spliced"`` among them or not (default: every law that can describe such a
    sample, and the spliced law). ``bootstrap``: replicates of
    the parametric bootstrap for p-values and percentile intervals (0: off). ``intervals``:
    whose parameters get standard errors and intervals: the chosen law's ("best"), every
    candidate's ("all"), or those of the laws named and the chosen one. BLAS runs on one
    thread meanwhile (``fitting.threads``).
    """
    x, counts = _distinct(sample)
    if counts.sum() < 2:
        raise ValueError(f"{name}: need at least 2 values to fit, got {counts.sum()}")
    if observation is None:
        if discrete is None:
            discrete = is_discrete(x)
        elif discrete and not np.all(x == np.round(x)):
            raise ValueError(f"{name}: discrete=True but the values are not integers")
        observation = Observation.counts() if discrete else Observation()
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name}: the sample holds NaN/inf values")
    observation.check(x, name)
    s = Sample(x, observation=observation, counts=counts)
    names = candidates or default_candidates(observation, s.support_min) + (SPLICED,)
    unknown = [c for c in names if c not in LAWS and c != SPLICED]
    if intervals not in ("best", "all"):
        if isinstance(intervals, str):
            raise ValueError(f"intervals must be 'best', 'all' or law names, got {intervals!r}")
        unknown += [c for c in intervals if c not in LAWS and c != SPLICED]
    if unknown:
        raise ValueError(f"unknown law(s) {', '.join(unknown)}; known: "
                         f"{', '.join((*LAWS, SPLICED))}")
    edges = gof.bin_edges(s)
    obs = gof.observed(s, edges)
    cands = [_fit_spliced(s, edges, obs) if c == SPLICED else _fit_one(LAWS[c], s, edges, obs)
             for c in names]
    for c in cands:
        c.refused = _why_refused(c, s) if c.ok else None
    report = FitReport(name=name, n=s.n, mean=s.mean, std=float(np.sqrt(s.var)),
                       minimum=float(s.v[0]), maximum=float(s.v[-1]), discrete=s.discrete,
                       candidates=cands, best=_select(cands), observation=observation,
                       support_min=s.support_min)
    if bootstrap:
        tasks = bootstrap_tasks(report, bootstrap, seed)
        apply_bootstrap(report, tasks, [run_bootstrap(t) for t in tasks])
    add_intervals(report, s, intervals)
    return report
