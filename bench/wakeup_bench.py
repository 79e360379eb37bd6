"""What a wake-up costs on this machine, without wagon (issue 35's replay at speed-up K): how
late a process wakes from an idle wait, and how slowly it then runs. A replay at K multiplies
both into the log's time: docs/fidelity.md, "The speed-up a replay can keep".

For each idle wait d: the lateness of a bare ``epoll.poll(d)``, of ``asyncio.sleep(d)`` on
asyncio's own loop and on uvloop's (the engine's), and the time of the same small piece of
Python (2,000 additions) right after the wait, against the same piece run without one.

    python bench/wakeup_bench.py [--rounds 20]
"""
from __future__ import annotations

import argparse
import asyncio
import select
import time

import numpy as np
import uvloop

WAITS = (0.2, 0.05, 0.02, 0.002)    # s


def work() -> float:
    """The time (s) of 2,000 additions in Python."""
    t = time.perf_counter()
    s = 0
    for i in range(2000):
        s += i
    return time.perf_counter() - t


def epoll_late(d: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The lateness of n bare epoll waits of d, and the work's time right after each."""
    ep = select.epoll()
    late, after = [], []
    for _ in range(n):
        t = time.monotonic()
        ep.poll(d)
        late.append(time.monotonic() - t - d)
        after.append(work())
    return np.array(late), np.array(after)


async def sleep_late(d: float, n: int) -> np.ndarray:
    """The lateness of n ``asyncio.sleep(d)`` on the running loop."""
    late = []
    for _ in range(n):
        t = time.monotonic()
        await asyncio.sleep(d)
        late.append(time.monotonic() - t - d)
    return np.array(late)


def ms(x: np.ndarray) -> str:
    """Median and 90th percentile, in ms."""
    return f"{1e3 * np.median(x):.3f} (p90 {1e3 * np.percentile(x, 90):.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    n = ap.parse_args().rounds
    busy = np.array([work() for _ in range(n)])
    print(f"2,000 additions without a wait: {ms(busy)} ms")
    for d in WAITS:
        late, after = epoll_late(d, n)
        print(f"wait {1e3 * d:g} ms: late (ms) epoll {ms(late)}, asyncio "
              f"{ms(asyncio.run(sleep_late(d, n)))}, uvloop {ms(uvloop.run(sleep_late(d, n)))}; "
              f"2,000 additions after it {ms(after)} ms, "
              f"{np.median(after) / np.median(busy):.1f}x", flush=True)


if __name__ == "__main__":
    main()
