"""Parsed pieces to sessions, one partition of the clients at a time (``wagon.modeling.stages``
runs these steps, in one process or on a cluster).

- ``shared_context``: what every partition needs from all the pieces — each input's run of
  its median time (the time-outlier rule is per input, ``clean.median_run``), where each
  piece's lines start in its input, the timestamps' resolution — and the merged statistics;
- ``sessionize_partition``: the chunks every piece routed to one partition (all the requests
  of its clients: ``parse.partition_of``) joined, cleaned (outliers, lines repeated across
  inputs: identical lines have the same client, so they meet here: ``partition_requests``,
  which ``wagon compare`` also tallies), URLs templated, sessions rebuilt: a
  ``sessions.Partial`` plus what merges beside it;
- ``merge_partitions``: the partials merged into one ``Sessions`` (``sessions.merge_partials``),
  the counts and left-out lines of the cleaning summed and sorted. Nothing depends on how the
  inputs were cut into pieces or the clients into partitions.
"""
from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .clean import SHOWN, clean_requests, median_run, merge_counted
from .parse import (EXAMPLES_KEPT, Chunk, ParseStats, PieceResult, Requests, _COLUMNS,
                    _DTYPES, finest, nothing_parsed, resolution_of, sorted_table)
from .shuffled import Shuffle, decided, merged, restamp_inputs
from .sessions import (Partial, SessionRules, Sessions, dilate, merge_partials,
                       sessionize_requests)
from .templates import ValueTally, dynamic_prefixes, template_requests

__all__ = ["Shared", "PartitionResult", "shared_context", "partition_requests",
           "sessionize_partition", "merge_partitions"]

_TABLES = (("host", "hosts"), ("url", "urls"), ("agent", "agents"), ("method", "methods"),
           ("referer", "referers"), ("vhost", "vhosts"), ("content_type", "content_types"))


@dataclass(frozen=True)
class Shared:
    """What every partition needs from all the pieces (module docstring)."""

    inputs: tuple[str, ...]
    keep: dict[int, tuple[float, float]]           # input → run of its median time
    line_offset: dict[tuple[int, int], int]        # piece key → lines before it in its input
    resolution: float | None                       # of the logged times (parse.resolution_of)
    dynamic: frozenset[str] = frozenset()          # route prefixes whose next segment is a
                                                   # placeholder (templates.dynamic_prefixes)
    shuffled: dict[int, Shuffle] = field(default_factory=dict)   # input → its stamps' shuffle


@dataclass
class PartitionResult:
    """One partition's sessions (``partial``) and what merges beside them: the logged URLs
    with the template each became, the cleaning's counts and first left-out lines, and the
    first and last kept start time."""

    partial: Partial
    raw_urls: list[str]
    raw_template: list[str]
    time_outliers: int = 0
    duplicates: int = 0
    left_out: list[tuple[str, int, str, str]] = field(default_factory=list)
    span: tuple[float, float] | None = None
    values: ValueTally = field(default_factory=ValueTally)


def _merge_stats(results: list[PieceResult], inputs: tuple[str, ...]) -> ParseStats:
    """The statistics of all pieces: counts summed, formats from each input's first piece
    that read something, the first EXAMPLES_KEPT malformed lines of each input."""
    stats = ParseStats(inputs=list(inputs))
    offsets = _line_offsets(results)
    examples = []
    for r in sorted(results, key=lambda r: r.piece.key):
        stats.lines += r.stats.lines
        stats.parsed += r.stats.parsed
        stats.malformed += r.stats.malformed
        stats.long_urls += r.stats.long_urls
        name = r.piece.path
        fmt = r.stats.formats.get(name, "empty input")
        if stats.formats.get(name, "empty input") == "empty input":
            stats.formats[name] = fmt
        examples += [(f, offsets[r.piece.key] + n, why, text)
                     for f, n, why, text in r.stats.examples]
    for name in inputs:
        stats.examples += sorted(e for e in examples if e[0] == name)[:EXAMPLES_KEPT]
    return stats


def _line_offsets(results: list[PieceResult]) -> dict[tuple[int, int], int]:
    offsets, seen = {}, Counter()
    for r in sorted(results, key=lambda r: r.piece.key):
        offsets[r.piece.key] = seen[r.piece.index]
        seen[r.piece.index] += r.stats.lines
    return offsets


def shared_context(results: list[PieceResult]) -> tuple[Shared, ParseStats]:
    """What the partitions share, and the merged parse statistics. Raises LogError, as a
    whole-file parse does, for an input where no line could be parsed."""
    ordered = sorted(results, key=lambda r: r.piece.key)
    names = {r.piece.index: r.piece.path for r in ordered}
    inputs = tuple(names[i] for i in sorted(names))
    stats = _merge_stats(ordered, inputs)
    parsed = Counter()
    for r in ordered:
        parsed[r.piece.index] += r.stats.parsed
    for index, name in enumerate(inputs):
        if not parsed[index]:
            raise nothing_parsed(name, stats.formats[name],
                                 sum((r.stats.malformed for r in ordered
                                      if r.piece.index == index), Counter()))
    keep = {}
    for index in range(len(inputs)):
        values, counts = merge_counted([r.times for r in ordered if r.piece.index == index])
        keep[index] = median_run(values, counts)
        del values, counts
    places = functools.reduce(finest, (r.places for r in ordered), None)
    dynamic = dynamic_prefixes(u for r in ordered for u in r.routes)
    offsets = _line_offsets(ordered)
    shuffled = {}
    for index, name in enumerate(inputs):
        s = decided(merged([(r.disorder, offsets[r.piece.key]) for r in ordered
                            if r.piece.index == index]))
        if s is not None:
            shuffled[index] = stats.shuffled[name] = s
    resolution = 0.0 if shuffled else resolution_of(places)   # restamped: exact values
    return Shared(inputs, keep, offsets, resolution, dynamic, shuffled), stats


