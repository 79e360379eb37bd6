"""Strict JSON for every file and ``--json`` output wagon writes: NumPy numbers become Python
numbers and non-finite floats become null, so no reader ever meets ``NaN`` or ``Infinity``."""
from __future__ import annotations

import json
import math

__all__ = ["json_ready", "dumps"]


def json_ready(obj):
    """A copy of ``obj`` that ``json.dumps(..., allow_nan=False)`` accepts."""
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if hasattr(obj, "item") and callable(obj.item):        # NumPy scalars, without NumPy
        return json_ready(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    return obj


def dumps(obj, indent: int | None = 1) -> str:
    """``obj`` as strict JSON."""
    return json.dumps(json_ready(obj), indent=indent, allow_nan=False)
