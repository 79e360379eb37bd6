"""Many seeded NumPy streams, one after another: ``default_rng([*prefix, key])`` for each key.

Making a Generator hashes its seed (NumPy's ``SeedSequence``) and seeds a PCG64, about 30 µs
a stream: the expected wall time of a 10⁶-session scenario draws one stream per session (the
replay's pacing of embedded requests). Here the hashing runs over all keys at once with NumPy
and one PCG64 is set through its public ``state`` for each key (0.6 s for 10⁵ streams instead
of 3.2 s). SeedSequence's algorithm is fixed by NumPy's compatibility policy; the first and
last streams are still checked against ``default_rng``, and any difference (or a seed word
past 32 bits) falls back to it.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

__all__ = ["streams"]

# SeedSequence's constants (numpy/random/bit_generator.pyx) and PCG64's multiplier
INIT_A, MULT_A, INIT_B, MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
MIX_L, MIX_R, XSHIFT = 0xCA01F9DD, 0x4973F715, np.uint32(16)
PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341
M32, M128 = (1 << 32) - 1, (1 << 128) - 1


def _words(value: int) -> list[int]:
    """An integer as SeedSequence reads it: 32-bit words, least significant first."""
    out = [value & M32]
    while value > M32:
        value >>= 32
        out.append(value & M32)
    return out


class _Hash:
    """SeedSequence's hash: a multiplier that moves on with every value hashed."""

    def __init__(self, init: int, mult: int) -> None:
        self.const, self.mult = init, mult

    def __call__(self, v: np.ndarray) -> np.ndarray:
        v = v ^ np.uint32(self.const)
        self.const = (self.const * self.mult) & M32
        v = v * np.uint32(self.const)
        return v ^ (v >> XSHIFT)


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    r = np.uint32(MIX_L) * x - np.uint32(MIX_R) * y
    return r ^ (r >> XSHIFT)


def _seed_states(prefix: list[int], keys: np.ndarray) -> np.ndarray:
    """``SeedSequence([*prefix, key]).generate_state(4, np.uint64)`` for every key (n × 4)."""
    n = len(keys)
    entropy = [np.full(n, w, np.uint32) for p in prefix for w in _words(p)]
    entropy.append(keys.astype(np.uint32))
    with np.errstate(over="ignore"):
        hashmix = _Hash(INIT_A, MULT_A)
        pool = [hashmix(entropy[i] if i < len(entropy) else np.zeros(n, np.uint32))
                for i in range(4)]
        for src in range(4):
            for dst in range(4):
                if src != dst:
                    pool[dst] = _mix(pool[dst], hashmix(pool[src]))
        for src in range(4, len(entropy)):
            for dst in range(4):
                pool[dst] = _mix(pool[dst], hashmix(entropy[src]))
        out = _Hash(INIT_B, MULT_B)
        words = np.stack([out(pool[i % 4]) for i in range(8)], axis=1).astype(np.uint64)
    return words[:, 0::2] | (words[:, 1::2] << np.uint64(32))


def _pcg_state(row: list[int]) -> dict:
    """PCG64's state after its seeding from four 64-bit words (``pcg64_set_seed``)."""
    inc = ((((row[2] << 64) | row[3]) << 1) | 1) & M128
    state = (((inc + ((row[0] << 64) | row[1])) & M128) * PCG_MULT + inc) & M128
    return {"bit_generator": "PCG64", "state": {"state": state, "inc": inc},
            "has_uint32": 0, "uinteger": 0}


def streams(prefix: list[int], keys: np.ndarray) -> Iterator[np.random.Generator]:
    """A Generator in the state ``default_rng([*prefix, key])`` starts in, for each key in
    turn (the same object each time: draw from it before taking the next)."""
    keys = np.asarray(keys, np.int64)
    fast = len(keys) > 0 and min(prefix, default=0) >= 0 and keys.min() >= 0 \
        and keys.max() <= M32
    states = _seed_states(prefix, keys).tolist() if fast else []
    if fast:
        for at in (0, len(keys) - 1):
            own = np.random.default_rng([*prefix, int(keys[at])]).bit_generator.state
            fast = fast and own == _pcg_state(states[at])
    if not fast:
        for key in keys.tolist():
            yield np.random.default_rng([*prefix, key])
        return
    bits = np.random.PCG64()
    gen = np.random.Generator(bits)
    for row in states:
        bits.state = _pcg_state(row)
        yield gen
