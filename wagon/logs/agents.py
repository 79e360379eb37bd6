"""Browser families of user agents: what the model keeps of the agents a log recorded.

A model never stores an agent string (they identify people: docs/formats.md); it keeps the
share of sessions per browser family, so that a replay can send each emulated user a browser's
User-Agent in the proportions the site saw. A family is decided by the first rule that matches,
in an order that respects how agents claim each other's names: Edge and Opera announce Chrome,
Chrome announces Safari, every one of them announces Mozilla. Robots are left out before
families are counted (``wagon.logs.robots``).
"""
from __future__ import annotations

import re

import numpy as np

__all__ = ["FAMILIES", "UNKNOWN", "family", "family_codes"]

UNKNOWN = "other"

#: (family, pattern), the first that matches names the family; UNKNOWN when none does
_RULES: tuple[tuple[str, str], ...] = (
    ("edge", r"\b(?:Edg|Edge|EdgA|EdgiOS)/\d"),
    ("opera", r"\bOPR/\d|\bOpera\b|\bOPiOS/\d"),
    ("samsung", r"\bSamsungBrowser/\d"),
    ("firefox", r"\b(?:Firefox|FxiOS)/\d"),
    ("chrome", r"\b(?:Chrome|Chromium|CriOS)/\d"),
    ("safari", r"\bVersion/[\d.]+.*\bSafari/\d|\b(?:iPhone|iPad|Macintosh)\b.*\bAppleWebKit/"),
    ("msie", r"\bMSIE \d|\bTrident/\d"),
    ("netscape", r"\bNetscape\d?/\d|^Mozilla/[234]\.\d+ (?:\[\w+\] )?\((?!compatible)"),
    ("mozilla", r"^Mozilla/5\.0 .*\bGecko/\d"),
)
_COMPILED = tuple((name, re.compile(p)) for name, p in _RULES)

#: every family, in the order of the rules, then UNKNOWN (a family's code is its index)
FAMILIES: tuple[str, ...] = tuple(name for name, _ in _RULES) + (UNKNOWN,)


def family(agent: str) -> str:
    """The browser family of one User-Agent string (UNKNOWN for none, '-' or an unknown)."""
    for name, pattern in _COMPILED:
        if pattern.search(agent):
            return name
    return UNKNOWN


def family_codes(agents: list[str]) -> np.ndarray:
    """Per distinct agent string, the index of its family in FAMILIES; one more entry at the
    end, for requests without an agent (code -1 in ``Requests.agent``)."""
    index = {name: i for i, name in enumerate(FAMILIES)}
    codes = np.full(len(agents) + 1, index[UNKNOWN], np.int64)
    for i, a in enumerate(agents):
        codes[i] = index[family(a)]
    return codes
