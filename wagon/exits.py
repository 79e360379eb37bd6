"""The exit statuses of every ``wagon`` command, in one place (docs/README.md, "Exit
statuses"): a script tells what happened from the status alone.

| status | meaning |
|---|---|
| 0 | done |
| 1 | a bug: an exception wagon did not expect (report it) |
| 2 | bad input: a file, an option or a value wagon refuses (one line on stderr) |
| 3 | unreachable: the target of a replay or a sweep did not answer its pre-flight connect |
| 4 | done, but a threshold failed (``--fail-on``, a sweep's or compare's verdict) |
| 5 | interrupted or incomplete: Ctrl-C or SIGTERM, a dead worker, a recovered run |
| 6 | disk full: a write found no room (the file it replaced is unchanged) |
"""
from __future__ import annotations

__all__ = ["EXIT_OK", "EXIT_BUG", "EXIT_BAD_INPUT", "EXIT_UNREACHABLE", "EXIT_THRESHOLDS",
           "EXIT_INCOMPLETE", "EXIT_DISK_FULL", "EXIT_STATUSES"]

EXIT_OK = 0
EXIT_BUG = 1
EXIT_BAD_INPUT = 2
EXIT_UNREACHABLE = 3
EXIT_THRESHOLDS = 4
EXIT_INCOMPLETE = 5
EXIT_DISK_FULL = 6

#: status → what it means (the table above; ``wagon --help`` prints it)
EXIT_STATUSES = {EXIT_OK: "done", EXIT_BUG: "a bug (an unexpected exception: report it)",
                 EXIT_BAD_INPUT: "bad input (one line on stderr)",
                 EXIT_UNREACHABLE: "the target did not answer (replay, sweep)",
                 EXIT_THRESHOLDS: "done, a threshold failed",
                 EXIT_INCOMPLETE: "interrupted or incomplete",
                 EXIT_DISK_FULL: "disk full"}
