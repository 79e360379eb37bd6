"""When a click's embedded requests begin after its page, as the model keeps it
(``site.object_delays``): each rank's percentiles, and how the delays of one click go together.

A browser's objects come at the pace of its network: a click whose first object comes late
has its others late too. The model keeps Spearman's correlation of consecutive delays in a
click (``logs.delays.pair_spearman``: each delay ranked among its rank's, on a log grid), with
a 95 % interval counted in clicks (the pairs of a click are not independent): Fisher's
transform of the equivalent normal correlation 2·sin(πρ_S/6), with Fieller, Hartley and
Pearson's variance 1.06/(n − 3). Synthesis calibrates its draws to it."""
from __future__ import annotations

import math

import numpy as np

from ..formats.model import DELAY_QUANTILES
from ..logs.delays import pair_spearman

__all__ = ["delay_quantiles", "delay_dependence"]


def delay_quantiles(rows: np.ndarray) -> dict:
    """When embedded requests began after their page: for each rank (1st embedded request of
    a click, 2nd, ..., the last rank holding the later ones), the percentiles 0..100 of the
    delay in seconds (inverted CDF: values the log recorded) and how many requests."""
    q = np.linspace(0, 1, DELAY_QUANTILES)
    ranks, counts = [], []
    for r in range(1, int(rows[:, 0].max()) + 1):
        mine = rows[rows[:, 0] == r]
        if not len(mine):
            break
        cum = np.cumsum(mine[:, 2])
        at = np.minimum(np.searchsorted(cum, q * cum[-1], side="left"), len(mine) - 1)
        ranks.append((mine[at, 1] / 1e6).tolist())
        counts.append(int(cum[-1]))
    return {"quantiles": ranks, "requests": counts}


def delay_dependence(pairs: np.ndarray) -> dict | None:
    """Spearman's correlation of consecutive delays in a click, its 95 % interval, the clicks
    and pairs it rests on; None with fewer than 8 clicks of two embedded requests or more, or
    when no rank's delays vary."""
    found = pair_spearman(pairs)
    if found is None or found[1] < 8:
        return None
    rho, clicks, n = found
    r = min(max(2 * math.sin(math.pi * rho / 6), -0.999999), 0.999999)
    half = 1.959964 * math.sqrt(1.06 / (clicks - 3))
    return {"spearman": rho, "interval": [6 / math.pi * math.asin(math.tanh(z) / 2)
                                          for z in (math.atanh(r) - half, math.atanh(r) + half)],
            "clicks": clicks, "pairs": n}
