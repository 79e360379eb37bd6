"""The files commands read, each failure a one-line error (exit 2), never a traceback."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..formats.model import Model, ModelError, load_model
from ..formats.scenario import Scenario, ScenarioError, read_scenario
from .common import WagonError

if TYPE_CHECKING:
    from ..analysis.workload import Workload

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
    from ..analysis.workload import WorkloadError, load_workload  # lazy: the log parser,
    from ..formats.results import ResultsError  # lazy: with it, only commands reading workloads
    from ..logs.parse import LogError  # lazy: (advise, synth need a model only)
    try:
        return load_workload(list(paths), fmt, base_month, log_speedup)
    except (WorkloadError, LogError, ScenarioError, ResultsError) as e:
        raise WagonError(str(e)) from None
