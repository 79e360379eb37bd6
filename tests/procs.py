"""Processes as the kernel lists them (/proc): the independent view of who is still running."""
from __future__ import annotations

import os


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def alive(pid: int) -> bool:
    """Is process ``pid`` running (neither gone nor a zombie)?"""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def children(pid: int) -> list[int]:
    """The running processes whose parent is ``pid``."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and alive(int(p))
            and (_stat(int(p)) or ["", ""])[1] == str(pid)]
