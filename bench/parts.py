"""The command line of a benchmark made of numbered parts: ``--part 1 3`` runs those (all by
default), each given a temporary directory of the run."""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Callable


def run_parts(doc: str, parts: dict[int, Callable[[Path], None]]) -> None:
    """Parse ``--part`` and run the parts chosen, in order, in one temporary directory."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--part", type=int, nargs="*", choices=sorted(parts), default=sorted(parts))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for k in args.part:
            parts[k](Path(tmp))
