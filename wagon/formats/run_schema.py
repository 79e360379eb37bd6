"""The run file's rules: ``RUN_SCHEMA``, a JSON Schema that docs/formats.md publishes as it
is, and ``check_json``, which enforces the subset of JSON Schema it uses (``type``, ``const``,
``enum``, ``minimum``, ``maximum``, ``exclusiveMinimum``, ``required``, ``properties``,
``additionalProperties``, ``items``), naming the first field that breaks it. No NumPy: the
commands that only read a run file start without it.
"""
from __future__ import annotations

import math

from .limits import MAX_RUN_S, SPEEDUP

__all__ = ["RESULTS_FORMAT", "RESULTS_VERSION", "RUN_SCHEMA", "check_json"]

RESULTS_FORMAT = "wagon-results"
RESULTS_VERSION = 8


def check_json(value, schema: dict, where: str = "") -> str | None:
    """The first place where ``value`` breaks ``schema`` (the JSON Schema subset of the module
    docstring), as "field: what", or None."""
    name = where or "the file"
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if kinds is not None and not any(_is(value, k) for k in kinds):
        return f"{name}: must be {' or '.join(kinds)} (got {_show(value)})"
    if "const" in schema and value != schema["const"]:
        return f"{name}: must be {schema['const']!r} (got {_show(value)})"
    if "enum" in schema and value not in schema["enum"]:
        return f"{name}: must be one of {', '.join(map(str, schema['enum']))} (got {_show(value)})"
    if _is(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{name}: must be ≥ {schema['minimum']} (got {_show(value)})"
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            return f"{name}: must be > {schema['exclusiveMinimum']} (got {_show(value)})"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{name}: must be ≤ {schema['maximum']} (got {_show(value)})"
    if isinstance(value, dict):
        missing = [k for k in schema.get("required", ()) if k not in value]
        if missing:
            return f"{where + '.' if where else ''}{missing[0]}: missing"
        props, extra = schema.get("properties", {}), schema.get("additionalProperties", True)
        for k, v in value.items():
            sub = props.get(k, extra)
            if sub is False:
                return f"{where + '.' if where else ''}{k}: not a field of the run file"
            if isinstance(sub, dict):
                why = check_json(v, sub, f"{where}.{k}" if where else k)
                if why:
                    return why
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            why = check_json(v, schema["items"], f"{where}[{i}]")
            if why:
                return why
    return None


def _is(value, kind: str) -> bool:
    """Is ``value`` (parsed JSON) of the JSON Schema type ``kind``? Numbers are finite; an
    integer, as JSON Schema has it, is any number without a fraction (``2.0`` too)."""
    if kind in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return isinstance(value, int) or (math.isfinite(value) and (
            kind == "number" or value.is_integer()))
    return isinstance(value, {"string": str, "boolean": bool, "object": dict, "array": list,
                              "null": type(None)}[kind])


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _count(minimum: int = 0) -> dict:
    return {"type": "integer", "minimum": minimum}


def _object(required: dict, optional: dict | None = None) -> dict:
    return {"type": "object", "required": list(required),
            "properties": {**required, **(optional or {})}}


SECONDS = {"type": "number", "minimum": 0}
#: a latency entry of the summary: milliseconds, null when nothing was measured
LATENCY = _object({p: {"type": ["number", "null"], "minimum": 0}
                   for p in ("p50", "p90", "p99", "max")})
SUMMARY = _object(
    {"requests": _object({k: _count() for k in ("total", "sent", "ok", "failed", "in_flight",
                                                 "not_started", "bytes")}),
     "errors": _object({"total": _count(),
                        "by_kind": {"type": "object", "additionalProperties": _count()}}),
     "latency": {"type": "object", "additionalProperties": LATENCY},
     "complete": {"type": "boolean"},
     "throughput": _object({"requests_per_s": SECONDS, "bytes_per_s": SECONDS,
                            "per_second": {"type": "array", "items": _count()}}),
     "pages": _object({"total": _count(), "with_errors": _count()}),
     "sessions": _object({k: _count() for k in ("started", "late", "completed",
                                                "interrupted")}),
     "connections": _count(),
     "duration_s": {"type": "number", "minimum": 0, "maximum": MAX_RUN_S},
     "warnings": {"type": "array", "items": {"type": "string"}}},
    {"stopped_by": {"type": ["string", "null"]},
     "dead_workers": {"type": "array", "items": {"type": "string"}},
     # the processes the run lost (replay.watchdog): absent in files written before
     "dead_processes": {"type": "array", "items": _object(
         {"kind": {"type": "string"}, "name": {"type": "string"},
          "pid": {"type": ["integer", "null"]}, "cause": {"type": "string"}})},
     "workers": _count(1),
     # per second: never negative as wagon writes it now, but files it wrote before
     # (results version 6 too) may hold -1 (a connection's close counted twice): still read
     "open_connections": _object({"per_second": {"type": "array",
                                                 "items": {"type": "integer"}},
                                  "peak": _count()}),
     "generator": _object({"start_lag": LATENCY, "loop_lag": LATENCY},
                          {"cpu": {"type": ["number", "null"], "minimum": 0}}),
     "thresholds": {"type": "array"},
     "tls": _object({"handshakes": _count(), "resumed": _count()}),
     "window": _object({"from_s": SECONDS, "to_s": {"type": ["number", "null"], "minimum": 0},
                        "seconds": SECONDS}),
     "results": {"type": ["string", "null"]}, "pages_results": {"type": ["string", "null"]}})
#: the run file (``r.run.json``), as JSON Schema: what ``read_run`` enforces
RUN_SCHEMA = _object(
    {"format": {"const": RESULTS_FORMAT},
     "version": {"type": "integer", "minimum": 1, "maximum": RESULTS_VERSION},
     "scenario": {"type": "string"}, "target": {"type": "string"},
     "t0": {"type": "string"}, "t0_unix": {"type": "number"},
     "classes": {"type": "array", "items": {"type": "string"}},
     # what ``wagon recover`` reads of the options (the others are free: a record)
     "options": _object({"target": {"type": "string"}, "workers": _count(1),
                         "fail_on": {"type": "array", "items": {"type": "string"}}},
                        {"warmup": SECONDS, "cooldown": SECONDS,
                         "max_time": {"type": ["number", "null"], "minimum": 0},
                         "timeout": SECONDS, "connect_timeout": SECONDS,
                         "request_timeout": {"type": ["number", "null"], "minimum": 0},
                         "follow_redirects": {"type": "boolean"},
                         "emulation": {"type": "boolean"},
                         "loss": {"type": "number", "minimum": 0, "maximum": 1}}),
     "summary": {"type": ["object", "null"], **{k: v for k, v in SUMMARY.items()
                                                if k != "type"}}},
    {"speedup": {"type": "number", "minimum": SPEEDUP[0], "maximum": SPEEDUP[1]},
     "model": {"type": ["object", "null"],
               "properties": {"name": {"type": ["string", "null"]},
                              "digest": {"type": ["string", "null"]}}},
     "identity": {"type": ["object", "null"]}})
