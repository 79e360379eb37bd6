"""The traffic model: fitted laws, the site, arrival diagnostics and provenance, as versioned JSON.

A model never stores client hosts, addresses or user agents; URLs lose their query strings unless
the user asked to keep them (they carry tokens and e-mail addresses).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from fitting import LAWS, FitReport

from . import __version__
from .sessions import Sessions

__all__ = ["Model", "ModelError", "build_model", "load_model", "save_model", "VARIABLES",
           "MODEL_FORMAT", "MODEL_VERSION"]

MODEL_FORMAT = "wagon-model"
MODEL_VERSION = 1

#: the variables fitted, with whether they are integer counts
VARIABLES = {"interarrival": False, "clicks": True, "think": False, "page_size": False,
             "objects_per_page": True, "object_size": False}


class ModelError(ValueError):
    """A model file that is damaged, foreign or of an unknown version."""


@dataclass
class Variable:
    """One fitted variable of a model: its chosen law, frozen, and the summary of its sample."""

    name: str
    law: str
    params: dict
    kind: str
    n: int
    mean: float

    @property
    def frozen(self):
        return LAWS[self.law].freeze(self.params)


@dataclass
class Model:
    """A loaded, validated model (``data`` is the JSON document)."""

    data: dict
    path: str | None = None

    @property
    def variables(self) -> dict[str, Variable]:
        out = {}
        for name, v in self.data["variables"].items():
            if v.get("best"):
                out[name] = Variable(name, v["best"], v["params"], v.get("kind", "continuous"),
                                     v.get("n", 0), v.get("mean", math.nan))
        return out

    @property
    def site(self) -> dict:
        return self.data.get("site", {})

    @property
    def arrivals(self) -> dict:
        return self.data.get("arrivals", {})

    @property
    def provenance(self) -> dict:
        return self.data.get("provenance", {})


def _site_json(sessions: Sessions) -> dict:
    site = sessions.site
    assert site is not None
    pages = sorted(site.page_hits, key=lambda u: (-site.page_hits[u], site.urls[u]))
    page_index = {u: i for i, u in enumerate(pages)}
    objects = sorted({o for p in pages for o in site.page_objects.get(p, [])},
                     key=lambda u: site.urls[u])
    object_index = {u: i for i, u in enumerate(objects)}
    return {
        "pages": [{"url": site.urls[u], "size": site.page_size.get(u), "hits": site.page_hits[u],
                   "objects": sorted(object_index[o] for o in site.page_objects.get(u, []))}
                  for u in pages],
        "objects": [{"url": site.urls[u], "size": site.object_size.get(u)} for u in objects],
        "entry": sorted(([page_index[u], c] for u, c in site.entry.items() if u in page_index),
                        key=lambda e: (-e[1], e[0])),
        "transitions": sorted(([page_index[a], page_index[b], int(c)]
                               for a, b, c in site.transitions.tolist()
                               if a in page_index and b in page_index)),
    }


def build_model(sessions: Sessions, fits: dict[str, FitReport], arrivals: dict,
                provenance: dict) -> Model:
    """Assemble the model document from sessions, fit reports and provenance."""
    variables = {}
    for name, report in fits.items():
        entry = report.to_dict()
        entry["kind"] = report.best.mode if report.best else None
        variables[name] = entry
    data = {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "generator": f"wagon-workload {__version__}",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "provenance": provenance,
        "variables": variables,
        "arrivals": arrivals,
        "site": _site_json(sessions),
    }
    return Model(_plain(data))


def _plain(obj):
    """JSON-ready copy: NumPy scalars to Python numbers, non-finite floats to None."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def save_model(model: Model, path: str | os.PathLike) -> None:
    """Write the model as indented JSON (atomically: a temporary file renamed over the target)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(model.data, indent=1, allow_nan=False) + "\n")
    tmp.replace(path)
    model.path = str(path)


def _check(cond: bool, path: str, what: str) -> None:
    if not cond:
        raise ModelError(f"{path}: not a valid wagon model: {what}")


def validate(data: object, path: str = "model") -> None:
    """Raise ModelError with a one-line reason when ``data`` is not a usable model document."""
    _check(isinstance(data, dict), path, "the top level is not a JSON object")
    assert isinstance(data, dict)
    _check(data.get("format") == MODEL_FORMAT, path, f"'format' is not {MODEL_FORMAT!r}")
    version = data.get("version")
    _check(isinstance(version, int), path, "'version' is missing")
    if version > MODEL_VERSION:
        raise ModelError(f"{path}: model version {version} is newer than this wagon reads "
                         f"({MODEL_VERSION}); upgrade wagon-workload")
    _check(isinstance(data.get("variables"), dict), path, "'variables' is missing or not an object")
    for key in ("site", "provenance"):          # optional: a hand-written model may omit them
        _check(isinstance(data.get(key, {}), dict), path, f"'{key}' is not an object")
    for name, v in data["variables"].items():
        _check(isinstance(v, dict), path, f"variable {name!r} is not an object")
        law = v.get("best")
        if law is None:
            continue
        _check(law in LAWS, path, f"variable {name!r} has unknown law {law!r}")
        params = v.get("params")
        _check(isinstance(params, dict) and all(isinstance(p, (int, float)) for p in
                                                params.values()),
               path, f"variable {name!r} has no numeric 'params'")
        try:
            mean = float(LAWS[law].freeze(params).mean())
        except (TypeError, ValueError) as e:
            raise ModelError(f"{path}: variable {name!r}: bad parameters for {law}: {e}") from None
        _check(not math.isnan(mean), path, f"variable {name!r}: parameters out of range for {law}")
    site = data.get("site", {})
    pages, objects = site.get("pages", []), site.get("objects", [])
    _check(isinstance(pages, list) and isinstance(objects, list), path,
           "'site' 'pages' and 'objects' must be lists")
    for i, page in enumerate(pages):
        _check(isinstance(page, dict) and isinstance(page.get("url"), str), path,
               f"page {i} has no url")
        _check(all(isinstance(o, int) and 0 <= o < len(objects) for o in page.get("objects", [])),
               path, f"page {i} refers to an object that does not exist")
    for key, width in (("entry", 2), ("transitions", 3)):
        for row in site.get(key, []):
            _check(isinstance(row, list) and len(row) == width and
                   all(isinstance(v, int) for v in row) and all(0 <= v < len(pages)
                                                                for v in row[:width - 1]),
                   path, f"site {key} row {row!r} is malformed")


def load_model(path: str | os.PathLike) -> Model:
    """Read and validate a model file; ModelError (one line) on a damaged or foreign file."""
    path = str(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ModelError(f"{path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not a wagon model (not text)") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ModelError(f"{path}: not a wagon model (JSON error at line {e.lineno}: {e.msg})") \
            from None
    validate(data, path)
    return Model(data, path)
