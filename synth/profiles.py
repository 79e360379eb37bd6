"""Session arrival times: a unit-rate point process mapped through a time-varying rate profile.

The base process has rate 1: Poisson (exponential gaps), or the model's fitted renewal law with its
gaps divided by their mean. A profile is a piecewise-constant multiplier m(t) of the base rate
λ; with Λ(t) = λ ∫₀ᵗ m, the arrival times are Λ⁻¹ of the base points (a time change), so each
profile keeps the base process's shape and only bends its clock.

Profiles (``--profile``):
- ``constant``;
- ``steps:T1=M1,T2=M2,...`` multiplier Mi from time Ti (s) on (m = 1 before the first);
- ``flash:at=T,duration=D,peak=P`` rate × P during [T, T+D) (RUBiS: 10 → 333 sessions/s is
  P = 33.3);
- ``bursts:ratio=R,fraction=F,period=T`` S-Client style: in each period of T s, a fraction F of
  the time at R × the mean rate and the rest at (1 − R·F)/(1 − F) × it, so the mean stays λ;
- ``cycle:W=M0,M1,...`` multiplier Mi on [i·W, (i+1)·W), the whole pattern repeating;
- ``model`` (``wagon synth``): the model's rate profile, the day as the log had it — a cycle of
  its bins with multipliers rate/mean rate (``model_profile``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Profile", "parse_profile", "ProfileError", "cycle_spec"]


class ProfileError(ValueError):
    """A profile specification that cannot be read."""


@dataclass(frozen=True)
class Profile:
    """Piecewise-constant multiplier: ``mult[i]`` on [``edges[i]``, ``edges[i+1]``); the last
    one holds forever, or the pattern repeats every ``period`` seconds when period is set."""

    spec: str
    edges: tuple[float, ...]
    mult: tuple[float, ...]
    period: float | None = None

    def _cum(self) -> tuple[np.ndarray, np.ndarray]:
        e = np.asarray(self.edges, float)
        m = np.asarray(self.mult, float)
        cum = np.concatenate(([0.0], np.cumsum(np.diff(e) * m[:-1])))
        return e, cum

    def operational_time(self, t: np.ndarray) -> np.ndarray:
        """∫₀ᵗ m(s) ds."""
        e, cum = self._cum()
        m = np.asarray(self.mult, float)
        t = np.asarray(t, float)
        if self.period:
            whole, t = np.divmod(t, self.period)
            base = whole * (cum[-1] + (self.period - e[-1]) * m[-1])
        else:
            base = 0.0
        i = np.searchsorted(e, t, side="right") - 1
        return base + cum[i] + (t - e[i]) * m[i]

    def real_time(self, u: np.ndarray) -> np.ndarray:
        """Inverse of operational_time (segments with multiplier 0 are skipped over)."""
        e, cum = self._cum()
        m = np.asarray(self.mult, float)
        u = np.asarray(u, float)
        if self.period:
            per = cum[-1] + (self.period - e[-1]) * m[-1]
            whole, u = np.divmod(u, per)
            offset = whole * self.period
        else:
            offset = 0.0
        i = np.searchsorted(cum, u, side="right") - 1
        # a zero-multiplier segment has no length in operational time: take the next one
        while True:
            stuck = (m[i] == 0) & (i + 1 < len(m))
            if not stuck.any():
                break
            i = np.where(stuck, i + 1, i)
        rate = m[i]
        step = np.divide(u - cum[i], rate, out=np.full(len(u), np.inf), where=rate > 0)
        return offset + e[i] + step          # inf: the rate is 0 from there on

    def mean_multiplier(self, horizon: float) -> float:
        return float(self.operational_time(np.array([horizon]))[0] / horizon) if horizon else 1.0


def _finite(text: str) -> float:
    """``float(text)``; ValueError for text that is not a number or is NaN or infinite (a time
    or a rate multiplier of inf has no arrivals to draw)."""
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(text)
    return x


def _kv(body: str, spec: str) -> dict[str, float]:
    out = {}
    for item in filter(None, body.split(",")):
        k, sep, v = item.partition("=")
        try:
            out[k.strip()] = _finite(v)
        except ValueError:
            raise ProfileError(f"{spec!r}: {item!r} is not KEY=NUMBER (a finite number)") from None
        if not sep:
            raise ProfileError(f"{spec!r}: {item!r} is not KEY=NUMBER")
    return out


def parse_profile(spec: str) -> Profile:
    """Read a ``--profile`` specification (module docstring)."""
    kind, _, body = spec.partition(":")
    if kind == "constant" and not body:
        return Profile(spec, (0.0,), (1.0,))
    if kind == "steps":
        try:
            steps = sorted((_finite(t), m) for t, m in _kv(body, spec).items())
        except ValueError:
            raise ProfileError(f"{spec!r}: step times must be finite numbers") from None
        if not steps or any(m < 0 for _, m in steps) or steps[0][0] < 0:
            raise ProfileError(f"{spec!r}: need TIME=MULTIPLIER pairs, times and multipliers ≥ 0")
        edges = [0.0] + [t for t, _ in steps if t > 0]
        mult = [1.0 if steps[0][0] > 0 else steps[0][1]] + [m for t, m in steps if t > 0]
        return Profile(spec, tuple(edges), tuple(mult))
    if kind == "flash":
        kv = _kv(body, spec)
        at, dur, peak = kv.get("at", 0.0), kv.get("duration", 0.0), kv.get("peak", 1.0)
        if at < 0 or dur <= 0 or peak < 0:
            raise ProfileError(f"{spec!r}: need at ≥ 0, duration > 0, peak ≥ 0")
        if at == 0:
            return Profile(spec, (0.0, dur), (peak, 1.0))
        return Profile(spec, (0.0, at, at + dur), (1.0, peak, 1.0))
    if kind == "bursts":
        kv = _kv(body, spec)
        r, f, period = kv.get("ratio", 0), kv.get("fraction", 0), kv.get("period", 0)
        if not (r >= 1 and 0 < f < 1 and period > 0 and r * f <= 1):
            raise ProfileError(f"{spec!r}: need ratio ≥ 1, 0 < fraction < 1, ratio·fraction ≤ 1, "
                               "period > 0")
        low = (1 - r * f) / (1 - f)
        return Profile(spec, (0.0, f * period), (r, low), period=period)
    if kind == "cycle":
        return _cycle(spec, body)
    raise ProfileError(f"unknown profile {spec!r}: use constant, steps:..., flash:..., "
                       "bursts:..., cycle:..., model")


def _cycle(spec: str, body: str) -> Profile:
    width, _, rest = body.partition("=")
    try:
        w = _finite(width)
        mult = [_finite(m) for m in rest.split(",") if m != ""]
    except ValueError:
        raise ProfileError(f"{spec!r}: write cycle:WIDTH=M0,M1,... (finite numbers)") from None
    if not (w > 0 and mult and all(m >= 0 for m in mult) and sum(mult) > 0):
        raise ProfileError(f"{spec!r}: need WIDTH > 0 and multipliers ≥ 0, not all 0")
    return Profile(spec, tuple(w * i for i in range(len(mult))), tuple(mult),
                   period=w * len(mult))


def cycle_spec(width: float, rates) -> str:
    """The ``cycle`` profile of per-bin rates: multipliers rate / mean rate (mean 1)."""
    rates = [float(r) for r in rates]
    mean = sum(rates) / len(rates)
    return f"cycle:{width:.6g}=" + ",".join(f"{r / mean:.6g}" for r in rates)
