"""Client classes, part of the scenario format: a network profile (delay, down/up bandwidth)
and a browser protocol profile.

A class is written ``NETWORK[/PROTOCOL][:WEIGHT]``, several separated by commas, e.g.
``modem/http10x4:0.3,t1-dsl/http11:0.5,satellite/pipeline:0.2``. NETWORK is a preset or
``RTTms-DOWNkbps[-UPkbps][-LOSS%]`` (e.g. ``100ms-1000kbps-256kbps``; ``40ms-10000kbps-1%``
loses 1 % of packets, felt with ``--network packet`` only); PROTOCOL is ``http10xK`` (HTTP/1.0,
one connection per object, up to K at once), ``http11`` (one persistent connection),
``http11xK`` (K persistent connections), ``pipeline`` (one persistent connection, pipelined
requests), ``early-close`` / ``early-closexK`` (K persistent connections, closed by the client
after each page), ``early-close-pipeline`` (one pipelined persistent connection closed after
each page: WAGON's HTTP/1.1-EC, pipelined as all its HTTP/1.1 runs) or ``h2`` /
``h2xK`` (HTTP/2: one connection, the objects as up to K concurrent streams, 100 by default).
Over HTTPS a browser resumes its TLS session on its later connections; ``+noresume`` after the
protocol (``http11x6+noresume``) makes every handshake a full one.
"""
from __future__ import annotations

import math
import re
from dataclasses import MISSING, asdict, dataclass, fields, replace

__all__ = ["Network", "Protocol", "ClientClass", "NETWORKS", "parse_classes", "parse_protocol",
           "DEFAULT_CLASSES", "ClassError"]


class ClassError(ValueError):
    """A client-class specification that cannot be read."""


@dataclass(frozen=True)
class Network:
    """Round-trip propagation delay, bandwidths and packet loss probability of a client's
    access link (loss is emulated by ``--network packet`` only)."""

    name: str
    rtt_ms: float
    down_kbps: float
    up_kbps: float
    loss: float = 0.0


@dataclass(frozen=True)
class Protocol:
    """How a client's browser uses connections."""

    name: str
    connections: int = 1          # connections used at once for a page's objects
    persistent: bool = True       # HTTP/1.1 keep-alive
    pipeline: bool = False        # requests sent without waiting for responses
    close_after_page: bool = False  # early close: the client drops the connection after a page
    http2: bool = False           # HTTP/2 (``connections``: concurrent streams)
    resume: bool = True           # TLS session resumption on the browser's later connections

    @property
    def sockets(self) -> int:
        """Connections a browser holds at once to the server."""
        return 1 if self.http2 else max(1, self.connections)


@dataclass(frozen=True)
class ClientClass:
    name: str
    weight: float
    network: Network
    protocol: Protocol

    def to_dict(self) -> dict:
        network = asdict(self.network)
        if not network["loss"]:
            del network["loss"]                # lossless links are written as before loss was
        return {"name": self.name, "weight": self.weight, "network": network,
                "protocol": asdict(self.protocol)}

    def sped_up(self, k: float) -> "ClientClass":
        """This class in a world ``k`` times faster: its round trip ×1/k, its bandwidths ×k
        (its loss and protocol as they are), so its transfers take 1/k of their time."""
        n = self.network
        return replace(self, network=replace(n, rtt_ms=n.rtt_ms / k, down_kbps=n.down_kbps * k,
                                             up_kbps=n.up_kbps * k))

    @classmethod
    def from_dict(cls, d: dict, where: str = "classes[0]") -> "ClientClass":
        """A scenario header's class, every field's type and range checked (docs/formats.md);
        ValueError names the field that is wrong (``classes[0].network.rtt_ms``)."""
        if not isinstance(d, dict):
            raise ValueError(f"{where} must be an object")
        name, weight = _field(d, "name", str, where), _field(d, "weight", float, where)
        return cls(name, weight, _typed(Network, d.get("network"), f"{where}.network"),
                   _typed(Protocol, d.get("protocol"), f"{where}.protocol"))


#: connections a browser opens at once (a client has no more ports towards one server)
MAX_CONNECTIONS = 65535
#: the ranges docs/formats.md gives a class's numbers: (test, as the message says it)
_RANGES = {"weight": (lambda x: x >= 0, "≥ 0"), "rtt_ms": (lambda x: x >= 0, "≥ 0"),
           "down_kbps": (lambda x: x > 0, "> 0"), "up_kbps": (lambda x: x > 0, "> 0"),
           "loss": (lambda x: 0 <= x < 1, "in [0, 1)"), "connections": (lambda x: 1 <= x <= MAX_CONNECTIONS, f"in [1, {MAX_CONNECTIONS}]")}
_KINDS = {str: "a string", bool: "true or false", int: "an integer", float: "a finite number"}


def _field(d: dict, key: str, kind: type, where: str):
    """``d[key]``, of ``kind`` (a bool is no number) and in its range; ValueError otherwise."""
    v = d.get(key)
    ok = (type(v) is int if kind is int else
          type(v) in (int, float) and math.isfinite(v) if kind is float else isinstance(v, kind))
    test, says = _RANGES.get(key, (lambda x: True, ""))
    if not (ok and test(v)):
        raise ValueError(f"{where}.{key} must be {_KINDS[kind]}{' ' + says if says else ''}, "
                         f"not {v!r:.40}")
    return float(v) if kind is float else v


