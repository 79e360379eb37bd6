"""wagon: statistical modeling, synthesis and replay of web workloads.

Library use mirrors the command line: ``parse_logs`` → ``sessionize`` → ``wagon.fitting.fit``
per variable → a model (``fit_logs`` does all of it), read back with ``load_model``;
``synthesize`` makes a scenario in memory (``Scenario``: ``sessions()``, ``to_frame()``,
``write``), ``read_scenario`` reads one, ``wagon.replay`` plays them, ``read_results`` reads
what a replay recorded.

The names below are imported on first use (PEP 562), not with the package: ``import wagon``
stays cheap, so that ``wagon --help`` answers at once and replay workers never load SciPy.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_API = {
    "LogFormat": "wagon.logs", "compile_format": "wagon.logs", "LogError": "wagon.logs",
    "ParseStats": "wagon.logs", "Requests": "wagon.logs", "parse_bytes": "wagon.logs",
    "parse_logs": "wagon.logs", "SessionRules": "wagon.logs", "Sessions": "wagon.logs",
    "sessionize": "wagon.logs",
    "Model": "wagon.formats.model", "ModelError": "wagon.formats.model",
    "load_model": "wagon.formats.model", "save_model": "wagon.formats.model",
    "read_scenario": "wagon.formats.scenario", "ScenarioError": "wagon.formats.scenario",
    "Scenario": "wagon.formats.scenario", "synthesize": "wagon.synth.generate:scenario",
    "SynthOptions": "wagon.synth", "SynthError": "wagon.synth",
    "read_results": "wagon.formats.results", "ResultsError": "wagon.formats.results",
    "FitOptions": "wagon.modeling", "FitResult": "wagon.modeling", "fit_logs": "wagon.modeling",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    where = _API.get(name)
    if where is None:
        raise AttributeError(f"module 'wagon' has no attribute {name!r}")
    module, _, attr = where.partition(":")           # "module:attribute" when names differ
    value = getattr(importlib.import_module(module), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
