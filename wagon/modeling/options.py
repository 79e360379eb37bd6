"""What ``wagon fit`` can be told (``FitOptions``): the options every stage reads."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..logs.sessions import SessionRules

__all__ = ["FitOptions"]


@dataclass(frozen=True)
class FitOptions:
    """Everything ``wagon fit`` can be told, with its defaults.

    Example:

    >>> opts = wagon.FitOptions(rules=wagon.SessionRules(tmin=2, tmax=1800), bootstrap=0)
    >>> opts.rules.tmax, opts.fmt
    (1800, 'auto')
    """

    fmt: str = "auto"
    keep_query: bool = False
    base_month: str | None = None
    client: str = "host"                 # host | forwarded (first X-Forwarded-For address)
    keep_paths: bool = False             # keep identifiers in URL paths (templates otherwise)
    max_pages: int = 2000                # pages the model's site keeps; the rest is a remainder
    rules: SessionRules = field(default_factory=SessionRules)
    bootstrap: int = 0
    seed: int = 0
    speedup: float = 1.0                 # the log was written during a replay this much faster
                                         # than its scenario's time: times dilated back
    intervals: str = "best"              # whose parameters get SEs and intervals: the chosen
                                         # law's (best) or every candidate's (all)
