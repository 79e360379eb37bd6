"""``formats.streams``: each stream is the one ``default_rng([*prefix, key])`` makes."""
from __future__ import annotations

import numpy as np
import pytest

from wagon.formats.streams import _seed_states, streams


@pytest.mark.parametrize("prefix", [[0, 0xDE1A, 1], [7, 0xDE1A, 1], [2**63 - 5, 0xDE1A, 1],
                                    [1], []])
def test_each_stream_is_default_rngs(prefix):
    fast = np.r_[np.arange(5), np.random.default_rng(1).integers(0, 2**32, 20), 2**32 - 1]
    for keys in (fast, np.r_[fast, 2**32 + 3]):       # past 32 bits: default_rng's own path
        _same(prefix, keys)
    own = [np.random.SeedSequence([*prefix, int(k)]).generate_state(4, np.uint64) for k in fast]
    assert np.array_equal(_seed_states(prefix, fast), np.array(own))    # the fast path's hash


def _same(prefix: list[int], keys: np.ndarray) -> None:
    got = [rng.standard_normal(3).tolist() + [rng.integers(2**62)]
           for rng in streams(prefix, keys)]
    want = [(lambda g: g.standard_normal(3).tolist() + [g.integers(2**62)])(
        np.random.default_rng([*prefix, int(k)])) for k in keys]
    assert got == want
