"""A closed-loop workload to set beside an open one (Banga & Druschel 1999): N users who all
start at once and ask for their next page the moment the last one is in, no think time, the way
WebStone-like generators load a server. However many users there are, such a generator only
offers what the server serves: it slows down with the server and cannot push it past its
capacity, where open arrivals (sessions on a schedule) keep coming.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..formats.atomic import atomic_write
from ..formats.classes import ClientClass
from ..formats.scenario import ScenarioWriter, SessionBatch, read_scenario

__all__ = ["closed_loop", "clicks_needed"]

#: the shortest a page can take when its class has no delay (a loopback round trip and more)
FLOOR_S = 0.002


def clicks_needed(classes: list[ClientClass], seconds: float) -> int:
    """Clicks a user may get through in ``seconds``: a page takes a round trip at least (the
    fastest class' as played: sped up with a --speedup), so no user can click more often; a
    margin of one."""
    rtt = min(c.network.rtt_ms for c in classes) / 1e3
    return math.ceil(seconds / max(rtt, FLOOR_S)) + 1


def closed_loop(source: Path, clicks: int, out: Path) -> int:
    """Write to ``out`` the sessions of ``source`` as closed-loop users: every session starts
    at 0, its pages cycled to ``clicks`` clicks, no think time between them. Returns the
    users."""
    sc = read_scenario(source)
    header = {k: v for k, v in sc.header.items() if k not in ("format", "version")}
    header["options"] = {**header.get("options", {}), "closed_loop_clicks": clicks}
    sessions = list(sc.sessions())
    pages = [np.resize(np.array([p for p, _ in s.clicks], np.int64), clicks) for s in sessions]
    views = [np.resize(np.array([s.view(k) for k in range(len(s.clicks))], np.int64), clicks)
             for s in sessions]
    agents = [s.agent for s in sessions]
    with atomic_write(out) as f:
        ScenarioWriter(f, header).write(SessionBatch(
            np.array([s.id for s in sessions]), np.zeros(len(sessions)),
            np.array([s.cls for s in sessions]),
            np.arange(len(sessions) + 1, dtype=np.int64) * clicks,
            np.concatenate(pages) if pages else np.zeros(0, np.int64),
            np.zeros(len(sessions) * clicks),
            None if None in agents else np.array(agents, np.int64),
            np.concatenate(views) if views else None))
    return len(sessions)
