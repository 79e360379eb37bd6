"""How a sample was observed, so that its likelihood, its statistics and its simulated replicates
describe the data as they were recorded, not as if they were exact draws of the law.

- ``exact``: the values themselves, optionally truncated to [lower, upper] (only values in the
  window are ever recorded: think times between the session rules' Tmin and Tmax);
- ``counts``: integers from ``support_min`` (1 for clicks, 0 for objects per page); a
  continuous law stands for N = max(support_min, round(X));
- ``grid``: differences of timestamps recorded to ``step`` seconds (whole-second logs). With the
  first timestamp's phase uniform inside its step, the recorded difference D = ⌊U + G/step⌋ of a
  true gap G is interval-censored with a triangular kernel: P(D = d | G = g) =
  max(0, 1 − |g/step − d|). Optionally truncated to [lower, upper] on the recorded value.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Observation", "EXACT"]

KINDS = ("exact", "counts", "grid")


@dataclass(frozen=True)
class Observation:
    """How the values of a sample were recorded (see the module docstring)."""

    kind: str = "exact"
    step: float = 1.0                       # grid: the timestamps' quantum (s)
    lower: float | None = None              # truncation: only values ≥ lower are recorded
    upper: float | None = None              # and only values ≤ upper
    support_min: int | None = None          # counts: first possible value (None: from the data)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"observation kind must be one of {', '.join(KINDS)}")
        if not self.step > 0:
            raise ValueError("the grid step must be positive")
        if self.lower is not None and self.upper is not None and self.lower > self.upper:
            raise ValueError("truncation: lower > upper")

    @classmethod
    def exact(cls, lower: float | None = None, upper: float | None = None) -> "Observation":
        return cls("exact", lower=lower, upper=upper)

    @classmethod
    def counts(cls, support_min: int | None = None) -> "Observation":
        return cls("counts", support_min=support_min)

    @classmethod
    def grid(cls, step: float = 1.0, lower: float | None = None, upper: float | None = None
             ) -> "Observation":
        return cls("grid", step=step, lower=lower, upper=upper)

    @property
    def truncated(self) -> bool:
        return self.lower is not None or self.upper is not None

    def cell_window(self) -> tuple[float, float]:
        """Grid: the recorded values' first and last possible cell (units of ``step``)."""
        lo = -math.inf if self.lower is None else math.ceil(self.lower / self.step - 1e-9)
        hi = math.inf if self.upper is None else math.floor(self.upper / self.step + 1e-9)
        return lo, hi

    def latent_window(self) -> tuple[float, float]:
        """[a, b] holding every true value whose recording is kept: a grid's first and last
        possible cells widened by a step (a value is recorded within a step below it),
        a truncation's bounds; ±inf where unbounded."""
        if self.kind == "grid":
            lo, hi = self.cell_window()
            return (lo - 1) * self.step, (hi + 1) * self.step
        return (-math.inf if self.lower is None else self.lower,
                math.inf if self.upper is None else self.upper)

    def check(self, x: np.ndarray, name: str = "sample") -> None:
        """ValueError (one line) when values could not have been recorded this way."""
        if self.kind == "counts" and not np.all(x == np.round(x)):
            raise ValueError(f"{name}: counts must be integers")
        if self.kind == "counts" and x.min() < 0:
            raise ValueError(f"{name}: counts must be ≥ 0 (a value {x.min():g})")
        if self.kind == "grid":
            units = x / self.step
            if not np.allclose(units, np.round(units), rtol=0, atol=1e-6):
                raise ValueError(f"{name}: values are not multiples of the grid step "
                                 f"{self.step:g}")
        if self.lower is not None and x.min() < self.lower - 1e-9:
            raise ValueError(f"{name}: a value {x.min():g} is below the truncation {self.lower:g}")
        if self.upper is not None and x.max() > self.upper + 1e-9:
            raise ValueError(f"{name}: a value {x.max():g} is above the truncation {self.upper:g}")

    def as_dict(self) -> dict:
        """JSON-ready, for the model file."""
        out: dict = {"kind": self.kind}
        if self.kind == "grid":
            out["step"] = self.step
        if self.kind == "counts" and self.support_min is not None:
            out["support_min"] = self.support_min
        if self.lower is not None:
            out["lower"] = self.lower
        if self.upper is not None:
            out["upper"] = self.upper
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Observation":
        """The inverse of ``as_dict``; ValueError on anything else."""
        def number(key: str, integer: bool = False):
            v = d.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                  or not math.isfinite(v) or (integer and v != int(v))):
                raise ValueError(f"observation {key!r} must be a number")
            return v
        if not isinstance(d, dict) or set(d) - {"kind", "step", "lower", "upper",
                                                  "support_min"}:
            raise ValueError("an observation has keys kind, step, lower, upper, support_min")
        support = number("support_min", integer=True)
        if "step" in d and not (number("step") or 0) > 0:
            raise ValueError("observation 'step' must be a number > 0")
        return cls(d.get("kind", "exact"), float(number("step") or 1.0), number("lower"),
                   number("upper"), None if support is None else int(support))

    def describe(self) -> str:
        what = {"exact": "exact values", "counts": "counts",
                "grid": f"differences of timestamps on a {self.step:g} s grid"}[self.kind]
        if self.kind == "counts" and self.support_min is not None:
            what += f" from {self.support_min}"
        if self.truncated:
            lo = "-inf" if self.lower is None else f"{self.lower:g}"
            hi = "inf" if self.upper is None else f"{self.upper:g}"
            what += f", truncated to [{lo}, {hi}]"
        return what


EXACT = Observation()
