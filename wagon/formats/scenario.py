"""Scenario files: JSON Lines, a header then one session per line.

    {"format": "wagon-scenario", "version": 3, "seed": 7, "model": {...}, "options": {...},
     "laws": {...}, "classes": [...], "site": {"pages": [...], "objects": [...]},
     "agents": [{"family": "firefox", "user_agent": "Mozilla/5.0 ..."}, ...]}
    {"id": 0, "start": 0.532118, "class": 1, "agent": 0, "clicks": [[12, 0.0], [40, 31.204]]}

A click is ``[page, think]`` or ``[page, think, view]``: the page's index in ``site.pages``,
the think time in seconds before it (0 for the first click) and which of the page's
``views`` the click fetches (version 4: 1 for the page's first view, ...; 0 or absent: every
object in the page's ``objects``, indices into ``site.objects``, as before). Times are seconds from the start of the run; sessions are in order of
start time. The header's ``site`` (``formats.site``) is the one description of the site every
consumer serves or builds. A session's ``agent`` (version 3) indexes the header's ``agents``:
the browser its user presents (its User-Agent, printable ASCII). Versions 1 (no page ``links``),
2 (no agents: a replay sends its own User-Agent) and 3 (no views) are read too.

A session may carry ``"urls"`` (version 6): the concrete URL of each click whose page is a
request template (``formats.site``: ``/item/{id}``), ``[click, url]``, as in
``{"id": 5, ..., "clicks": [[7, 0.0], [9, 3.1]], "urls": [[1, "/item/17?q=w4"]]}``; a click
of a template page has one, each matching its template; the request's method is its page's.

A session may end with ``"status"`` (version 5): the requests the logged server answered
otherwise than with content, ``[click, position, status]`` (position 0: the click's page,
k: the k-th object of its view; the status one of ``site.STATUS_CODES``), as in
``{"id": 3, ..., "clicks": [[4, 0.0, 1]], "status": [[0, 2, 404]]}``. A replay asks for
them with ``site.status_url`` and a built site answers so; an export writes the status.
A form's page may carry a ``redirect`` (version 7, ``site.Redirect``): a click of it marked
with a redirect at position 0 is followed, in an export, by its target's request.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import math
import os
import re
import shutil
from dataclasses import dataclass
from typing import BinaryIO, Iterator, Sequence, TextIO

import numpy as np

from ..source import MAX_DOCUMENT_BYTES, open_regular
from . import numtext as nt
from .atomic import atomic_write
from .classes import ClientClass
from .kind import SCENARIO_FORMAT, wrong_kind
from .limits import MAX_RUN_S, SPEEDUP
from .site import MAX_URL, STATUS_CODES, SiteSpec
from .streams import Pacing, session_keys
from .strict_json import json_ready

__all__ = ["ScenarioError", "Scenario", "ScenarioSession", "SessionBatch", "ScenarioWriter",
           "as_written",
           "read_scenario", "scenario_from_bytes", "SCENARIO_FORMAT", "SCENARIO_VERSION",
           "model_digest", "click_delays", "in_click_order", "copula_uniform"]

SCENARIO_VERSION = 7
_SESSION = '{"id":%d,"start":%.6f,"class":%d,"clicks":[%s]}\n'
_SESSION_AGENT = '{"id":%d,"start":%.6f,"class":%d,"agent":%d,"clicks":[%s]}\n'
_PRINTABLE = re.compile(r"[\x20-\x7e]{1,512}")
_CLICK = "[%d,%.3f]"
_CLICK_VIEW = "[%d,%.3f,%d]"
_HEADS = (b'{"id":', b',"start":', b',"class":', b',"agent":')
_CLICKS, _NEXT, _END = b',"clicks":[[', b"],[", b"]]}\n"
BLOCK = 1 << 22                     # bytes of sessions read at a time

#: erfc(x) = t·exp(−x² + P(t)), t = 1/(1 + x/2), x ≥ 0: Numerical Recipes' ``erfcc``
#: (Press et al. 1992, §6.2), its error below 1.2·10⁻⁷ of the value; checked against math.erfc
ERFC_P = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
          -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erfc(x: np.ndarray) -> np.ndarray:
    """The complementary error function of each value, with NumPy (in place over a batch's
    big arrays)."""
    z = np.abs(x)
    t = z * 0.5
    t += 1.0
    np.reciprocal(t, out=t)
    p = np.full_like(t, ERFC_P[-1])
    for c in reversed(ERFC_P[:-1]):                 # Horner
        p *= t
        p += c
    z *= z
    p -= z
    np.exp(p, out=p)
    p *= t
    np.subtract(2.0, p, out=p, where=x < 0)
    return p


def copula_uniform(factor: np.ndarray, own: np.ndarray, rho: float) -> np.ndarray:
    """Φ(√ρ·factor + √(1 − ρ)·own): a request's uniform from its click's normal and its own."""
    z = factor * math.sqrt(rho)
    z += own * math.sqrt(1.0 - rho)
    z *= -math.sqrt(0.5)
    u = _erfc(z)
    u *= 0.5
    return u


def _copula(click: np.ndarray, clicks: int, rho: float, rng: np.random.Generator
            ) -> np.ndarray:
    """A uniform for each embedded request, those of one click (``click``) correlated by a
    Gaussian copula with one factor a click: Φ(√ρ·Z_click + √(1 − ρ)·ε)."""
    return copula_uniform(rng.standard_normal(clicks)[click],
                          rng.standard_normal(len(click)), rho)


def click_delays(quantiles: np.ndarray, rank: np.ndarray, click: np.ndarray, clicks: int,
                 rho: float, rng: np.random.Generator,
                 follows: np.ndarray | None = None) -> np.ndarray:
    """The delay after its page (s) of each embedded request, given in click order (``click``
    non-decreasing, ``rank`` its place in its click from 1): each drawn from its rank's
    percentiles (the last row for the ranks past it), a click's together by ``_copula``, then
    in order within each click. A request that ``follows`` (``SiteSpec.object_follows``: the
    log joined it to its click by Tmin alone) comes with the request before it (its page's
    time, 0, when it is the click's first), as it came in the log."""
    u = _copula(click, clicks, rho, rng)
    pick = np.ceil(u * (quantiles.shape[1] - 1)).astype(np.int64)
    return in_click_order(quantiles[np.minimum(rank, len(quantiles)) - 1, pick], click,
                          follows)


def in_click_order(drawn: np.ndarray, click: np.ndarray,
                   follows: np.ndarray | None = None) -> np.ndarray:
    """``click_delays``' last step: the delays ``drawn`` in order within each click, each
    request that ``follows`` at the time of the one before it (its page's, 0, when first)."""
    drawn = drawn[np.lexsort((drawn, click))]
    if follows is None or not follows.any():
        return drawn
    at = np.arange(len(drawn))
    first = np.r_[True, click[1:] != click[:-1]]
    # the latest request at or before each that does not follow, or its click's first (whose
    # time, when it follows, is its page's): no click reaches back into the one before it
    src = np.maximum.accumulate(np.where(~follows | first, at, -1))
    return np.where(follows, np.where(follows[src], 0.0, drawn[src]), drawn)

class ScenarioError(ValueError):
    """A scenario file that cannot be read (the message names the line).

    Example:

    >>> with open("bad.jsonl", "w") as f:
    ...     _ = f.write("not json\\n")
    >>> try:
    ...     wagon.read_scenario("bad.jsonl")
    ... except wagon.ScenarioError as e:
    ...     print(e)
    bad.jsonl:1: ...
    """


def model_digest(document: dict | None) -> str | None:
    """sha256 of a model document in canonical JSON: which model a scenario came from."""
    if document is None:
        return None
    canon = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + hashlib.sha256(canon).hexdigest()


@dataclass
class SessionBatch:
    """A block of sessions as arrays; clicks of session i are ``click_ptr[i]:click_ptr[i+1]``."""

    ids: np.ndarray
    starts: np.ndarray
    classes: np.ndarray
    click_ptr: np.ndarray
    pages: np.ndarray
    thinks: np.ndarray          # before each click (0 for the first)
    agents: np.ndarray | None = None    # index into the header's agents, per session (-1: none)
    views: np.ndarray | None = None     # per click: the page's view fetched (0: all its objects)
    statuses: np.ndarray | None = None  # (click in the batch, position in it, status) rows
    urls: list[tuple[int, str]] | None = None   # (click in the batch, its concrete URL)

    def __len__(self) -> int:
        return len(self.ids)


def _render(b: SessionBatch) -> bytes | None:
    """The batch's lines, byte for byte as the ``%`` templates write them, built with NumPy
    (``numtext``); None when a value is outside that exact path (negative, huge, not finite,
    a session without clicks)."""
    ptr = np.asarray(b.click_ptr, np.int64)
    starts, thinks = nt.scaled(np.asarray(b.starts, float), 6), nt.scaled(np.asarray(b.thinks,
                                                                                     float), 3)
    heads = [np.asarray(v, np.int64) for v in (b.ids, b.classes)
             + ((b.agents,) if b.agents is not None else ())]
    pages = np.asarray(b.pages, np.int64)
    views = None if b.views is None else np.asarray(b.views, np.int64)
    if (starts is None or thinks is None or (len(ptr) > 1 and np.diff(ptr).min() < 1)
            or any(len(v) and v.min() < 0 for v in (*heads, pages, *(
                () if views is None else (views,))))):
        return None
    fields = [(heads[0], None), (starts, 6), *((v, None) for v in heads[1:])]
    widths = [nt.ndigits(v) if places is None else nt.fixed_width(v, places)
              for v, places in fields]
    head_len = sum(len(h) + w + (0 if p is None else p + 1)
                   for h, w, (_, p) in zip(_HEADS, widths, fields)) + len(_CLICKS)
    nd_page, nd_think = nt.ndigits(pages), nt.fixed_width(thinks, 3)
    nd_view = 0 if views is None else nt.ndigits(views) + 1
    last = np.zeros(len(pages), bool)
    last[ptr[1:] - 1] = True
    click_len = nd_page + nd_think + 5 + nd_view + np.where(last, len(_END), len(_NEXT))
    line_len = head_len + (np.add.reduceat(click_len, ptr[:-1]) if len(pages) else 0)
    line_start = np.concatenate(([0], np.cumsum(line_len)))
    buf = np.empty(int(line_start[-1]), np.uint8)
    pos = line_start[:-1]
    for h, w, (v, places) in zip(_HEADS, widths, fields):
        nt.put_bytes(buf, pos, h)
        pos = pos + len(h)
        if places is None:
            nt.put_int(buf, pos, v, w)
        else:
            nt.put_fixed(buf, pos, v, places, w)
            w = w + places + 1
        pos = pos + w
    nt.put_bytes(buf, pos, _CLICKS)
    session_of = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    cum = np.concatenate(([0], np.cumsum(click_len)))
    at = (pos + len(_CLICKS))[session_of] + cum[:-1] - cum[ptr[:-1]][session_of]
    nt.put_int(buf, at, pages, nd_page)
    at = at + nd_page
    buf[at] = ord(",")
    nt.put_fixed(buf, at + 1, thinks, 3, nd_think)
    at = at + nd_think + 5
    if views is not None:
        buf[at] = ord(",")
        nt.put_int(buf, at + 1, views, nd_view - 1)
        at = at + nd_view
    nt.put_bytes(buf, at[~last], _NEXT)
    nt.put_bytes(buf, at[last], _END)
    return buf.tobytes()


@functools.cache
def _skeleton(heads: int, clicks: int, width: int = 2) -> bytes:
    """A line as ``_render`` writes it, its numbers taken out (``width`` numbers a click)."""
    inner = b"," * (width - 1)
    return b"".join(_HEADS[:heads]) + _CLICKS + (inner + b"],[") * (clicks - 1) + inner + _END


def _parse(block: bytes, heads: int, width: int = 2) -> SessionBatch | None:
    """The sessions of ``block`` (whole lines) when every line is exactly as ``_render``
    writes it (``heads`` numbers before the clicks: 4 with agents, 3 without; ``width``
    numbers a click: 3 with views, 2 without), else None.
    Such a line is its skeleton (``_skeleton``) with a number in each slot, integers without
    a dot or a leading zero, start and think times with 6 and 3 decimals: text ``%`` writes
    for the double read from it (≤ 15 digits), so the values are those JSON gives."""
    a = np.frombuffer(block, np.uint8)
    r = nt.runs(block)
    if r is None:
        return None
    newlines = np.flatnonzero(a == 10)
    per_line = np.diff(np.searchsorted(r.start, newlines), prepend=0)
    twice = per_line - heads                    # ``width`` numbers per click
    if not len(newlines) or twice.min() < width or (twice % width).any():
        return None
    clicks = twice // width
    counts = clicks.tolist()
    skeletons = {c: _skeleton(heads, c, width) for c in set(counts)}
    if b"".join(map(skeletons.__getitem__, counts)) != block.translate(None, b"0123456789."):
        return None
    head_len = sum(map(len, _HEADS[:heads])) + len(_CLICKS)
    step = 2 + width                            # skeleton bytes a click: "," × (width - 1), "],["
    line_at = np.concatenate(([0], np.cumsum(head_len + step * clicks + 1)[:-1]))
    slot = np.empty(len(r.start), np.int64)     # skeleton bytes before each number
    first = np.concatenate(([0], np.cumsum(per_line)[:-1]))
    head = first[:, None] + np.arange(heads)
    slot[head] = line_at[:, None] + np.cumsum([len(h) for h in _HEADS[:heads]])
    is_click = np.ones(len(r.start), bool)
    is_click[head.ravel()] = False
    at = np.flatnonzero(is_click)
    within = np.arange(len(at)) - np.repeat(np.concatenate(([0], np.cumsum(twice)[:-1])), twice)
    slot[at] = np.repeat(line_at + head_len, twice) + step * (within // width) + within % width
    length = r.end - r.start
    places = np.zeros(len(r.start), np.int64)
    places[first + 1] = 6
    places[at[1::width]] = 3
    lead = (((a[r.start] == 48) & (length > 1) & (a[np.minimum(r.start + 1, len(a) - 1)] != 46))
            | (a[r.start] == 46))              # 07 or .5: not JSON numbers
    if (not np.array_equal(r.start - np.concatenate(([0], np.cumsum(length)[:-1])), slot)
            or not np.array_equal(r.places, places) or lead.any()):
        return None
    return SessionBatch(r.mantissa[first], r.value[first + 1], r.mantissa[first + 2],
                        np.concatenate(([0], np.cumsum(clicks))), r.mantissa[at[0::width]],
                        r.value[at[1::width]], r.mantissa[first + 3] if heads == 4 else None,
                        r.mantissa[at[2::width]] if width == 3 else None)


def _batch(sessions: list[ScenarioSession]) -> SessionBatch:
    """Sessions read one by one, as a batch (agent -1 where a session has none)."""
    agents = [-1 if s.agent is None else s.agent for s in sessions]
    views = [v for s in sessions for v in s.views or [0] * len(s.clicks)]
    ptr = np.cumsum([0] + [len(s.clicks) for s in sessions])
    marks = [(p + k, pos, code) for s, p in zip(sessions, ptr.tolist())
             for k, pos, code in s.statuses or ()]
    urls = [(p + k, u) for s, p in zip(sessions, ptr.tolist()) for k, u in (s.urls or {}).items()]
    return SessionBatch(np.array([s.id for s in sessions], np.int64),
                        np.array([s.start for s in sessions], float),
                        np.array([s.cls for s in sessions], np.int64),
                        ptr,
                        np.array([p for s in sessions for p, _ in s.clicks], np.int64),
                        np.array([t for s in sessions for _, t in s.clicks], float),
                        np.array(agents, np.int64) if max(agents, default=-1) >= 0 else None,
                        np.array(views, np.int64) if any(views) else None,
                        np.array(marks, np.int64).reshape(-1, 3) if marks else None,
                        urls or None)


class ScenarioWriter:
    """Writes the header at once, then batches of sessions (in order of start time)."""

    def __init__(self, out: TextIO, header: dict) -> None:
        self.out = out
        doc = json_ready({"format": SCENARIO_FORMAT, "version": SCENARIO_VERSION, **header})
        self.line = json.dumps(doc, separators=(",", ":"), allow_nan=False)    # strict
        out.write(self.line + "\n")

    @functools.cached_property
    def scenario(self) -> Scenario:
        """The header written, as a reader sees it (with no sessions: give it those written,
        ``as_written``)."""
        return _checked(self.line.encode(), "<written>")

    def write(self, batch: SessionBatch) -> None:
        marked = (batch.statuses is not None and len(batch.statuses) > 0) or bool(batch.urls)
        fast = None if marked else _render(batch)
        if fast is not None:
            self.out.write(fast.decode("ascii"))
            return
        clicks = (list(map(_CLICK.__mod__, zip(batch.pages.tolist(), batch.thinks.tolist())))
                  if batch.views is None else list(map(_CLICK_VIEW.__mod__, zip(
                      batch.pages.tolist(), batch.thinks.tolist(), batch.views.tolist()))))
        ptr = batch.click_ptr.tolist()
        heads = zip(batch.ids.tolist(), batch.starts.tolist(), batch.classes.tolist())
        if batch.agents is None:
            lines = (_SESSION % (*h, ",".join(clicks[a:b]))
                     for h, a, b in zip(heads, ptr[:-1], ptr[1:]))
        else:
            lines = (_SESSION_AGENT % (*h, g, ",".join(clicks[a:b]))
                     for h, g, a, b in zip(heads, batch.agents.tolist(), ptr[:-1], ptr[1:]))
        self.out.write("".join(_with_marks(lines, batch) if marked else lines))


def as_written(b: SessionBatch) -> SessionBatch:
    """``b`` with its times as its lines hold them (``%.6f`` starts, ``%.3f`` think times),
    the values a reader of them gets."""
    return dataclasses.replace(b, starts=_rounded(b.starts, 6), thinks=_rounded(b.thinks, 3))


def _rounded(x: np.ndarray, places: int) -> np.ndarray:
    """``float("%.{places}f" % v)`` for each ``v`` of ``x``."""
    k = nt.scaled(np.asarray(x, float), places)
    if k is None:
        return np.array([float(f"{v:.{places}f}") for v in x.tolist()])
    return k / 10.0 ** places


def _per_session(batch: SessionBatch, rows: list[list]) -> dict[int, list[list]]:
    """``rows`` (each starting with a click of the batch) by session (its position in the
    batch), their clicks counted from the session's first."""
    out: dict[int, list[list]] = {}
    if not rows:
        return out
    rows = sorted(rows, key=lambda r: r[0])
    session = np.searchsorted(batch.click_ptr, [r[0] for r in rows], side="right") - 1
    first = np.asarray(batch.click_ptr)[session]
    for i, k, row in zip(session.tolist(), first.tolist(), rows):
        out.setdefault(i, []).append([int(row[0]) - k, *row[1:]])
    return out


def _with_marks(lines: Iterator[str], batch: SessionBatch) -> Iterator[str]:
    """Each session's line with its ``"urls"`` and ``"status"`` marks."""
    urls = _per_session(batch, [list(u) for u in batch.urls or ()])
    marks = _per_session(batch, batch.statuses.tolist() if batch.statuses is not None else [])
    for i, line in enumerate(lines):
        extra = "".join(f',"{key}":' + json.dumps(v, separators=(",", ":"))
                        for key, v in (("urls", urls.get(i)), ("status", marks.get(i))) if v)
        yield line[:-2] + extra + "}\n" if extra else line


@dataclass
class ScenarioSession:
    id: int
    start: float
    cls: int
    clicks: list[tuple[int, float]]
    agent: int | None = None        # index into Scenario.agents (None: the replay's own)
    views: list[int] | None = None  # per click, the page's view it fetches (None: all 0)
    statuses: list[tuple[int, int, int]] | None = None   # (click, position, status) marks
    urls: dict[int, str] | None = None   # click → its concrete URL (its page a template)

    def own_url(self, k: int) -> str | None:
        """Click ``k``'s own URL (its page a template), or None."""
        return self.urls.get(k) if self.urls else None

    def url(self, k: int, site: SiteSpec) -> str:
        """The URL click ``k`` asks for: its own (a template page's), else its page's."""
        own = self.own_url(k)
        return own if own is not None else site.page_urls[self.clicks[k][0]]

    def view(self, k: int) -> int:
        """The view click ``k`` fetches (0: every object of its page)."""
        return self.views[k] if self.views else 0

    def marks(self, k: int) -> dict[int, int]:
        """Position in click ``k`` (0: its page) → the status its request is answered with,
        for the requests the logged server answered otherwise than with content."""
        return {pos: code for c, pos, code in self.statuses or () if c == k}


@dataclass
class Scenario:
    """A scenario's header, read and checked; iterate ``sessions()`` for its sessions. Read
    from a file (``read_scenario``: ``path``), or held in memory (``data``: the file's bytes,
    as ``wagon.synthesize`` makes it; ``path`` then names it in messages).

    Example:

    >>> sc = wagon.synthesize("model.json", sessions=20, seed=1)     # or wagon.read_scenario
    >>> first = next(sc.sessions())
    >>> first.id, first.start, len(sc.classes)
    (0, ..., 4)
    >>> frame = sc.to_frame()                                         # a row per click
    >>> frame.session.nunique()
    20
    >>> sc.write("twenty.jsonl")
    """

    path: str
    header: dict
    classes: list[ClientClass]
    site: SiteSpec
    agents: list[dict]              # {"family", "user_agent"} (version 3; [] before)
    data: bytes | None = None       # the scenario itself when it is held in memory

    @functools.cached_property
    def object_delays(self) -> np.ndarray | None:
        """The header's ``object_delays``: per rank of an embedded request in its click, the
        percentiles of its delay after the page in modeled seconds (None: not given)."""
        d = self.header.get("object_delays")
        return None if d is None else np.array(d["quantiles"], float)

    def pacing(self, session: int) -> Pacing:
        """The draws of ``object_offsets`` for ``session``: its own stream, from the scenario's
        seed and its id (``formats.streams``: a session plays the same delays in every run)."""
        return Pacing(self.stream_seed, session)

    def pacing_keys(self, sessions: np.ndarray) -> np.ndarray:
        """The keys of the streams of ``pacing`` (``formats.streams.normals`` draws from them
        many sessions' at once)."""
        return session_keys(self.stream_seed, sessions)

    @property
    def statuses_drawn(self) -> bool:
        """Whether the sessions' statuses were drawn from a model (the header's
        ``statuses_drawn``): a request without a mark was then drawn answered with content,
        where without them nothing is said of it."""
        return self.header.get("statuses_drawn", False)

    @property
    def stream_seed(self) -> int:
        """The seed of the replay's own draws (pacing, modeled follow-ups): the scenario's
        ``seed``, 0 when it has none."""
        seed = self.header.get("seed")
        return seed if isinstance(seed, int) and seed >= 0 else 0

    def object_offsets(self, objects: Sequence[int], rng: np.random.Generator) -> np.ndarray:
        """When each of a click's embedded requests (``objects``: their indices in the site,
        in the click's order) is due after its page, in played seconds (``click_delays``
        divided by the speedup), in order; zeros without ``object_delays``."""
        q, n = self.object_delays, len(objects)
        if q is None or not n:
            return np.zeros(n)
        follows = np.asarray(self.site.object_follows, bool)[np.asarray(objects, np.int64)]
        return click_delays(q, np.arange(1, n + 1), np.zeros(n, np.int64), 1, self.delay_rho,
                            rng, follows) / self.speedup

    @property
    def delay_rho(self) -> float:
        """The header's ``object_delays.rho``: how a click's delays go together (a Gaussian
        copula's correlation, one factor a click; 0: independent, as before it was kept)."""
        return float((self.header.get("object_delays") or {}).get("rho", 0.0))

    @property
    def speedup(self) -> float:
        """The factor synthesis divided every time by (1 when it did not)."""
        return float(self.header.get("options", {}).get("speedup") or 1.0)

    def _open(self) -> BinaryIO:
        return io.BytesIO(self.data) if self.data is not None else \
            open_regular(self.path, ScenarioError)

    def sessions(self) -> Iterator[ScenarioSession]:
        """The sessions, checked line by line (in order of start time, as the format says)."""
        for b in self.batches():
            ids, starts, cls = b.ids.tolist(), b.starts.tolist(), b.classes.tolist()
            agents = b.agents.tolist() if b.agents is not None else [-1] * len(ids)
            ptr = b.click_ptr.tolist()
            clicks = list(zip(b.pages.tolist(), b.thinks.tolist()))
            views = b.views.tolist() if b.views is not None else None
            marks = _per_session(b, b.statuses.tolist() if b.statuses is not None else [])
            urls = _per_session(b, [list(u) for u in b.urls or ()])
            for i, (sid, start, c, agent) in enumerate(zip(ids, starts, cls, agents)):
                yield ScenarioSession(sid, start, c, clicks[ptr[i]:ptr[i + 1]],
                                      None if agent < 0 else agent,
                                      views[ptr[i]:ptr[i + 1]] if views is not None else None,
                                      [tuple(m) for m in marks.get(i, ())] or None,
                                      dict(map(tuple, urls.get(i, ()))) or None)

    def batches(self, size: int = BLOCK) -> Iterator[SessionBatch]:
        """The sessions in batches of about ``size`` bytes of lines, checked as ``sessions``
        checks them: lines as the writer writes them are read with NumPy (``_parse``), any
        other block line by line (which names a bad line; the sessions before it come first)."""
        last, last_id, lineno, rest = 0.0, -1, 2, b""
        with self._open() as f:
            f.readline()
            while True:
                chunk = f.read(size)
                data = rest + chunk
                cut = data.rfind(b"\n") + 1 if chunk else len(data)
                if not data or (chunk and not cut):
                    if not chunk:
                        return
                    rest = data
                    continue
                block, rest = data[:cut], data[cut:]
                if not block.endswith(b"\n"):
                    block += b"\n"
                fast = self._vectorised(block, last, last_id)
                for batch in ([fast] if fast is not None
                              else self._by_line(block, lineno, last, last_id)):
                    if len(batch):
                        last, last_id = float(batch.starts[-1]), int(batch.ids[-1])
                        yield batch
                lineno += block.count(b"\n")

    def _vectorised(self, block: bytes, last: float, last_id: int) -> SessionBatch | None:
        """The block's sessions when they are in the writer's form and pass every check."""
        if b'"status"' in block or b'"urls"' in block:     # marked: read line by line
            return None
        line = block[:block.find(b"\n")]
        click = line[line.find(_CLICKS) + len(_CLICKS):]
        width = click[:click.find(b"]")].count(b",") + 1      # of the first click
        b = _parse(block, 4 if b',"agent":' in line else 3, width) if width in (2, 3) else None
        if b is None or not len(b):
            return None
        ok = (b.starts[0] >= last and (np.diff(b.starts) >= 0).all()
              and b.starts[-1] <= MAX_RUN_S and b.thinks.max(initial=0) <= MAX_RUN_S
              and b.ids[0] > last_id and (np.diff(b.ids) > 0).all()
              and b.classes.max() < len(self.classes) and b.pages.max() < len(self.site.page_urls)
              and not self._templated[b.pages].any()
              and (b.agents is None or b.agents.max() < len(self.agents))
              and (b.views is None or self._views_exist(b)))
        return b if ok else None

    def _views_exist(self, b: SessionBatch) -> bool:
        """Whether every click's view is one its page has (0: always)."""
        return bool((b.views <= self._view_counts[b.pages]).all())

    @functools.cached_property
    def _templated(self) -> np.ndarray:
        """Per page, whether it is a request template (its clicks need their URLs)."""
        return np.array([t is not None for t in self.site.templates], bool)

    @functools.cached_property
    def _view_counts(self) -> np.ndarray:
        return np.array([len(v) for v in self.site.page_views], np.int64)

    def _by_line(self, block: bytes, lineno: int, last: float, last_id: int
                 ) -> Iterator[SessionBatch]:
        """The block read line by line: its sessions up to a bad line, then that line's error."""
        done, error = [], None
        for k, raw in enumerate(block.split(b"\n")[:-1]):
            if not raw.strip():
                continue
            try:
                s = self._session(raw, lineno + k)
                if s.start < last:
                    raise ScenarioError(f"{self.path}:{lineno + k}: sessions must be in order "
                                        f"of start time ({s.start} after {last})")
                if s.id <= last_id:
                    raise ScenarioError(f"{self.path}:{lineno + k}: session id {s.id} is not "
                                        f"above the previous one ({last_id}): ids are unique "
                                        "and increase line by line")
            except ScenarioError as e:
                error = e
                break
            last, last_id = s.start, s.id
            done.append(s)
        yield _batch(done)
        if error is not None:
            raise error

    def write(self, path: str | os.PathLike) -> None:
        """The scenario as a file (complete or not at all: ``atomic``)."""
        with self._open() as src, atomic_write(path, "wb") as out:
            shutil.copyfileobj(src, out)

    def to_frame(self):
        """A pandas DataFrame with a row per click: session, start (s), class and agent
        (names), click (rank in its session), page (index), method, url (the click's own),
        think (s before it), objects (embedded in the page)."""
        import pandas as pd  # lazy: pandas costs 0.3 s, only this table needs it
        rows = [(s.id, s.start, self.classes[s.cls].name,
                 self.agents[s.agent]["family"] if s.agent is not None else None, k, page,
                 self.site.page_methods[page], s.url(k, self.site), think,
                 len(self.site.page_objects[page]))
                for s in self.sessions() for k, (page, think) in enumerate(s.clicks)]
        return pd.DataFrame(rows, columns=["session", "start", "class", "agent", "click",
                                           "page", "method", "url", "think", "objects"])

    def _session(self, raw: bytes, lineno: int) -> ScenarioSession:
        where = f"{self.path}:{lineno}"
        try:
            d = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ScenarioError(f"{where}: not JSON ({e})") from None
        if not isinstance(d, dict):
            raise ScenarioError(f"{where}: a session must be a JSON object")
        for key, kind in (("id", int), ("start", (int, float)), ("class", int), ("clicks", list)):
            if not isinstance(d.get(key), kind) or isinstance(d.get(key), bool):
                raise ScenarioError(f"{where}: '{key}' is missing or not {_kind(kind)}")
        if d["id"] >= 1 << 63:
            raise ScenarioError(f"{where}: 'id' must be below 2**63")
        if not 0 <= d["start"] <= MAX_RUN_S:
            raise ScenarioError(f"{where}: 'start' must be a time in [0, {MAX_RUN_S:g}] s")
        if not 0 <= d["class"] < len(self.classes):
            raise ScenarioError(f"{where}: class {d['class']} does not exist "
                                f"({len(self.classes)} classes in the header)")
        if not d["clicks"]:
            raise ScenarioError(f"{where}: a session needs at least one click")
        agent = d.get("agent")
        if agent is not None and (not isinstance(agent, int) or isinstance(agent, bool)
                                  or not 0 <= agent < len(self.agents)):
            raise ScenarioError(f"{where}: agent {agent!r} does not exist "
                                f"({len(self.agents)} agents in the header)")
        pages = len(self.site.page_urls)
        clicks, views = [], []
        for k, c in enumerate(d["clicks"]):
            if not (isinstance(c, list) and len(c) in (2, 3) and isinstance(c[0], int)
                    and isinstance(c[1], (int, float)) and not isinstance(c[0], bool)
                    and not isinstance(c[1], bool)
                    and (len(c) == 2 or isinstance(c[2], int) and not isinstance(c[2], bool))):
                raise ScenarioError(f"{where}: click {k} is not [page, think] or "
                                    "[page, think, view]")
            if not 0 <= c[0] < pages:
                raise ScenarioError(f"{where}: click {k} names page {c[0]}, the site has {pages}")
            if not 0 <= c[1] <= MAX_RUN_S:
                raise ScenarioError(f"{where}: click {k}'s think time must be in [0, "
                                    f"{MAX_RUN_S:g}] s")
            view = c[2] if len(c) == 3 else 0
            if not 0 <= view <= len(self.site.page_views[c[0]]):
                raise ScenarioError(f"{where}: click {k} names view {view} of page {c[0]}, "
                                    f"which has {len(self.site.page_views[c[0]])}")
            clicks.append((c[0], float(c[1])))
            views.append(view)
        return ScenarioSession(d["id"], float(d["start"]), d["class"], clicks, agent,
                               views if any(views) else None,
                               self._statuses(d.get("status"), clicks, views, where),
                               self._urls(d.get("urls"), clicks, where))

    def _urls(self, urls: object, clicks: list[tuple[int, float]], where: str
              ) -> dict[int, str] | None:
        """A session's ``urls``: one for each click of a template page, matching it."""
        ok = urls is None or isinstance(urls, list) and all(
            isinstance(u, list) and len(u) == 2 and type(u[0]) is int
            and 0 <= u[0] < len(clicks) and isinstance(u[1], str) for u in urls)
        if not ok:
            raise ScenarioError(f"{where}: 'urls' must list [click, url] pairs, each click one "
                                "of the session's")
        got = dict(map(tuple, urls or ()))
        for k, (page, _) in enumerate(clicks):
            pattern = self.site.templates[page]
            url = got.get(k)
            if pattern is None and url is not None:
                raise ScenarioError(f"{where}: click {k} has a URL of its own but its page "
                                    f"{page} is not a template ({self.site.page_urls[page]})")
            if pattern is not None and (url is None or len(url) > MAX_URL or
                                        not pattern.fullmatch(url)):
                raise ScenarioError(f"{where}: click {k} of the template page {page} "
                                    f"({self.site.page_urls[page]}) needs its URL in 'urls', "
                                    f"matching the template (got {url!r:.80})")
        return got or None

    def _statuses(self, marks: object, clicks: list[tuple[int, float]], views: list[int],
                  where: str) -> list[tuple[int, int, int]] | None:
        """A session's ``status`` marks, each naming a request of its clicks and a status a
        built site answers."""
        if marks is None:
            return None
        ok = isinstance(marks, list) and all(
            isinstance(m, list) and len(m) == 3 and all(
                isinstance(v, int) and not isinstance(v, bool) for v in m)
            and 0 <= m[0] < len(clicks) and m[2] in STATUS_CODES
            and 0 <= m[1] <= len(self.site.view(clicks[m[0]][0], views[m[0]]).objects)
            for m in marks)
        if not ok:
            raise ScenarioError(f"{where}: 'status' must list [click, position, status]: a "
                                "click of the session, a request of it (0: its page), a status "
                                f"of {STATUS_CODES[0]}..{STATUS_CODES[-1]} a site answers")
        return [tuple(m) for m in marks] or None


def _kind(kind) -> str:
    return {int: "an integer", list: "a list"}.get(kind, "a number")


def read_scenario(path: str | os.PathLike) -> Scenario:
    """Open a scenario and check its header (sessions are checked as they are read).

    Example:

    >>> sc = wagon.read_scenario("scenario.jsonl")          # as wagon synth writes it
    >>> sum(1 for _ in sc.sessions()), [c.name for c in sc.classes]
    (3, ['lan/http11'])
    """
    path = str(path)
    with open_regular(path, ScenarioError) as f:
        try:
            first = f.readline(MAX_DOCUMENT_BYTES + 1)
        except OSError as e:
            raise ScenarioError(f"{path}: {e.strerror or e}") from None
    if len(first) > MAX_DOCUMENT_BYTES:
        raise ScenarioError(f"{path}:1: the header line is longer than {MAX_DOCUMENT_BYTES:,} "
                            "bytes")
    other = wrong_kind(path, "a wagon scenario")
    if other:
        raise ScenarioError(other)
    return _checked(first, path)


def scenario_from_bytes(data: bytes, name: str = "<scenario>") -> Scenario:
    """A scenario held in memory (the bytes of its file), checked as ``read_scenario`` checks a
    file; ``name`` stands for the path in messages."""
    return _checked(data.split(b"\n", 1)[0], name, data)


def _checked(first: bytes, path: str, data: bytes | None = None) -> Scenario:
    """The Scenario whose header line is ``first``; ScenarioError names what is wrong."""
    try:
        h = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ScenarioError(f"{path}:1: not a wagon scenario (the header is not JSON)") from None
    if not isinstance(h, dict) or h.get("format") != SCENARIO_FORMAT:
        raise ScenarioError(f"{path}:1: not a wagon scenario ('format' is not {SCENARIO_FORMAT!r})")
    if type(h.get("version")) is not int or not 1 <= h["version"] <= SCENARIO_VERSION:
        raise ScenarioError(f"{path}:1: scenario version {h.get('version')!r} is not one this "
                            f"wagon reads (1..{SCENARIO_VERSION})")
    try:
        classes = [ClientClass.from_dict(c, f"classes[{i}]") for i, c in enumerate(h["classes"])]
        site = SiteSpec.from_dict(h["site"])
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ScenarioError(f"{path}:1: the header's classes or site are malformed: "
                            f"{e.args[0] if isinstance(e, ValueError) and e.args else repr(e)}"
                            ) from None
    if not classes:
        raise ScenarioError(f"{path}:1: the header needs at least one class")
    options = h.get("options", {})
    speedup = options.get("speedup") if isinstance(options, dict) else 0
    if not (speedup is None or type(speedup) in (int, float) and
            SPEEDUP[0] <= speedup <= SPEEDUP[1]):
        raise ScenarioError(f"{path}:1: the header's options must be an object, its speedup "
                            f"a number in [{SPEEDUP[0]:g}, {SPEEDUP[1]:g}]")
    delays = h.get("object_delays")
    q = delays.get("quantiles") if isinstance(delays, dict) else None
    if delays is not None and not (
            isinstance(q, list) and q and all(
                isinstance(r, list) and len(r) == len(q[0]) > 1
                and all(type(x) in (int, float) and 0 <= x < math.inf for x in r)
                and all(a <= b for a, b in zip(r, r[1:])) for r in q)
            and type(delays.get("rho", 0.0)) in (int, float) and 0 <= delays.get("rho", 0.0) <= 1):
        raise ScenarioError(f"{path}:1: the header's object_delays needs 'quantiles': rows of "
                            "as many non-decreasing delays >= 0 (s), at least two a row, and "
                            "'rho' (optional) in [0, 1]")
    if not isinstance(h.get("statuses_drawn", False), bool):
        raise ScenarioError(f"{path}:1: the header's statuses_drawn must be true or false")
    return Scenario(path, h, classes, site, _agents(h.get("agents", []), path), data)


def _agents(agents: object, path: str) -> list[dict]:
    """The header's agents, checked: a User-Agent goes into request headers as it is."""
    ok = isinstance(agents, list) and all(
        isinstance(a, dict) and isinstance(a.get("family"), str)
        and isinstance(a.get("user_agent"), str) and _PRINTABLE.fullmatch(a["user_agent"])
        for a in agents)
    if not ok:
        raise ScenarioError(f"{path}:1: the header's agents must be a list of {{family, "
                            "user_agent}} with user_agent 1-512 printable ASCII characters")
    return [{"family": a["family"], "user_agent": a["user_agent"]} for a in agents]
