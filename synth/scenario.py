"""Scenario files: JSON Lines, a header then one session per line.

    {"format": "wagon-scenario", "version": 1, "seed": 7, "model": {...}, "options": {...},
     "laws": {...}, "classes": [...], "site": {"pages": [...], "objects": [...]}}
    {"id": 0, "start": 0.532118, "class": 1, "clicks": [[12, 0.0], [40, 31.204]]}

A click is ``[page, think]``: the page's index in ``site.pages`` (its embedded objects are that
page's ``objects``, indices into ``site.objects``) and the think time in seconds before it
(0 for the first click). Times are seconds from the start of the run.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from typing import Callable, Iterator, TextIO

import numpy as np

from wagon.model import Model

from .classes import ClientClass
from .generate import Batch, Generator

__all__ = ["ScenarioError", "Scenario", "ScenarioSession", "write_scenario", "read_scenario",
           "SCENARIO_FORMAT", "SCENARIO_VERSION", "model_digest", "SynthSummary"]

SCENARIO_FORMAT = "wagon-scenario"
SCENARIO_VERSION = 1
_SESSION = '{"id":%d,"start":%.6f,"class":%d,"clicks":[%s]}\n'
_CLICK = "[%d,%.3f]"


class ScenarioError(ValueError):
    """A scenario file that cannot be read (the message names the line)."""


def model_digest(model: Model | None) -> str | None:
    if model is None:
        return None
    canon = json.dumps(model.data, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + hashlib.sha256(canon).hexdigest()


@dataclass
class SynthSummary:
    """What a written scenario holds, and its offered load over time."""

    sessions: int = 0
    clicks: int = 0
    requests: int = 0
    first_start: float = math.inf
    last_start: float = 0.0
    bucket: float = 1.0
    offered: np.ndarray | None = None       # requests per bucket at their offered times

    def add(self, batch: Batch, objects_per_page: np.ndarray) -> None:
        n_clicks = len(batch.pages)
        requests_per_click = 1 + objects_per_page[batch.pages]
        self.sessions += len(batch)
        self.clicks += n_clicks
        self.requests += int(requests_per_click.sum())
        self.first_start = min(self.first_start, float(batch.starts[0]))
        self.last_start = max(self.last_start, float(batch.starts[-1]))
        # offered time of a click: its session's start plus the think times before it
        session_of = np.repeat(np.arange(len(batch)), np.diff(batch.click_ptr))
        cum = np.cumsum(batch.thinks)
        before = cum - cum[batch.click_ptr[:-1]][session_of]
        when = batch.starts[session_of] + before
        counts = np.bincount((when // self.bucket).astype(np.int64), weights=requests_per_click)
        if self.offered is None or len(self.offered) < len(counts):
            grown = np.zeros(len(counts))
            if self.offered is not None:
                grown[:len(self.offered)] = self.offered
            self.offered = grown
        self.offered[:len(counts)] += counts

    def as_dict(self) -> dict:
        rate = (self.offered / self.bucket).tolist() if self.offered is not None else []
        return {"sessions": self.sessions, "clicks": self.clicks, "requests": self.requests,
                "first_start": self.first_start if self.sessions else None,
                "last_start": self.last_start if self.sessions else None,
                "bucket_s": self.bucket, "offered_requests_per_s": rate}


def write_scenario(gen: Generator, out: TextIO, model_name: str | None = None,
                   progress: Callable[[int], None] | None = None) -> SynthSummary:
    """Write the header and every session of ``gen``; returns the summary."""
    o = gen.options
    header = {"format": SCENARIO_FORMAT, "version": SCENARIO_VERSION, "seed": o.seed,
              "model": {"name": model_name, "digest": model_digest(gen.model)}, **gen.header()}
    out.write(json.dumps(header, separators=(",", ":")) + "\n")
    horizon = o.duration if o.duration is not None else o.sessions / gen.rate
    summary = SynthSummary(bucket=max(horizon / o.speedup / 20, 1e-3))
    objects_per_page = np.array([len(p) for p in gen.site.page_objects], np.int64)
    for batch in gen.batches():
        clicks = list(map(_CLICK.__mod__, zip(batch.pages.tolist(), batch.thinks.tolist())))
        ptr = batch.click_ptr.tolist()
        lines = [_SESSION % (i, s, c, ",".join(clicks[a:b])) for i, s, c, a, b in
                 zip(batch.ids.tolist(), batch.starts.tolist(), batch.classes.tolist(), ptr[:-1],
                     ptr[1:])]
        out.write("".join(lines))
        summary.add(batch, objects_per_page)
        if progress is not None:
            progress(len(batch))
    return summary


@dataclass
class ScenarioSession:
    id: int
    start: float
    cls: int
    clicks: list[tuple[int, float]]


@dataclass
class Scenario:
    """A scenario's header, read and checked; iterate ``sessions()`` for its sessions."""

    path: str
    header: dict
    classes: list[ClientClass]
    page_urls: list[str]
    page_sizes: list[int]
    page_objects: list[list[int]]
    object_urls: list[str]
    object_sizes: list[int]

    def sessions(self) -> Iterator[ScenarioSession]:
        """The sessions, checked line by line (in order of start time, as the format says)."""
        last = 0.0
        with open(self.path, "rb") as f:
            f.readline()
            for lineno, raw in enumerate(f, start=2):
                if raw.strip():
                    s = self._session(raw, lineno)
                    if s.start < last:
                        raise ScenarioError(f"{self.path}:{lineno}: sessions must be in order of "
                                            f"start time ({s.start} after {last})")
                    last = s.start
                    yield s

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
        clicks = []
        for k, c in enumerate(d["clicks"]):
            if not (isinstance(c, list) and len(c) == 2 and isinstance(c[0], int)
                    and isinstance(c[1], (int, float)) and not isinstance(c[0], bool)):
                raise ScenarioError(f"{where}: click {k} is not [page, think]")
            if not 0 <= c[0] < len(self.page_urls):
                raise ScenarioError(f"{where}: click {k} names page {c[0]}, the site has "
                                    f"{len(self.page_urls)}")
            if not (math.isfinite(c[1]) and c[1] >= 0):
                raise ScenarioError(f"{where}: click {k} has a negative or infinite think time")
            clicks.append((c[0], float(c[1])))
        return ScenarioSession(d["id"], float(d["start"]), d["class"], clicks)


