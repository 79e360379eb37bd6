"""How long the replay process waited for a CPU: the kernel's run-queue wait of each of its
threads (Linux's ``/proc/self/task/TID/schedstat``, its second field), summed.

A stall of the event loop that its own code did not fill was either time the process was
ready to run while other processes had the CPU — the run-queue wait counts it — or time it was
blocked in the kernel (a disk write held back, a page read back from swap, a stop signal). The
wait tells the two apart by measurement; the load average cannot (it counts both, and every
other process). Every thread counts, not only the loop's: a thread that holds the GIL while it
waits for a core keeps the loop waiting on the GIL, which is not a run-queue wait of the
loop's thread (CI saw half of such a stall put on "disk, swap, or stopped")."""
from __future__ import annotations

import os

__all__ = ["RunQueueWait"]


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
        now = self._read()
        if now is None:
            return None
        self.total += sum(w - self.last.get(tid, 0) for tid, w in now.items())
        self.last = now
        return self.total / 1e9
