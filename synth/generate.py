"""Sessions from a model: arrivals, client classes, clicks, think times, pages — in chunks.

Every random draw of chunk k comes from ``default_rng([seed, k])`` and chunks have a fixed size,
so a seed gives the same scenario byte for byte, and memory stays bounded whatever the length.
Laws the model lacks fall back to WAGON's generator: clicks IG(μ=5, λ=3) (rounded, ≥ 1),
think times lognormal(μ=3, σ=1.1).
"""
from __future__ import annotations

import io
import math
import os
import warnings
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from typing import Callable, Iterator, TextIO

import numpy as np
from scipy import stats

from ..fitting.likelihood import draw_latent, latent_mean
from ..formats.classes import ClientClass, parse_classes
from ..formats.limits import MAX_RUN_S
from ..formats.model import Model, load_model
from ..formats.scenario import (Scenario, ScenarioWriter, SessionBatch, as_written,
                                model_digest, scenario_from_bytes)
from ..formats.site import FetchTable, SiteSpec
from .agents import AgentMix
from .arrivals import Arrivals, resolve_arrivals
from .options import SynthOptions
from .profiles import Profile, cycle_spec, parse_profile
from .site import ModelSite, resolve_site
from .statuses import StatusDraw
from .steady import POOL_FACTOR, in_progress, merge, split

__all__ = ["SynthOptions", "Generator", "SynthError", "SynthSummary", "synthesize",
           "FALLBACK_LAWS", "MAX_CLICKS"]

MAX_CLICKS = 10_000                 # heavy-tailed click laws are capped per session
FALLBACK_LAWS = {"clicks": ("inverse_gaussian", stats.invgauss(mu=5 / 3, scale=3), "rounded"),
                 "think": ("lognormal", stats.lognorm(s=1.1, scale=np.exp(3)), "continuous")}


class SynthError(ValueError):
    """Options or a model that cannot make a scenario.

    Example:

    >>> try:
    ...     wagon.synthesize("model.json", duration=60, colour="red")
    ... except wagon.SynthError as e:
    ...     print(e)
    synthesize: ...colour...
    """


