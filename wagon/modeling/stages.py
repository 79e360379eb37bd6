"""``wagon fit`` as stages: plain functions of picklable values, run by a runner.

The stages, in order (every argument and result pickles, so any stage can run in another
process or on another machine):

1. ``plan(paths)`` → pieces (``wagon.logs.pieces``): a file, or a byte range of a big
   uncompressed file (ranges own the lines that start in them); standard input is one piece;
   a compressed file is one piece that the runner cuts as it is decompressed
   (``pieces_of``: ``wagon.logs.spool``), each part spooled to a temporary file;
2. ``parse_stage(piece, options, partitions)`` → ``PieceResult``: the piece's ``ParseStats``,
   its distinct start times with counts, and its records routed into ``partitions`` chunks by
   a stable hash of the client's address (compact NumPy columns with their own string tables);
3. ``shared_context(results without their chunks)`` → (``Shared``, merged ``ParseStats``):
   each input's time-outlier bounds, where each piece's lines start, the time resolution;
4. ``sessionize_stage(chunks of one partition from every piece, options, shared)`` →
   ``PartitionResult``: cleaning, URL templates, sessions, as tallies that merge;
5. ``merge_partitions(results, stats, rules, seed)`` → ``Sessions``: deterministic — the
   result does not depend on the number of pieces or partitions;
6. ``fit_stage(FitTask)`` → ``FitReport`` per variable, and beside them ``arrivals_stage``
   (the session starts' Poisson and renewal checks); then the bootstrap
   as independent chunks (``fitting.report.bootstrap_tasks`` → ``run_bootstrap``, each with its
   own ``SeedSequence.spawn`` seed) and ``apply_bootstrap``.

A runner runs stages 2, 4 and 6 (``fit_logs(..., runner=...)``); the interface:

``piece_bytes: int``
    the size of the byte ranges big plain files are cut into (``plan``);
``spread: int``
    how many pieces plain files are cut into at least, where their size allows (``plan``):
    the workers that parse at once;
``partitions_for(total_bytes) -> int``
    how many partitions to route the records into, given the decompressed input size;
``parse(pieces, options, partitions, progress) -> list[PieceResult]``
    parse every piece; return the results in piece order with ``chunks=None``: the runner
    keeps the chunks (spilled to disk, or on workers) for ``sessionize``;
``sessionize(options, shared, progress) -> list[PartitionResult]``
    for each partition k, ``sessionize_stage`` of the k-th chunk of every piece; partition
    order; then the kept chunks can go;
``map(fn, items, stage, progress) -> list``
    ``[fn(x) for x in items]``, in order, possibly in parallel (fits, bootstrap chunks);
``close()``
    let go of what ``parse`` kept (spilled chunks, workers): ``sessionize`` does when it is
    done, ``fit_logs`` again in any case (a second call does nothing).

``progress`` is None or a plain function ``progress(stage, done, total)``: stage "parse"
(decompressed bytes), "sessionize" (partitions), "fit" (tasks). ``LocalRunner`` is the
default: serial, in this process, each piece's chunks spilled to a temporary directory, so
the memory held is one piece's or one partition's records plus the samples;
``wagon.modeling.processes.ProcessRunner`` runs them on the cores of this machine,
``wagon.modeling.dask_runner.DaskRunner`` on a Dask cluster.

The fit stages import the fitting layer (SciPy) when they run, not with this module: parse
and sessionize workers never load it, and ``fit_logs`` loads it once the partitions are merged.
"""
from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol

import numpy as np

from ..lifeline import ScratchDir
from ..logs.parse import Chunk, ParseOptions, PieceResult, parse_piece
from ..logs.partition import PartitionResult, Shared, sessionize_partition
from ..logs.pieces import PIECE_BYTES, Piece
from ..logs.spool import spool
from ..logs.templates import route_paths
from .allocator import give_back_freed_memory

if TYPE_CHECKING:
    from ..fitting import FitReport, Observation
    from ..fitting.report import BootstrapTask

__all__ = ["Progress", "Runner", "LocalRunner", "parse_stage", "sessionize_stage",
           "fit_stage", "arrivals_stage", "variable_stage", "bootstrap_stage", "FitTask",
           "ArrivalTask", "PARTITION_BYTES", "MAX_PARTITIONS", "partition_count", "spill",
           "unspill",
           "spill_path", "pieces_of", "spill_arrays", "mapped_arrays"]

Progress = Callable[[str, int, int], None]

PARTITION_BYTES = 16 << 20           # decompressed input per partition (the local runner):
#                                      sessionizing one holds about 5 times its records
MAX_PARTITIONS = 64                  # past it partitions grow instead: a piece's chunks are
#                                      read back one per partition, pieces × partitions reads