def _kind(kind) -> str:
    return {int: "an integer", list: "a list"}.get(kind, "a number")


def read_scenario(path: str | os.PathLike) -> Scenario:
    """Open a scenario and check its header (sessions are checked as they are read)."""
    path = str(path)
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError as e:
        raise ScenarioError(f"{path}: {e.strerror or e}") from None
    try:
        h = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ScenarioError(f"{path}:1: not a wagon scenario (the header is not JSON)") from None
    if not isinstance(h, dict) or h.get("format") != SCENARIO_FORMAT:
        raise ScenarioError(f"{path}:1: not a wagon scenario ('format' is not {SCENARIO_FORMAT!r})")
    if not isinstance(h.get("version"), int) or h["version"] > SCENARIO_VERSION:
        raise ScenarioError(f"{path}:1: scenario version {h.get('version')!r} is not one this "
                            f"wagon reads ({SCENARIO_VERSION})")
    try:
        classes = [ClientClass.from_dict(c) for c in h["classes"]]
        site = h["site"]
        pages, objects = site["pages"], site["objects"]
        page_urls = [str(p["url"]) for p in pages]
        page_sizes = [int(p["size"]) for p in pages]
        page_objects = [[int(o) for o in p["objects"]] for p in pages]
        object_urls = [str(o["url"]) for o in objects]
        object_sizes = [int(o["size"]) for o in objects]
    except (KeyError, TypeError, ValueError) as e:
        raise ScenarioError(f"{path}:1: the header's classes or site are malformed ({e!r})") \
            from None
    if not classes or not pages:
        raise ScenarioError(f"{path}:1: the header needs at least one class and one page")
    if any(not 0 <= o < len(objects) for p in page_objects for o in p):
        raise ScenarioError(f"{path}:1: a page refers to an object that does not exist")
    return Scenario(path, h, classes, page_urls, page_sizes, page_objects, object_urls,
                    object_sizes)
