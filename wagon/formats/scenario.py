"""Scenario files: JSON Lines, a header then one session per line.

    {"format": "wagon-scenario", "version": 3, "seed": 7, "model": {...}, "options": {...},
     "laws": {...}, "classes": [...], "site": {"pages": [...], "objects": [...]},
     "agents": [{"family": "firefox", "user_agent": "Mozilla/5.0 ..."}, ...]}
    {"id": 0, "start": 0.532118, "class": 1, "agent": 0, "clicks": [[12, 0.0], [40, 31.204]]}

A click is ``[page, think]``: the page's index in ``site.pages`` (its embedded objects are that
page's ``objects``, indices into ``site.objects``) and the think time in seconds before it
(0 for the first click). Times are seconds from the start of the run; sessions are in order of
start time. The header's ``site`` (``formats.site``) is the one description of the site every
consumer serves or builds. A session's ``agent`` (version 3) indexes the header's ``agents``:
the browser its user presents (its User-Agent, printable ASCII). Versions 1 (no page ``links``)
and 2 (no agents: a replay sends its own User-Agent) are read too.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import shutil
from dataclasses import dataclass
from typing import BinaryIO, Iterator, TextIO

import numpy as np

from .atomic import atomic_write
from .classes import ClientClass
from .kind import SCENARIO_FORMAT, wrong_kind
from .site import SiteSpec
from .strict_json import json_ready

__all__ = ["ScenarioError", "Scenario", "ScenarioSession", "SessionBatch", "ScenarioWriter",
           "read_scenario", "scenario_from_bytes", "SCENARIO_FORMAT", "SCENARIO_VERSION",
           "model_digest"]

SCENARIO_VERSION = 3
_SESSION = '{"id":%d,"start":%.6f,"class":%d,"clicks":[%s]}\n'
_SESSION_AGENT = '{"id":%d,"start":%.6f,"class":%d,"agent":%d,"clicks":[%s]}\n'
_PRINTABLE = re.compile(r"[\x20-\x7e]{1,512}")
_CLICK = "[%d,%.3f]"


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
    agents: np.ndarray | None = None    # index into the header's agents, per session

    def __len__(self) -> int:
        return len(self.ids)


class ScenarioWriter:
    """Writes the header at once, then batches of sessions (in order of start time)."""

    def __init__(self, out: TextIO, header: dict) -> None:
        self.out = out
        doc = json_ready({"format": SCENARIO_FORMAT, "version": SCENARIO_VERSION, **header})
        out.write(json.dumps(doc, separators=(",", ":"), allow_nan=False) + "\n")   # strict

    def write(self, batch: SessionBatch) -> None:
        clicks = list(map(_CLICK.__mod__, zip(batch.pages.tolist(), batch.thinks.tolist())))
        ptr = batch.click_ptr.tolist()
        heads = zip(batch.ids.tolist(), batch.starts.tolist(), batch.classes.tolist())
        if batch.agents is None:
            lines = (_SESSION % (*h, ",".join(clicks[a:b]))
                     for h, a, b in zip(heads, ptr[:-1], ptr[1:]))
        else:
            lines = (_SESSION_AGENT % (*h, g, ",".join(clicks[a:b]))
                     for h, g, a, b in zip(heads, batch.agents.tolist(), ptr[:-1], ptr[1:]))
        self.out.write("".join(lines))


@dataclass
class ScenarioSession:
    id: int
    start: float
    cls: int
    clicks: list[tuple[int, float]]
    agent: int | None = None        # index into Scenario.agents (None: the replay's own)


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

    @property
    def speedup(self) -> float:
        """The factor synthesis divided every time by (1 when it did not)."""
        return float(self.header.get("options", {}).get("speedup") or 1.0)

    def _open(self) -> BinaryIO:
        return io.BytesIO(self.data) if self.data is not None else open(self.path, "rb")

    def sessions(self) -> Iterator[ScenarioSession]:
        """The sessions, checked line by line (in order of start time, as the format says)."""
        last, last_id = 0.0, -1
        with self._open() as f:
            f.readline()
            for lineno, raw in enumerate(f, start=2):
                if raw.strip():
                    s = self._session(raw, lineno)
                    if s.start < last:
                        raise ScenarioError(f"{self.path}:{lineno}: sessions must be in order of "
                                            f"start time ({s.start} after {last})")
                    if s.id <= last_id:
                        raise ScenarioError(f"{self.path}:{lineno}: session id {s.id} is not "
                                            f"above the previous one ({last_id}): ids are "
                                            "unique and increase line by line")
                    last, last_id = s.start, s.id
                    yield s

    def write(self, path: str | os.PathLike) -> None:
        """The scenario as a file (complete or not at all: ``atomic``)."""
        with self._open() as src, atomic_write(path, "wb") as out:
            shutil.copyfileobj(src, out)

    def to_frame(self):
        """A pandas DataFrame with a row per click: session, start (s), class and agent
        (names), click (rank in its session), page (index), url, think (s before it),
        objects (embedded in the page)."""
        import pandas as pd  # lazy: pandas costs 0.3 s, only this table needs it
        rows = [(s.id, s.start, self.classes[s.cls].name,
                 self.agents[s.agent]["family"] if s.agent is not None else None, k, page,
                 self.site.page_urls[page], think, len(self.site.page_objects[page]))
                for s in self.sessions() for k, (page, think) in enumerate(s.clicks)]
        return pd.DataFrame(rows, columns=["session", "start", "class", "agent", "click",
                                           "page", "url", "think", "objects"])

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
        if not (math.isfinite(d["start"]) and d["start"] >= 0):
            raise ScenarioError(f"{where}: 'start' must be a finite time ≥ 0")
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
        clicks = []
        for k, c in enumerate(d["clicks"]):
            if not (isinstance(c, list) and len(c) == 2 and isinstance(c[0], int)
                    and isinstance(c[1], (int, float)) and not isinstance(c[0], bool)):
                raise ScenarioError(f"{where}: click {k} is not [page, think]")
            if not 0 <= c[0] < pages:
                raise ScenarioError(f"{where}: click {k} names page {c[0]}, the site has {pages}")
            if not (math.isfinite(c[1]) and c[1] >= 0):
                raise ScenarioError(f"{where}: click {k} has a negative or infinite think time")
            clicks.append((c[0], float(c[1])))
        return ScenarioSession(d["id"], float(d["start"]), d["class"], clicks, agent)


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
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError as e:
        raise ScenarioError(f"{path}: {e.strerror or e}") from None
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
    if not isinstance(h.get("version"), int) or not 1 <= h["version"] <= SCENARIO_VERSION:
        raise ScenarioError(f"{path}:1: scenario version {h.get('version')!r} is not one this "
                            f"wagon reads (1..{SCENARIO_VERSION})")
    try:
        classes = [ClientClass.from_dict(c) for c in h["classes"]]
        site = SiteSpec.from_dict(h["site"])
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ScenarioError(f"{path}:1: the header's classes or site are malformed: "
                            f"{e.args[0] if isinstance(e, ValueError) and e.args else repr(e)}"
                            ) from None
    if not classes:
        raise ScenarioError(f"{path}:1: the header needs at least one class")
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
