"""wagon: statistical modeling, synthesis and replay of web workloads.

Library use mirrors the command line: ``parse_logs`` → ``sessionize`` → ``fitting.fit`` per
variable → a model (``fit_logs`` does all of it), read back with ``load_model``.
"""
__version__ = "0.1.0"

from .logformat import LogFormat, compile_format  # noqa: E402
from .parse import LogError, ParseStats, Requests, parse_bytes, parse_logs  # noqa: E402
from .sessions import SessionRules, Sessions, sessionize  # noqa: E402
from .model import Model, ModelError, load_model, save_model  # noqa: E402
from .modeling import FitOptions, FitResult, fit_logs  # noqa: E402

__all__ = ["__version__", "LogFormat", "compile_format", "LogError", "ParseStats", "Requests",
           "parse_bytes", "parse_logs", "SessionRules", "Sessions", "sessionize", "Model",
           "ModelError", "load_model", "save_model", "FitOptions", "FitResult", "fit_logs"]
