"""The packet relay of ``--network packet``: every IP packet between the clients' namespace and
the server's side passes here and gets its client's path, as Mahimahi's delay and link shells.

Per client address and direction: random loss with the class's probability (or its
Gilbert–Elliott chain), then a FIFO link of the class's bandwidth whose queue holds at most
``queue`` bytes (a packet that does not fit is dropped at the tail), then the class's one-way
delay (half its round trip); a client behind a shared link (``--topology``) crosses it too,
after its access link on the way up and before it on the way down (``replay.topology``). A
packet leaves a link when its last byte is through, ``len/rate`` after the previous one's, so
every link keeps its packets in order; the server's real TCP sees the losses, the queue and
the delay and does the rest (handshake, slow start, retransmission, send buffer, close).

Runs as its own process (``python -m wagon.replay.relay CONFIG CLIENT_FD SERVER_FD BEAT_FD``)
holding the two TUN devices' descriptors: when it ends the devices, and their routes, are gone.
It writes a heartbeat byte on BEAT_FD every ``beat_s`` seconds of its loop (``watchdog``: the
parent stops the run when they stop): ``!`` instead of ``.`` when over 1 % of the packets it put
out since the last one went out ``LAG_STOP`` or more after they were due (the watchdog stops the
run when a whole bound of heartbeats says so: a relay that far behind no longer gives the
paths asked for). It stops when its standard input closes (the parent ends, however it ends)
and writes its counts on standard output as one JSON line.
"""
from __future__ import annotations

import ctypes
import heapq
import json
import os
import random
import select
import signal
import sys
import time

from .topology import Link, link_from, shared_link

__all__ = ["Hop", "Relay", "main"]

BATCH = 256               # packets read from one device before the other is looked at
LATE = 0.001              # a packet put out later than this after it was due is counted late
LAG_STOP = 0.05           # a heartbeat says "lagging" when over 1 % of its packets were this late
LAG_BIN = 1e-4            # the lag histogram's bins (s): its p99 to 0.1 ms, for 2 s at most
LAG_BINS = 20_000         # (a later packet falls in the last bin; the p99 is then the max)
WAIT_MAX = 0.02           # select's longest wait: Linux ends a wait of t up to t/1000 late
NICE = -10                # the relay's priority: its lag is every client's (root may raise it)
PR_SET_PDEATHSIG = 1


class Hop:
    """Where a packet goes next: through ``link``, then to ``after`` (the next hop, or the
    device's descriptor the packet is written to)."""

    __slots__ = ("link", "after")

    def __init__(self, link: Link, after: "Hop | int") -> None:
        self.link, self.after = link, after