def _joined(chunks: list[Chunk], shared: Shared) -> Requests:
    """The chunks as one ``Requests`` (piece order), string tables merged (sorted), line numbers
    counted from the start of each input."""
    chunks = sorted(chunks, key=lambda c: c.key)
    reqs = [c.requests for c in chunks]
    cols = {}
    for k in _COLUMNS:
        parts = [getattr(r, k) for r in reqs]
        cols[k] = (np.concatenate(parts).astype(_DTYPES[k], copy=False) if parts
                   else np.zeros(0, _DTYPES[k]))
    cols["line"] = cols["line"] + np.repeat([shared.line_offset[c.key] for c in chunks],
                                            [len(r) for r in reqs]).astype(np.int64)
    tables = {}
    for col, table in _TABLES:
        names, indices = sorted_table([getattr(r, table) for r in reqs])
        codes = []
        for r, index in zip(reqs, indices):
            c = getattr(r, col)
            codes.append(np.where(c >= 0, index[np.maximum(c, 0)] if len(index) else -1, -1))
        cols[col] = (np.concatenate(codes).astype(_DTYPES[col]) if codes
                     else np.zeros(0, _DTYPES[col]))
        tables[table] = names
    return Requests(**cols, **tables, resolution=shared.resolution)


def partition_requests(chunks: list[Chunk], shared: Shared, speedup: float = 1.0
                       ) -> tuple[Requests, ParseStats]:
    """One partition's requests (its chunk of every piece) joined and cleaned, and the
    cleaning's counts; ``speedup``: the log was written during a replay that fast, its times
    are dilated back (``sessions.dilate``) from the earliest kept second of every input, the
    same for every partition."""
    req = _joined(chunks, shared)
    stats = ParseStats(inputs=list(shared.inputs))
    req, stats = clean_requests(req, stats, shared.keep)      # on the stamps as logged
    restamp_inputs(req, shared.shuffled)
    if shared.keep:
        req = dilate(req, speedup, float(np.floor(min(lo for lo, _ in shared.keep.values()))))
    return req, stats


def sessionize_partition(chunks: list[Chunk], rules: SessionRules, shared: Shared,
                         keep_paths: bool = False, speedup: float = 1.0,
                         keep_query: bool = False) -> PartitionResult:
    """The sessions of one partition's clients (module docstring; ``partition_requests``),
    requests as templates (``logs.templates``) unless paths are kept."""
    req, stats = partition_requests(chunks, shared, speedup)
    raw = templates = list(req.urls)
    values = ValueTally()
    if not keep_paths:
        req, raw, templates, values = template_requests(req, shared.dynamic, keep_query)
    span = (float(req.time.min()), float(req.time.max())) if len(req) else None
    return PartitionResult(sessionize_requests(req, rules), raw, templates,
                           stats.time_outliers, stats.duplicates, stats.left_out, span, values)


def merge_cleaning(stats: ParseStats, parts: list[tuple[int, int, list]]) -> None:
    """Give ``stats`` the partitions' cleaning, each (time outliers, lines repeated from an
    earlier input, the lines left out): the counts summed, the first left-out lines of each
    cause in input and line order."""
    stats.time_outliers = sum(p[0] for p in parts)
    stats.duplicates = sum(p[1] for p in parts)
    order = {name: i for i, name in enumerate(stats.inputs)}
    for cause in ("time outlier", "repeated from an earlier input"):
        mine = [e for p in parts for e in p[2] if e[2] == cause]
        stats.left_out += sorted(mine, key=lambda e: (order[e[0]], e[1]))[:SHOWN]


def merge_partitions(results: list[PartitionResult], stats: ParseStats, rules: SessionRules,
                     seed: int = 0, released: Callable[[], None] | None = None
                     ) -> tuple[Sessions, np.ndarray, float, ValueTally]:
    """(Sessions, logged URLs per URL of ``sessions.site.urls``, span of the kept start times
    in seconds, the values the placeholders took); ``stats`` gets the cleaning's counts and its
    first left-out lines of each cause, in input and line order. ``released``: as in
    ``sessions.merge_partials``."""
    sessions = merge_partials([r.partial for r in results], rules, seed, released=released)
    merge_cleaning(stats, [(r.time_outliers, r.duplicates, r.left_out) for r in results])
    template_of = {u: t for r in results for u, t in zip(r.raw_urls, r.raw_template)}
    index = {u: i for i, u in enumerate(sessions.site.urls)}
    variants = np.bincount([index[t] for t in template_of.values()], minlength=len(index))
    spans = [r.span for r in results if r.span is not None]
    span = max(s[1] for s in spans) - min(s[0] for s in spans) if spans else 0.0
    values = ValueTally()
    for r in results:
        values.add(r.values)
    return sessions, variants, float(span), values
