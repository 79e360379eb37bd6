"""The files commands read, each failure a one-line error (exit 2), never a traceback."""
from __future__ import annotations

from ..analysis.workload import Workload, WorkloadError, load_workload
from ..formats.model import Model, ModelError, load_model
from ..formats.results import ResultsError
from ..formats.scenario import Scenario, ScenarioError, read_scenario
from ..logs.parse import LogError
from .common import WagonError

__all__ = ["model", "scenario", "workload"]


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


def workload(paths: list[str], fmt: str = "auto", base_month: str | None = None,
             log_speedup: float = 1.0) -> Workload:
    """A log (or logs), a scenario or replay results."""
    try:
        return load_workload(list(paths), fmt, base_month, log_speedup)
    except (WorkloadError, LogError, ScenarioError, ResultsError) as e:
        raise WagonError(str(e)) from None
