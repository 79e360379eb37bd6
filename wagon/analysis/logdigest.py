"""A log's ``Digest`` read the way ``wagon fit`` reads logs (``wagon.modeling.stages``): the
inputs cut into pieces parsed one at a time, their records routed by client into partitions
spilled to disk, each partition cleaned, tallied and sessionized on its own, the partitions'
sessions and tallies merged. Memory holds one piece or one partition of the records, plus the
sessions and the tallies (a 10⁷-line log in a fraction of what its records take).

The result is the digest of the whole log parsed at once (``load_workload``: time outliers
and lines repeated across inputs left out, times dilated by ``speedup``, sessions by the
default rules, robots' requests left out, URLs as logged): nothing depends on how the log was cut.
A log recorded in windows (``wagon.logs.windows``: the first minute of every hour, say) is read
in recorded time, the windows end to end, as ``wagon fit`` models it: its sessions rebuilt in the
log's time, then its session starts and requests' times with the silences taken out (the
windows found from its clicks widened to hold its requests: ``widened``), so that
its session rate, inter-arrival gaps and requests per second are those of its recorded time.

Two logs compared are read on one clock (``load_digests``, ``workload.on_one_clock``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..logs.parse import Chunk, Requests
from ..logs.partition import Shared, merge_cleaning, partition_requests, shared_context
from ..logs.pieces import PIECE_BYTES, plan
from ..logs.sessions import (OBJECT_EXTENSIONS, Partial, coarsened, extension_flags,
                             merge_partials, sessionize_kept)
from ..logs.windows import to_recorded, widened
from ..modeling.allocator import give_back_freed_memory
from ..modeling.options import FitOptions
from ..modeling.stages import LocalRunner
from .digest import Digest, Tally, digest, digest_of, html_or_image, tally
from .workload import load_workload, on_one_clock, workload_kind

__all__ = ["log_digest", "load_digest", "load_digests"]

_FILE_SHIFT = 40           # a request's order in its inputs: file index · 2⁴⁰ + line


def _request_tally(req: Requests) -> Tally:
    """The tally of a partition's cleaned requests (pages by extension, as ``load_workload``
    reads a log)."""
    is_page = ~extension_flags(req.urls, OBJECT_EXTENSIONS)[req.url]
    order = (req.file.astype(np.int64) << _FILE_SHIFT) + req.line
    return tally(req.time, req.url, req.urls, html_or_image(req.urls, req.url, is_page),
                 req.status, req.size, order, distinct_times=True)


@dataclass(frozen=True)
class DigestOptions(FitOptions):
    """How a log is read for a digest: as ``wagon fit`` reads it, on a ``clock`` of that many
    seconds when it is coarser than the log's own stamps (0: the log's own)."""

    clock: float = 0.0


def _partition_stage(chunks: list[Chunk], options: Any, shared: Shared
                     ) -> tuple[Partial, Tally, tuple[int, int, list]]:
    """One partition's sessions (without the samples compare does not read), the tally of its
    requests but the robots', and what its cleaning left out (``partition.merge_cleaning``)."""
    req, cleaned = partition_requests(chunks, shared, options.speedup)
    req = coarsened(req, options.clock)
    partial, human = sessionize_kept(req, options.rules)
    partial.samples = {k: partial.samples[k] for k in ("clicks", "think")}
    return partial, _request_tally(req.take(np.flatnonzero(human))), (
        cleaned.time_outliers, cleaned.duplicates, cleaned.left_out)


def log_digest(paths: list[str], fmt: str = "auto", base_month: str | None = None,
               speedup: float = 1.0, partitions: int | None = None,
               piece_bytes: int = PIECE_BYTES, clock: float = 0.0) -> Digest:
    """The digest of logs (module docstring); ``partitions``, ``piece_bytes``: how to cut them
    (``LocalRunner``'s defaults: partitions of 128 MB of input); ``clock``: read on a grid of
    that many seconds when coarser than the stamps' own (``sessions.coarsened``). Raises
    LogError as ``parse_logs`` does."""
    options = DigestOptions(fmt=fmt, base_month=base_month, keep_paths=True, speedup=speedup,
                            clock=clock)
    runner = LocalRunner(partitions, piece_bytes=piece_bytes, stage=_partition_stage)
    pieces = plan(paths, runner.piece_bytes, runner.spread)
    results = runner.parse(pieces, options, runner.partitions_for(sum(p.size for p in pieces)),
                           None)
    try:
        shared, read = shared_context(results)
        del results
        parts = runner.sessionize(options, shared, None)
    finally:
        runner.close()
    merge_cleaning(read, [c for _, _, c in parts])
    sessions = merge_partials([p for p, _, _ in parts], options.rules)
    tallies = [t for _, t, _ in parts]
    resolution, starts, clicks, think = (sessions.resolution, sessions.session_start,
                                         sessions.samples["clicks"], sessions.samples["think"])
    windows = sessions.windows
    if windows is not None:             # recorded time (module docstring)
        for t in tallies:
            windows = widened(windows, t.times[0])
        starts = to_recorded(starts, windows)
        for t in tallies:
            t.times = (to_recorded(t.times[0], windows), t.times[1])
    page_hits = np.fromiter(sessions.site.page_hits.values(), np.int64)
    robots = sessions.counts["robot_requests"]
    del parts, sessions
    give_back_freed_memory()        # the partitions' heap, before the series is analysed
    out = digest_of(tallies, ", ".join(Path(p).name for p in paths), "log", resolution,
                    starts, clicks, think, page_hits)
    out.read, out.robot_requests, out.windows = read, robots, windows
    return out


def load_digest(paths: list[str] | str, fmt: str = "auto", base_month: str | None = None,
                log_speedup: float = 1.0) -> Digest:
    """``load_workload``'s inputs as digests: logs streamed (``log_digest``), a scenario or
    replay results read whole and digested."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    if workload_kind(paths) == "log":
        return log_digest(paths, fmt, base_month, log_speedup)
    w = load_workload(paths, fmt, base_month, log_speedup)
    give_back_freed_memory()        # what reading it left, before it is digested
    return digest(w)


def load_digests(a: list[str], b: list[str], fmt: str = "auto", base_month: str | None = None,
                 log_speedup: float = 1.0) -> tuple[Digest, Digest]:
    """Both sides of ``wagon compare`` as digests, two logs on one clock
    (``workload.on_one_clock``; a log read on the other's coarser grid says its own stamps'
    in ``stamps``)."""
    def read(paths: list[str], clock: float) -> Digest:
        if clock:                                     # a log, on the other's clock
            return log_digest(paths, fmt, base_month, log_speedup, clock=clock)
        return load_digest(paths, fmt, base_month, log_speedup)
    return on_one_clock(read, a, b)
