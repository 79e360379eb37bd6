"""Sessions from a model: arrivals, client classes, clicks, think times, pages — in chunks.

Every random draw of chunk k comes from ``default_rng([seed, k])`` and chunks have a fixed size,
so a seed gives the same scenario byte for byte, and memory stays bounded whatever the length.
Laws the model lacks fall back to WAGON's generator: clicks IG(μ=5, λ=3) (rounded, ≥ 1),
think times lognormal(μ=3, σ=1.1).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterator

import numpy as np
from scipy import stats

from wagon.model import Model

from .classes import DEFAULT_CLASSES, ClientClass, parse_classes
from .profiles import Profile, parse_profile
from .site import Site, resolve_site

__all__ = ["SynthOptions", "Batch", "Generator", "SynthError", "FALLBACK_LAWS", "MAX_CLICKS"]

MAX_CLICKS = 10_000                 # heavy-tailed click laws are capped per session
FALLBACK_LAWS = {"clicks": ("inverse_gaussian", stats.invgauss(mu=5 / 3, scale=3), "rounded"),
                 "think": ("lognormal", stats.lognorm(s=1.1, scale=np.exp(3)), "continuous")}


class SynthError(ValueError):
    """Options or a model that cannot make a scenario."""


@dataclass(frozen=True)
class SynthOptions:
    """What ``wagon synth`` can be told."""

    duration: float | None = None
    sessions: int | None = None
    rate: float | None = None
    rate_scale: float = 1.0
    profile: str = "constant"
    arrivals: str = "poisson"
    classes: str = DEFAULT_CLASSES
    seed: int = 0
    deterministic: bool = False
    speedup: float = 1.0
    pages: int = 1000
    zipf: float = 1.0
    chunk: int = 20_000


@dataclass
class Batch:
    """A chunk of sessions; clicks of session i are ``click_ptr[i]:click_ptr[i+1]``."""

    ids: np.ndarray
    starts: np.ndarray
    classes: np.ndarray
    click_ptr: np.ndarray
    pages: np.ndarray
    thinks: np.ndarray          # before each click (0 for the first)

    def __len__(self) -> int:
        return len(self.ids)


class _Law:
    """A variable's law as the generator uses it: draws (integers for counts) and its mean."""

    def __init__(self, model: Model | None, name: str) -> None:
        var = model.variables.get(name) if model is not None else None
        if var is not None:
            self.name, self.frozen, self.kind = var.law, var.frozen, var.kind
        elif name in FALLBACK_LAWS:
            self.name, self.frozen, self.kind = FALLBACK_LAWS[name]
        else:
            raise SynthError(f"the model has no {name!r} law")
        self.mean = float(self.frozen.mean())
        if not np.isfinite(self.mean) or self.mean <= 0:
            raise SynthError(f"the {name} law {self.name} has no finite positive mean")

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(self.frozen.rvs(size=n, random_state=rng), dtype=float)


class Generator:
    """Turns a model and options into a header and batches of sessions."""

    def __init__(self, model: Model | None, options: SynthOptions) -> None:
        o = options
        if (o.duration is None) == (o.sessions is None):
            raise SynthError("give exactly one of --duration and --sessions")
        if (o.duration is not None and o.duration <= 0) or (o.sessions is not None and o.sessions <= 0):
            raise SynthError("--duration and --sessions must be positive")
        if o.speedup <= 0 or o.rate_scale <= 0 or (o.rate is not None and o.rate <= 0):
            raise SynthError("--speedup, --rate and --rate-scale must be positive")
        if o.arrivals not in ("poisson", "renewal"):
            raise SynthError("--arrivals is poisson or renewal")
        self.model, self.options = model, o
        self.profile: Profile = parse_profile(o.profile)
        self.classes: list[ClientClass] = parse_classes(o.classes)
        self.clicks = _Law(model, "clicks")
        self.think = _Law(model, "think")
        gaps = model.variables.get("interarrival") if model is not None else None
        if o.rate is not None:
            self.rate = o.rate
        elif gaps is not None:
            self.rate = o.rate_scale / float(gaps.frozen.mean())
        else:
            raise SynthError("the model has no interarrival law: give --rate")
        if o.arrivals == "renewal":
            if gaps is None:
                raise SynthError("--arrivals renewal needs the model's interarrival law")
            self.gap_law = gaps.frozen
        self.site: Site = resolve_site(model, o.pages, o.zipf)
        self.class_p = np.array([c.weight for c in self.classes])

    def header(self) -> dict:
        o = self.options
        return {"options": {**asdict(o), "rate": self.rate},
                "laws": {"clicks": self.clicks.name, "think": self.think.name,
                         "arrivals": o.arrivals},
                "classes": [c.to_dict() for c in self.classes],
                "site": self.site.to_dict()}

    def _gaps(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Gaps of the base process in operational seconds (mean 1/rate)."""
        if self.options.deterministic:
            return np.full(n, 1.0 / self.rate)
        if self.options.arrivals == "poisson":
            return rng.exponential(1.0 / self.rate, n)
        x = np.asarray(self.gap_law.rvs(size=n, random_state=rng), float)
        return x / float(self.gap_law.mean()) / self.rate

    def _clicks(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.options.deterministic:
            return np.full(n, max(1, round(self.clicks.mean)), np.int64)
        return np.clip(np.round(self.clicks.draw(n, rng)), 1, MAX_CLICKS).astype(np.int64)

    def batches(self) -> Iterator[Batch]:
        o = self.options
        u_last, next_id, k = 0.0, 0, 0
        while True:
            rng = np.random.default_rng([o.seed, k])
            n = o.chunk if o.sessions is None else min(o.chunk, o.sessions - next_id)
            if n <= 0:
                return
            u = u_last + np.cumsum(self._gaps(n, rng))
            u_last = float(u[-1])
            starts = self.profile.real_time(u)
            if o.duration is not None:
                starts = starts[starts < o.duration]
            n = len(starts)
            if n == 0:
                return
            batch = self._sessions(starts, next_id, rng)
            next_id += n
            k += 1
            yield batch
            if o.duration is not None and n < o.chunk:
                return

    def _sessions(self, starts: np.ndarray, first_id: int, rng: np.random.Generator) -> Batch:
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
        return Batch(np.arange(first_id, first_id + n), starts / o.speedup, classes, ptr, pages,
                     thinks / o.speedup)
