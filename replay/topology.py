"""The links of the packet relay (``replay.relay``), in simulated time: a link direction loses
packets (Bernoulli or a Gilbert–Elliott chain), queues them in a bounded FIFO (drop-tail, and
Random Early Detection where the topology asks for it) at its rate and hands each on after its
one-way delay. A client's access link is one per client address
and direction; a shared link (``--topology``) one per direction for every client behind it.

``relay_links`` turns a ``formats.topology.Topology`` into the relay's JSON config (the shared
links, and per class the groups of its sessions behind each); ``shared_link`` picks a client's
group from its address: sessions are spread over ``[0, 1)`` by the golden-ratio sequence of
their address's offset, so any share of a class is that share of its sessions, give or take one.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict

from ..formats.topology import GilbertElliott as GilbertElliottSpec, Loss, Topology

__all__ = ["Link", "GilbertElliott", "link_from", "relay_links", "shared_link",
           "loss_config"]

GOLDEN = (5 ** 0.5 - 1) / 2


class GilbertElliott:
    """A Gilbert–Elliott chain stepped once per packet (Gilbert 1960, Elliott 1963); calling it
    says whether the packet is lost. Each link direction has its own state."""

    __slots__ = ("p", "r", "good_loss", "bad_loss", "bad", "random")

    def __init__(self, p: float, r: float, good_loss: float, bad_loss: float,
                 random: Callable[[], float]) -> None:
        self.p, self.r, self.good_loss, self.bad_loss = p, r, good_loss, bad_loss
        self.bad, self.random = False, random

    def __call__(self) -> bool:
        rnd = self.random
        bad = self.bad = rnd() >= self.r if self.bad else rnd() < self.p
        loss = self.bad_loss if bad else self.good_loss
        return loss > 0 and rnd() < loss


class Red:
    """Random Early Detection's state on one queue (Floyd & Jacobson 1993, section 4): the
    average queue ``avg`` (bytes; an EWMA of weight ``weight`` at each arrival, decayed over an
    idle spell as if packets of the arriving one's size had gone through empty), and ``count``,
    the packets since the last drop, which spreads the drops evenly."""

    __slots__ = ("min", "max", "max_p", "weight", "avg", "count", "random")

    def __init__(self, min: float, max: float, max_p: float, weight: float,
                 random: Callable[[], float]) -> None:
        self.min, self.max, self.max_p, self.weight, self.random = min, max, max_p, weight, random
        self.avg, self.count = 0.0, 0

    def drops(self, queued: float, idle: float) -> bool:
        """Whether the packet arriving to ``queued`` bytes (``idle``: the packets' worth of
        time the queue had been empty) is dropped early."""
        w = self.weight
        self.avg = self.avg * (1 - w) ** idle if queued <= 0 else (1 - w) * self.avg + w * queued
        if self.avg < self.min:
            self.count = 0
            return False
        if self.avg < self.max:
            p = self.max_p * (self.avg - self.min) / (self.max - self.min)
            if self.count * p < 1 and self.random() >= p / (1 - self.count * p):
                self.count += 1
                return False
        self.count = 0
        return True


class Link:
    """One direction of a link: loss (a probability ``loss``, or a Gilbert–Elliott ``chain``),
    then a FIFO of ``rate`` bytes/s holding at most ``queue`` bytes (a packet that does not fit
    is dropped at the tail; with ``red``, some are dropped early), then ``delay`` seconds."""

    __slots__ = ("rate", "queue", "delay", "loss", "chain", "red", "random", "free", "packets",
                 "bytes", "lost", "queue_drops", "early_drops")

    def __init__(self, rate: float, queue: float, delay: float, loss: float | dict,
                 random: Callable[[], float], red: dict | None = None) -> None:
        self.rate, self.queue, self.delay, self.random = rate, queue, delay, random
        self.chain = GilbertElliott(**loss, random=random) if isinstance(loss, dict) else None
        self.loss = 0.0 if self.chain else loss
        self.red = Red(**red, random=random) if red else None
        self.free = 0.0                     # when the link's last queued byte is through
        self.packets = self.bytes = self.lost = self.queue_drops = self.early_drops = 0

    def enter(self, size: int, now: float) -> float | None:
        """When a packet of ``size`` bytes arriving at ``now`` is out at the far end; None:
        lost or dropped. A packet leaves when its last byte is through (FIFO order)."""
        if (self.loss and self.random() < self.loss) or (self.chain and self.chain()):
            self.lost += 1
            return None
        free = self.free
        if self.red and self.red.drops((free - now) * self.rate,
                                       (now - free) * self.rate / size):
            self.early_drops += 1
            self.queue_drops += 1
            return None
        if free > now:
            if (free - now) * self.rate + size > self.queue:
                self.queue_drops += 1
                return None
        else:
            free = now
        free += size / self.rate
        self.free = free
        self.packets += 1
        self.bytes += size
        return free + self.delay

    def counts(self) -> dict:
        """Packets and bytes through, lost, dropped by the queue (tail and early), early."""
        return {"packets": self.packets, "bytes": self.bytes, "lost": self.lost,
                "queue_drops": self.queue_drops, "early_drops": self.early_drops}


def link_from(cfg: dict, random: Callable[[], float]) -> Link:
    """A link direction from its config: rate, queue, delay, loss, RED."""
    return Link(cfg["rate"], cfg["queue"], cfg["delay"], cfg["loss"], random, cfg.get("red"))


def loss_config(loss: Loss) -> float | dict:
    """A loss as the relay's config holds it."""
    return asdict(loss) if isinstance(loss, GilbertElliottSpec) else loss


def relay_links(topology: Topology, names: list[tuple[str, str]]) -> tuple[list, list]:
    """The shared links' configs, and per class (``names``: its class and network names) its
    groups ``[link index, from, to]`` of ``[0, 1)``, in the file's order."""
    links = [{"name": s.name, **{side: {"rate": d.rate, "queue": d.queue, "delay": d.delay,
                                        "loss": loss_config(d.loss),
                                        "red": asdict(d.red) if d.red else None}
                                 for side, d in (("up", s.up), ("down", s.down))}}
             for s in topology.links]
    groups = []
    for names_of in names:
        start, mine = 0.0, []
        for i, s in enumerate(topology.links):
            if set(names_of) & set(s.classes):
                mine.append([i, start, start + s.share])
                start += s.share
        groups.append(mine)
    return links, groups


def shared_link(groups: list, offset: int) -> int | None:
    """The shared link (its index) of the session at ``offset`` in its class's block."""
    u = (offset * GOLDEN) % 1.0
    for index, low, high in groups:
        if low <= u < high:
            return index
    return None
