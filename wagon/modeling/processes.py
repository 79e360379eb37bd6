"""The fit's stages on the cores of this machine (``wagon fit --workers N``): the runner
interface of ``wagon.modeling.stages`` on a pool of worker processes.

Pools are forked (``fork``: the workers start at once and inherit what this process holds,
SciPy included, instead of importing it again). The parse workers stay for the partitions:
each spills its pieces' chunks to a file of its own (``stages.spill``), and the partition
tasks, on the same workers, read back their chunk of every piece, as ``LocalRunner`` does in
one process: the memory held is ``workers`` pieces or partitions at a time. A partition task
writes its samples and session starts to a file too (``stages.spill_arrays``) and this process
maps them (``stages.mapped_arrays``): the merge reads them one variable at a time instead of
holding every partition's samples (14 bytes a line) beside the merged ones. No process loads
SciPy before the partitions are merged (``fit_logs``). The fits and the bootstrap chunks
(``map``) get a pool of their own, forked after that, which inherits SciPy and the tasks (a
variable's values) instead of importing and receiving them. Results come back in order, so the model is the
one a single process makes.

Plain inputs are cut into at least as many pieces as there are workers (``plan``'s
``spread``), and the clients into at least twice as many partitions, each of about
``PARTITION_BYTES / workers`` of input up to ``MAX_PARTITIONS`` (the memory of ``workers``
partitions at once stays that of one in a single process). Two partitions a worker: sessionizing a partition takes about
three times the memory of its records, and a worker's partitions half the size of its piece
stay within the memory its parse already touched instead of faulting in fresh pages (16,000
a worker on the 1M-line NASA log: 25 ms of its 165), and the workers share them as they
finish. Compressed inputs are decompressed here and cut into pieces as they are read
(``stages.pieces_of``), each handed to the workers as soon as it is spooled: at most
``workers`` + 1 pieces handed out and not yet parsed, and one being written, are on disk.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
from concurrent.futures import (FIRST_COMPLETED, Future, ProcessPoolExecutor, as_completed,
                                wait)
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator

from ..lifeline import ScratchDir, die_with_parent
from ..logs.parse import PieceResult
from ..logs.partition import PartitionResult, Shared
from ..logs.pieces import MIN_SPREAD_BYTES, PIECE_BYTES, Piece
from .allocator import give_back_freed_memory
from .stages import (PARTITION_BYTES, Layout, Progress, mapped_arrays, parse_stage,
                     partition_count, pieces_of, sessionize_stage, spill, spill_arrays,
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


#: the items of the ``map`` running, which its forked workers inherit instead of receiving
#: them pickled (``_nth``)
_MAPPED: list = []


def _nth(fn: Callable, i: int) -> Any:
    """A map task: ``fn`` of the i-th item of ``_MAPPED``, as this process inherited it; then
    the heap its temporaries leave goes back to the kernel, not kept beside the next task's
    (the arrival check of 3.4M session starts leaves 290 MB; kept, a worker done with its
    tasks held it while the other one ran the largest fit)."""
    try:
        return fn(_MAPPED[i])
    finally:
        give_back_freed_memory()


def _sessionize_spilled(spilled: list[tuple[str, list[int]]], k: int, options: Any,
                        shared: Shared, directory: str) -> tuple[PartitionResult, Layout]:
    """A partition task: partition k's chunk of every piece, read back and sessionized; its
    samples and session starts (14 bytes a line: 420 MB at 30M lines) go to a file of their
    own in ``directory`` instead of into this process's pipe (``_samples_path``)."""
    r = sessionize_stage(unspill(spilled, k), options, shared)
    starts = r.partial.session_start                 # (no sample has that name)
    layout = spill_arrays({"session_start": starts, **r.partial.samples},
                          _samples_path(directory, k))
    r.partial.samples, r.partial.session_start = {}, starts[:0]
    return r, layout


def _samples_path(directory: str, k: int) -> str:
    return os.path.join(directory, f"samples-{k}.bin")


def _mapped_samples(r: PartitionResult, layout: Layout, path: str) -> PartitionResult:
    """A partition's result with its samples and session starts mapped from ``path``: they
    are read when merged, one variable of every partition at a time, never all held here."""
    arrays = mapped_arrays(path, layout)
    r.partial.session_start = arrays.pop("session_start")
    r.partial.samples = arrays
    return r


