"""Logs to model in one call: parse, sessionize, fit every variable, check arrivals, assemble.

The pipeline above the log layer (``wagon.logs``) and the fitting leaf (``wagon.fitting``); it
writes the model format (``wagon.formats.model``). The fitting half lives in
``wagon.modeling.model`` (``FitResult``, ``fit_samples``, ``observations``, ``build_model``,
also reachable from here): it loads SciPy (98 MB resident for ``scipy.stats`` alone), so it is
imported on first use, and ``fit_logs`` imports it once the records are gone (the sessions
merged), so that the peak memory of a fit is its largest stage's, not SciPy's on top of the
parse's.
"""
from __future__ import annotations

import gc
import importlib
import sys
from typing import TYPE_CHECKING, Iterable

from ..logs.partition import merge_partitions, shared_context
from ..logs.pieces import plan
from .allocator import give_back_freed_memory
from .options import FitOptions
from .stages import LocalRunner, Progress, Runner

if TYPE_CHECKING:
    from .model import FitResult

__all__ = ["FitOptions", "FitResult", "fit_logs", "fit_samples", "build_model", "observations"]

_MODEL = "wagon.modeling.model"
_LAZY = ("FitResult", "fit_samples", "build_model", "observations")


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_MODEL), name)


def _load_fitting() -> None:
    """Import the fitting half (SciPy) with Python's cyclic garbage collector paused, then move
    what it made into the collector's permanent generation (``gc.freeze``, as Python's docs
    advise before forking workers): some 60,000 objects that live as long as the process,
    which the collections the import sets off (66 ms during a fit's) and later full ones
    would traverse for nothing, here and in the workers. Once per process (what else lives
    then is frozen with them)."""
    if _MODEL in sys.modules:
        return
    paused = gc.isenabled()
    gc.disable()
    try:
        importlib.import_module(_MODEL)
    finally:
        gc.freeze()
        if paused:
            gc.enable()


def fit_logs(paths: Iterable[str], options: FitOptions = FitOptions(),
             progress: Progress | None = None, runner: Runner | None = None) -> FitResult:
    """Parse logs, rebuild sessions, fit the model's variables and assemble the model, as the
    stages of ``wagon.modeling.stages`` run by ``runner`` (default: ``LocalRunner``).
    ``progress(stage, done, total)`` follows the stages.

    Example:

    >>> result = wagon.fit_logs(["access_log.gz"], wagon.FitOptions(seed=0))
    >>> think = result.model.variables["think"]
    >>> think.law, {k: round(v, 2) for k, v in think.params.items()}
    ('lognormal', {'mu': 3.0, 'sigma': 1.08})
    >>> wagon.save_model(result.model, "sample-model.json")     # what wagon fit -o writes
    """
    paths = list(paths)
    if options.max_pages < 1:
        raise ValueError("max_pages must be at least 1")
    runner = runner or LocalRunner()
    pieces = plan(paths, runner.piece_bytes, runner.spread)
    results = runner.parse(pieces, options, runner.partitions_for(sum(p.size for p in pieces)),
                           progress)
    try:
        shared, stats = shared_context(results)
        del results                               # the pieces' start times: memory bound
        give_back_freed_memory()                  # ... and the heap they leave (kept till now)
        partitions = runner.sessionize(options, shared, progress)
    finally:
        runner.close()                            # also when no input had a parseable line
    sessions, variants, span, values = merge_partitions(partitions, stats, options.rules,
                                                        options.seed, give_back_freed_memory)
    del partitions
    give_back_freed_memory()                      # the merge's temporaries, before SciPy
    _load_fitting()
    return importlib.import_module(_MODEL).fit_sessions(sessions, stats, variants, span, paths,
                                                        options, runner, progress, values)
