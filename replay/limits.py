"""Process limits shared by the replay engine and the embedded server."""
from __future__ import annotations

import resource

__all__ = ["raise_nofile", "open_files_limit"]


def raise_nofile() -> int:
    """Raise the soft open-files limit to the hard one; returns the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return open_files_limit()


def open_files_limit() -> int:
    """The soft open-files limit in force."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