class _Law:
    """A variable's law as the generator uses it: draws (integers for counts) and its mean."""

    def __init__(self, model: Model | None, name: str) -> None:
        var = model.variables.get(name) if model is not None else None
        self.observation = None
        if var is not None:
            self.name, self.frozen, self.kind = var.law, var.parent, var.kind
            if var.observation is not None and var.observation.kind != "counts":
                self.observation = var.observation
        elif name in FALLBACK_LAWS:
            self.name, self.frozen, self.kind = FALLBACK_LAWS[name]
        else:
            raise SynthError(f"the model has no {name!r} law")
        try:
            with warnings.catch_warnings():   # SciPy's overflow warnings: the error says it
                warnings.simplefilter("ignore")
                if self.observation:          # a law without mass in its window: no draw
                    draw_latent(self.frozen, self.observation, 1, np.random.default_rng(0))
                mean = None if self._positive_window() else self.mean
        except ValueError as e:
            raise SynthError(f"the {name} law {self.name}: {e}") from None
        if mean is not None and (not np.isfinite(mean) or mean <= 0):
            raise SynthError(f"the {name} law {self.name} has no finite positive mean")

    @cached_property
    def mean(self) -> float:
        """The mean of the draws: for a law drawn within a window, a quadrature (25 ms),
        computed when asked."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return (latent_mean(self.frozen, self.observation) if self.observation
                    else float(self.frozen.mean()))

    def _positive_window(self) -> bool:
        """Whether every draw lies in [a, b] with 0 ≤ a and 0 < b < ∞ (the law's support
        within its observation's ``latent_window``): their mean is then finite and positive
        without computing it."""
        if self.observation is None:
            return False
        low, high = self.frozen.support()
        a, b = self.observation.latent_window()
        return max(low, a) >= 0 and 0 < min(high, b) < math.inf

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Values as the model says they were: a think-time law fitted to times recorded on a
        grid and within [Tmin, Tmax] is drawn conditioned on that window."""
        if self.observation is not None:
            return draw_latent(self.frozen, self.observation, n, rng)
        return np.asarray(self.frozen.rvs(size=n, random_state=rng), dtype=float)

    def within(self, lo: float, hi: float, n: int, rng: np.random.Generator
               ) -> np.ndarray | None:
        """n values of a law fitted to times recorded on a grid, given that their recorded
        value lay in [lo, hi) (a transition's think-time bin, ``site.thinks``): the grid's
        values in it, each a true time within a step of it; None when the law was not
        fitted on a grid or no grid value lies in [lo, hi)."""
        obs = self.observation
        if obs is None or obs.kind != "grid":
            return None
        first, last = math.ceil(lo / obs.step - 1e-9), math.ceil(hi / obs.step - 1e-9) - 1
        if first > last:
            return None
        return draw_latent(self.frozen, replace(obs, lower=first * obs.step,
                                                upper=last * obs.step), n, rng)


def _model_profile(model: Model | None) -> str:
    """``--profile model``: the model's rate profile as a ``cycle`` specification."""
    profile = model.arrivals.get("profile") if model is not None else None
    if not profile:
        raise SynthError("--profile model: the model has no rate profile (refit it with this "
                         "wagon)")
    return cycle_spec(profile["bin_s"], profile["counts"])


def _model_rate(model: Model | None, gaps) -> float:
    """Sessions per second as the log had them (its starts' count over their span, the
    arrivals' ``rate_per_s``), else one over the mean of the fitted inter-arrival law: a
    heavy-tailed law's mean can be far from the log's mean gap (a Lomax of shape 1.25 fitted
    to a month of clustered starts: 2,353 s against 3,900 s)."""
    rate = model.arrivals.get("rate_per_s") if model is not None else None
    if rate:
        return float(rate)
    if gaps is None:
        raise SynthError("the model has no interarrival law: give --rate")
    return 1.0 / float(gaps.parent.mean())


#: the range of every numeric option (None: unbounded on that side; an option left at None,
#: as --rate or --duration may be, is not checked)
BOUNDS = {"--duration": (1e-6, 1e12), "--sessions": (1, 10**12), "--rate": (1e-9, 1e9),
          "--rate-scale": (1e-6, 1e6), "--speedup": (1e-3, 1e6), "--pages": (1, 10**7),
          "--zipf": (0.0, 10.0), "--seed": (0, 2**63 - 1)}
#: bytes a session's line takes, about: for the session and for each click (compact JSON of
#: ids, times, pages)
SESSION_BYTES, CLICK_BYTES = 62, 12


def _check_bound(name: str, value, lo: float, hi: float) -> None:
    """SynthError unless ``value`` (when given) is a finite number in [lo, hi]."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            (isinstance(value, int) or math.isfinite(value)) and lo <= value <= hi):
        raise SynthError(f"{name} must be a finite number in [{lo:,}, {hi:,}] (got {value!r})")


def _delays_header(delays: dict) -> dict:
    """The scenario's ``object_delays``: the model's percentiles per rank and the copula that
    draws a click's delays together as the log's went (``dependence.rho``; 0 without)."""
    return {"quantiles": delays["quantiles"],
            "rho": (delays.get("dependence") or {}).get("rho", 0.0)}


class Generator:
    """Turns a model and options into a header and batches of sessions."""

    def __init__(self, model: Model | None, options: SynthOptions) -> None:
        o = options
        for name, (lo, hi) in BOUNDS.items():
            _check_bound(name, getattr(o, name.lstrip("-").replace("-", "_")), lo, hi)
        if (o.duration is None) == (o.sessions is None):
            raise SynthError("give exactly one of --duration and --sessions")
        try:
            arrivals = resolve_arrivals(o.arrivals, model)
        except ValueError as e:
            raise SynthError(str(e)) from None
        if o.steady and (o.duration is None or o.profile != "constant" or arrivals != "poisson"
                         or o.deterministic):
            raise SynthError("--steady needs --duration, a constant profile and Poisson "
                             "arrivals (a stationary run; --arrivals poisson)")
        self.model, self.options = model, o
        self.profile: Profile = parse_profile(_model_profile(model) if o.profile == "model"
                                              else o.profile)
        self.classes: list[ClientClass] = parse_classes(o.classes)
        self.clicks = _Law(model, "clicks")
        self.think = _Law(model, "think")
        self.think_rho = _think_rho(model)
        gaps = model.variables.get("interarrival") if model is not None else None
        if arrivals == "renewal" and gaps is None:       # before --rate, which cannot help
            raise SynthError("--arrivals renewal needs the model's interarrival law")
        if o.rate is not None:
            self.rate = o.rate
        else:
            self.rate = o.rate_scale * _model_rate(model, gaps)
        span = (o.duration if o.duration is not None else o.sessions / self.rate) / o.speedup
        if span > MAX_RUN_S:
            raise SynthError(f"the scenario would last about {span:,.0f} s (at "
                             f"{self.rate:.3g} sessions/s), beyond the {MAX_RUN_S:g} s a run "
                             "may last (docs/formats.md, Limits): fewer --sessions, a shorter "
                             "--duration, a higher --rate or a --speedup")
        self.arrivals = Arrivals(arrivals, self.rate, model,
                                 gaps.parent if arrivals == "renewal" else None,
                                 o.deterministic, o.seed)
        self.site: ModelSite = resolve_site(model, o.pages, o.zipf, self._scale())
        self.delays: dict | None = model.site.get("object_delays") if model is not None else None
        self.class_p = np.array([c.weight for c in self.classes])
        self.agents = AgentMix(model.agents if model is not None else {}, self.classes)
        self.statuses = (StatusDraw(model.statuses, self.site.spec, model.move_statuses)
                         if model is not None and model.statuses else None)

    def header(self, model_name: str | None = None) -> dict:
        """The scenario header: seed, model, options, laws, classes and the site."""
        o = self.options
        return {"seed": o.seed,
                "model": {"name": model_name,
                          "digest": model_digest(self.model.data if self.model else None)},
                "options": {**asdict(o), "rate": self.rate, "profile": self.profile.spec},
                "laws": {"clicks": self.clicks.name, "think": self.think.name,
                         "arrivals": self.arrivals.kind},
                "classes": [c.to_dict() for c in self.played_classes()],
                "site": self.site.spec.to_dict(),
                "agents": self.agents.header(),
                **({"object_delays": _delays_header(self.delays)} if self.delays else {}),
                **({"statuses_drawn": True} if self.statuses is not None else {})}

    def played_classes(self) -> list[ClientClass]:
        """The classes as the scenario's header gives them to replay: sped up with the rest of
        the world (``--speedup``), unless ``real_network`` keeps their network real."""
        o = self.options
        if o.real_network or o.speedup == 1:
            return self.classes
        return [c.sped_up(o.speedup) for c in self.classes]

    def expected_sessions(self) -> int:
        """About how many sessions ``batches`` will yield (for progress bars)."""
        o = self.options
        if o.sessions is not None:
            return o.sessions
        return int(o.duration * self.rate * self.profile.mean_multiplier(o.duration))

    def _scale(self) -> float:
        """About how many times the model's log's clicks the run will have (1 without a
        log's count or a finite mean of clicks)."""
        logged = self.model.provenance.get("clicks") if self.model is not None else None
        mean = float(self.clicks.mean)
        if not logged or not math.isfinite(mean):
            return 1.0
        return self.expected_sessions() * mean / logged

    def expected_bytes(self) -> float:
        """About how many bytes the scenario file will take (the header, and each session's
        line from the mean number of clicks); infinite when the clicks law's mean is."""
        header = io.StringIO()
        ScenarioWriter(header, self.header())
        mean = float(self.clicks.mean)
        if not math.isfinite(mean):
            return math.inf
        return float(len(header.getvalue()) + self.expected_sessions() *
                     (SESSION_BYTES + CLICK_BYTES * mean))

    def _clicks(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.options.deterministic:
            return np.full(n, max(1, round(self.clicks.mean)), np.int64)
        return np.clip(np.round(self.clicks.draw(n, rng)), 1, MAX_CLICKS).astype(np.int64)

    def batches(self) -> Iterator[SessionBatch]:
        """The sessions in order of start time, their requests marked with the statuses the
        logged server would have answered (``synth.statuses``) and the clicks of template
        pages with their concrete URLs (``synth.params``), each a stream of draws of its own:
        the sessions are those of a model without them."""
        for k, batch in enumerate(self._unmarked()):
            if self.statuses is not None:
                batch.statuses = self.statuses.marks(
                    batch, np.random.default_rng([self.options.seed, k, 3]))
            if self.site.params is not None:
                batch.urls = self.site.params.urls(
                    batch, np.random.default_rng([self.options.seed, k, 4]))
            yield batch

    def _unmarked(self) -> Iterator[SessionBatch]:
        """The sessions in order of start time; with ``steady``, those under way at t = 0
        merged in (``synth.steady``)."""
        if not self.options.steady:
            yield from self._arrivals()
            return
        pending, next_id = self._in_progress(), 0
        for batch in self._arrivals():
            early, pending = split(pending, float(batch.starts[-1]))
            batch = merge(early, batch)
            batch.ids = np.arange(next_id, next_id + len(batch))
            next_id += len(batch)
            yield batch
        rest = split(pending, self.options.duration / self.options.speedup)[0]
        if len(rest):
            rest.ids = np.arange(next_id, next_id + len(rest))
            yield rest

    def _in_progress(self) -> SessionBatch:
        """The sessions a stationary run has under way at t = 0, drawn from a pool of sessions
        of this generator (POOL_FACTOR candidates per session drawn)."""
        o = self.options
        rng = np.random.default_rng([o.seed, 0, 2])
        rate = self.rate * o.speedup                  # sessions per second of the scenario
        pool = self._sessions(np.zeros(2000), 0, rng)
        need = POOL_FACTOR * rate * float(pool.thinks.sum()) / len(pool)
        if need > len(pool):
            pool = self._sessions(np.zeros(int(need)), 0, rng)
        pool.agents = self.agents.draw(pool.classes, rng)
        return in_progress(pool, rate, rng)

    def _arrivals(self) -> Iterator[SessionBatch]:
        """Sessions arriving from t = 0, in chunks."""
        o = self.options
        next_id, k = 0, 0
        while True:
            rng = np.random.default_rng([o.seed, k])
            n = o.chunk if o.sessions is None else min(o.chunk, o.sessions - next_id)
            if n <= 0:
                return
            starts = self.profile.real_time(self.arrivals.next(n, rng))
            if o.duration is not None:
                starts = starts[starts < o.duration]
            n = len(starts)
            if n == 0:
                return
            batch = self._sessions(starts, next_id, rng)
            batch.agents = self.agents.draw(batch.classes, np.random.default_rng([o.seed, k, 1]))
            next_id += n
            k += 1
            yield batch
            if o.duration is not None and n < o.chunk:
                return

    def _sessions(self, starts: np.ndarray, first_id: int, rng: np.random.Generator
                  ) -> SessionBatch:
        n = len(starts)
        o = self.options
        classes = np.searchsorted(np.cumsum(self.class_p), rng.random(n) * self.class_p.sum(),
                                  side="right").clip(0, len(self.classes) - 1)
        clicks = self._clicks(n, rng)
        ptr = np.concatenate(([0], np.cumsum(clicks)))
        total = int(ptr[-1])
        if o.deterministic:
            thinks = np.full(total, self.think.mean)
        else:
            thinks = np.maximum(self.think.draw(total, rng), 0.0)
        thinks[ptr[:-1]] = 0.0
        pages = np.empty(total, np.int64)
        current = self.site.entries(n, rng)
        pages[ptr[:-1]] = current
        alive = np.arange(n)
        for step in range(1, int(clicks.max())):
            keep = clicks[alive] > step
            alive, current = alive[keep], current[keep]
            current = self.site.next_pages(current, rng)
            pages[ptr[alive] + step] = current
        free = np.ones(total, bool)           # think times the session's copula may move
        if self.site.thinks is not None and not o.deterministic:
            moved = np.ones(total, bool)
            moved[ptr[:-1]] = False
            at = np.flatnonzero(moved)
            thinks[at], own = self.site.thinks.draw(pages[at - 1], pages[at], thinks[at],
                                                    np.random.default_rng([o.seed, first_id, 5]),
                                                    self.think.within)
            free[at[own]] = False             # a transition's own law: its values stay there
        if self.think_rho > 0 and not o.deterministic:
            thinks = together(thinks, ptr, self.think_rho,
                              np.random.default_rng([o.seed, first_id, 6]), free)
        once = self.site.once
        if once is not None:
            pages = once.pages_of(pages)
        views = (self.site.views(pages, _repeats(pages, ptr), rng)
                 if self.site.view_rows is not None else None)
        if once is not None and views is not None:
            views = once.views_of(pages, views)
        return SessionBatch(np.arange(first_id, first_id + n), starts / o.speedup, classes, ptr,
                            pages, thinks / o.speedup, views=views)


def _think_rho(model: Model | None) -> float:
    """The model's copula correlation of a session's think times (0: drawn independently)."""
    think = model.data["variables"].get("think", {}) if model is not None else {}
    return float((think.get("dependence") or {}).get("rho", 0.0))


def together(values: np.ndarray, ptr: np.ndarray, rho: float, rng: np.random.Generator,
             free: np.ndarray | None = None) -> np.ndarray:
    """A session's values but its first (``ptr``: where each session begins), and but those
    not ``free`` (a transition's own think times), made to go together as a one-factor
    Gaussian copula of correlation ``rho`` says — a factor a session plus a value's own
    noise — by putting the values drawn in the order of the copula's scores (Iman & Conover
    1982): the same values, so the same law, only their places moved."""
    moved = np.ones(len(values), bool) if free is None else free.copy()
    moved[ptr[:-1]] = False
    where = np.flatnonzero(moved)
    runs = np.bincount(np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))[where],
                       minlength=len(ptr) - 1)     # a session's values to move
    runs = runs[runs > 0]
    if not len(runs):
        return values
    score = (math.sqrt(rho) * np.repeat(rng.standard_normal(len(runs)), runs)
             + math.sqrt(1 - rho) * rng.standard_normal(len(where)))
    out = values.copy()
    out[where[np.argsort(score)]] = np.sort(values[where])
    return out


def _repeats(pages: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """1 for a click on a page its session clicked on before, else 0."""
    session = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    _, first = np.unique(session * (int(pages.max(initial=0)) + 1) + pages, return_index=True)
    out = np.ones(len(pages), np.int64)
    out[first] = 0
    return out


@dataclass
class SynthSummary:
    """What a written scenario holds, and its offered load over time."""

    sessions: int = 0
    clicks: int = 0
    requests: int = 0
    first_start: float = math.inf
    last_start: float = 0.0
    bucket: float = 1.0
    offered: np.ndarray | None = None       # requests per bucket at their offered times

    def add(self, batch: SessionBatch, fetch: FetchTable, site: SiteSpec) -> None:
        """Count ``batch``: its clicks' requests (a redirected form's follow-up, which an
        export writes and a replay's browser makes, once) at their offered times."""
        n_clicks = len(batch.pages)
        requests_per_click = fetch.asked(fetch.rows(batch.pages, batch.views))
        requests_per_click[site.followed(batch.pages, batch.statuses)] += 1
        self.sessions += len(batch)
        self.clicks += n_clicks
        self.requests += int(requests_per_click.sum())
        self.first_start = min(self.first_start, float(batch.starts[0]))
        self.last_start = max(self.last_start, float(batch.starts[-1]))
        # offered time of a click: its session's start plus the think times before it
        session_of = np.repeat(np.arange(len(batch)), np.diff(batch.click_ptr))
        cum = np.cumsum(batch.thinks)
        before = cum - cum[batch.click_ptr[:-1]][session_of]
        when = batch.starts[session_of] + before
        counts = np.bincount((when // self.bucket).astype(np.int64), weights=requests_per_click)
        if self.offered is None or len(self.offered) < len(counts):
            grown = np.zeros(len(counts))
            if self.offered is not None:
                grown[:len(self.offered)] = self.offered
            self.offered = grown
        self.offered[:len(counts)] += counts

    def as_dict(self) -> dict:
        rate = (self.offered / self.bucket).tolist() if self.offered is not None else []
        return {"sessions": self.sessions, "clicks": self.clicks, "requests": self.requests,
                "first_start": self.first_start if self.sessions else None,
                "last_start": self.last_start if self.sessions else None,
                "bucket_s": self.bucket, "offered_requests_per_s": rate}

    def load_text(self, rows: int = 20) -> str:
        """The offered load as a text histogram (its first ``rows`` buckets)."""
        rates = self.as_dict()["offered_requests_per_s"]
        if not rates:
            return ""
        width = self.bucket
        out = [f"offered requests/s per {width:.4g} s (at think-time offsets, before transfer "
               "times):"]
        shown = rates[:rows]
        peak = max(shown) or 1
        out += [f"  {k * width:>10.1f} s  {r:>10.2f}  {'#' * int(40 * r / peak)}"
                for k, r in enumerate(shown)]
        if len(rates) > rows:
            out.append(f"  after {rows * width:.1f} s: {sum(rates[rows:]) * width:,.0f} more "
                       "requests from sessions still running")
        return "\n".join(out)


def synthesize(gen: Generator, out: TextIO, model_name: str | None = None,
               progress: Callable[[int], None] | None = None,
               watch: Callable[[Scenario, SessionBatch], None] | None = None) -> SynthSummary:
    """Write ``gen``'s scenario (header, then every session) to ``out``; returns its summary.
    ``watch`` sees each batch as a reader of the file would (``as_written``), with the
    scenario's header: what the file holds, without reading it back."""
    o = gen.options
    writer = ScenarioWriter(out, gen.header(model_name))
    horizon = o.duration if o.duration is not None else o.sessions / gen.rate
    summary = SynthSummary(bucket=max(horizon / o.speedup / 20, 1e-3))
    fetch = gen.site.spec.fetches()
    for batch in gen.batches():
        writer.write(batch)
        summary.add(batch, fetch, gen.site.spec)
        if watch is not None:
            watch(writer.scenario, as_written(batch))
        if progress is not None:
            progress(len(batch))
    return summary


def scenario(model: Model | str | os.PathLike | None = None, **options) -> Scenario:
    """A scenario in memory, exactly the one ``wagon synth`` writes for the same model and
    options (``SynthOptions``' fields: ``duration`` or ``sessions``, ``seed``, ``speedup``,
    ``classes``, ...); ``model``: a Model, a model file, or None (``rate`` then needed).

    Example:

    >>> sc = wagon.synthesize("model.json", duration=600, seed=1)
    >>> frame = sc.to_frame()                                 # a row per click
    >>> frame.session.nunique(), len(frame)
    (117, 574)
    >>> sc.write("six-hundred.jsonl")                         # what wagon replay plays
    """
    name = None
    if isinstance(model, (str, os.PathLike)):
        name, model = os.path.basename(str(model)), load_model(model)
    try:
        opts = SynthOptions(**options)
    except TypeError as e:
        raise SynthError(f"synthesize: {e}") from None
    buf = io.StringIO()
    synthesize(Generator(model, opts), buf, name)
    return scenario_from_bytes(buf.getvalue().encode(), "<synthesized>")
