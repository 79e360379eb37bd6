"""Packets per second of the packet relay's own work (``Relay.take`` and ``Relay.deliver``) on a
synthetic stream, in simulated time, without TUN devices: the per-packet cost of the relay's
Python, with and without a shared link (``--topology``). ``python bench/relay_loop_bench.py``.

A stream of 1500-byte IPv4 packets from 200 client addresses, up and down in turn, 10 µs apart,
through links fast enough that nothing queues, 1 % Bernoulli loss on the access links; written
to /dev/null. CPU seconds (the machine is shared), the best of five runs of 300,000 packets.
"""
from __future__ import annotations

import os
import time

from wagon.replay.relay import Relay

BASE = 0xC6120000
N = 300_000


def config(shared: bool) -> dict:
    path = {"delay": 0.01, "up": 1e9, "down": 1e9, "loss": 0.01, "queue_up": 1e9,
            "queue_down": 1e9}
    links = []
    if shared:
        side = {"rate": 1e9, "queue": 1e9, "delay": 0.01, "loss": 0.0}
        links = [{"name": "shared", "up": side, "down": side}]
        path["groups"] = [[0, 0.0, 1.0]]
    return {"paths": [path], "links": links, "base": BASE, "shift": 15, "seed": 1}


def packets_per_second(shared: bool) -> float:
    out = os.open(os.devnull, os.O_WRONLY)
    client = [(BASE + 1 + i).to_bytes(4, "big") for i in range(200)]
    server = bytes([127, 0, 0, 1])
    stream = [bytes([0x45]) + bytes(11) + (c + server if k % 2 == 0 else server + c)
              + bytes(1480) for k, c in enumerate(client)]
    relay = Relay.from_config(config(shared), (out, out))
    t, now = time.process_time(), 0.0
    for i in range(N):
        now += 1e-5
        relay.take(stream[i % 200], i & 1 == 0, now)
        if i % 64 == 0:
            relay.deliver(now)
    relay.deliver(now + 1)
    os.close(out)
    return N / (time.process_time() - t)


def main() -> None:
    for shared in (False, True):
        best = max(packets_per_second(shared) for _ in range(5))
        print(f"{'a shared link' if shared else 'access links only'}: {best:,.0f} packets per "
              "CPU second")


if __name__ == "__main__":
    main()
