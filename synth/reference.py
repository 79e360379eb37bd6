"""WAGON's own generator as a model: the known truth a closed loop starts from.

Liu, Niclausse & Jalpa-Villanueva (2001) synthesize sessions as a Poisson process, clicks per
session inverse Gaussian (μ = 5, λ = 3, rounded, at least 1), think times lognormal (μ = 3,
σ = 1.1) and pages by Zipf popularity. As a model wagon fits would say it, think times are those
a log keeps as such, inside the session rules' [Tmin, Tmax]: a longer pause starts another
session by the very rule that rebuilds sessions from a log.
"""
from __future__ import annotations

from ..formats.model import MODEL_FORMAT, Model

__all__ = ["WAGON_TRUTH", "wagon_model"]

#: the generator's laws and parameters (session arrivals: Poisson, at any rate)
WAGON_TRUTH = {"clicks": ("inverse_gaussian", {"mu": 5.0, "lambda": 3.0}),
               "think": ("lognormal", {"mu": 3.0, "sigma": 1.1})}


def wagon_model(rate: float = 0.5, tmin: float = 0.5, tmax: float = 600.0,
                agents: dict[str, int] | None = None) -> Model:
    """WAGON's generator at ``rate`` sessions/s, think times kept inside [tmin, tmax]; page and
    object sizes of the paper's order (lognormal), Poisson(2) objects per page; ``agents``:
    sessions per browser family (none by default)."""
    doc = {"format": MODEL_FORMAT, "version": 3, "variables": {
        "interarrival": {"best": "exponential", "params": {"scale": 1.0 / rate}},
        "clicks": {"best": "inverse_gaussian", "params": dict(WAGON_TRUTH["clicks"][1]),
                   "kind": "rounded", "observation": {"kind": "counts", "support_min": 1}},
        "think": {"best": "lognormal", "params": dict(WAGON_TRUTH["think"][1]),
                  "kind": "truncated",
                  "observation": {"kind": "exact", "lower": tmin, "upper": tmax}},
        "page_size": {"best": "lognormal", "params": {"mu": 8.5, "sigma": 0.5}},
        "objects_per_page": {"best": "poisson", "params": {"mu": 2.0, "loc": 0},
                             "kind": "discrete"},
        "object_size": {"best": "lognormal", "params": {"mu": 8.0, "sigma": 0.7}}}}
    if agents:
        doc["agents"] = {"sessions": dict(agents)}
    return Model(doc)
