"""Each placeholder's value law, fitted from the values the log's requests gave it
(``logs.templates.ValueTally``), so that synthesis draws values at the log's popularity and the
model never holds a raw value that may be a person's (docs/formats.md, "Parameters").

- ``int``: all values decimal integers: their range, the number of distinct values and the
  Zipf exponent of their popularity by rank (maximum likelihood on the rank-frequency);
- ``list``: lists of decimal integers with one separator (``ids=76,107,138``): how many a
  list holds (a length law) and its integers' law as ``int``'s, over all the lists' members;
- ``opaque``: e-mail addresses, identifiers (``{uuid}``, ``{hex}``, ``{token}``, ``{email}``
  placeholders) and high-entropy values (16 characters or more mixing letters and digits:
  session ids, tokens): their shape only — the length law and the alphabet;
- ``enum``: at most ``ENUM_MAX`` values each seen from at least ``K_ANONYMITY`` distinct client
  addresses, carrying at least half the requests: those values verbatim with their shares,
  the rarer ones pooled into a remainder of synthetic values (count and share);
- ``token``: the rest (search words, names): Zipf over k synthetic tokens ``w1..wk`` by rank.

A law's distinct values are at most ``formats.model.MAX_DISTINCT`` (what synthesis tabulates).
"""
from __future__ import annotations

import re

import numpy as np

from ..formats.model import LIST_SEPARATORS, MAX_DISTINCT, PARAM_ALPHABETS
from ..logs.templates import ValueTally

__all__ = ["K_ANONYMITY", "ENUM_MAX", "value_laws", "param_law", "zipf_exponent"]

#: distinct client addresses a value must be seen from to be kept verbatim (k-anonymity)
K_ANONYMITY = 5
#: values an ``enum`` keeps at most
ENUM_MAX = 20
_IDENTIFIERS = ("uuid", "hex", "token", "email")
_EMAIL = re.compile(r"[^@]+(@|%40)[^@]+")
_INT = re.compile(r"\d{1,18}")
_ENTROPIC = re.compile(r"(?=.*\d)(?=.*[A-Za-z])[\w%.-]{16,}")
_ZIPF_MAX = 10.0


def zipf_exponent(freq: np.ndarray) -> float:
    """The exponent s of a Zipf law over len(freq) ranks, P(r) ∝ r^-s, by maximum likelihood
    on the frequencies sorted by rank (the log-likelihood is concave in s: golden section on
    [0, 10])."""
    f = np.sort(np.asarray(freq, float))[::-1]
    logr = np.log(np.arange(1, len(f) + 1))
    a, n = float(f @ logr), float(f.sum())

    def loglik(s: float) -> float:
        return -s * a - n * np.log(np.exp(-s * logr).sum())
    lo, hi = 0.0, _ZIPF_MAX
    g = (np.sqrt(5) - 1) / 2
    for _ in range(60):
        m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
        lo, hi = (lo, m2) if loglik(m1) >= loglik(m2) else (m1, hi)
    return round(float(lo + hi) / 2, 4)


def _opaque(name: str, values: list[str]) -> bool:
    return (name.split("_")[0] in _IDENTIFIERS or any(_EMAIL.fullmatch(v) for v in values)
            or np.mean([bool(_ENTROPIC.fullmatch(v)) for v in values]) >= 0.5)


def _alphabet(values: list[str]) -> str:
    if any(_EMAIL.fullmatch(v) for v in values):
        return "email"
    chars = set("".join(values))
    return next((k for k, a in PARAM_ALPHABETS.items() if k != "email" and chars <= set(a)),
                "base64url")


def param_law(name: str, values: list[str], requests: np.ndarray, clients: np.ndarray,
              k: int = K_ANONYMITY) -> dict:
    """The law of one placeholder from its distinct ``values`` with their ``requests`` and
    distinct ``clients`` (module docstring)."""
    requests = np.asarray(requests, np.int64)
    n = int(requests.sum())
    if _opaque(name, values):
        lengths, count = np.unique([len(v) for v in values], return_counts=True)
        return {"law": "opaque", "n": n, "alphabet": _alphabet(values),
                "lengths": [[int(a), int(b)] for a, b in zip(lengths, count)]}
    s = zipf_exponent(requests)
    if all(_INT.fullmatch(v) for v in values):
        return _int_law(n, np.array([int(v) for v in values]), requests)
    sep = _separator(values)
    if sep is not None:
        members = [v.split(sep) for v in values]
        lengths, count = np.unique(np.repeat([len(m) for m in members], requests),
                                   return_counts=True)
        ints = np.array([int(x) for m in members for x in m])
        return {**_int_law(n, ints, np.repeat(requests, [len(m) for m in members])),
                "law": "list", "sep": sep,
                "lengths": [[int(a), int(b)] for a, b in zip(lengths, count)]}
    public = np.asarray(clients) >= k
    if 0 < public.sum() <= ENUM_MAX and requests[public].sum() * 2 >= n:
        order = np.flatnonzero(public)[np.argsort(-requests[public], kind="stable")]
        law = {"law": "enum", "n": n,
               "values": {values[i]: round(float(requests[i]) / n, 6) for i in order}}
        rest = int((~public).sum())
        if rest:
            law["other"] = {"share": round(float(requests[~public].sum()) / n, 6),
                            "distinct": min(rest, MAX_DISTINCT),
                            "zipf": zipf_exponent(requests[~public])}
        return law
    return {"law": "token", "n": n, "distinct": min(len(values), MAX_DISTINCT), "zipf": s}


def _int_law(n: int, ints: np.ndarray, requests: np.ndarray) -> dict:
    """An ``int`` law of the integers ``ints`` asked for ``requests`` times each (repeats
    add up)."""
    values, code = np.unique(ints, return_inverse=True)
    freq = np.bincount(code.ravel(), weights=requests)
    return {"law": "int", "n": n, "min": int(values[0]), "max": int(values[-1]),
            "distinct": min(len(values), MAX_DISTINCT), "zipf": zipf_exponent(freq)}


def _separator(values: list[str]) -> str | None:
    """The one separator of ``values`` as lists of integers (a list may hold one), if any."""
    for sep in LIST_SEPARATORS:
        if any(sep in v for v in values) and all(
                all(_INT.fullmatch(x) for x in v.split(sep)) for v in values):
            return sep
    return None


def value_laws(tally: ValueTally, pages: set[str], k: int = K_ANONYMITY
               ) -> dict[str, dict[str, dict]]:
    """Page key → placeholder → its law, for the page keys ``pages`` (the model's)."""
    grouped: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for (key, name, value), (n, c) in sorted(tally.counts.items()):
        if key in pages:
            grouped.setdefault((key, name), []).append((value, n, c))
    out: dict[str, dict[str, dict]] = {}
    for (key, name), rows in grouped.items():
        values = [v for v, _, _ in rows]
        out.setdefault(key, {})[name] = param_law(
            name, values, np.array([r[1] for r in rows]), np.array([r[2] for r in rows]), k)
    return out
