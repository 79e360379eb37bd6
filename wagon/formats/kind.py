"""What kind of wagon file a path holds, so that a file given where another kind is expected
(a model for a scenario, results for a model, a model for a log) is named in the error."""
from __future__ import annotations

import os
import re

from ..source import not_regular
from .results import RESULTS_FORMAT, is_results_header
from .results_parquet import PARQUET_MAGIC, is_parquet

__all__ = ["MODEL_FORMAT", "SCENARIO_FORMAT", "what_is", "wrong_kind"]

MODEL_FORMAT = "wagon-model"
SCENARIO_FORMAT = "wagon-scenario"
_NAMES = {MODEL_FORMAT: "a wagon model", SCENARIO_FORMAT: "a wagon scenario",
          RESULTS_FORMAT: "a replay's run file"}
_FORMAT = re.compile(r'^\s*\{\s*"format"\s*:\s*"([a-z-]+)"')


def what_is(path: str | os.PathLike) -> str | None:
    """"a wagon model", "a wagon scenario", "replay results", "a replay's run file", or None
    (not a wagon file, or unreadable), from the file's first line(s)."""
    if not_regular(path):
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    m = _FORMAT.match(head)
    if m:
        return _NAMES.get(m.group(1))
    if head.startswith(PARQUET_MAGIC) and is_parquet(path):
        return "replay results"
    return "replay results" if is_results_header(head.split("\n", 1)[0]) else None


def wrong_kind(path: str | os.PathLike, wanted: str) -> str | None:
    """``"PATH: a wagon model, not a scenario"`` when the file is a wagon file of another kind
    than ``wanted`` (a name from ``what_is``), else None."""
    kind = what_is(path)
    if kind is None or kind == wanted:
        return None
    return f"{path}: {kind}, not {wanted}"
