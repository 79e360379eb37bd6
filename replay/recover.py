"""``wagon recover``: finish a replay whose parent process died.

The parent merges the workers' part files and writes the summary when the run ends; killed
(SIGKILL, the OOM killer, a lost terminal, a full disk), it does neither. Its workers die with
it (``lifeline``) after flushing their rows, so there are no results files (``parts``: or an
earlier run's, untouched), only the part files ``RESULTS.partK`` with the rows and the pending
run file ``RESULTS'.run.json.part``, without summary. ``recover`` settles each part as a dead
worker's (``salvage``: the requests of sessions due by the last time any part records and left
without a row are ``not_started``), publishes them with the summary the run would have had,
``stopped_by: parent_died``, or the reason the pending run file records (``note_stop``:
``disk_full``, written by a replay that a full disk stopped). A single process' part (part 0
of 1) is settled the same way.
"""
from __future__ import annotations

import os
import time
from dataclasses import fields, replace

from ..formats.results import read_run, run_path, write_run
from ..formats.scenario import read_scenario
from ..lifeline import witness_time
from .parts import lost_path, part_paths, pending_run_path
from .runner import ReplayError, ReplayOptions, _target, finish, measured_window
from .salvage import last_recorded, settle_part
from .thresholds import ThresholdError, parse_threshold

__all__ = ["recover", "note_stop", "DISK_FULL_STOP"]

#: ``stopped_by`` of a run that a full disk stopped (its pending run file says so)
DISK_FULL_STOP = "disk_full"


def note_stop(results: str, why: str) -> bool:
    """Record in the pending run file of ``results`` why the run stopped before its end (a
    full disk), so that ``recover`` says so rather than ``parent_died``; False when it cannot
    (no pending file, or no room even for that: recover then says ``parent_died``)."""
    pending = pending_run_path(results)
    try:
        info = read_run(results, pending)
        if info is None:
            return False
        write_run(results, {k: v for k, v in info.items() if k not in ("format", "version")}
                  | {"stopped_by": why}, pending)
    except (OSError, ValueError):
        return False
    return True


def _options(saved: dict) -> ReplayOptions:
    """The run's options as its run file keeps them (JSON lists back to tuples)."""
    known = {f.name for f in fields(ReplayOptions)}
    return ReplayOptions(**{k: tuple(v) if isinstance(v, list) else v
                            for k, v in saved.items() if k in known})


def _missing_part(k: int, requests: str, pages: str) -> str:
    """What worker k's missing part files cost the results (dead_workers says it)."""
    if not os.path.exists(requests):
        return (f"worker {k}: no part file {requests}: its sessions' requests are counted not "
                "started")
    return f"worker {k}: no part file {pages}: its sessions' pages are not in the results"


def _witnessed(results: str, t0_unix: float) -> float:
    """When the run's guardian saw the parent die (the run's seconds; 0 when it wrote
    nothing); ReplayError for a witness file that is not of this run."""
    path = lost_path(results)
    lost_at = witness_time(path)
    if lost_at is None:
        if os.path.exists(path) and os.path.getsize(path):
            raise ReplayError(f"{path}: not a guardian's witness file (one line, a Unix time): "
                              "remove it to recover from the rows alone")
        return 0.0
    if not t0_unix - 60 <= lost_at <= time.time():
        raise ReplayError(f"{path}: {lost_at:.3f} is not a time of this run (it began at "
                          f"{t0_unix:.3f}): remove it to recover from the rows alone")
    return lost_at - t0_unix


def recover(results: str) -> dict:
    """Settle, merge and summarise the results ``results`` of a run whose parent died; the
    summary (also written to the run file). ReplayError (one line) when there is nothing to
    recover."""
    info = read_run(results, pending_run_path(results))
    if info is None:
        if read_run(results) is not None:
            raise ReplayError(f"{run_path(results)}: the run ended and has its summary: "
                              "nothing to recover")
        raise ReplayError(f"{pending_run_path(results)}: no run file of an unfinished run: "
                          "not the results of a replay that died")
    opts = replace(_options(info["options"]), results=results)   # where the parts are now
    try:
        thresholds = [parse_threshold(t) for t in opts.fail_on]
    except ThresholdError as e:
        raise ReplayError(f"{pending_run_path(results)}: {e}") from None
    if not os.path.exists(info["scenario"]):
        raise ReplayError(f"{info['scenario']}: the scenario the run played is needed (run "
                          "recover where the replay ran)")
    sc = read_scenario(info["scenario"])
    n = opts.workers
    parts = [part_paths(results, k) for k in range(n)]
    due_by = last_recorded([requests for requests, _ in parts])
    due_by = max(due_by, _witnessed(results, info["t0_unix"]))
    prefix = _target(opts.target)[3]
    window = measured_window(sc, opts)
    missing = [_missing_part(k, *paths) for k, paths in enumerate(parts)
               if not all(map(os.path.exists, paths))]
    why = info.get("stopped_by") or "parent_died"
    states = [settle_part(sc, (k, n), due_by, prefix, *parts[k], window, why=why)
              for k in range(n)]
    info = {k: v for k, v in info.items() if k not in ("format", "version", "summary",
                                                        "stopped_by")}
    return finish(states, missing, info, opts, thresholds)