class Relay:
    """The relay's state: per client address its access links (``replay.topology.Link``, one
    per direction) and the shared link it is behind, if any; the packets in flight ordered by
    when they are due at their next hop or device (a heap: every link keeps its own order).
    ``outs``: the client's and the server's device."""

    def __init__(self, paths: list[dict], links: list[dict], base: int, shift: int, seed: int,
                 outs: tuple[int, int]) -> None:
        self.paths, self.base, self.shift, self.outs = paths, base, shift, outs
        self.random = random.Random(seed).random
        self.shared = [(spec["name"], link_from(spec["up"], self.random),
                        link_from(spec["down"], self.random)) for spec in links]
        self.links: dict[bytes, tuple[Hop, Hop, Link, Link]] = {}  # address → up, down hops
        self.due: list[tuple[float, int, Hop | int, bytes]] = []
        self.seq = 0
        self.counts = {"packets": 0, "bytes": 0, "foreign": 0, "write_drops": 0, "clients": 0,
                       "late": 0}
        self.lag_max = 0.0
        self.lag_sum = 0.0
        self.lag_bins = [0] * LAG_BINS
        self.beat_packets = self.beat_late = 0      # since the last heartbeat

    @classmethod
    def from_config(cls, cfg: dict, outs: tuple[int, int]) -> "Relay":
        """The relay ``netpath.relay_config`` describes, writing to ``outs``."""
        return cls(cfg["paths"], cfg.get("links", []), cfg["base"], cfg["shift"], cfg["seed"],
                   outs)

    def _hops(self, address: bytes) -> tuple[Hop, Hop, Link, Link] | None:
        """The client's upward and downward first hops (and its access links), made on its
        first packet; None: not a client address."""
        offset = int.from_bytes(address, "big") - self.base
        k = offset >> self.shift
        if not 0 <= k < len(self.paths):
            return None
        path = self.paths[k]
        up, down = (link_from({"rate": path[side], "queue": path[f"queue_{side}"],
                               "delay": path["delay"], "loss": path["loss"]}, self.random)
                    for side in ("up", "down"))
        client, server = self.outs
        shared = shared_link(path.get("groups", ()), offset & ((1 << self.shift) - 1))
        if shared is None:
            hops = (Hop(up, server), Hop(down, client), up, down)
        else:
            _, shared_up, shared_down = self.shared[shared]
            hops = (Hop(up, Hop(shared_up, server)), Hop(shared_down, Hop(down, client)), up,
                    down)
        self.links[address] = hops
        self.counts["clients"] += 1
        return hops

    def take(self, packet: bytes, upward: bool, now: float) -> None:
        """Put one packet read at ``now`` on its client's path (upward: from the client)."""
        if len(packet) < 20 or packet[0] >> 4 != 4:
            self.counts["foreign"] += 1                # not IPv4 (IPv6 neighbour discovery…)
            return
        address = packet[12:16] if upward else packet[16:20]
        hops = self.links.get(address) or self._hops(address)
        if hops is None:
            self.counts["foreign"] += 1
            return
        self._enter(hops[0] if upward else hops[1], packet, now)

    def _enter(self, hop: Hop, packet: bytes, now: float) -> None:
        due = hop.link.enter(len(packet), now)
        if due is not None:
            self.seq += 1
            heapq.heappush(self.due, (due, self.seq, hop.after, packet))

    def deliver(self, now: float) -> None:
        """Pass every packet due by ``now`` to its next hop (at the time it was due there) or
        write it to its device; note how late each went out."""
        due = self.due
        while due and due[0][0] <= now:
            when, _, out, packet = heapq.heappop(due)
            if out.__class__ is Hop:
                self._enter(out, packet, when)
                continue
            try:
                os.write(out, packet)
            except (BlockingIOError, OSError):
                self.counts["write_drops"] += 1
                continue
            lag = now - when
            self.lag_sum += lag
            self.lag_bins[min(int(lag / LAG_BIN), LAG_BINS - 1)] += 1
            if lag > LATE:
                self.counts["late"] += 1
                if lag >= LAG_STOP:
                    self.beat_late += 1
            self.beat_packets += 1
            if lag > self.lag_max:
                self.lag_max = lag
            self.counts["packets"] += 1
            self.counts["bytes"] += len(packet)

    def beat_sign(self) -> bytes:
        """The next heartbeat: ``!`` when over 1 % of the packets put out since the last one
        were ``LAG_STOP`` or more late (their p99 at least that), else ``.``."""
        lagging = self.beat_late * 100 > self.beat_packets
        self.beat_packets = self.beat_late = 0
        return b"!" if lagging else b"."

    def lag_p99(self) -> float:
        """The 99th percentile of the packets' lag (s), to a bin's width above (its upper
        edge); the largest lag when it is past the last bin's start."""
        wanted, seen = 0.99 * self.counts["packets"], 0
        for k, n in enumerate(self.lag_bins):
            seen += n
            if seen >= wanted and seen:
                return self.lag_max if k == LAG_BINS - 1 else min((k + 1) * LAG_BIN,
                                                                  self.lag_max)
        return 0.0

    def report(self) -> dict:
        """The counts: packets and bytes delivered, lost and dropped on every link (the access
        links' and the shared links' together), and per shared link and direction; the lag's
        mean, p99 and max, and the relay's CPU seconds so far (its own process: a relay near a
        core's worth lags every client)."""
        n = self.counts["packets"]
        every = [link for hops in self.links.values() for link in hops[2:]]
        every += [link for _, up, down in self.shared for link in (up, down)]
        out = {**self.counts, "lost": sum(link.lost for link in every),
               "queue_drops": sum(link.queue_drops for link in every),
               "early_drops": sum(link.early_drops for link in every),
               "lag_max_ms": round(self.lag_max * 1000, 3),
               "lag_mean_ms": round(self.lag_sum / n * 1000, 4) if n else 0.0,
               "lag_p99_ms": round(self.lag_p99() * 1000, 3),
               "cpu_s": round(time.process_time(), 3)}
        if self.shared:
            out["links"] = {name: {"up": up.counts(), "down": down.counts()}
                            for name, up, down in self.shared}
        return out


def _beat(fd: int, sign: bytes) -> None:
    try:
        os.write(fd, sign)
    except OSError:             # a full pipe (the parent frozen) or none: nothing to tell
        pass


def run(relay: Relay, client: int, server: int, stop: int, beat: int, every: float) -> None:
    """Relay between the devices until ``stop`` (a descriptor) is readable or closed, with a
    heartbeat on ``beat`` every ``every`` seconds."""
    clock = time.monotonic
    watch = [client, server, stop]
    next_beat = clock()
    while True:
        due = relay.due
        if clock() >= next_beat:
            _beat(beat, relay.beat_sign())
            next_beat = clock() + every
        timeout = min(due[0][0] if due else next_beat, next_beat) - clock()
        ready = select.select(watch, [], [], min(max(timeout, 0.0), WAIT_MAX))[0]
        if stop in ready:
            return
        for fd in ready:
            upward = fd == client
            now = clock()
            for _ in range(BATCH):
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                relay.take(packet, upward, now)
        relay.deliver(clock())


def main(argv: list[str]) -> int:
    """``CONFIG CLIENT_FD SERVER_FD BEAT_FD``: CONFIG is the JSON of ``netpath.relay_config``."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)        # never outlive the run
    try:
        os.setpriority(os.PRIO_PROCESS, 0, NICE)          # wake first when packets are due
    except OSError:
        pass                                              # not allowed: the default priority
    signal.signal(signal.SIGINT, signal.SIG_IGN)        # the run's ^C is the parent's to handle
    cfg = json.loads(argv[0])
    client, server, beat = int(argv[1]), int(argv[2]), int(argv[3])
    relay = Relay.from_config(cfg, (client, server))
    os.set_blocking(client, False)
    os.set_blocking(server, False)
    os.set_blocking(beat, False)
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    run(relay, client, server, sys.stdin.fileno(), beat, cfg["beat_s"])
    sys.stdout.write(json.dumps(relay.report()) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
