"""``formats.streams``: each session's pacing stream is SplitMix64 (its published outputs),
its draws standard normals, independent along a stream and across sessions; the Φ of the
pacing's copula against math.erfc."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from wagon.formats.scenario import _erfc
from wagon.formats.streams import Pacing, _steps, normals, session_keys

#: splitmix64.c (Vigna, prng.di.unimi.it) from the state 1234567: its first five outputs
SPLITMIX_1234567 = [6457827717110365317, 3203168211198807973, 9817491932198370423,
                    4593380528125082431, 16408922859458223821]


def test_a_stream_is_splitmix64():
    start = np.array([1234567], np.uint64)
    assert _steps(start, np.arange(5, dtype=np.uint64)).tolist() == SPLITMIX_1234567


def test_draws_are_standard_normals_independent_within_and_across_sessions():
    sessions, draws = 400, 50
    keys = session_keys(7, np.arange(sessions))
    z = normals(np.repeat(keys, draws), np.tile(np.arange(draws), sessions)).astype(float)
    assert stats.kstest(z, "norm").pvalue > 1e-3
    grid = z.reshape(sessions, draws)
    bound = 4 / math.sqrt(z.size)                  # 4 standard errors of a correlation
    for a, b in ((grid[:, 1:], grid[:, :-1]), (grid[1:], grid[:-1])):   # along, across
        assert abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < bound
    other = normals(np.repeat(session_keys(8, np.arange(sessions)), draws),
                    np.tile(np.arange(draws), sessions)).astype(float)
    assert abs(np.corrcoef(z, other)[0, 1]) < bound        # another seed, other draws


def test_a_session_drawn_click_by_click_is_its_stream():
    key = session_keys(3, np.array([12]))[0]
    own = Pacing(3, 12)
    pieces = np.concatenate([own.standard_normal(k) for k in (1, 5, 70, 3, 130)])
    assert np.array_equal(pieces, normals(np.full(209, key), np.arange(209)))


def test_erfc_is_maths_within_its_bound():
    x = np.linspace(-6, 6, 4001)
    want = np.array([math.erfc(v) for v in x.tolist()])
    assert np.max(np.abs(_erfc(x) / want - 1)) < 1.2e-7
    assert np.max(np.abs(_erfc(x.astype(np.float32)) - want)) < 1e-6