def partition_count(total_bytes: int, per_partition: int, least: int) -> int:
    """Partitions of about ``per_partition`` bytes of input each, at least ``least`` and at
    most ``MAX_PARTITIONS`` unless ``least`` asks for more."""
    return max(least, min(MAX_PARTITIONS, -(-total_bytes // per_partition)))


def parse_options(options: Any) -> ParseOptions:
    """The parser's part of ``FitOptions``: queries are read unless paths are kept verbatim
    without them (their values become placeholders, ``logs.templates``)."""
    return ParseOptions(fmt=options.fmt, keep_query=options.keep_query or not options.keep_paths,
                        base_month=options.base_month, client=options.client)


def pieces_of(pieces: list[Piece], directory: str) -> Iterator[Piece]:
    """The pieces to parse, in order: compressed inputs (``cut``) cut as they are decompressed,
    each part spooled to ``directory`` when it is drawn (``wagon.logs.spool``)."""
    for piece in pieces:
        if piece.cut and piece.path != "-":
            yield from spool(piece, directory)
        else:
            yield piece


def parse_stage(piece: Piece, options: Any, partitions: int,
                progress: Callable[[int], None] | None = None) -> PieceResult:
    """Stage 2: parse ``piece`` (``options``: ``FitOptions``) into ``partitions`` chunks, with
    its routes (``logs.templates``) unless paths are kept; a spooled piece's file is removed
    once read."""
    try:
        result = parse_piece(piece, parse_options(options), partitions, progress)
        if not options.keep_paths:
            result.routes = route_paths({u for c in result.chunks or () for u in c.requests.urls})
        return result
    finally:
        if piece.spool is not None:
            os.remove(piece.spool)


def sessionize_stage(chunks: list[Chunk], options: Any, shared: Shared) -> PartitionResult:
    """Stage 4: the sessions of one partition (its chunk from every piece)."""
    return sessionize_partition(chunks, options.rules, shared, options.keep_paths,
                                options.speedup, options.keep_query)


@dataclass(frozen=True)
class FitTask:
    """One variable to fit: its name, values, how they were recorded and whose parameters get
    intervals (``fitting.fit``'s ``intervals``)."""

    name: str
    values: np.ndarray
    observation: Observation
    intervals: str = "best"


def fit_stage(task: FitTask) -> FitReport:
    """Stage 6: every candidate law fitted to one variable (the bootstrap comes after), BLAS
    on one thread (``fitting.threads``: else p-values would move in their last digits with
    the machine the fit ran on)."""
    from ..fitting import fit  # lazy: SciPy, never loaded by parse and sessionize workers
    return fit(task.values, observation=task.observation, name=task.name,
               intervals=task.intervals)


@dataclass(frozen=True)
class ArrivalTask:
    """The session start times as logged, on a grid of ``resolution`` s (0: exact), checked for
    a Poisson or renewal process once spread inside their cells (``seed``)."""

    starts: np.ndarray
    resolution: float = 0.0
    seed: int = 0


def arrivals_stage(task: ArrivalTask) -> dict:
    """Stage 6, beside the fits: ``fitting.arrivals.arrival_report`` of the session starts
    (BLAS on one thread, as in ``fit_stage``)."""
    from ..fitting.arrivals import arrival_report  # lazy: SciPy, as in fit_stage
    return arrival_report(task.starts, resolution=task.resolution, seed=task.seed)


def variable_stage(task: FitTask | ArrivalTask) -> FitReport | dict:
    """Stage 6 as one map: a variable's fit, or the arrivals' check (which then runs beside
    the fits instead of after them)."""
    return arrivals_stage(task) if isinstance(task, ArrivalTask) else fit_stage(task)


def bootstrap_stage(task: BootstrapTask) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stage 6b: one chunk of bootstrap replicates (BLAS on one thread, as in ``fit_stage``)."""
    from ..fitting.report import run_bootstrap  # lazy: SciPy, as in fit_stage
    return run_bootstrap(task)


class Runner(Protocol):
    """What ``fit_logs`` needs to run its stages (module docstring)."""

    piece_bytes: int
    spread: int

    def partitions_for(self, total_bytes: int) -> int: ...

    def parse(self, pieces: list[Piece], options: Any, partitions: int,
              progress: Progress | None) -> list[PieceResult]: ...

    def sessionize(self, options: Any, shared: Shared,
                   progress: Progress | None) -> list[PartitionResult]: ...

    def map(self, fn: Callable, items: list, stage: str,
            progress: Progress | None) -> list: ...

    def close(self) -> None: ...


def spill(chunks: list[Chunk], path: str) -> list[int]:
    """Write a piece's chunks one after another to ``path``; where each starts. One file per
    piece, so any process can write its pieces in any order."""
    offsets = []
    with open(path, "wb") as f:
        for chunk in chunks:
            offsets.append(f.tell())
            pickle.dump(chunk, f, protocol=pickle.HIGHEST_PROTOCOL)
    return offsets


def unspill(spilled: list[tuple[str, list[int]]], k: int) -> list[Chunk]:
    """The k-th chunk of every spilled piece ((path, offsets) each, in piece order)."""
    out = []
    for path, offsets in spilled:
        with open(path, "rb") as f:
            f.seek(offsets[k])
            out.append(pickle.load(f))
    return out


#: where each array of a ``spill_arrays`` file is: name → (dtype, offset, length)
Layout = dict[str, tuple[str, int, int]]


def spill_arrays(arrays: dict[str, np.ndarray], path: str) -> Layout:
    """Write ``arrays`` one after another to ``path`` (raw, native byte order); where each is."""
    layout = {}
    with open(path, "wb") as f:
        for name, a in arrays.items():
            a = np.ascontiguousarray(a)
            layout[name] = (a.dtype.str, f.tell(), len(a))
            a.tofile(f)
    return layout


def mapped_arrays(path: str, layout: Layout) -> dict[str, np.ndarray]:
    """The arrays ``spill_arrays`` wrote to ``path``, mapped read-only: their pages are read when
    used and go with the last reference (the file may be removed meanwhile)."""
    return {name: (np.asarray(np.memmap(path, dtype, "r", offset, (n,))) if n
                   else np.zeros(0, dtype)) for name, (dtype, offset, n) in layout.items()}


def spill_path(directory: str, piece: Piece) -> str:
    return os.path.join(directory, f"piece-{piece.index}-{piece.part}.pickle")


class LocalRunner:
    """Serial, in this process; each piece's chunks are written to a temporary directory
    (``spill_dir``) as soon as it is parsed and read back one partition at a time (with a
    single partition they stay in memory: it holds every record anyway). ``stage``: what
    ``sessionize`` makes of each partition (``sessionize_stage``; ``wagon compare`` tallies
    its requests beside its sessions)."""

    def __init__(self, partitions: int | None = None, spill_dir: str | None = None,
                 piece_bytes: int = PIECE_BYTES,
                 stage: Callable[[list[Chunk], Any, Shared], Any] = sessionize_stage) -> None:
        self.partitions = partitions
        self.stage = stage
        self.piece_bytes = piece_bytes
        self.spread = 1
        self.spill_dir = spill_dir
        self._dir: ScratchDir | None = None
        self._count = 0
        self._spilled: list[tuple[str, list[int]]] = []
        self._held: list[Chunk] = []

    def partitions_for(self, total_bytes: int) -> int:
        return self.partitions or partition_count(total_bytes, PARTITION_BYTES, 1)

    def parse(self, pieces: list[Piece], options: Any, partitions: int,
              progress: Progress | None) -> list[PieceResult]:
        # one partition holds everything in memory anyway: nothing to spill (but compressed
        # inputs to spool)
        spooled = any(p.cut for p in pieces)
        self._dir = (ScratchDir("wagon-fit-", self.spill_dir) if partitions > 1 or spooled
                     else None)
        self._count, self._spilled = partitions, []
        total, done = sum(p.size for p in pieces), 0

        def advance(n: int) -> None:          # sizes of bzip2 and xz inputs are estimates
            nonlocal done, total
            done += n
            total = max(total, done)
            progress("parse", done, total)                    # type: ignore[misc]
        out = []
        try:
            for piece in pieces_of(pieces, self._dir.path if self._dir else ""):
                r = parse_stage(piece, options, partitions, advance if progress else None)
                if self._dir is None or partitions == 1:
                    self._held += r.chunks or []
                else:
                    path = spill_path(self._dir.path, piece)
                    self._spilled.append((path, spill(r.chunks or [], path)))
                r.chunks = None
                out.append(r)
        except BaseException:
            self.close()
            raise
        return out

    def sessionize(self, options: Any, shared: Shared,
                   progress: Progress | None) -> list[PartitionResult]:
        out = []
        try:
            for k in range(self._count):
                chunks, self._held = self._held + unspill(self._spilled, k), []
                out.append(self.stage(chunks, options, shared))
                del chunks
                if progress:
                    progress("sessionize", k + 1, self._count)
        finally:
            self.close()
        return out

    def map(self, fn: Callable, items: list, stage: str, progress: Progress | None) -> list:
        """``fn`` of each item in turn, the heap its temporaries leave handed back after each
        (as a ``ProcessRunner`` worker does)."""
        out = []
        for i, x in enumerate(items):
            out.append(fn(x))
            give_back_freed_memory()
            if progress:
                progress(stage, i + 1, len(items))
        return out

    def close(self) -> None:
        """Remove the spilled chunks (``sessionize`` does when it is done)."""
        if self._dir is not None:
            self._dir.remove()
            self._dir = None