@contextlib.contextmanager
def _worker_errors(stage: str) -> Iterator[None]:
    """A worker that died (``BrokenProcessPool``) as one ``WorkerError``."""
    try:
        yield
    except BrokenProcessPool:
        raise WorkerError(f"a worker process died during the {stage} stage (out of "
                          "memory? try fewer --workers)") from None


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
        self._dir: ScratchDir | None = None
        self._count = 0
        self._spilled: list[tuple[str, list[int]]] = []
        self._pool: ProcessPoolExecutor | None = None     # the parse workers, kept for sessionize

    def partitions_for(self, total_bytes: int) -> int:
        if total_bytes <= MIN_SPREAD_BYTES:                # too little to spread
            return 1
        return partition_count(total_bytes, PARTITION_BYTES // self.workers, 2 * self.workers)

    def _fork(self, calls: int) -> ProcessPoolExecutor:
        give_back_freed_memory()                     # not to be inherited by every worker
        return ProcessPoolExecutor(min(self.workers, calls),
                                   mp_context=multiprocessing.get_context("fork"),
                                   initializer=die_with_parent, initargs=(os.getpid(),))

    def _run(self, fn: Callable, calls: list[tuple], stage: str, progress: Progress | None,
             weights: list[int] | None = None, pool: ProcessPoolExecutor | None = None) -> list:
        """``[fn(*c) for c in calls]``, in order, on ``pool`` (left open) or else on a pool
        forked for them and closed after them; without a pool, a single call, or any call when
        there is one worker, runs here. ``progress`` counts the weights (default 1 each) of
        the calls done, from 0."""
        weights = weights or [1] * len(calls)
        total, done = sum(weights), 0
        if progress:
            progress(stage, 0, total)                # the stage has begun (and how big it is)
        if pool is None and (len(calls) <= 1 or self.workers == 1):
            out = []
            for c, w in zip(calls, weights):
                out.append(fn(*c))
                done += w
                if progress:
                    progress(stage, done, total)
            return out
        own = pool is None
        pool = pool or self._fork(len(calls))
        try:
            futures: list[Future] = [pool.submit(fn, *c) for c in calls]
            weight = dict(zip(futures, weights))
            with _worker_errors(stage):
                for f in as_completed(futures):
                    f.result()                               # the first failure, at once
                    done += weight[f]
                    if progress:
                        progress(stage, done, total)
                return [f.result() for f in futures]
        finally:
            if own:
                pool.shutdown(wait=True, cancel_futures=True)

    def parse(self, pieces: list[Piece], options: Any, partitions: int,
              progress: Progress | None) -> list[PieceResult]:
        self._dir = ScratchDir("wagon-fit-", self.spill_dir)
        self._count = partitions
        # standard input stays with this process (a worker's is /dev/null); it is read while
        # the workers parse the files
        here = [p for p in pieces if p.path == "-"]
        away = [p for p in pieces if p.path != "-"]
        if self.workers > 1 and (len(away) > 1 or any(p.cut for p in away)):
            self._pool = self._fork(max(len(away), partitions))
            self._pool.submit(int)      # forks the workers now, before this process spools
        done: dict[tuple[int, int], tuple[PieceResult, list[int]]] = {}
        total, parsed = sum(p.size for p in pieces), 0

        def keep(result: tuple[PieceResult, list[int]]) -> None:
            nonlocal total, parsed
            done[result[0].piece.key] = result
            parsed += result[0].piece.size          # the sizes of compressed inputs: estimates
            total = max(total, parsed)
            if progress:
                progress("parse", parsed, total)
        try:
            if progress:
                progress("parse", 0, total)          # the stage has begun (and how big it is)
            scratch = self._dir.path
            calls = ((p, options, partitions, scratch) for p in pieces_of(away, scratch))
            with _worker_errors("parse"):
                pending: set[Future] = set()
                for call in calls:
                    if self._pool is None:
                        keep(_parse_and_spill(*call))
                        continue
                    pending.add(self._pool.submit(_parse_and_spill, *call))
                    while len(pending) > self.workers + 1:   # few pieces spooled ahead
                        pending = self._collect(pending, keep)
                for piece in here:
                    keep(_parse_and_spill(piece, options, partitions, scratch))
                while pending:
                    pending = self._collect(pending, keep)
        except BaseException:
            self.close()
            raise
        ordered = [done[k] for k in sorted(done)]
        self._spilled = [(spill_path(self._dir.path, r.piece), offsets) for r, offsets in ordered]
        return [r for r, _ in ordered]

    @staticmethod
    def _collect(pending: set[Future], keep: Callable[[Any], None]) -> set[Future]:
        """Wait for one of ``pending`` to finish, ``keep`` the results of those that have (the
        first failure raised at once); the others."""
        finished, left = wait(pending, return_when=FIRST_COMPLETED)
        for f in finished:
            keep(f.result())
        return left

    def sessionize(self, options: Any, shared: Shared,
                   progress: Progress | None) -> list[PartitionResult]:
        try:
            assert self._dir is not None, "sessionize comes after parse"
            scratch = self._dir.path
            calls = [(self._spilled, k, options, shared, scratch) for k in range(self._count)]
            done = self._run(_sessionize_spilled, calls, "sessionize", progress, pool=self._pool)
            return [_mapped_samples(r, layout, _samples_path(scratch, k))
                    for k, (r, layout) in enumerate(done)]
        finally:
            self.close()

    def map(self, fn: Callable, items: list, stage: str, progress: Progress | None) -> list:
        """The items reach the workers through the fork, not pickled: a variable's values
        (143 MB of object sizes at 30M lines) are not copied into a pipe here and again into
        the worker, which reads the pages it shares with this process."""
        _MAPPED[:] = items
        try:
            return self._run(_nth, [(fn, i) for i in range(len(items))], stage, progress)
        finally:
            _MAPPED.clear()

    def close(self) -> None:
        """Let the parse workers go and remove the spilled chunks (``sessionize`` does when it
        is done)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._dir is not None:
            self._dir.remove()
            self._dir = None
        self._spilled = []
