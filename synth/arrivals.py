"""Session arrivals in operational time: Poisson, renewal or the model's clustered (Hawkes)
process, drawn chunk by chunk.

``--arrivals model`` (the default) draws what ``wagon fit`` chose: the Hawkes process when the
log's arrivals were clustered (``arrivals.process.chosen``), else Poisson, WAGON's own choice.
Each is drawn at the generator's rate (sessions per operational second); the rate profile then
maps operational seconds to real ones (``synth.profiles``).
"""
from __future__ import annotations

import numpy as np

from ..fitting.hawkes import Hawkes, HawkesStream
from ..formats.model import Model
from .options import ARRIVALS

__all__ = ["Arrivals", "resolve_arrivals"]


def _process(model: Model | None) -> dict | None:
    """The model's fitted clustered process (``arrivals.process``), if any."""
    return (model.arrivals.get("process") or None) if model is not None else None


def resolve_arrivals(choice: str, model: Model | None) -> str:
    """The process ``choice`` stands for: ``model`` is ``hawkes`` when the model chose one,
    else ``poisson``; ValueError (one line) for an unknown choice or a ``hawkes`` without a
    fitted process."""
    if choice not in ARRIVALS:
        raise ValueError(f"--arrivals is one of {', '.join(ARRIVALS)} (got {choice!r})")
    process = _process(model)
    if choice == "model":
        return "hawkes" if process is not None and process.get("chosen") else "poisson"
    if choice == "hawkes" and process is None:
        raise ValueError("--arrivals hawkes needs a model whose session arrivals were fitted a "
                         "Hawkes process (wagon fit fits one when they are not Poisson)")
    return choice


class Arrivals:
    """Operational arrival times at ``rate`` per second, ``next(n, rng)`` at a time: the
    process ``kind`` (resolved), a renewal process drawing ``gap_law``'s gaps rescaled to the
    rate, or the model's Hawkes process stretched to it."""

    def __init__(self, kind: str, rate: float, model: Model | None = None, gap_law=None,
                 deterministic: bool = False, seed: int = 0) -> None:
        self.kind, self.rate, self.gap_law = kind, rate, gap_law
        self.deterministic = deterministic
        self.last = 0.0
        self.stream = None
        if kind == "hawkes" and not deterministic:
            p = _process(model)
            fitted = Hawkes(float(p["mu"]), float(p["eta"]), float(p["beta"]))
            rng = np.random.default_rng([seed, 0, 3])
            self.stream = HawkesStream(fitted.scaled(rate), rng)

    def next(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """The next ``n`` arrival times (operational seconds from 0)."""
        if self.stream is not None:
            return self.stream.next(n, rng)
        u = self.last + np.cumsum(self._gaps(n, rng))
        self.last = float(u[-1])
        return u

    def _gaps(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.deterministic:
            return np.full(n, 1.0 / self.rate)
        if self.kind == "renewal":
            x = np.asarray(self.gap_law.rvs(size=n, random_state=rng), float)
            return x / float(self.gap_law.mean()) / self.rate
        return rng.exponential(1.0 / self.rate, n)
