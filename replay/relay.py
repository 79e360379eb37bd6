"""The packet relay of ``--network packet``: every IP packet between the clients' namespace and
the server's side passes here and gets its client's path, as Mahimahi's delay and link shells.

Per client address and direction: random loss with the class's probability, then a FIFO link of
the class's bandwidth whose queue holds at most ``queue`` bytes (a packet that does not fit is
dropped at the tail), then the class's one-way delay (half its round trip). A packet leaves the
link when its last byte is through, ``len/rate`` after the previous one's, so every client's
packets stay in order; the server's real TCP sees the losses, the queue and the delay and does
the rest (handshake, slow start, retransmission, send buffer, close).

Runs as its own process (``python -m wagon.replay.relay CONFIG CLIENT_FD SERVER_FD BEAT_FD``)
holding the two TUN devices' descriptors: when it ends the devices, and their routes, are gone.
It writes a heartbeat byte on BEAT_FD every ``beat_s`` seconds of its loop (``watchdog``: the
parent stops the run when they stop), stops when its standard input closes (the parent ends,
however it ends) and writes its counts on standard output as one JSON line.
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

__all__ = ["ClientPath", "Relay", "main"]

BATCH = 256               # packets read from one device before the other is looked at
LATE = 0.001              # a packet put out later than this after it was due is counted late
LAG_BIN = 1e-4            # the lag histogram's bins (s): its p99 to 0.1 ms, for 2 s at most
LAG_BINS = 20_000         # (a later packet falls in the last bin; the p99 is then the max)
NICE = -10                # the relay's priority: its lag is every client's (root may raise it)
PR_SET_PDEATHSIG = 1


class ClientPath:
    """One class's path: one-way delay (s), rates (bytes/s), loss probability, queue (bytes)."""

    __slots__ = ("delay", "up", "down", "loss", "queue_up", "queue_down")

    def __init__(self, delay: float, up: float, down: float, loss: float, queue_up: float,
                 queue_down: float) -> None:
        self.delay, self.up, self.down, self.loss = delay, up, down, loss
        self.queue_up, self.queue_down = queue_up, queue_down


class Relay:
    """The relay's state: a link per client address and direction, and the packets in flight
    ordered by when they are due (a heap: every client's link keeps its own order)."""

    def __init__(self, paths: list[ClientPath], base: int, shift: int, seed: int) -> None:
        self.paths, self.base, self.shift = paths, base, shift
        self.random = random.Random(seed).random
        self.links: dict[bytes, list] = {}      # address → [path, up free at, down free at]
        self.due: list[tuple[float, int, int, bytes]] = []
        self.seq = 0
        self.counts = {"packets": 0, "bytes": 0, "lost": 0, "queue_drops": 0, "foreign": 0,
                       "write_drops": 0, "clients": 0, "late": 0}
        self.lag_max = 0.0
        self.lag_sum = 0.0
        self.lag_bins = [0] * LAG_BINS

    def _link(self, address: bytes) -> list | None:
        link = self.links.get(address)
        if link is None:
            k = (int.from_bytes(address, "big") - self.base) >> self.shift
            if not 0 <= k < len(self.paths):
                return None
            link = self.links[address] = [self.paths[k], 0.0, 0.0]
            self.counts["clients"] += 1
        return link

    def take(self, packet: bytes, upward: bool, out: int, now: float) -> None:
        """Put one packet read at ``now`` on its client's link (upward: from the client)."""
        counts = self.counts
        if len(packet) < 20 or packet[0] >> 4 != 4:
            counts["foreign"] += 1                     # not IPv4 (IPv6 neighbour discovery…)
            return
        link = self._link(packet[12:16] if upward else packet[16:20])
        if link is None:
            counts["foreign"] += 1
            return
        path = link[0]
        if path.loss and self.random() < path.loss:
            counts["lost"] += 1
            return
        side = 1 if upward else 2
        rate = path.up if upward else path.down
        free = link[side]
        size = len(packet)
        if free > now:
            if (free - now) * rate + size > (path.queue_up if upward else path.queue_down):
                counts["queue_drops"] += 1
                return
        else:
            free = now
        free += size / rate
        link[side] = free
        self.seq += 1
        heapq.heappush(self.due, (free + path.delay, self.seq, out, packet))

    def deliver(self, now: float) -> None:
        """Write every packet due by ``now`` to its device; note how late each went out."""
        due = self.due
        while due and due[0][0] <= now:
            when, _, out, packet = heapq.heappop(due)
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
            if lag > self.lag_max:
                self.lag_max = lag
            self.counts["packets"] += 1
            self.counts["bytes"] += len(packet)

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
        """The counts, the lag's mean, p99 and max, and the relay's CPU seconds so far (its
        own process: a relay near a core's worth lags every client)."""
        n = self.counts["packets"]
        return {**self.counts, "lag_max_ms": round(self.lag_max * 1000, 3),
                "lag_mean_ms": round(self.lag_sum / n * 1000, 4) if n else 0.0,
                "lag_p99_ms": round(self.lag_p99() * 1000, 3),
                "cpu_s": round(time.process_time(), 3)}


def _beat(fd: int) -> None:
    try:
        os.write(fd, b".")
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
            _beat(beat)
            next_beat = clock() + every
        timeout = min(due[0][0] if due else next_beat, next_beat) - clock()
        ready = select.select(watch, [], [], max(timeout, 0.0))[0]
        if stop in ready:
            return
        for fd in ready:
            upward = fd == client
            out = server if upward else client
            now = clock()
            for _ in range(BATCH):
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                relay.take(packet, upward, out, now)
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
    paths = [ClientPath(**p) for p in cfg["paths"]]
    relay = Relay(paths, cfg["base"], cfg["shift"], cfg["seed"])
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
