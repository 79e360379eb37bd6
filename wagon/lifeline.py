"""Processes and scratch files that do not outlive the process they serve.

- ``die_with_parent``: a child's first call (a pool's initializer, a worker's first line):
  Linux's PR_SET_PDEATHSIG has the kernel send it a signal when its parent dies, however the
  parent dies (SIGKILL included); a parent already gone is seen at once.
- ``Guardian``: a small process of its own session that follows a parent through heartbeats on
  its standard input: when the parent dies (EOF) or goes silent, it writes the wall-clock time
  it last heard of it to its ``witness`` file (an observer outside the dead process: what was
  due by then), then ends the children it was told of and, ``ends_silent``, the silent parent.
- ``ScratchDir``: a temporary directory (the fit's spilled chunks) removed by its owner as
  usual, and by a small watcher process when the owner dies without doing so: the watcher
  holds the read end of a pipe whose write end only the owner holds; the kernel closes it when
  the owner dies, the watcher reads EOF and removes the directory.
"""
from __future__ import annotations

import ctypes
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

__all__ = ["die_with_parent", "ScratchDir", "Guardian", "GRACE_S", "witness_time"]

GRACE_S = 3.0       # children get this long to end on SIGTERM before the guardian's SIGKILL

PR_SET_PDEATHSIG = 1                         # <linux/prctl.h>

#: the watcher: wait for EOF on stdin (its owner closed it, or died), then remove the folder
_WATCH = "import shutil, sys; sys.stdin.buffer.read(); shutil.rmtree(sys.argv[1], True)"


def die_with_parent(parent: int, sig: int = signal.SIGKILL) -> None:
    """Have this process get ``sig`` when its parent dies; exit now if ``parent`` (the pid the
    parent had) is already gone. Without prctl (not Linux) it does nothing."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:                   # died before the prctl: re-parented
        os._exit(1)


class ScratchDir:
    """A temporary directory that is removed when ``remove`` is called or its owner dies."""

    def __init__(self, prefix: str, parent: str | None = None) -> None:
        self.path = tempfile.mkdtemp(prefix=prefix, dir=parent)
        # its own session: a Ctrl-C or a signal to the owner's process group spares it
        self._watcher = subprocess.Popen([sys.executable, "-c", _WATCH, self.path],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)

    def remove(self) -> None:
        """Remove the directory now and let the watcher go (it exits once it reads EOF)."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self._watcher.stdin is not None:
            self._watcher.stdin.close()


class Guardian:
    """The guardian of this process and its children (module docstring); ``beat`` from a
    thread, ``adopt`` each child, ``release`` at the run's end. ``witness``: the file it
    writes the time of a loss to (none: ""); ``ends_silent``: a silent parent is a loss (else
    only its death is: a single process stopped by Ctrl-Z may be resumed)."""

    def __init__(self, bound: float, grace: float = GRACE_S, witness: str = "",
                 ends_silent: bool = True) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", "import sys, wagon.lifeline as g; g.guard(*sys.argv[1:])",
             str(os.getpid()), str(bound), str(grace), witness, str(int(ends_silent))],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True)
        self._lock = threading.Lock()                 # beats come from another thread

    def _say(self, line: bytes) -> None:
        with self._lock:
            self._proc.stdin.write(line + b"\n")
            self._proc.stdin.flush()

    def beat(self) -> None:
        self._say(b".")

    def adopt(self, pid: int) -> None:
        self._say(str(pid).encode())

    def release(self) -> None:
        """The run ended as it should: the guardian goes (and kills nothing)."""
        try:
            self._say(b"bye")
            with self._lock:
                self._proc.stdin.close()
        except (OSError, ValueError):
            pass
        self._proc.wait()


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except OSError:                     # already gone
        return None


def _signal(fds: list[int], sig: int) -> None:
    for fd in fds:
        try:
            signal.pidfd_send_signal(fd, sig)
        except OSError:
            pass


def _end(children: list[int], grace: float) -> list[int]:
    """SIGTERM the children (pidfds), SIGKILL those still there after ``grace``; the ones
    killed."""
    _signal(children, signal.SIGTERM)
    deadline = time.monotonic() + grace
    left = list(children)
    while left and (wait := deadline - time.monotonic()) > 0:
        ended = select.select(left, [], [], wait)[0]
        left = [fd for fd in left if fd not in ended]
    _signal(left, signal.SIGKILL)
    return left


def witness_time(path: str) -> float | None:
    """The time (Unix seconds) a guardian wrote to its witness file ``path``; None when it
    wrote none (its parent was not lost) or the file is not one it wrote."""
    try:
        with open(path, "rb") as f:
            text = f.read(64)
    except OSError:
        return None
    try:
        t = float(text.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        return None
    return t if math.isfinite(t) and t > 0 else None


def _witness(path: str, last_heard: float) -> None:
    """Write the wall-clock time the parent was last heard of (``last_heard``, monotonic) to
    ``path`` (flushed: the parent is gone, nothing else will say it)."""
    if not path:
        return
    try:
        with open(path, "w", encoding="ascii") as f:
            f.write(f"{time.time() - (time.monotonic() - last_heard):.6f}\n")
            f.flush()
            os.fsync(f.fileno())
    except OSError:
        pass


def guard(parent: str, bound: str, grace: str, witness: str = "", ends_silent: str = "1"
          ) -> None:
    """The guardian's loop (``Guardian``): follow ``parent`` through standard input."""
    pid, silence, grace_s = int(parent), float(bound), float(grace)
    me, children, buf = _pidfd(pid), [], b""
    last = time.monotonic()
    while True:
        ready = select.select([0], [], [], silence / 5)[0]
        if ready:
            data = os.read(0, 4096)
            if not data:
                _witness(witness, time.monotonic())
                killed = _end(children, grace_s)
                if killed:
                    print(f"wagon: {len(killed)} process(es) of the dead replay {pid} still "
                          f"there {grace_s:g} s after it: killed", file=sys.stderr)
                return
            last = time.monotonic()
            *lines, buf = (buf + data).split(b"\n")
            for line in lines:
                if line == b"bye":
                    return
                if line.isdigit() and (fd := _pidfd(int(line))) is not None:
                    children.append(fd)
        elif ends_silent == "1" and time.monotonic() - last > silence:
            _witness(witness, last)
            print(f"wagon: the replay {pid} was silent for {time.monotonic() - last:.1f} s "
                  "(stopped or frozen): its processes and it are ended; 'wagon recover' "
                  "settles its results", file=sys.stderr)
            _end(children, grace_s)
            if me is not None:
                _signal([me], signal.SIGKILL)
            return
