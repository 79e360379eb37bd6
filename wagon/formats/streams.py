"""Each session's own stream of standard normals, counter-based: draw j of session i is a
function of the seed, i and j alone.

The replay draws a session's pacing (the delays of its embedded requests) click by click from
its stream (``Pacing``); the expected wall time draws every session's of a batch in one NumPy
pass (``normals``), and gets the same numbers. A session's stream is SplitMix64 (Steele, Lea &
Flood 2014, "Fast splittable pseudorandom number generators") from a key: the key is the
output ``id`` + 1 of SplitMix64 from the seed's own hash. Each 64-bit draw gives a normal by
Box–Muller, its high 24 bits the radius and its low 24 the angle (|z| < 5.9: the normals pick
one of a hundred percentiles through a copula).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["session_keys", "normals", "Pacing"]

GOLDEN = 0x9E3779B97F4A7C15                      # SplitMix64's increment and its mixer
MIX_1, MIX_2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
HIGH24, LOW24 = 40, 0xFFFFFF
BLOCK = 64                                        # a session's draws made at a time


def _same(v):
    """NumPy's uint64 arrays wrap around by themselves."""
    return v


def _wrap(v: int) -> int:
    """A Python int modulo 2⁶⁴."""
    return v & 0xFFFFFFFFFFFFFFFF


def _steps(start, at, wrap: Callable = _same):
    """Output ``at`` (from 0) of SplitMix64 from each state ``start``: uint64 arrays, or
    Python ints with ``wrap=_wrap``."""
    z = wrap(start + (at + 1) * GOLDEN)            # then in place: arrays of a batch are big
    z ^= z >> 30
    z *= MIX_1
    z = wrap(z)
    z ^= z >> 27
    z *= MIX_2
    z = wrap(z)
    z ^= z >> 31
    return z


def _key(seed: int, session):
    """The key of a session's stream: SplitMix64's output ``session`` from the seed's own
    first output (Python ints, or uint64 sessions)."""
    start = _steps(_wrap(seed), 0, _wrap)
    return _steps(start, session, _same if isinstance(session, np.ndarray) else _wrap)


def session_keys(seed: int, ids: np.ndarray) -> np.ndarray:
    """Each session's key (uint64) from the scenario's seed and its id."""
    return _key(seed, np.asarray(ids, np.int64).astype(np.uint64))


def normals(keys: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Draw ``at`` (from 0) of the stream of each key, as float32 (NumPy's SIMD logarithm and
    cosine: 4 times faster than in float64; the normals only pick one of 100 percentiles)."""
    x = _steps(np.asarray(keys, np.uint64), np.asarray(at, np.int64).astype(np.uint64))
    r = (x >> HIGH24).astype(np.float32)
    r += np.float32(0.5)
    r *= np.float32(2.0 ** -24)                    # (0, 1)
    np.log(r, out=r)
    r *= np.float32(-2.0)
    np.sqrt(r, out=r)
    x &= LOW24
    angle = x.astype(np.float32)
    angle *= np.float32(2.0 ** -24 * 2 * math.pi)
    r *= np.cos(angle, out=angle)
    return r


class Pacing:
    """One session's stream as a Generator draws: ``standard_normal(n)`` gives its next n."""

    def __init__(self, seed: int, session: int) -> None:
        self.key, self.made = np.uint64(_key(seed, session)), 0
        self.ahead = np.zeros(0, np.float32)

    def standard_normal(self, n: int) -> np.ndarray:
        if len(self.ahead) < n:
            k = max(BLOCK, n - len(self.ahead))
            more = normals(self.key, np.arange(self.made, self.made + k))
            self.ahead, self.made = np.concatenate((self.ahead, more)), self.made + k
        out, self.ahead = self.ahead[:n], self.ahead[n:]
        return out
