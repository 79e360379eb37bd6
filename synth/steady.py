"""A scenario that is stationary from its first second: the users a running site already has.

A test that starts with no user ramps up for as long as a session lasts, and one that stops
arrivals drains: neither is the site's steady state. With Poisson session arrivals at rate λ
and sessions lasting D (the sum of their think times; page downloads are the replay's), the
sessions in progress at any instant are, in the stationary regime (an M/G/∞ queue):

- Poisson in number, with mean λ·E[D];
- each drawn length-biased, with probability ∝ its duration (a long session is more likely
  to be under way), at an age uniform on [0, D];
- so each has done the clicks before its age, and its next click comes after the residual of
  the think time it is in.

``in_progress`` draws them from a pool of sessions made by the generator itself (the same
laws, pages and classes), and the result merges with the arrivals in order of start time.
"""
from __future__ import annotations

import numpy as np

from ..formats.scenario import SessionBatch

__all__ = ["in_progress", "merge", "split", "POOL_FACTOR"]

POOL_FACTOR = 200          # candidate sessions per session drawn (the length-biased resample)


def _take(b: SessionBatch, idx: np.ndarray) -> SessionBatch:
    """The sessions ``idx`` of ``b``, in that order, their clicks with them."""
    lengths = np.diff(b.click_ptr)[idx]
    ptr = np.concatenate(([0], np.cumsum(lengths)))
    rows = np.repeat(b.click_ptr[idx] - ptr[:-1], lengths) + np.arange(ptr[-1])
    return SessionBatch(b.ids[idx], b.starts[idx], b.classes[idx], ptr, b.pages[rows],
                        b.thinks[rows], None if b.agents is None else b.agents[idx],
                        None if b.views is None else b.views[rows])


def merge(a: SessionBatch, b: SessionBatch) -> SessionBatch:
    """Both batches' sessions in one, in order of start time (a's first on ties)."""
    both = SessionBatch(np.concatenate((a.ids, b.ids)), np.concatenate((a.starts, b.starts)),
                        np.concatenate((a.classes, b.classes)),
                        np.concatenate((a.click_ptr[:-1], b.click_ptr + a.click_ptr[-1])),
                        np.concatenate((a.pages, b.pages)), np.concatenate((a.thinks, b.thinks)),
                        np.concatenate((a.agents, b.agents)),
                        None if a.views is None or b.views is None
                        else np.concatenate((a.views, b.views)))
    return _take(both, np.argsort(both.starts, kind="stable"))


def split(b: SessionBatch, t: float) -> tuple[SessionBatch, SessionBatch]:
    """The sessions of ``b`` (sorted by start) starting before ``t``, and the others."""
    k = int(np.searchsorted(b.starts, t, side="left"))
    return _take(b, np.arange(k)), _take(b, np.arange(k, len(b)))


def in_progress(pool: SessionBatch, rate: float, rng: np.random.Generator) -> SessionBatch:
    """The sessions under way at time 0 of a stationary run with session arrivals at ``rate``
    (module docstring), drawn from ``pool`` (sessions whose ``thinks`` are in the scenario's
    seconds); sorted by the time of their next click, which is their start."""
    lengths = np.diff(pool.click_ptr)
    session_of = np.repeat(np.arange(len(pool)), lengths)
    duration = np.bincount(session_of, weights=pool.thinks, minlength=len(pool))
    total = float(duration.sum())
    if total <= 0:                                   # instantaneous sessions: none under way
        return _take(pool, np.zeros(0, np.int64))
    n = int(rng.poisson(rate * total / len(pool)))
    chosen = rng.choice(len(pool), size=n, p=duration / total)
    age = rng.random(n) * duration[chosen]
    picked = _take(pool, chosen)
    offset = np.cumsum(picked.thinks)                # from each session's first click
    first = picked.click_ptr[:-1]
    offset -= np.repeat(offset[first] - picked.thinks[first], np.diff(picked.click_ptr))
    ahead = offset > np.repeat(age, np.diff(picked.click_ptr))
    # the first click past the age: its think is cut to the residual, it becomes the start
    keep_ptr = np.concatenate(([0], np.cumsum(np.add.reduceat(ahead, first) if n else [])))
    rows = np.flatnonzero(ahead)
    starts = offset[rows[keep_ptr[:-1]]] - age
    thinks = picked.thinks[rows].copy()
    thinks[keep_ptr[:-1]] = 0.0
    out = SessionBatch(picked.ids, starts, picked.classes, keep_ptr.astype(np.int64),
                       picked.pages[rows], thinks, picked.agents,
                       None if picked.views is None else picked.views[rows])
    return _take(out, np.argsort(starts, kind="stable"))
