"""Temporal locality of a reference stream: LRU stack distances (NumPy only), which ``wagon fit``
reports of a log's clicks and ``wagon compare`` measures on both workloads."""
from __future__ import annotations

import numpy as np

__all__ = ["stack_distances"]


def stack_distances(codes: np.ndarray, limit: int | None = None) -> np.ndarray:
    """LRU stack distance of each re-reference (first references excluded), on at most
    ``limit`` requests (None: all) (a Fenwick tree over positions: O(n log n))."""
    codes = codes[:limit]
    n = len(codes)
    tree = np.zeros(n + 1, np.int64)

    def add(i: int, v: int) -> None:
        i += 1
        while i <= n:
            tree[i] += v
            i += i & -i

    def total(i: int) -> int:          # sum over positions < i
        s = 0
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s
    last: dict[int, int] = {}
    out = []
    for i, c in enumerate(codes.tolist()):
        j = last.get(c)
        if j is not None:
            out.append(total(i) - total(j + 1))   # distinct URLs referenced since
            add(j, -1)
        add(i, 1)
        last[c] = i
    return np.asarray(out, float)
