"""Access logs to sessions: log formats, the vectorised parser, WAGON's sessionization.

Depends on NumPy only; the fitting pipeline (``wagon.modeling``) sits above it."""
from .logformat import FormatError, LogFormat, compile_format, resolve_format
from .parse import LogError, ParseStats, Requests, parse_bytes, parse_logs
from .sessions import OBJECT_EXTENSIONS, SessionRules, Sessions, extension_flags, sessionize

__all__ = ["FormatError", "LogFormat", "compile_format", "resolve_format", "LogError",
           "ParseStats", "Requests", "parse_bytes", "parse_logs", "OBJECT_EXTENSIONS",
           "SessionRules", "Sessions", "extension_flags", "sessionize"]
