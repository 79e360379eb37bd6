"""Each click of a template page gets its concrete URL: every placeholder's value drawn from its
law in the model (``formats.model`` ``params``: ``int``, ``list``, ``token``, ``enum``,
``opaque``), vectorised per page and parameter, from the scenario's seed (same seed, same bytes).
An object's placeholders take one value each, drawn once from a seed of the model
(``fixed_url``): objects are fetched at one URL, as the scenario's site lists them."""
from __future__ import annotations

import zlib
from urllib.parse import unquote

import numpy as np

from ..formats.model import PARAM_ALPHABETS
from ..formats.scenario import SessionBatch
from ..formats.site import fill_template

__all__ = ["ParamDraw", "zipf_ranks", "fixed_url"]

_EMAIL_DOMAIN = "@example.invalid"
_DIGITS, _UPPER = np.array(list("0123456789")), np.array(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
_LOWER = np.char.lower(_UPPER)
#: the character classes an opaque value of an alphabet begins with (one each)
_MIXED = {"hex": (_DIGITS, _LOWER[:6]), "alnum": (_DIGITS, _UPPER, _LOWER),
          "base64url": (_DIGITS, _UPPER, _LOWER)}


def zipf_ranks(s: float, k: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` ranks in [0, k) drawn from a Zipf law of exponent ``s`` over ``k`` ranks."""
    cdf = np.cumsum(np.arange(1, k + 1, dtype=float) ** -s)
    return np.minimum(np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right"), k - 1)


def _int_table(law: dict, salt: str) -> np.ndarray:
    """The ``distinct`` values of an ``int`` law, by rank: distinct integers of its range,
    drawn once from a seed of the page and parameter (the model's, never the scenario's)."""
    rng = np.random.default_rng(zlib.crc32(salt.encode()))
    return law["min"] + rng.choice(law["max"] - law["min"] + 1, size=law["distinct"],
                                   replace=False)


class _Param:
    """One placeholder's law, ready to draw ``n`` values."""

    def __init__(self, law: dict, salt: str) -> None:
        self.law = law
        kind = law["law"]
        if kind in ("int", "list"):
            self.table = _int_table(law, salt).astype(str)
        elif kind == "enum":
            other = law.get("other", {"share": 0.0, "distinct": 0, "zipf": 1.0})
            m = other["distinct"]
            tail = np.arange(1, m + 1, dtype=float) ** -other.get("zipf", 1.0)
            tail = other["share"] * tail / tail.sum() if m else tail
            self.table = np.array([unquote(v) for v in law["values"]]
                                  + [f"v{r}" for r in range(1, m + 1)], object)
            p = np.r_[list(law["values"].values()), tail]
            self.cdf = np.cumsum(p / p.sum())
        if kind in ("opaque", "list"):
            rows = np.asarray(law["lengths"], np.int64)
            self.lengths, self.cdf = rows[:, 0], np.cumsum(rows[:, 1] / rows[:, 1].sum())
        if kind == "opaque":
            self.alphabet = np.array(list(PARAM_ALPHABETS[law["alphabet"]]))

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        law, kind = self.law, self.law["law"]
        if kind == "int":
            return self.table[zipf_ranks(law["zipf"], law["distinct"], n, rng)]
        if kind == "list":
            length = self._lengths(n, rng)
            members = self.table[zipf_ranks(law["zipf"], law["distinct"], int(length.sum()),
                                            rng)].tolist()
            ends = np.cumsum(length).tolist()
            sep = unquote(law["sep"])                      # fill_template encodes it again
            return np.array([sep.join(members[e - k:e])
                             for e, k in zip(ends, length.tolist())], object)
        if kind == "token":
            return np.char.add("w", (zipf_ranks(law["zipf"], law["distinct"], n, rng) + 1)
                               .astype(str))
        if kind == "enum":
            return self.table[np.minimum(np.searchsorted(self.cdf, rng.random(n), "right"),
                                         len(self.table) - 1)]
        length = self._lengths(n, rng)
        email = law["alphabet"] == "email"
        if email:
            length = np.maximum(length - len(_EMAIL_DOMAIN), 1)
        chars = self.alphabet[rng.integers(0, len(self.alphabet), (n, int(length.max(initial=1))))]
        mixed = _MIXED.get(law["alphabet"], ())
        if chars.shape[1] >= len(mixed):        # a digit, an upper, a lower case letter first:
            for j, kind in enumerate(mixed):    # what made the log's values identifiers
                chars[:, j] = kind[rng.integers(0, len(kind), n)]
        text = np.array(["".join(row[:k]) for row, k in zip(chars, length.tolist())], object)
        return text + _EMAIL_DOMAIN if email else text


    def _lengths(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.lengths[np.minimum(np.searchsorted(self.cdf, rng.random(n), "right"),
                                       len(self.lengths) - 1)]


def fixed_url(url: str, params: dict[str, dict]) -> str:
    """An object's URL (its placeholders all in ``params``) filled with one value of each
    law, drawn from a seed of the URL (the model's, never the scenario's: one URL per
    object)."""
    rng = np.random.default_rng(zlib.crc32(url.encode()))
    return fill_template(url, {name: _Param(law, f"{url}\0{name}").draw(1, rng)[0]
                               for name, law in params.items()})


class ParamDraw:
    """The laws of the site's template pages (``pages``: page index → its URL template and
    its params), drawing each click's concrete URL."""

    def __init__(self, pages: dict[int, tuple[str, dict]]) -> None:
        self.pages = {p: (url, {name: _Param(law, f"{url}\0{name}")
                                for name, law in params.items()})
                      for p, (url, params) in pages.items()}
        self.index = np.array(sorted(self.pages), np.int64)

    def urls(self, b: SessionBatch, rng: np.random.Generator) -> list[tuple[int, str]] | None:
        """``SessionBatch.urls`` of ``b``: (click, concrete URL) of each click of a template
        page, its values drawn page by page, parameter by parameter."""
        clicks = np.flatnonzero(np.isin(b.pages, self.index))
        if not len(clicks):
            return None
        out: list[tuple[int, str]] = []
        for page in np.unique(b.pages[clicks]).tolist():
            mine = clicks[b.pages[clicks] == page]
            url, params = self.pages[page]
            drawn = {name: p.draw(len(mine), rng) for name, p in params.items()}
            out += [(c, fill_template(url, {name: v[i] for name, v in drawn.items()}))
                    for i, c in enumerate(mine.tolist())]
        return sorted(out)
