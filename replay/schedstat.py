"""How long the replay process waited for a CPU: the kernel's run-queue wait of each of its
threads (Linux's ``/proc/self/task/TID/schedstat``, its second field), summed.

A stall of the event loop that its own code did not fill was either time the process was
ready to run while other processes had the CPU — the run-queue wait counts it — or time it was
blocked in the kernel (a disk write held back, a page read back from swap, a stop signal). The
wait tells the two apart by measurement; the load average cannot (it counts both, and every
other process). Every thread counts, not only the loop's: a thread that holds the GIL while it
waits for a core keeps the loop waiting on the GIL, which is not a run-queue wait of the
loop's thread.

A wait and the loop's clock are read together (``with_clock``): read one after the other, a core
lost between the two readings fell in one sample's lag and the next sample's wait, and CI once
put 1.37 s of a stall, all of it a run-queue wait, on "disk, swap, or stopped"."""
from __future__ import annotations

import os
from typing import Callable

__all__ = ["RunQueueWait"]

_TRIES = 4          # readings of the wait around the clock before the last one is taken as is


class RunQueueWait:
    """Seconds this process' threads have waited on a run queue since it was made, threads
    that ended meanwhile included; None where the kernel does not say (not Linux; a kernel
    keeping no scheduling statistics writes "0 0 0", and a thread that runs has run for more
    than 0 ns)."""

    def __init__(self, tasks: str = "/proc/self/task") -> None:
        self.tasks = tasks
        self.last: dict[str, int] = self._read() or {}
        self.total = 0

    def _read(self) -> dict[str, int] | None:
        """Each live thread's run-queue wait so far, ns; None if the kernel keeps none."""
        try:
            tids = os.listdir(self.tasks)
        except OSError:
            return None
        waits = {}
        for tid in tids:
            try:
                with open(os.path.join(self.tasks, tid, "schedstat"), "rb") as f:
                    ran, waited = f.read().split()[:2]
                if int(ran):
                    waits[tid] = int(waited)
            except (OSError, ValueError):
                continue                                    # the thread ended meanwhile
        return waits or None

    def __call__(self) -> float | None:
        return self._add(self._read())

    def with_clock(self, clock: Callable[[], float]) -> tuple[float | None, float]:
        """The wait so far, as a call gives it, and ``clock()`` read between two equal readings
        of it: the kernel writes a thread's wait when it gets a core back, so equal readings
        mean no core was lost between them, and the time and the wait agree."""
        before, now = self._read(), clock()
        for _ in range(_TRIES):
            after = self._read()
            if after == before:
                break
            before, now = after, clock()
        return self._add(after), now

    def _add(self, now: dict[str, int] | None) -> float | None:
        """The total so far, with what each thread in ``now`` waited since the last reading."""
        if now is None:
            return None
        self.total += sum(w - self.last.get(tid, 0) for tid, w in now.items())
        self.last = now
        return self.total / 1e9
