"""Logs to model in one call: parse, sessionize, fit every variable, check arrivals, assemble."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable

import numpy as np

from fitting import FitReport, fit
from fitting.arrivals import arrival_report

from .model import VARIABLES, Model, build_model
from .parse import ParseStats, parse_logs
from .sessions import SessionRules, Sessions, sessionize

__all__ = ["FitOptions", "FitResult", "fit_logs", "fit_samples"]


@dataclass(frozen=True)
class FitOptions:
    """Everything ``wagon fit`` can be told, with its defaults."""

    fmt: str = "auto"
    keep_query: bool = False
    base_month: str | None = None
    rules: SessionRules = field(default_factory=SessionRules)
    bootstrap: int = 0
    seed: int = 0


@dataclass
class FitResult:
    model: Model
    stats: ParseStats
    sessions: Sessions
    fits: dict[str, FitReport]
    skipped: dict[str, str]                  # variable → why it was not fitted


def fit_samples(samples: dict[str, np.ndarray], bootstrap: int = 0, seed: int = 0
                ) -> tuple[dict[str, FitReport], dict[str, str]]:
    """Fit every model variable that has enough values; say why the others were skipped."""
    fits, skipped = {}, {}
    for name, discrete in VARIABLES.items():
        values = samples.get(name, np.zeros(0))
        if len(values) < 2 or np.ptp(values) == 0:
            skipped[name] = (f"{len(values)} value(s)" if len(values) < 2
                             else f"all {len(values)} values equal {values[0]:g}")
            continue
        fits[name] = fit(values, discrete=discrete, bootstrap=bootstrap, seed=seed, name=name)
    return fits, skipped


def fit_logs(paths: Iterable[str], options: FitOptions = FitOptions(),
             progress: Callable[[int], None] | None = None) -> FitResult:
    """Parse logs, rebuild sessions, fit the model's variables and assemble the model."""
    paths = list(paths)
    req, stats = parse_logs(paths, options.fmt, keep_query=options.keep_query,
                            base_month=options.base_month, progress=progress)
    sessions = sessionize(req, options.rules, seed=options.seed)
    fits, skipped = fit_samples(sessions.samples, options.bootstrap, options.seed)
    arrivals = (arrival_report(sessions.session_start, fits["interarrival"])
                if "interarrival" in fits else {})
    rules = asdict(options.rules)
    rules["object_extensions"] = sorted(rules["object_extensions"])
    provenance = {
        "inputs": [{"name": os.path.basename(p) if p != "-" else "<stdin>",
                    "bytes": os.path.getsize(p) if p != "-" and os.path.exists(p) else None,
                    "format": stats.formats.get(p)} for p in paths],
        "options": {"format": options.fmt, "keep_query": options.keep_query,
                    "base_month": options.base_month, "bootstrap": options.bootstrap,
                    "seed": options.seed, **rules},
        **{k: v for k, v in stats.as_dict().items() if k not in ("formats", "examples")},
        **sessions.counts,
        "span_s": float(req.time.max() - req.time.min()) if len(req) else 0.0,
        "skipped_variables": skipped,
    }
    model = build_model(sessions, fits, arrivals, provenance)
    return FitResult(model, stats, sessions, fits, skipped)