def _typed(kind: type, d: object, where: str):
    """``kind(**d)`` (a Network or a Protocol), its fields checked: the required ones present,
    no other."""
    known = {f.name: f for f in fields(kind)}
    if not isinstance(d, dict) or set(d) - set(known):
        raise ValueError(f"{where} must be an object of {', '.join(known)}")
    missing = [k for k, f in known.items() if k not in d and f.default is MISSING]
    if missing:
        raise ValueError(f"{where}.{missing[0]}: missing")
    types = {"str": str, "bool": bool, "int": int, "float": float}
    return kind(**{k: _field(d, k, types[known[k].type], where) for k in d})


#: WAGON's client classes (Liu et al. 2001) and a LAN; rtt in ms, bandwidths in kbit/s
NETWORKS = {
    "modem": Network("modem", 300.0, 56.0, 33.6),
    "t1-dsl": Network("t1-dsl", 20.0, 1500.0, 1500.0),
    "wan": Network("wan", 180.0, 150.0, 150.0),
    "satellite": Network("satellite", 500.0, 2000.0, 2000.0),
    "lan": Network("lan", 0.0, 1e6, 1e6),
}

DEFAULT_CLASSES = "modem/http10x4:0.25,t1-dsl/http11:0.35,wan/http11x2:0.25,satellite/pipeline:0.15"

_CUSTOM_NET = re.compile(r"^(?P<rtt>[\d.]+)ms-(?P<down>[\d.]+)kbps(?:-(?P<up>[\d.]+)kbps)?"
                         r"(?:-(?P<loss>[\d.]+)%)?$")


def _network(text: str) -> Network:
    if text in NETWORKS:
        return NETWORKS[text]
    m = _CUSTOM_NET.match(text)
    if not m:
        raise ClassError(f"unknown network {text!r}: use {', '.join(NETWORKS)} or "
                         "RTTms-DOWNkbps[-UPkbps][-LOSS%]")
    down, loss = float(m["down"]), float(m["loss"] or 0) / 100
    if not (down > 0 and (not m["up"] or float(m["up"]) > 0)):
        raise ClassError(f"network {text!r}: bandwidths must be positive")
    if not 0 <= loss < 1:
        raise ClassError(f"network {text!r}: loss must be below 100 %")
    return Network(text, float(m["rtt"]), down, float(m["up"]) if m["up"] else down, loss)


H2_STREAMS = 100                  # a browser's concurrent streams before the server says


def parse_protocol(text: str) -> Protocol:
    """A protocol profile by name (``http10xK``, ``http11``, ``http11xK``, ``pipeline``,
    ``early-close``, ``early-closexK``, ``early-close-pipeline``, ``h2``, ``h2xK``),
    optionally ``+noresume``."""
    base, plus, option = text.partition("+")
    if plus and option != "noresume":
        raise ClassError(f"{text}: the only option after '+' is noresume")
    m = re.fullmatch(r"(http10|http11|h2|early-close)(?:x(\d+))?|pipeline|early-close-pipeline",
                     base)
    if not m:
        raise ClassError(f"unknown protocol {text!r}: use http10xK, http11, http11xK, pipeline, "
                         "early-close, early-closexK, early-close-pipeline, h2 or h2xK (optionally +noresume)")
    resume = not plus
    if base in ("pipeline", "early-close-pipeline"):
        return Protocol(text, 1, True, True, base != "pipeline", resume=resume)
    if m.group(1) == "h2":
        k = int(m.group(2) or H2_STREAMS)
        if not 1 <= k <= 1000:
            raise ClassError(f"{text}: between 1 and 1000 streams")
        return Protocol(text, k, True, http2=True, resume=resume)
    k = int(m.group(2) or (4 if m.group(1) == "http10" else 1))
    if not 1 <= k <= 64:
        raise ClassError(f"{text}: between 1 and 64 connections")
    return Protocol(text, k, m.group(1) != "http10", close_after_page=m.group(1) == "early-close",
                    resume=resume)


def parse_classes(spec: str) -> list[ClientClass]:
    """Parse a class list; weights default to 1 and are normalised to sum to 1."""
    classes = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        body, _, weight = part.partition(":")
        net, _, proto = body.partition("/")
        try:
            w = float(weight) if weight else 1.0
        except ValueError:
            raise ClassError(f"{part!r}: weight {weight!r} is not a number") from None
        if not 0 < w < math.inf:
            raise ClassError(f"{part!r}: weight must be a finite positive number")
        classes.append(ClientClass(body, w, _network(net), parse_protocol(proto or "http11")))
    if not classes:
        raise ClassError("no client class given")
    total = sum(c.weight for c in classes)
    if not math.isfinite(total):
        raise ClassError(f"{spec!r}: the weights sum to infinity (weight must be a finite "
                         "positive number, and so must their sum)")
    return [ClientClass(c.name, c.weight / total, c.network, c.protocol) for c in classes]
