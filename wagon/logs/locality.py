"""Temporal locality of a reference stream: LRU stack distances (NumPy only), which ``wagon fit``
reports of a log's clicks and ``wagon compare`` measures on both workloads."""
from __future__ import annotations

import numpy as np

__all__ = ["stack_distances"]


def stack_distances(codes: np.ndarray, limit: int | None = None) -> np.ndarray:
    """LRU stack distance of each re-reference (first references excluded), on at most
    ``limit`` requests (None: all), in the stream's order. The distance of a reference at i
    whose URL was last referenced at p is the number of distinct URLs in (p, i): the window's
    i − p − 1 references less those whose own previous reference lies in it too, i.e. less
    the pairs of consecutive references (a, b) nested in (p, i): a > p and b < i, counted for
    every pair at once (``_smaller_after`` over the pairs ordered by a)."""
    codes = np.asarray(codes)[:limit]
    order = np.argsort(codes, kind="stable")
    same = codes[order[1:]] == codes[order[:-1]]
    after, before = order[1:][same], order[:-1][same]    # a re-reference and the one before
    by_start = np.argsort(before)
    nested = np.empty(len(before), np.int64)
    nested[by_start] = _smaller_after(after[by_start])
    return ((after - before - 1) - nested)[np.argsort(after)].astype(float)


def _smaller_after(v: np.ndarray) -> np.ndarray:
    """For each k, #{m > k : v[m] < v[k]} (``v``: distinct non-negative ints), by a bottom-up
    merge sort in NumPy: at each level, each element of a left block counts the smaller ones
    of the block beside it (a search in that sorted block), then pairs of blocks are merged
    (log₂ n levels of vectorised passes instead of a Python loop per element). Positions and
    values as int32 where they fit, the searched keys as int64: half the memory."""
    n = len(v)
    small = np.int32 if max(n, int(np.max(v, initial=0)) + 1) < 2**31 else np.int64
    count = np.zeros(n, small)
    vals, origin = np.asarray(v).astype(small), np.arange(n, dtype=small)   # sorted in blocks
    pos = np.arange(n, dtype=small)
    span = int(vals.max(initial=0)) + 1              # block · span + value: one sorted key
    size = 1
    while size < n:
        block = pos // size
        left = (block & 1) == 0
        right_keys = block[~left].astype(np.int64) * span + vals[~left]
        beside = (block[left] + 1).astype(np.int64) * span
        count[origin[left]] += (np.searchsorted(right_keys, beside + vals[left])
                                - np.searchsorted(right_keys, beside)).astype(small)
        del block, left, right_keys, beside
        merged = np.argsort((pos // (2 * size)).astype(np.int64) * span + vals, kind="stable")
        vals, origin = vals[merged], origin[merged]
        size *= 2
    return count
