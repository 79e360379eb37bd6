"""The bounds every file format shares (docs/formats.md, "Limits"): a value beyond them is no
run wagon made or can make, and the readers refuse it in one line, so that no consumer sizes
an array, a sleep or a timer by it.
"""
from __future__ import annotations

__all__ = ["SPEEDUP", "MAX_RUN_S", "TIME_SLACK_S", "MAX_RATE", "MAX_PAGES", "MAX_USERS",
           "MAX_WORKERS"]

#: the factor synthesis divides times by (``wagon synth --speedup``), [low, high]
SPEEDUP = (1e-3, 1e6)
#: seconds a run, an experiment's cell or a time of its results may last (116 days)
MAX_RUN_S = 1e7
#: a results time may pass the run's recorded duration by this much (clocks read apart)
TIME_SLACK_S = 1.0
#: sessions per second of a workload
MAX_RATE = 1e6
#: pages of a synthesized site (``wagon synth --pages``)
MAX_PAGES = 10**7
#: users of a closed loop
MAX_USERS = 10**6
#: replay processes (``wagon replay --workers``)
MAX_WORKERS = 4096
