"""``wagon recover``: finish a replay whose parent process died.

The parent merges the workers' part files and writes the summary when the run ends; killed
(SIGKILL, the OOM killer, a lost terminal), it does neither. Its workers die with it
(``lifeline``) after flushing their rows, so the results files hold a header, the part files
``RESULTS.partK`` the rows, and the run file no summary. ``recover`` settles each part as a dead
worker's (``salvage``: the requests of sessions due by the last time any part records and left
without a row are ``not_started``), merges them and writes the summary the run would have had,
``stopped_by: parent_died``. A single process' results (no parts) are settled the same way.
"""
from __future__ import annotations

import os
from dataclasses import fields

from ..formats.results import pages_path, read_run, run_path
from ..formats.scenario import read_scenario
from .runner import (ReplayError, ReplayOptions, _part_paths, _target, concat, finish,
                     measured_window)
from .salvage import last_recorded, settle_part
from .thresholds import ThresholdError, parse_threshold

__all__ = ["recover"]


def _options(saved: dict) -> ReplayOptions:
    """The run's options as its run file keeps them (JSON lists back to tuples)."""
    known = {f.name for f in fields(ReplayOptions)}
    return ReplayOptions(**{k: tuple(v) if isinstance(v, list) else v
                            for k, v in saved.items() if k in known})


def recover(results: str) -> dict:
    """Settle, merge and summarise the results ``results`` of a run whose parent died; the
    summary (also written to the run file). ReplayError (one line) when there is nothing to
    recover."""
    info = read_run(results)
    if info is None:
        raise ReplayError(f"{run_path(results)}: no run file: not the results of a replay")
    if info.get("summary") is not None:
        raise ReplayError(f"{run_path(results)}: the run ended and has its summary: nothing to "
                          "recover")
    opts = _options(info["options"])
    try:
        thresholds = [parse_threshold(t) for t in opts.fail_on]
    except ThresholdError as e:
        raise ReplayError(f"{run_path(results)}: {e}") from None
    if not os.path.exists(info["scenario"]):
        raise ReplayError(f"{info['scenario']}: the scenario the run played is needed (run "
                          "recover where the replay ran)")
    sc = read_scenario(info["scenario"])
    n = opts.workers
    parts = [_part_paths(results, k if n > 1 else -1) for k in range(n)]
    due_by = last_recorded([requests for requests, _ in parts])
    prefix = _target(opts.target)[3]
    window = measured_window(sc, opts)
    states = [settle_part(sc, (k, n), due_by, prefix, *parts[k], window, why="parent_died")
              for k in range(n)]
    if n > 1:
        concat(results, n)
        concat(pages_path(results), n)
    info = {k: v for k, v in info.items() if k not in ("format", "version", "summary")}
    return finish(states, [], info, opts, thresholds)
