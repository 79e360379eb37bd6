"""What ``wagon synth`` can be told: a plain dataclass, light to import (the command line reads
its defaults before anything is synthesized)."""
from __future__ import annotations

from dataclasses import dataclass

from ..formats.classes import DEFAULT_CLASSES

__all__ = ["SynthOptions", "ARRIVALS"]

#: what ``--arrivals`` takes (``synth.arrivals``)
ARRIVALS = ("model", "poisson", "renewal", "hawkes")


@dataclass(frozen=True)
class SynthOptions:
    """What ``wagon synth`` can be told (``wagon.synthesize`` takes the same fields).

    Example:

    >>> opts = wagon.SynthOptions(duration=600, seed=1, classes="lan/http11")
    >>> opts.speedup, opts.arrivals
    (1.0, 'model')
    """

    duration: float | None = None
    sessions: int | None = None
    rate: float | None = None
    rate_scale: float = 1.0
    profile: str = "constant"
    arrivals: str = "model"       # the model's process: Hawkes when fit chose one, else Poisson
    classes: str = DEFAULT_CLASSES
    seed: int = 0
    deterministic: bool = False
    speedup: float = 1.0
    real_network: bool = False  # with a speedup: the classes' delays and bandwidths kept real
    pages: int = 1000
    zipf: float = 1.0
    chunk: int = 20_000
    steady: bool = False        # stationary from t = 0: users already mid-session (synth.steady)
