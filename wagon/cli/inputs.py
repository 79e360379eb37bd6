"""The files commands read, each failure a one-line error (exit 2), never a traceback."""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..formats.kind import what_is
from ..formats.model import Model, ModelError, load_model
from ..formats.scenario import Scenario, ScenarioError, read_scenario
from .common import WagonError

if TYPE_CHECKING:
    from ..analysis.digest import Digest
    from ..analysis.workload import Workload

__all__ = ["model", "scenario", "workload", "workloads", "digests", "are_logs"]


def model(path: str) -> Model:
    try:
        return load_model(path)
    except ModelError as e:
        raise WagonError(str(e)) from None


def scenario(path: str) -> Scenario:
    try:
        return read_scenario(path)
    except ScenarioError as e:
        raise WagonError(str(e)) from None


def are_logs(paths: tuple[str, ...] | list[str]) -> bool:
    """Whether ``paths`` are access logs: no model (.json) and no other wagon file (a scenario,
    results) first; the log's parser says what else is wrong."""
    return not paths[0].endswith(".json") and what_is(paths[0]) is None


def workload(paths: list[str], fmt: str = "auto", base_month: str | None = None,
             log_speedup: float = 1.0) -> Workload:
    """A log (or logs), a scenario or replay results."""
    from ..analysis.workload import load_workload  # lazy: for commands reading workloads
    with _read_errors():                           # (advise, synth need a model only)
        return load_workload(list(paths), fmt, base_month, log_speedup)


def digests(a: str, b: str, fmt: str = "auto", log_speedup: float = 1.0
            ) -> tuple[Digest, Digest]:
    """Two workloads as ``wagon compare`` reads them (``analysis.logdigest.load_digests``:
    logs streamed, two logs on one clock)."""
    from ..analysis.logdigest import load_digests  # lazy: the log parser, with it, only
    with _read_errors():
        return load_digests([a], [b], fmt, None, log_speedup)


def workloads(a: str, b: str, fmt: str = "auto") -> tuple[Workload, Workload]:
    """Two workloads compared, two logs on one clock (``analysis.workload.on_one_clock``)."""
    from ..analysis.workload import load_workload, on_one_clock  # lazy: see workload
    with _read_errors():
        return on_one_clock(lambda paths, clock: load_workload(paths, fmt, clock=clock),
                            [a], [b])


@contextlib.contextmanager
def _read_errors():
    """A workload's reading errors as WagonError (one line)."""
    from ..analysis.workload import WorkloadError  # lazy: see workload
    from ..formats.results import ResultsError  # lazy: see workload
    from ..logs.parse import LogError  # lazy: see workload
    try:
        yield
    except (WorkloadError, LogError, ScenarioError, ResultsError) as e:
        raise WagonError(str(e)) from None
