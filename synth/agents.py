"""The browser each synthetic user presents: a family drawn per session, sent as its User-Agent.

From a model with an agent mix (``Model.agents``: shares of sessions per browser family), each
session draws its family in those shares. A model without one (its log recorded no agents)
gives each session the browser its client class implies: HTTP/1.0 with parallel connections
was Netscape Navigator's way, pipelining Opera's (the one browser that pipelined by default),
and persistent connections a current browser's. A family is sent as one representative
User-Agent string of that browser, never a string from the log (a model keeps none).
"""
from __future__ import annotations

import numpy as np

from ..formats.classes import ClientClass

__all__ = ["USER_AGENTS", "AgentMix"]

#: a representative User-Agent per browser family (wagon.logs.agents names the families)
USER_AGENTS = {
    "chrome": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/131.0.0.0 Safari/537.36",
    "firefox": "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 "
               "Firefox/133.0",
    "safari": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, "
              "like Gecko) Version/18.1 Safari/605.1.15",
    "edge": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
    "opera": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
             "Chrome/131.0.0.0 Safari/537.36 OPR/115.0.0.0",
    "samsung": "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like "
               "Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
    "msie": "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)",
    "netscape": "Mozilla/4.76 [en] (X11; U; Linux 2.4.2 i686)",
    "mozilla": "Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.7) Gecko/20040614",
    "other": "Mozilla/5.0 (compatible)",
}

def _class_family(c: ClientClass) -> str:
    """The browser a class's protocol implies (module docstring)."""
    if not c.protocol.persistent:
        return "netscape"
    return "opera" if c.protocol.pipeline else "firefox"


class AgentMix:
    """The families a scenario's sessions draw from, and how each session draws one."""

    def __init__(self, shares: dict[str, float], classes: list[ClientClass]) -> None:
        known = {f: s for f, s in shares.items() if s > 0}
        self.by_class = None if known else [_class_family(c) for c in classes]
        self.families = (sorted(known, key=lambda f: (-known[f], f)) if known
                         else sorted(set(self.by_class)))
        weights = np.array([known[f] for f in self.families]) if known else None
        self.cumulative = None if weights is None else np.cumsum(weights / weights.sum())

    def header(self) -> list[dict]:
        """The scenario header's ``agents``: a family and its User-Agent string each."""
        return [{"family": f, "user_agent": USER_AGENTS.get(f, USER_AGENTS["other"])}
                for f in self.families]

    def draw(self, classes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """An index into ``header()`` per session (``classes``: each session's class)."""
        if self.cumulative is None:
            index = {f: i for i, f in enumerate(self.families)}
            return np.array([index[f] for f in self.by_class], np.int64)[classes]
        u = rng.random(len(classes))
        return np.searchsorted(self.cumulative, u, side="right").clip(0, len(self.families) - 1)
