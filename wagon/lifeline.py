"""Processes and scratch files that do not outlive the process they serve.

- ``die_with_parent``: a child's first call (a pool's initializer, a worker's first line):
  Linux's PR_SET_PDEATHSIG has the kernel send it a signal when its parent dies, however the
  parent dies (SIGKILL included); a parent already gone is seen at once.
- ``ScratchDir``: a temporary directory (the fit's spilled chunks) removed by its owner as
  usual, and by a small watcher process when the owner dies without doing so: the watcher
  holds the read end of a pipe whose write end only the owner holds; the kernel closes it when
  the owner dies, the watcher reads EOF and removes the directory.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile

__all__ = ["die_with_parent", "ScratchDir"]

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
