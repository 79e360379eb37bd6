"""The fit's stages on the cores of this machine (``wagon fit --workers N``): the runner
interface of ``wagon.modeling.stages`` on a pool of worker processes.

Each stage forks its own pool (``fork``: the workers start at once and inherit what this process
holds, SciPy included, instead of importing it again), hands out its tasks and closes the pool
when they are done. Parse workers spill each piece's chunks to a file of their own
(``stages.spill``), and the partition tasks read back their chunk of every piece, as
``LocalRunner`` does in one process: the memory held is ``workers`` pieces or partitions at a
time. Results come back in order, so the model is the one a single process makes.

Plain inputs are cut into at least as many pieces as there are workers (``plan``'s
``spread``), and the clients into at least as many partitions, each of at most
``PARTITION_BYTES / workers`` of input (the memory of ``workers`` partitions at once stays that
of one in a single process). A compressed input is one piece (it cannot be entered
mid-stream), parsed by one worker.
"""
from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from ..logs.parse import PieceResult
from ..logs.partition import PartitionResult, Shared
from ..logs.pieces import MIN_SPREAD_BYTES, PIECE_BYTES, Piece
from .stages import (PARTITION_BYTES, Progress, parse_stage, sessionize_stage, spill,
                     spill_path, unspill)

__all__ = ["ProcessRunner", "WorkerError", "usable_cores", "can_fork"]


class WorkerError(RuntimeError):
    """A worker process died (killed, out of memory) before finishing its task."""


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                               # not on Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _parse_and_spill(piece: Piece, options: Any, partitions: int, directory: str
                     ) -> tuple[PieceResult, list[int]]:
    """A parse task: the piece's result without its chunks, which go to its spill file."""
    r = parse_stage(piece, options, partitions)
    offsets = spill(r.chunks or [], spill_path(directory, piece))
    r.chunks = None
    return r, offsets


def _sessionize_spilled(spilled: list[tuple[str, list[int]]], k: int, options: Any,
                        shared: Shared) -> PartitionResult:
    """A partition task: partition k's chunk of every piece, read back and sessionized."""
    return sessionize_stage(unspill(spilled, k), options, shared)


class ProcessRunner:
    """Runs the stages on ``workers`` forked processes of this machine (module docstring)."""

    def __init__(self, workers: int, spill_dir: str | None = None,
                 piece_bytes: int = PIECE_BYTES) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        if not can_fork():
            raise ValueError("worker processes need fork(), which this system lacks")
        self.workers = workers
        self.piece_bytes = piece_bytes
        self.spread = workers
        self.spill_dir = spill_dir
        self._dir: str | None = None
        self._count = 0
        self._spilled: list[tuple[str, list[int]]] = []

    def partitions_for(self, total_bytes: int) -> int:
        if total_bytes <= MIN_SPREAD_BYTES:                # too little to spread
            return 1
        return max(self.workers, -(-total_bytes * self.workers // PARTITION_BYTES))

    def _run(self, fn: Callable, calls: list[tuple], stage: str, progress: Progress | None,
             weights: list[int] | None = None, meanwhile: Callable[[], Any] | None = None
             ) -> list:
        """``[fn(*c) for c in calls]`` on a freshly forked pool, in order; ``progress`` counts
        the weights (default 1 each) of the calls done, from 0; ``meanwhile()`` runs here once the
        calls are handed out (the workers are forked by then). A single call runs here."""
        weights = weights or [1] * len(calls)
        total, done = sum(weights), 0
        if progress:
            progress(stage, 0, total)                # the stage has begun (and how big it is)
        if len(calls) <= 1 or self.workers == 1:
            if meanwhile:
                meanwhile()
            out = []
            for c, w in zip(calls, weights):
                out.append(fn(*c))
                done += w
                if progress:
                    progress(stage, done, total)
            return out
        pool = ProcessPoolExecutor(min(self.workers, len(calls)),
                                   mp_context=multiprocessing.get_context("fork"))
        try:
            futures: list[Future] = [pool.submit(fn, *c) for c in calls]
            if meanwhile:
                meanwhile()
            weight = dict(zip(futures, weights))
            for f in as_completed(futures):
                f.result()                                   # the first failure, at once
                done += weight[f]
                if progress:
                    progress(stage, done, total)
            return [f.result() for f in futures]
        except BrokenProcessPool:
            raise WorkerError(f"a worker process died during the {stage} stage (out of "
                              "memory? try fewer --workers)") from None
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def parse(self, pieces: list[Piece], options: Any, partitions: int,
              progress: Progress | None,
              meanwhile: Callable[[], Any] | None = None) -> list[PieceResult]:
        self._dir = tempfile.mkdtemp(prefix="wagon-fit-", dir=self.spill_dir)
        self._count = partitions
        calls = [(p, options, partitions, self._dir) for p in pieces]
        # standard input stays with this process (a worker's is /dev/null); it is read while
        # the workers parse the files
        here = [i for i, p in enumerate(pieces) if p.path == "-"]
        away = [i for i in range(len(pieces)) if i not in here]
        done: dict[int, tuple[PieceResult, list[int]]] = {}

        def beside() -> None:
            if meanwhile:
                meanwhile()
            done.update((i, _parse_and_spill(*calls[i])) for i in here)
        try:
            done.update(zip(away, self._run(_parse_and_spill, [calls[i] for i in away],
                                            "parse", progress, [pieces[i].size for i in away],
                                            beside)))
        except BaseException:
            self.close()
            raise
        self._spilled = [(spill_path(self._dir, p), done[i][1]) for i, p in enumerate(pieces)]
        return [done[i][0] for i in range(len(pieces))]

    def sessionize(self, options: Any, shared: Shared,
                   progress: Progress | None) -> list[PartitionResult]:
        try:
            return self._run(_sessionize_spilled,
                             [(self._spilled, k, options, shared) for k in range(self._count)],
                             "sessionize", progress)
        finally:
            self.close()

    def map(self, fn: Callable, items: list, stage: str, progress: Progress | None) -> list:
        return self._run(fn, [(x,) for x in items], stage, progress)

    def close(self) -> None:
        """Remove the spilled chunks (``sessionize`` does when it is done)."""
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        self._spilled = []
