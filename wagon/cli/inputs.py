"""The files commands read, each failure a one-line error (exit 2), never a traceback."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..formats.kind import what_is
from ..formats.model import Model, ModelError, load_model
from ..formats.scenario import Scenario, ScenarioError, read_scenario
from .common import WagonError

if TYPE_CHECKING:
    from ..analysis.digest import Digest
    from ..analysis.workload import Workload

__all__ = ["model", "scenario", "workload", "are_logs"]


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
             log_speedup: float = 1.0, digested: bool = False) -> Workload | Digest:
    """A log (or logs), a scenario or replay results; ``digested``: as ``wagon compare`` reads
    them (``analysis.logdigest.load_digest``: logs streamed)."""
    from ..analysis.logdigest import load_digest  # lazy: the log parser, with it, only
    from ..analysis.workload import WorkloadError, load_workload  # lazy: for commands reading
    from ..formats.results import ResultsError  # lazy: workloads (advise, synth need a model
    from ..logs.parse import LogError  # lazy: only)
    try:
        return (load_digest if digested else load_workload)(list(paths), fmt, base_month,
                                                            log_speedup)
    except (WorkloadError, LogError, ScenarioError, ResultsError) as e:
        raise WagonError(str(e)) from None
