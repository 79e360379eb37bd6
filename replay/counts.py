"""Counts: the collectors' named counters, a ``Counter`` whose stores are dict's own.

``Counter`` defines ``__delitem__`` in Python, so every ``c[k] += 1`` on it goes through a
Python-level slot lookup: ~1,000 machine instructions a store, five a request in ``Stats``
(callgrind, replay_bench part 1). Deleting a count is dict's here (a missing key raises).
"""
from __future__ import annotations

from collections import Counter

__all__ = ["Counts"]


class Counts(Counter):
    """A ``Counter`` (missing counts are 0, ``update`` adds) with dict's item stores."""

    __delitem__ = dict.__delitem__
