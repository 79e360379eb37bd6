"""A replay's results while it runs, and their publication when it ends.

While the run goes, each process appends its rows to its own part files beside the results
(``r.csv.partK`` and ``r.pages.csv.partK``, no header; a single process is part 0 of 1) and
the run file waits as ``r.run.json.part``. When the run ends, ``publish`` writes the requests
and pages files from the header and the parts (each beside its target, flushed, renamed over
it: ``formats.atomic``; Parquet results, ``r.parquet`` and ``r.pages.parquet``, converted
from that CSV), then the run file with its summary, and only then removes the parts.
So ``r.csv``, ``r.pages.csv`` and ``r.run.json`` are a finished run's, complete, or absent (or
an earlier run's, untouched); a run that dies (killed, the disk full) leaves its parts and
pending run file, which ``wagon recover`` settles and publishes.
"""
from __future__ import annotations

import contextlib
import glob
import io
import os
import shutil
import tempfile
from typing import BinaryIO

from ..formats.atomic import atomic_write
from ..formats.results import (PAGE_COLUMNS, REQUEST_COLUMNS, ResultsWriter, pages_path,
                               run_path, write_run)
from ..formats.results_parquet import is_parquet, write_parquet
from .salvage import cut_partial_line

__all__ = ["part_paths", "pending_run_path", "lost_path", "remove_parts", "publish"]


def part_paths(results: str, k: int) -> tuple[str, str]:
    """The request and page part files of process k of the run whose results are ``results``."""
    return f"{results}.part{k}", f"{pages_path(results)}.part{k}"


def pending_run_path(results: str) -> str:
    """The run file of a run that has not ended (``r.run.json.part``)."""
    return run_path(results) + ".part"


def lost_path(results: str) -> str:
    """The guardian's witness file of the run (``r.run.json.lost``): when its parent died, if
    it did (``lifeline.Guardian``)."""
    return run_path(results) + ".lost"


def remove_parts(results: str) -> None:
    """Remove the part files of ``results``, of any number of processes, and the guardian's
    witness file (before a run: an earlier run's are not this one's; after it: published)."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(lost_path(results))
    for target in (results, pages_path(results)):
        for path in glob.glob(glob.escape(target) + ".part*"):
            if path[len(target) + len(".part"):].isdigit():
                os.remove(path)


def publish(results: str, n: int, run: dict) -> None:
    """The run's files, complete (module docstring): the requests and pages files from the n
    processes' parts (a part's last line cut by a killed writer is dropped), the run file
    ``run``; then the parts and the pending run file are removed."""
    for target, columns, k_th in ((results, REQUEST_COLUMNS, 0),
                                  (pages_path(results), PAGE_COLUMNS, 1)):
        parts = [part_paths(results, k)[k_th] for k in range(n)]
        if is_parquet(target):          # the CSV assembled aside, then converted
            with tempfile.TemporaryFile(dir=os.path.dirname(os.path.abspath(target))) as csv:
                _assemble(csv, columns, parts)
                csv.seek(0)
                write_parquet(csv, target, columns)
        else:
            with atomic_write(target, "w+b") as out:
                _assemble(out, columns, parts)
    write_run(results, run)
    remove_parts(results)
    with contextlib.suppress(FileNotFoundError):
        os.remove(pending_run_path(results))


def _assemble(out: BinaryIO, columns: dict[str, str], parts: list[str]) -> None:
    """Write to ``out`` the results CSV of ``columns``: the header, then the ``parts`` that
    exist, each cut after its last complete line."""
    header = io.StringIO()
    ResultsWriter(header, columns).flush()
    out.write(header.getvalue().encode())
    for part in parts:
        if os.path.exists(part):
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out)
            cut_partial_line(out)
