"""Topology files (TOML) of ``wagon replay --network packet --topology FILE``: shared links in
front of the clients' own access links, and correlated (Gilbert–Elliott) loss on any link.

A file has ``[[link]]`` tables (a shared link each) and ``[access.NAME]`` tables (the access
links of the classes whose class or network is NAME); docs/formats.md gives the rules::

    [[link]]
    name = "bottleneck"
    rate = "10Mbit"            # or up = "…" and down = "…"
    delay_ms = 20              # one way
    queue_kb = 64              # a tail-drop FIFO per direction
    classes = ["t1-dsl", "modem"]
    share = 1.0                # of each named class's sessions (file order splits a class)
    loss = {mean = 0.01, burst = 4}

    red = {min_kb = 10, max_kb = 30}    # optional: Random Early Detection on that queue

    [access.modem]
    loss = {p = 0.002, r = 0.25, k = 1.0, h = 0.0}

    [server]
    initcwnd = 2               # segments the server's first flight to a client may hold
    mss = 536                  # bytes a segment between the server and a client may hold

A loss is a probability (Bernoulli) or a Gilbert–Elliott chain given as ``p``, ``r`` (and ``k``,
``h``: the chances a packet gets through in the good and the bad state, 1 and 0 by default) or
as ``mean`` and ``burst`` (the simple form: loss only in the bad state, bursts of mean length
``burst`` packets).
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..source import read_toml

__all__ = ["TopologyError", "Topology", "SharedLink", "Direction", "GilbertElliott", "Red",
           "read_topology", "parse_rate"]


class TopologyError(ValueError):
    """A topology file that cannot be used (one line, naming the file and the key)."""


@dataclass(frozen=True)
class GilbertElliott:
    """A two-state loss chain per packet: good → bad with probability ``p``, bad → good with
    ``r``; a packet is lost with ``good_loss`` (1−k) in the good state, ``bad_loss`` (1−h) in
    the bad one."""

    p: float
    r: float
    good_loss: float = 0.0
    bad_loss: float = 1.0

    @property
    def mean(self) -> float:
        """The long-run loss rate π_G·(1−k) + π_B·(1−h), π_B = p/(p+r)."""
        bad = self.p / (self.p + self.r)
        return (1 - bad) * self.good_loss + bad * self.bad_loss


Loss = float | GilbertElliott


@dataclass(frozen=True)
class Red:
    """Random Early Detection on a queue (Floyd & Jacobson 1993): below ``min`` bytes of
    average queue nothing is dropped early, between ``min`` and ``max`` a packet with
    probability ``max_p`` · (avg − min)/(max − min) spread by the packets since the last drop,
    at ``max`` or above every one; the average is an EWMA of weight ``weight`` per packet."""

    min: float
    max: float
    max_p: float = 0.1
    weight: float = 0.002


@dataclass(frozen=True)
class Direction:
    """One direction of a shared link: rate (bytes/s), queue (bytes), one-way delay (s), and
    RED on its queue when ``red`` (else a tail-drop FIFO only)."""

    rate: float
    queue: float
    delay: float
    loss: Loss = 0.0
    red: Red | None = None


@dataclass(frozen=True)
class SharedLink:
    """A link shared by ``share`` of the sessions of each class in ``classes``."""

    name: str
    up: Direction
    down: Direction
    classes: tuple[str, ...]
    share: float = 1.0


@dataclass(frozen=True)
class Topology:
    """The shared links, the access links' losses by class or network name, and the initial
    congestion window (segments) and maximum segment size (bytes) of the server's connections
    to the clients (None: its kernel's)."""

    links: tuple[SharedLink, ...]
    access: dict[str, Loss]
    initcwnd: int | None = None
    mss: int | None = None


#: ``[server]``'s keys: their unit and bounds (mss: the least every IPv4 host accepts, RFC
#: 879, to the path's own, replay.netpath's 1,500-byte MTU less 40 bytes of headers)
SERVER_KEYS = {"initcwnd": ("segments", 1, 1000), "mss": ("bytes", 536, 1460)}
_RATE = re.compile(r"\s*(\d+(?:\.\d*)?(?:e\d+)?)\s*(bit|kbit|mbit|gbit)(?:/s)?\s*", re.I)
_UNIT = {"bit": 1.0, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
LINK_KEYS = {"name", "rate", "up", "down", "delay_ms", "queue_kb", "classes", "share", "loss",
             "red"}
RED_KEYS = {"min_kb", "max_kb", "max_p", "weight"}
LOSS_KEYS = ({"p", "r", "k", "h"}, {"mean", "burst"})


def parse_rate(text: object) -> float:
    """Bytes/s of a rate written as tc writes it ("10Mbit", "512kbit"); ValueError else."""
    m = _RATE.fullmatch(text) if isinstance(text, str) else None
    if m is None or not float(m.group(1)) > 0:
        raise ValueError(f"{text!r} is not a rate (a positive number and bit, kbit, Mbit or "
                         "Gbit, e.g. \"10Mbit\")")
    return float(m.group(1)) * _UNIT[m.group(2).lower()] / 8


def _number(where: str, value: object, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise TopologyError(f"{where}: {value!r} is not a number in [{low:g}, {high:g}]")
    return float(value)


def _loss(where: str, value: object) -> Loss:
    """A probability, or a Gilbert–Elliott chain from p/r(/k/h) or mean/burst."""
    if not isinstance(value, dict):
        loss = _number(where, value, 0, 1)
        if loss == 1:
            raise TopologyError(f"{where}: a loss of 1 lets nothing through")
        return loss
    keys = set(value)
    if keys <= LOSS_KEYS[0] and {"p", "r"} <= keys:
        p, r = (_number(f"{where}.{k}", value[k], 0, 1) for k in ("p", "r"))
        k, h = (_number(f"{where}.{n}", value.get(n, d), 0, 1) for n, d in (("k", 1), ("h", 0)))
        if r == 0:
            raise TopologyError(f"{where}.r: 0 never leaves the bad state")
        return GilbertElliott(p, r, 1 - k, 1 - h)
    if keys == LOSS_KEYS[1]:
        mean = _number(f"{where}.mean", value["mean"], 0, 0.999)
        burst = _number(f"{where}.burst", value["burst"], 1, 1e6)
        r = 1 / burst
        p = mean * r / (1 - mean)
        if p > 1:
            raise TopologyError(f"{where}: a mean loss of {mean:g} in bursts of {burst:g} needs "
                                f"p = {p:.3g} > 1 (longer bursts or less loss)")
        return GilbertElliott(p, r)
    raise TopologyError(f"{where}: a Gilbert–Elliott loss is {{p, r}} (k, h optional) or "
                        f"{{mean, burst}}, not {{{', '.join(sorted(keys))}}}")


def _red(where: str, value: object, queue: float) -> Red | None:
    """RED's thresholds (kB, min < max ≤ the queue), max_p and weight, or None."""
    if value is None:
        return None
    if not isinstance(value, dict) or not {"min_kb", "max_kb"} <= set(value) <= RED_KEYS:
        raise TopologyError(f"{where}: RED is {{min_kb, max_kb}} (max_p, weight optional)")
    low, high = (_number(f"{where}.{k}", value[k], 0, queue / 1000) * 1000
                 for k in ("min_kb", "max_kb"))
    if not low < high:
        raise TopologyError(f"{where}: min_kb must be below max_kb")
    return Red(low, high, _number(f"{where}.max_p", value.get("max_p", 0.1), 1e-6, 1),
               _number(f"{where}.weight", value.get("weight", 0.002), 1e-6, 1))


def _link(where: str, t: object) -> SharedLink:
    if not isinstance(t, dict):
        raise TopologyError(f"{where}: a table")
    unknown = set(t) - LINK_KEYS
    if unknown:
        raise TopologyError(f"{where}: unknown key {sorted(unknown)[0]!r} (the keys: "
                            f"{', '.join(sorted(LINK_KEYS))})")
    name = t.get("name")
    if not isinstance(name, str) or not name:
        raise TopologyError(f"{where}: needs a name (a string)")
    where = f"{where} {name!r}"
    sides = {"up", "down"} & set(t)
    if ("rate" in t) == bool(sides) or len(sides) == 1:
        raise TopologyError(f"{where}: give rate, or up and down")
    try:
        up, down = (parse_rate(t.get(k, t.get("rate"))) for k in ("up", "down"))
    except ValueError as e:
        raise TopologyError(f"{where}: {e}") from None
    delay = _number(f"{where} delay_ms", t.get("delay_ms", 0), 0, 1e5) / 1000
    queue = _number(f"{where} queue_kb", t.get("queue_kb", 64), 1.5, 1e6) * 1000
    loss = _loss(f"{where} loss", t.get("loss", 0.0))
    red = _red(f"{where} red", t.get("red"), queue)
    classes = t.get("classes")
    if not isinstance(classes, list) or not classes or not all(
            isinstance(c, str) and c for c in classes):
        raise TopologyError(f"{where}: classes is a list of class or network names")
    share = _number(f"{where} share", t.get("share", 1.0), 0, 1)
    return SharedLink(name, Direction(up, queue, delay, loss, red),
                      Direction(down, queue, delay, loss, red), tuple(classes), share)


def read_topology(path: str | os.PathLike,
                  link_keys: Mapping[str, Mapping[str, object]] | None = None) -> Topology:
    """Read and check a topology file; TopologyError (one line) on anything it cannot use.
    ``link_keys``: keys of named links that replace the file's (an experiment's axis on
    ``topology.LINK.KEY``: one file, its queue or rate varied), checked as the file's are."""
    doc = read_toml(path, TopologyError)
    unknown = set(doc) - {"link", "access", "server"}
    if unknown:
        raise TopologyError(f"{path}: unknown key {sorted(unknown)[0]!r} (the tables: [[link]], "
                            "[access.NAME], [server])")
    if not isinstance(doc.get("link", []), list) or not isinstance(doc.get("access", {}), dict):
        raise TopologyError(f"{path}: [[link]] is an array of tables, [access.NAME] tables")
    tables = _set_links(path, doc.get("link", []), link_keys or {})
    links = tuple(_link(f"{path}: link {i + 1}", t) for i, t in enumerate(tables))
    names = [link.name for link in links]
    if len(set(names)) < len(names):
        raise TopologyError(f"{path}: two links named {max(names, key=names.count)!r}")
    shares: dict[str, float] = {}
    for link in links:
        for c in link.classes:
            shares[c] = shares.get(c, 0.0) + link.share
            if shares[c] > 1 + 1e-9:
                raise TopologyError(f"{path}: the shares of class {c!r} add up to more than 1")
    access = {}
    for name, t in doc.get("access", {}).items():
        if not isinstance(t, dict) or set(t) != {"loss"}:
            raise TopologyError(f"{path}: [access.{name}] has one key, loss")
        access[name] = _loss(f"{path}: [access.{name}] loss", t["loss"])
    return Topology(links, access, *_server(path, doc.get("server", {})))


def _set_links(path: str | os.PathLike, tables: list,
               links: Mapping[str, Mapping[str, object]]) -> list:
    """The file's [[link]] tables with the keys ``links`` sets by link name put in."""
    names = [t.get("name") if isinstance(t, dict) else None for t in tables]
    for name, keys in links.items():
        if name not in names:
            raise TopologyError(f"{path}: no link named {name!r} to set "
                                f"{', '.join(keys)} of (its links: "
                                f"{', '.join(map(str, names)) or 'none'})")
        if "name" in keys:
            raise TopologyError(f"{path}: link {name!r}: its name is not a setting")
    return [{**t, **links[n]} if isinstance(n, str) and n in links else t
            for t, n in zip(tables, names)]


def _server(path: str | os.PathLike, t: object) -> tuple[int | None, int | None]:
    """``[server] initcwnd`` (whole segments, 1 to 1,000) and ``mss`` (bytes, 536 to 1,460):
    the kernel's route metrics toward the clients."""
    if not isinstance(t, dict) or set(t) - set(SERVER_KEYS):
        raise TopologyError(f"{path}: [server] has two keys, initcwnd and mss")
    for key, (unit, lo, hi) in SERVER_KEYS.items():
        v = t.get(key)
        if v is not None and (type(v) is not int or not lo <= v <= hi):
            raise TopologyError(f"{path}: [server] {key} is a whole number of {unit}, {lo:,} "
                                f"to {hi:,} (got {v!r:.40})")
    return t.get("initcwnd"), t.get("mss")
