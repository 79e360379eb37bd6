"""The fit's stages on a Dask cluster (``wagon fit --cluster``): the runner interface of
``wagon.modeling.stages`` with futures.

Pieces (files, byte ranges of big plain files) are parsed on the workers; each piece's result
stays where it was made and only its k-th chunk moves to the task that sessionizes partition k
(the shuffle by client), so a client's requests meet on one worker. Partition results, fits
and bootstrap chunks come back to this process in order, so the model is the one a single
process makes from the same input. Inputs are read by the workers: on several hosts they must
see the same paths (a shared file system); standard input cannot be shipped.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from distributed import as_completed

from ..cluster import shippable
from ..logs.parse import Chunk, PieceResult
from ..logs.partition import PartitionResult, Shared
from ..logs.pieces import Piece
from .stages import Progress, parse_stage, sessionize_stage

__all__ = ["DaskRunner"]

# a task per piece and one per piece and partition: Dask's cost per task asks for fewer, larger
# ones than the processes of one machine (``stages.PARTITION_BYTES``, ``pieces.PIECE_BYTES``)
PIECE_BYTES = 64 << 20
PARTITION_BYTES = 128 << 20


def _without_chunks(r: PieceResult) -> PieceResult:
    return dataclasses.replace(r, chunks=None)


def _chunk(r: PieceResult, k: int) -> Chunk:
    assert r.chunks is not None
    return r.chunks[k]


class DaskRunner:
    """Runs the stages on ``client``'s workers; at least two partitions per worker so the
    sessionize stage spreads."""

    def __init__(self, client: Any, piece_bytes: int = PIECE_BYTES) -> None:
        self.client = client
        self.piece_bytes = piece_bytes
        self._pieces: list = []
        self._count = 0

    def _workers(self) -> int:
        return max(1, len(self.client.scheduler_info()["workers"]))

    @property
    def spread(self) -> int:
        return self._workers()

    def partitions_for(self, total_bytes: int) -> int:
        return max(2 * self._workers(), -(-total_bytes // PARTITION_BYTES))

    def _ordered(self, futures: list, stage: str, progress: Progress | None) -> list:
        """The futures' results in order, counting them as they complete."""
        for done, _ in enumerate(as_completed(futures), 1):
            if progress:
                progress(stage, done, len(futures))
        return self.client.gather(futures)

    def parse(self, pieces: list[Piece], options: Any, partitions: int,
              progress: Progress | None) -> list[PieceResult]:
        shippable([p.path for p in pieces])
        self._count = partitions
        self._pieces = self.client.map(parse_stage, pieces, options=options,
                                       partitions=partitions, pure=False)
        heads = self.client.map(_without_chunks, self._pieces, pure=False)
        return self._ordered(heads, "parse", progress)

    def sessionize(self, options: Any, shared: Shared,
                   progress: Progress | None) -> list[PartitionResult]:
        try:
            parts = []
            for k in range(self._count):
                chunks = [self.client.submit(_chunk, f, k, pure=False) for f in self._pieces]
                parts.append(self.client.submit(sessionize_stage, chunks, options, shared,
                                                pure=False))
            return self._ordered(parts, "sessionize", progress)
        finally:
            self._pieces = []

    def map(self, fn: Callable, items: list, stage: str, progress: Progress | None) -> list:
        return self._ordered(self.client.map(fn, items, pure=False), stage, progress)

    def close(self) -> None:
        """Let go of the parsed pieces (``sessionize`` does when it is done)."""
        self._pieces = []
